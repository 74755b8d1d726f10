"""Non-stationary linear bandits: the reward of a pull of x at time t is x^T θ_t plus noise, for
a schedule θ_1..θ_T fixed in advance (Xiong et al., "P1-RAGE", Section 2).

Rewards depend on each pull's time, so a batch is answered pull by pull — vectorised over the
pulls of the batch in chunks, never a Python loop per pull.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..protocol import Batch
from ..validation import check_arms
from .base import Environment, Outcome

__all__ = ["NonStationaryLinearBandit"]

_CHUNK = 1 << 18  # pulls per vectorised chunk: bounds memory at a few tens of MB


class NonStationaryLinearBandit(Environment):
    """Linear bandit with a parameter schedule θ_t.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms.
    schedule : array of shape (T, d), or callable
        θ_t for t = 0..T−1, or a function mapping an integer array of times to an array of shape
        (len(times), d).
    Z : array, shape (M, d), optional
        Items; defaults to ``X``.
    horizon : int, optional
        T, the budget over which the best item is defined; defaults to the schedule's length.
        Required when ``schedule`` is a callable.
    noise : {"gaussian", "bernoulli"}
    sigma : float
        Gaussian noise standard deviation.

    Notes
    -----
    The best item is argmax_z z^T θ̄_T with θ̄_T = (1/T) Σ_t θ_t, the target of fixed-budget
    identification in the non-stationary setting (Xiong et al., Section 2).
    """

    stationary = False

    def __init__(self, X: np.ndarray, schedule: np.ndarray | Callable[[np.ndarray], np.ndarray],
                 Z: np.ndarray | None = None, *, horizon: int | None = None,
                 noise: str = "gaussian", sigma: float = 1.0) -> None:
        self.X = check_arms(X, "X")
        self.Z = self.X if Z is None else check_arms(Z, "Z")
        self.n_arms, self.d = self.X.shape
        if self.Z.shape[1] != self.d:
            raise ValueError(f"Z must have d = {self.d} columns like X, got {self.Z.shape[1]}")
        self.n_items = self.Z.shape[0]
        if callable(schedule):
            if horizon is None:
                raise ValueError("horizon is required when schedule is a function of t")
            self._fn: Callable[[np.ndarray], np.ndarray] | None = schedule
            self._table = None
        else:
            table = np.asarray(schedule, dtype=float)
            if table.ndim != 2 or table.shape[1] != self.d:
                raise ValueError(f"schedule must be an array of shape (T, {self.d}), got "
                                 f"{table.shape}")
            if not np.all(np.isfinite(table)):
                raise ValueError("schedule must be finite")
            self._fn, self._table = None, table
            horizon = table.shape[0] if horizon is None else horizon
            if horizon > table.shape[0]:
                raise ValueError(f"horizon {horizon} exceeds the schedule's length "
                                 f"{table.shape[0]}")
        if int(horizon) < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.horizon = int(horizon)
        if noise not in ("gaussian", "bernoulli"):
            raise ValueError(f"noise must be 'gaussian' or 'bernoulli', got {noise!r}")
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma}")
        self.noise, self.sigma = noise, float(sigma)

    def theta_at(self, times: np.ndarray) -> np.ndarray:
        """θ_t for each time in ``times`` (shape (n, d))."""
        times = np.asarray(times, dtype=np.int64)
        if self._table is not None:
            if times.size and (times.min() < 0 or times.max() >= self._table.shape[0]):
                raise ValueError(f"time outside the schedule [0, {self._table.shape[0]})")
            return self._table[times]
        out = np.asarray(self._fn(times), dtype=float)  # type: ignore[misc]
        if out.shape != (times.size, self.d):
            raise ValueError(f"schedule function must return shape ({times.size}, {self.d}), "
                             f"got {out.shape}")
        return out

    def mean_theta(self, horizon: int | None = None) -> np.ndarray:
        """θ̄_T, the average parameter over the first ``horizon`` times."""
        T = self.horizon if horizon is None else int(horizon)
        total = np.zeros(self.d)
        for start in range(0, T, _CHUNK):
            total += self.theta_at(np.arange(start, min(T, start + _CHUNK))).sum(axis=0)
        return total / T

    def best_item(self, horizon: int | None = None) -> int:
        return int(np.argmax(self.Z @ self.mean_theta(horizon)))

    def gaps(self, horizon: int | None = None) -> np.ndarray:
        """Item gaps under θ̄_T."""
        v = self.Z @ self.mean_theta(horizon)
        return v.max() - v

    def _per_pull(self, batch: Batch, t0: int, fn: Callable[[np.ndarray, np.ndarray],
                                                              np.ndarray]) -> np.ndarray:
        """Apply ``fn(arm_indices, thetas)`` to every pull in chunks and sum per run."""
        seq = batch.sequence()
        values = np.empty(seq.size)
        for start in range(0, seq.size, _CHUNK):
            stop = min(seq.size, start + _CHUNK)
            thetas = self.theta_at(np.arange(t0 + start, t0 + stop))
            values[start:stop] = fn(seq[start:stop], thetas)
        return batch.sum_runs(values)

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        self._check_batch(batch)

        def sample(arms: np.ndarray, thetas: np.ndarray) -> np.ndarray:
            mu = np.einsum("ij,ij->i", self.X[arms], thetas)
            if self.noise == "bernoulli":
                if np.any(mu < 0) or np.any(mu > 1):
                    raise ValueError("Bernoulli noise needs every mean x^T theta_t in [0, 1]")
                return (rng.random(mu.size) < mu).astype(float)
            return mu + self.sigma * rng.standard_normal(mu.size)

        return Outcome(self._per_pull(batch, t0, sample))

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        """Dynamic pseudo-regret per run: Σ_t (max_x x^T θ_t − x_t^T θ_t)."""
        self._check_batch(batch)

        def lost(arms: np.ndarray, thetas: np.ndarray) -> np.ndarray:
            all_means = thetas @ self.X.T
            return all_means.max(axis=1) - all_means[np.arange(arms.size), arms]

        return self._per_pull(batch, t0, lost)

    def __repr__(self) -> str:
        return f"NonStationaryLinearBandit(K={self.n_arms}, d={self.d}, T={self.horizon})"
