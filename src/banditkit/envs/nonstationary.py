"""Non-stationary linear bandits: the reward of a pull of x at time t is x^T θ_t plus noise, for
a schedule θ_0..θ_{T−1} fixed in advance (Xiong et al., "P1-RAGE", Section 3.1; times are
0-based here, as in the authors' code).

Rewards depend on each pull's time, so a batch is answered pull by pull — vectorised over the
pulls of the batch in chunks, never a Python loop per pull.

A schedule is given in one of three forms:

* an explicit table of shape (T', d) with T' ≥ T (θ_t is row t);
* a periodic table of shape (P, d) (``periodic=True``): θ_t is row ``(t // repeat) mod P``, so
  memory does not grow with T and :meth:`NonStationaryLinearBandit.theta_at` is one fancy
  index. ``repeat = 1`` is a plain period-P cycle (one oscillation period of a sine);
  ``repeat = L`` holds each row for L consecutive pulls (a week of days, L visits a day);
* a function of an integer array of times.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..protocol import Batch
from ..validation import check_arms, check_integer
from .base import Environment, Outcome

__all__ = ["NonStationaryLinearBandit"]

_CHUNK = 1 << 18  # pulls per vectorised chunk: bounds memory at a few tens of MB
_MEANS_CACHE = 1 << 22  # largest (table rows × arms) mean table cached (32 MB)


class NonStationaryLinearBandit(Environment):
    """Linear bandit with a parameter schedule θ_t.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms.
    schedule : array of shape (T', d) or (P, d), or callable
        θ_t for t = 0..T'−1; with ``periodic=True`` one period of P rows (see ``repeat``); or a
        function mapping an integer array of times to an array of shape (len(times), d).
    Z : array, shape (M, d), optional
        Items; defaults to ``X``.
    horizon : int, optional
        T, the budget over which the best item is defined; defaults to the schedule's length.
        Required when ``schedule`` is a callable or ``periodic`` is true.
    noise : {"gaussian", "bernoulli"}
    sigma : float
        Gaussian noise standard deviation.
    periodic : bool
        Whether ``schedule`` is one period: θ_t = schedule[(t // repeat) mod P] for every
        t ≥ 0, so the environment's period is ``P · repeat``.
    repeat : int
        With ``periodic``: how many consecutive pulls each row of the table lasts.

    Attributes
    ----------
    period : int or None
        ``P · repeat`` for a periodic schedule (θ_{t + period} = θ_t), else ``None``.

    Notes
    -----
    The best item is argmax_z z^T θ̄_T with θ̄_T = (1/T) Σ_t θ_t, the target of fixed-budget
    identification in the non-stationary setting (Xiong et al., Section 3.1).
    """

    stationary = False

    def __init__(self, X: np.ndarray, schedule: np.ndarray | Callable[[np.ndarray], np.ndarray],
                 Z: np.ndarray | None = None, *, horizon: int | None = None,
                 noise: str = "gaussian", sigma: float = 1.0, periodic: bool = False,
                 repeat: int = 1) -> None:
        self.X = check_arms(X, "X")
        self.Z = self.X if Z is None else check_arms(Z, "Z")
        self.n_arms, self.d = self.X.shape
        if self.Z.shape[1] != self.d:
            raise ValueError(f"Z must have d = {self.d} columns like X, got {self.Z.shape[1]}")
        self.n_items = self.Z.shape[0]
        repeat = check_integer(repeat, "repeat")
        if repeat != 1 and not periodic:
            raise ValueError("repeat applies to a periodic schedule only (pass periodic=True)")
        self._periodic, self._repeat = bool(periodic), repeat
        if callable(schedule):
            if periodic:
                raise ValueError("a periodic schedule must be an array of shape (P, d), not a "
                                 "function")
            if horizon is None:
                raise ValueError("horizon is required when schedule is a function of t")
            self._fn: Callable[[np.ndarray], np.ndarray] | None = schedule
            self._table = None
        else:
            table = np.asarray(schedule, dtype=float)
            if table.ndim != 2 or table.shape[1] != self.d or table.shape[0] == 0:
                raise ValueError(f"schedule must be an array of shape (T, {self.d}) with T >= 1,"
                                 f" got {table.shape}")
            if not np.all(np.isfinite(table)):
                raise ValueError("schedule must be finite (found NaN or inf)")
            self._fn, self._table = None, table
            if periodic:
                if horizon is None:
                    raise ValueError("horizon is required when the schedule is periodic")
            else:
                horizon = table.shape[0] if horizon is None else horizon
        horizon = check_integer(horizon, "horizon")
        if self._table is not None and not periodic and horizon > self._table.shape[0]:
            raise ValueError(f"horizon {horizon} exceeds the schedule's length "
                             f"{self._table.shape[0]}")
        self.horizon = horizon
        self.period: int | None = self._table.shape[0] * repeat if periodic else None
        if noise not in ("gaussian", "bernoulli"):
            raise ValueError(f"noise must be 'gaussian' or 'bernoulli', got {noise!r}")
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma}")
        self.noise, self.sigma = noise, float(sigma)
        self._cache: np.ndarray | None = None  # arm means per table row, built on first use

    # --- the schedule ---------------------------------------------------------------------

    @property
    def schedule_length(self) -> int | None:
        """The number of times ``0..n−1`` the schedule defines θ_t for: the rows of a
        non-periodic table; ``None`` (every t ≥ 0) for a periodic table or a function. A run
        longer than this cannot be simulated."""
        if self._table is None or self._periodic:
            return None
        return int(self._table.shape[0])

    def _rows(self, times: np.ndarray) -> np.ndarray:
        """Row of the table holding θ_t for each time (table schedules only)."""
        n_rows = self._table.shape[0]  # type: ignore[union-attr]
        if self._periodic:
            if times.size and times.min() < 0:
                raise ValueError("times must be >= 0")
            return times % n_rows if self._repeat == 1 else (times // self._repeat) % n_rows
        if times.size and (times.min() < 0 or times.max() >= n_rows):
            raise ValueError(f"time outside the schedule [0, {n_rows})")
        return times

    def theta_at(self, times: np.ndarray) -> np.ndarray:
        """θ_t for each time in ``times`` (shape (n, d)); one fancy index for tables."""
        times = np.asarray(times, dtype=np.int64)
        if self._table is not None:
            return self._table[self._rows(times)]
        out = np.asarray(self._fn(times), dtype=float)  # type: ignore[misc]
        if out.shape != (times.size, self.d):
            raise ValueError(f"schedule function must return shape ({times.size}, {self.d}), "
                             f"got {out.shape}")
        if not np.all(np.isfinite(out)):
            raise ValueError("schedule function returned NaN or inf")
        return out

    def _horizon(self, horizon: int | None) -> int:
        return self.horizon if horizon is None else check_integer(horizon, "horizon")

    def _row_counts(self, T: int) -> np.ndarray:
        """How many of the times 0..T−1 use each row of a periodic table."""
        P, r = self._table.shape[0], self._repeat  # type: ignore[union-attr]
        blocks, rem = divmod(T, r)  # `blocks` full runs of r pulls, then `rem` pulls of one more
        counts = np.full(P, (blocks // P) * r, dtype=np.int64)
        counts[: blocks % P] += r
        counts[blocks % P] += rem
        return counts

    def mean_theta(self, horizon: int | None = None) -> np.ndarray:
        """θ̄_T, the average parameter over the times 0..T−1 (T = ``horizon``, default the
        environment's); exact in O(P d) for a periodic table."""
        T = self._horizon(horizon)
        if self._periodic:
            return self._row_counts(T) @ self._table / T
        total = np.zeros(self.d)
        for start in range(0, T, _CHUNK):
            total += self.theta_at(np.arange(start, min(T, start + _CHUNK))).sum(axis=0)
        return total / T

    def best_item(self, horizon: int | None = None) -> int:
        return int(np.argmax(self.Z @ self.mean_theta(horizon)))

    def gaps(self, horizon: int | None = None) -> np.ndarray:
        """Item gaps under θ̄_T: max_z zᵀθ̄_T − zᵀθ̄_T."""
        v = self.Z @ self.mean_theta(horizon)
        return v.max() - v

    def min_gap(self, horizon: int | None = None) -> float:
        """Δ(1) = (z_(1) − z_(2))ᵀθ̄_T, the gap between the best and the second-best item
        under θ̄_T (Xiong et al., Section 3.1); ``inf`` with a single item."""
        if self.n_items < 2:
            return float("inf")
        v = np.sort(self.Z @ self.mean_theta(horizon))
        return float(v[-1] - v[-2])

    # --- arm means --------------------------------------------------------------------------

    @staticmethod
    def _means(X: np.ndarray, thetas: np.ndarray) -> np.ndarray:
        # One formula for every path: products summed over the contiguous last axis, element by
        # element, so a mean is the same float whether it comes from the cached table or not.
        return (X * thetas).sum(axis=-1)

    def _table_means(self) -> np.ndarray | None:
        """Means of every arm under every row of a table schedule, (rows, K), computed once;
        ``None`` for a function schedule or a table too large to cache."""
        if self._table is None or self._table.shape[0] * self.n_arms > _MEANS_CACHE:
            return None
        if self._cache is None:
            self._cache = self._means(self.X[None, :, :], self._table[:, None, :])
        return self._cache

    def _means_at(self, arms: np.ndarray, times: np.ndarray) -> np.ndarray:
        table = self._table_means()
        if table is not None:
            return table[self._rows(times), arms]  # one gather per pull
        return self._means(self.X[arms], self.theta_at(times))

    def arm_means_at(self, arms: np.ndarray, times: np.ndarray) -> np.ndarray:
        """x_{arms[i]}ᵀ θ_{times[i]} for each i: the noise-free reward of each pull (bitwise
        the mean :meth:`pull` uses)."""
        arms = np.asarray(arms, dtype=np.int64)
        times = np.asarray(times, dtype=np.int64)
        if arms.shape != times.shape or arms.ndim != 1:
            raise ValueError(f"arms and times must be 1-D of the same length, got {arms.shape} "
                             f"and {times.shape}")
        if arms.size and (arms.min() < 0 or arms.max() >= self.n_arms):
            raise ValueError(f"arms must lie in [0, {self.n_arms})")
        return self._means_at(arms, times)

    def arm_means_table(self, horizon: int | None = None, *, one_period: bool = False
                        ) -> np.ndarray:
        """Mean reward of every arm at every time.

        Parameters
        ----------
        horizon : int, optional
            T (default the environment's horizon).
        one_period : bool
            Periodic schedules only: return one period instead of T rows.

        Returns
        -------
        array
            Shape (T, K) with entry [t, a] = X[a]ᵀθ_t for t = 0..T−1; with ``one_period``,
            shape (``period``, K) with entry [t mod period, a] = X[a]ᵀθ_t for every t ≥ 0.
            Entries are bitwise the means :meth:`pull` and :meth:`arm_means_at` use.
        """
        if one_period:
            if not self._periodic:
                raise ValueError("one_period needs a periodic schedule (periodic=True)")
            n = int(self.period)  # type: ignore[arg-type]
        else:
            n = self._horizon(horizon)
        table = self._table_means()
        if table is not None:
            return table[self._rows(np.arange(n, dtype=np.int64))]
        out = np.empty((n, self.n_arms))
        step = max(1, _CHUNK // self.n_arms)
        for start in range(0, n, step):
            thetas = self.theta_at(np.arange(start, min(n, start + step)))
            out[start:start + thetas.shape[0]] = self._means(self.X[None, :, :],
                                                             thetas[:, None, :])
        return out

    # --- answering batches ------------------------------------------------------------------

    def _per_pull(self, batch: Batch, t0: int, fn: Callable[[np.ndarray, np.ndarray],
                                                              np.ndarray]) -> np.ndarray:
        """Apply ``fn(arm_indices, times)`` to every pull in chunks and sum per run."""
        seq = batch.sequence()
        values = np.empty(seq.size)
        for start in range(0, seq.size, _CHUNK):
            stop = min(seq.size, start + _CHUNK)
            values[start:stop] = fn(seq[start:stop], np.arange(t0 + start, t0 + stop))
        return batch.sum_runs(values)

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        self._check_batch(batch)

        def sample(arms: np.ndarray, times: np.ndarray) -> np.ndarray:
            mu = self._means_at(arms, times)
            if self.noise == "bernoulli":
                if np.any(mu < 0) or np.any(mu > 1):
                    raise ValueError("Bernoulli noise needs every mean x^T theta_t in [0, 1]")
                return (rng.random(mu.size) < mu).astype(float)
            return mu + self.sigma * rng.standard_normal(mu.size)

        return Outcome(self._per_pull(batch, t0, sample))

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        """Dynamic pseudo-regret per run: Σ_t (max_x x^T θ_t − x_t^T θ_t)."""
        self._check_batch(batch)
        table = self._table_means()

        def lost(arms: np.ndarray, times: np.ndarray) -> np.ndarray:
            all_means = (table[self._rows(times)] if table is not None
                         else self.theta_at(times) @ self.X.T)
            return all_means.max(axis=1) - all_means[np.arange(arms.size), arms]

        return self._per_pull(batch, t0, lost)

    def __repr__(self) -> str:
        extra = f", period={self.period}" if self.period is not None else ""
        return f"NonStationaryLinearBandit(K={self.n_arms}, d={self.d}, T={self.horizon}{extra})"
