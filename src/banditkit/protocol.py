"""The ask/tell batch protocol between algorithms and environments (DESIGN.md).

An algorithm is a state machine driven from outside:

* :meth:`Algorithm.next_batch` returns the next pulls as a :class:`Batch` — runs of
  ``(arm, count)`` in pull order — or ``None`` when it stops (fixed-confidence identifiers, or a
  policy that has spent its horizon).
* :meth:`Algorithm.observe` takes the outcome: the *sum* of the rewards of each run (and of each
  cost, for constrained problems). Sums are all the algorithms here need, and they let a
  stationary environment answer a run of a million pulls with one Binomial or Normal draw.
  Per-pull data from a real system is turned into run sums with :meth:`Batch.sum_runs`.
* An algorithm whose update reads only per-arm reward sums and the number of pulls (the IPS
  estimates of G-BAI, P1-RAGE, P1-Peace and Mixed-Peace, Xiong et al.: ``Σ_t A(λ)⁻¹ x_t r_t =
  Σ_a A(λ)⁻¹ x_a S_a``) says so with :attr:`Algorithm.observes_arm_sums` and also takes
  :meth:`Algorithm.observe_arm_sums`: per-arm sums and pull counts instead of per-run sums.
* An epoch drawn i.i.d. from a design is an :class:`IIDBatch`: the design's cdf, the number of
  pulls and the PCG64 state ξ had when it was drawn. Its runs are computed only when something
  reads ``arms`` or ``counts`` (a simulation's environment does, and gets the numbers an
  eager draw gives, bit for bit); a live experiment reads pulls ``[h, h + m)`` in O(m)
  (:meth:`IIDBatch.arms_between`) and answers with per-arm sums, so nothing costs O(batch).
* Every algorithm records what it decided (:attr:`Algorithm.decisions`), which is what a
  replicability audit compares; identifiers expose :attr:`Algorithm.recommendation`.

Nothing here assumes a simulation: the same objects drive a real experiment.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .draws import ADVANCEABLE, advance_like_random, arms_of_uniforms, design_cdf, uniforms_at
from .validation import as_numbers

if TYPE_CHECKING:  # pragma: no cover
    from .engines import Engine

__all__ = ["Algorithm", "ArmOutOfRangeError", "Batch", "DecisionLog", "IIDBatch"]

_ONE = np.ones(1, dtype=np.int64)
_ONE.flags.writeable = False


@dataclass(frozen=True, eq=False)
class Batch:
    """A sequence of pulls, stored as runs: ``counts[i]`` consecutive pulls of arm ``arms[i]``.

    Parameters
    ----------
    arms : array of int, shape (r,)
        Arm index of each run, in pull order.
    counts : array of int, shape (r,)
        Number of pulls in each run (each ≥ 1).
    strategy : array of float, shape (K,), optional
        For algorithms that play a distribution over arms (constrained bandits), the strategy
        the pulls were sampled from; kept in the decision record.
    """

    arms: np.ndarray
    counts: np.ndarray
    strategy: np.ndarray | None = None

    def __post_init__(self) -> None:
        arms = np.ascontiguousarray(self.arms, dtype=np.int64).reshape(-1)
        counts = np.ascontiguousarray(self.counts, dtype=np.int64).reshape(-1)
        if arms.shape != counts.shape:
            raise ValueError(f"Batch arms and counts must have the same length, got "
                             f"{arms.size} and {counts.size}")
        if counts.size and counts.min() < 1:
            raise ValueError("Batch counts must be >= 1 for every run")
        if arms.size and arms.min() < 0:
            raise ValueError("Batch arms must be non-negative indices")
        object.__setattr__(self, "arms", arms)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "_n_pulls", int(counts.sum()))

    @classmethod
    def single(cls, arm: int) -> Batch:
        """One pull of ``arm`` (a fully sequential policy's batch)."""
        arm = int(arm)
        if arm < 0:
            raise ValueError("Batch arms must be non-negative indices")
        # Sequential policies build one of these per pull: skip the general validation.
        batch = object.__new__(cls)
        object.__setattr__(batch, "arms", np.array([arm], dtype=np.int64))
        object.__setattr__(batch, "counts", _ONE)
        object.__setattr__(batch, "strategy", None)
        object.__setattr__(batch, "_n_pulls", 1)
        return batch

    @classmethod
    def from_allocation(cls, allocation: np.ndarray) -> Batch:
        """``allocation[k]`` pulls of each arm ``k``, arms in index order; zero entries skipped."""
        alloc = np.asarray(allocation)
        if alloc.ndim != 1 or np.any(alloc < 0):
            raise ValueError("allocation must be a 1-D array of non-negative integers")
        arms = np.flatnonzero(alloc)
        return cls(arms, alloc[arms])

    @classmethod
    def from_sequence(cls, arms: np.ndarray, strategy: np.ndarray | None = None) -> Batch:
        """A batch from an explicit pull sequence; consecutive repeats are merged into runs."""
        return cls(*_sequence_runs(np.asarray(arms, dtype=np.int64).reshape(-1)), strategy)

    @property
    def n_pulls(self) -> int:
        """Total number of pulls."""
        return self._n_pulls  # type: ignore[attr-defined]

    @property
    def n_runs(self) -> int:
        return int(self.arms.size)

    def sequence(self) -> np.ndarray:
        """The pull sequence, one arm index per pull (O(pulls) memory: for small batches)."""
        return np.repeat(self.arms, self.counts)

    def allocation(self, n_arms: int) -> np.ndarray:
        """Pulls per arm, length ``n_arms``."""
        if self.arms.size and self.arms.max() >= n_arms:
            raise ValueError(f"batch pulls arm {int(self.arms.max())}, but there are only "
                             f"{n_arms} arms")
        if self.n_pulls < 2**53:  # float64 weights sum integers exactly below 2⁵³
            return np.bincount(self.arms, weights=self.counts, minlength=n_arms).astype(np.int64)
        out = np.zeros(n_arms, dtype=np.int64)  # the epochs of 10¹⁶ rounds and more (DEBORA)
        np.add.at(out, self.arms, self.counts)
        return out

    def arm_sums(self, per_run: np.ndarray, n_arms: int) -> np.ndarray:
        """Totals per arm (length ``n_arms``) of per-run values, e.g. the reward sums that
        :meth:`Algorithm.observe` receives."""
        return np.bincount(self.arms, weights=np.asarray(per_run, dtype=float),
                           minlength=n_arms)

    def sum_runs(self, per_pull: np.ndarray) -> np.ndarray:
        """Sum per-pull values (rewards, or costs with a trailing axis) over each run."""
        values = np.asarray(per_pull, dtype=float)
        if values.shape[0] != self.n_pulls:
            raise ValueError(f"expected {self.n_pulls} per-pull values, got {values.shape[0]}")
        if self.n_runs == 0:
            return np.zeros((0, *values.shape[1:]))
        starts = np.r_[0, np.cumsum(self.counts)[:-1]]
        return np.add.reduceat(values, starts, axis=0)

    def is_prefix_of(self, other: Batch) -> bool:
        """Whether this batch is ``other`` or its first pulls (what :meth:`truncated` gives),
        in the same order: the runs agree except that the last may be shorter."""
        r = self.n_runs
        if r > other.n_runs:
            return False
        if r == 0:
            return True
        return bool(np.array_equal(self.arms, other.arms[:r])
                    and np.array_equal(self.counts[:-1], other.counts[:r - 1])
                    and self.counts[-1] <= other.counts[r - 1])

    def truncated(self, n: int) -> Batch:
        """The first ``n`` pulls of this batch (``n`` ≤ ``n_pulls``)."""
        if n >= self.n_pulls:
            return self
        ends = np.cumsum(self.counts)
        r = int(np.searchsorted(ends, n, side="left"))  # run holding pull number n
        counts = self.counts[: r + 1].copy()
        counts[-1] -= ends[r] - n
        keep = counts > 0
        return Batch(self.arms[: r + 1][keep], counts[keep], self.strategy)


def _sequence_runs(seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximal runs ``(arms, counts)`` of the pull sequence ``seq`` (int64), in few array
    passes (an epoch of i.i.d. pulls is mostly runs of one pull)."""
    if seq.size == 0:
        return seq, seq.copy()
    starts = np.flatnonzero(seq[1:] != seq[:-1])
    starts += 1
    bounds = np.empty(starts.size + 2, dtype=np.int64)
    bounds[0], bounds[-1] = 0, seq.size
    bounds[1:-1] = starts
    return seq[bounds[:-1]], np.diff(bounds)


class IIDBatch(Batch):
    """``n_pulls`` pulls drawn i.i.d. from a design, described rather than listed.

    Pull ``s`` (0-based) is ``searchsorted(cdf, u_s, side="right")`` with ``u_s`` the s-th
    double of the PCG64 stream that starts at ``state`` — the arm ``ξ.choice(K, p=λ)`` gives
    (:mod:`banditkit.draws`). The description is O(K) whatever ``n_pulls``; ``arms`` and
    ``counts`` (the runs of :class:`Batch`) are computed on first use and kept, so code that
    reads runs sees an ordinary batch, the same numbers as an eager draw. What does not read
    them costs O(K): :attr:`n_pulls`, :meth:`truncated` (a prefix of an i.i.d. sequence is its
    first draws), :meth:`is_prefix_of` between two descriptions, :meth:`arms_between` (pulls
    ``[start, start + count)`` in O(count)), :meth:`DecisionLog.record` (deferred) and
    :meth:`Algorithm.observe_arm_sums`.

    Build one with :meth:`draw`, which also moves ξ past the batch's doubles, exactly where
    drawing them would leave it.

    Parameters
    ----------
    cdf : array of float, shape (K,)
        The design's cdf, non-decreasing and ending at exactly 1.0
        (:func:`banditkit.draws.design_cdf`).
    state : dict
        ``bit_generator.state`` of a PCG64 (or PCG64DXSM) generator at the batch's first pull.
    n_pulls : int
        Number of pulls (≥ 0).
    strategy : array, optional
        As in :class:`Batch`.
    """

    def __init__(self, cdf: np.ndarray, state: dict, n_pulls: int,
                 strategy: np.ndarray | None = None) -> None:
        cdf = np.array(cdf, dtype=float).reshape(-1)
        if (cdf.size == 0 or cdf[-1] != 1.0 or np.any(np.diff(cdf) < 0) or cdf[0] < 0
                or not np.isfinite(cdf).all()):
            raise ValueError("IIDBatch cdf must be non-decreasing from >= 0 and end at 1.0")
        if not isinstance(state, dict) or state.get("bit_generator") not in {
                c.__name__ for c in ADVANCEABLE}:
            raise ValueError("IIDBatch state must be the state dict of a PCG64 or PCG64DXSM "
                             "bit generator")
        if int(n_pulls) < 0:
            raise ValueError("IIDBatch n_pulls must be >= 0")
        cdf.setflags(write=False)
        object.__setattr__(self, "cdf", cdf)
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "_n_pulls", int(n_pulls))
        object.__setattr__(self, "strategy", strategy)

    @classmethod
    def draw(cls, xi: np.random.Generator, weights: np.ndarray, n: int) -> Batch:
        """``n`` pulls i.i.d. from ``weights`` (a probability vector) with ``xi``: the arms of
        ``xi.choice(K, size=n, p=weights)``, and ``xi`` left where that draw leaves it.

        With a PCG64 (or PCG64DXSM) ``xi`` this is an :class:`IIDBatch` and costs O(K + log n);
        with any other bit generator the pulls are drawn now (a plain :class:`Batch`)."""
        cdf = design_cdf(weights)
        bit_generator = xi.bit_generator
        if type(bit_generator) not in ADVANCEABLE:
            return Batch(*_sequence_runs(arms_of_uniforms(cdf, xi.random(n))))
        state = bit_generator.state
        advance_like_random(bit_generator, n)
        return cls(cdf, state, n)

    def __getattr__(self, name: str) -> np.ndarray:
        # only reached for attributes not set yet: the runs, computed once on first use
        if name in ("arms", "counts") and "cdf" in self.__dict__:
            arms, counts = _sequence_runs(self.arms_between(0, self.n_pulls))
            object.__setattr__(self, "arms", arms)
            object.__setattr__(self, "counts", counts)
            return self.__dict__[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return (f"IIDBatch(n_pulls={self.n_pulls}, K={self.n_arms}, "
                f"materialised={self.materialised})")

    @property
    def n_arms(self) -> int:
        """K, the length of the design (arms drawn are below it)."""
        return int(self.cdf.size)

    @property
    def materialised(self) -> bool:
        """Whether the runs (``arms``, ``counts``) have been computed."""
        return "arms" in self.__dict__

    def arms_between(self, start: int, count: int) -> np.ndarray:
        """The arms of pulls ``start .. start + count − 1`` (int64), in O(log start + count)."""
        start, count = int(start), int(count)
        if start < 0 or count < 0 or start + count > self.n_pulls:
            raise ValueError(f"pulls [{start}, {start + count}) are not within the batch's "
                             f"{self.n_pulls}")
        return arms_of_uniforms(self.cdf, uniforms_at(self.state, start, count))

    def arms_at(self, slots: np.ndarray) -> np.ndarray:
        """The arms of the pulls at positions ``slots`` (any order, distinct or not): one jump
        per maximal range of consecutive positions, O(len(slots) · log n_pulls) at worst."""
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        out = np.empty(slots.size, dtype=np.int64)
        if slots.size == 0:
            return out
        order = np.argsort(slots, kind="stable")
        ordered = slots[order]
        breaks = np.flatnonzero(np.diff(ordered) > 1) + 1
        for part in np.split(np.arange(ordered.size), breaks):
            low, high = int(ordered[part[0]]), int(ordered[part[-1]])
            out[order[part]] = self.arms_between(low, high - low + 1)[ordered[part] - low]
        return out

    def sequence(self) -> np.ndarray:
        return self.arms_between(0, self.n_pulls)

    def truncated(self, n: int) -> Batch:
        """The first ``n`` pulls: the same description with fewer pulls (O(K))."""
        if n >= self.n_pulls:
            return self
        return IIDBatch(self.cdf, self.state, n, self.strategy)

    def is_prefix_of(self, other: Batch) -> bool:
        if isinstance(other, IIDBatch):
            return (self.state == other.state and np.array_equal(self.cdf, other.cdf)
                    and self.n_pulls <= other.n_pulls)
        return super().is_prefix_of(other)


class DecisionLog:
    """What an algorithm decided: its pulls as (arm, count) runs, batch boundaries, and strategies.

    Two executions *replicate* when their logs are equal (:meth:`same_as`);
    :meth:`count_differences` counts the pulls at which two pull sequences differ without ever
    expanding the runs, so a run of 10^9 pulls costs O(1).

    Runs live in growable arrays (amortised O(1) per recorded run), so a sequential policy's
    million one-pull batches cost a few megabytes, not a million array objects.
    """

    def __init__(self) -> None:
        self._arms = np.empty(16, dtype=np.int64)
        self._counts = np.empty(16, dtype=np.int64)
        self._n_runs = 0
        self._batch_ends = np.empty(16, dtype=np.int64)  # run index one past each batch
        self._n_batches = 0
        self._strategies: list[np.ndarray] = []
        # batches recorded but not yet written into the arrays: an IIDBatch whose runs were
        # never read (a live experiment's epoch of 10⁹ pulls), and every batch after it, so
        # that recording costs O(1) and the runs are computed only if the log is read
        self._deferred: list[Batch] = []

    @classmethod
    def from_runs(cls, arms: np.ndarray, counts: np.ndarray, batch_ends: np.ndarray
                  ) -> DecisionLog:
        """The log of batches given at once: runs ``(arms, counts)`` in pull order, and
        ``batch_ends[b]`` the run index one past batch ``b``'s last run (no strategies).

        Equal to recording each batch in turn, in O(runs) numpy work: a lock-step driver's
        million one-pull batches are built without a million :meth:`record` calls. int64
        arrays are kept without a copy (the log never writes into them: :meth:`record`
        appends into a new buffer), so trials may share read-only ``counts`` and ``batch_ends``.
        """
        arms = np.asarray(arms, dtype=np.int64).reshape(-1)
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        ends = np.asarray(batch_ends, dtype=np.int64).reshape(-1)
        if arms.shape != counts.shape:
            raise ValueError(f"arms and counts must have the same length, got {arms.size} and "
                             f"{counts.size}")
        if counts.size and (counts.min() < 1 or arms.min() < 0):
            raise ValueError("runs need non-negative arms and counts >= 1")
        if ends.size and (np.any(np.diff(ends) < 0) or ends[0] < 0 or ends[-1] != arms.size):
            raise ValueError("batch_ends must be non-decreasing and end at the number of runs")
        if not ends.size and arms.size:
            raise ValueError("runs given without any batch")
        log = cls()
        log._arms, log._counts, log._n_runs = arms, counts, int(arms.size)
        log._batch_ends, log._n_batches = ends, int(ends.size)
        return log

    @staticmethod
    def _grow(buffer: np.ndarray, needed: int) -> np.ndarray:
        if needed <= buffer.size:
            return buffer
        bigger = np.empty(max(needed, 2 * buffer.size), dtype=buffer.dtype)
        bigger[: buffer.size] = buffer
        return bigger

    def record(self, batch: Batch) -> None:
        """Append ``batch``; an :class:`IIDBatch` whose runs are not computed is kept as it
        is until the log is read."""
        if self._deferred or (isinstance(batch, IIDBatch) and not batch.materialised):
            self._deferred.append(batch)
            return
        self._append(batch)

    def _flush(self) -> None:
        deferred, self._deferred = self._deferred, []
        for batch in deferred:
            self._append(batch)

    def _append(self, batch: Batch) -> None:
        r, n = batch.n_runs, self._n_runs
        self._arms = self._grow(self._arms, n + r)
        self._counts = self._grow(self._counts, n + r)
        self._arms[n: n + r] = batch.arms
        self._counts[n: n + r] = batch.counts
        self._n_runs = n + r
        self._batch_ends = self._grow(self._batch_ends, self._n_batches + 1)
        self._batch_ends[self._n_batches] = self._n_runs
        self._n_batches += 1
        if batch.strategy is not None:
            self._strategies.append(np.asarray(batch.strategy, dtype=float))

    @property
    def n_batches(self) -> int:
        return self._n_batches + len(self._deferred)

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """All pulls as maximal runs ``(arms, counts)``: adjacent runs of one arm are merged."""
        self._flush()
        arms = self._arms[: self._n_runs]
        counts = self._counts[: self._n_runs]
        if arms.size == 0:
            return arms.copy(), counts.copy()
        starts = np.flatnonzero(np.r_[True, arms[1:] != arms[:-1]])
        return arms[starts], np.add.reduceat(counts, starts)

    def batches(self) -> list[Batch]:
        """The recorded batches in order, each with its strategy if one was played."""
        self._flush()
        strategies = self._strategies if len(self._strategies) == self.n_batches else None
        ends = self._batch_ends[: self._n_batches]
        starts = np.r_[0, ends[:-1]]
        return [Batch(self._arms[a:b], self._counts[a:b],
                      None if strategies is None else strategies[i])
                for i, (a, b) in enumerate(zip(starts, ends, strict=True))]

    def batch_sizes(self) -> np.ndarray:
        """Number of pulls in each recorded batch."""
        self._flush()
        ends = self._batch_ends[: self._n_batches]
        cum = np.r_[0, np.cumsum(self._counts[: self._n_runs])]
        return np.diff(np.r_[0, cum[ends]])

    def strategies(self) -> np.ndarray | None:
        """Strategies played, one row per batch that carried one."""
        self._flush()
        return np.vstack(self._strategies) if self._strategies else None

    def same_as(self, other: DecisionLog, atol: float = 0.0) -> bool:
        """Identical pull sequences (and identical strategies, if any were played)."""
        a_arms, a_counts = self.runs()
        b_arms, b_counts = other.runs()
        if not (np.array_equal(a_arms, b_arms) and np.array_equal(a_counts, b_counts)):
            return False
        sa, sb = self.strategies(), other.strategies()
        if sa is None or sb is None:
            return sa is None and sb is None
        return sa.shape == sb.shape and bool(np.all(np.abs(sa - sb) <= atol))

    def count_differences(self, other: DecisionLog) -> int:
        """Number of pull positions t at which the two arm sequences differ.

        Positions beyond the shorter sequence count as differences.
        """
        a_arms, a_counts = self.runs()
        b_arms, b_counts = other.runs()
        a_end, b_end = np.cumsum(a_counts), np.cumsum(b_counts)
        na = int(a_end[-1]) if a_end.size else 0
        nb = int(b_end[-1]) if b_end.size else 0
        common = min(na, nb)
        if common == 0:
            return max(na, nb)
        bounds = np.union1d(a_end[a_end < common], b_end[b_end < common])
        seg_start = np.r_[0, bounds]
        seg_len = np.diff(np.r_[seg_start, common])
        arm_a = a_arms[np.searchsorted(a_end, seg_start, side="right")]
        arm_b = b_arms[np.searchsorted(b_end, seg_start, side="right")]
        return int(seg_len[arm_a != arm_b].sum()) + abs(na - nb)


def _check_run_sums(batch: Batch, sums: np.ndarray, bounds: tuple[float, float], name: str
                    ) -> None:
    """Refuse run sums that ``count`` values in ``bounds`` cannot produce."""
    low, high = bounds
    n = batch.counts.astype(float)
    slack = 1e-9 * np.maximum(n, 1.0)
    bad = (sums < low * n - slack) | (sums > high * n + slack)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be sums of {name} in [{low:g}, {high:g}]: run {i} of "
                         f"{int(n[i])} pull(s) of arm {int(batch.arms[i])} got {sums[i]:g}")


class ArmOutOfRangeError(RuntimeError):
    """An algorithm asked for an arm it does not have (a bug in the algorithm, not the
    caller's mistake: :func:`banditkit.testing.check_algorithm` names it)."""


class Algorithm(ABC):
    """Base class of every bandit algorithm (regret policies and identifiers).

    Subclasses implement :meth:`_next_batch` and :meth:`_observe`; the public methods validate
    the exchange and keep the decision record, so that logic lives in one place.

    Attributes
    ----------
    n_arms : int
        Number of arms the algorithm pulls (rows of X for linear problems).
    kind : str
        ``"regret"`` for policies judged by cumulative regret, ``"identification"`` for
        best-arm identifiers judged by their recommendation.
    """

    n_arms: int
    kind: str = "regret"
    #: The interval every single reward lies in, when the algorithm's guarantees assume one
    #: (RepMean and Hoeffding bounds need [0, 1]); ``observe`` then refuses run sums that
    #: rewards in it cannot produce. ``None``: unbounded rewards (Gaussian noise) accepted.
    reward_range: tuple[float, float] | None = None
    #: The same for each cost of a constrained policy (``n_costs`` > 0).
    cost_range: tuple[float, float] | None = None
    #: Whether the update reads only per-arm reward sums and the number of pulls (IPS
    #: estimates): such an algorithm implements ``_observe_arm_sums`` and also takes
    #: :meth:`observe_arm_sums`, which never needs a batch's runs.
    observes_arm_sums: bool = False
    #: Costs observed per run (m constraints); a constrained policy sets it, and ``observe``
    #: then requires cost sums of shape (runs, m).
    n_costs: int = 0
    #: Where this class's engines are chosen (DESIGN.md, "Engines"; :mod:`banditkit.engines`):
    #: ``"package.module:function"`` with ``function(algorithm, env, horizon) -> Engine |
    #: None``, imported only when :func:`banditkit.simulate` asks (numba and the kernels stay
    #: out of the CLI's start-up, and the engine modules, which import the class, form no
    #: import cycle with it). ``None``: the protocol loop is the only engine. Subclasses
    #: inherit it, so a selector whose engine follows one class's rule checks
    #: ``type(algorithm) is ThatClass``.
    engines: ClassVar[str | None] = None

    def __init__(self, n_arms: int) -> None:
        self.n_arms = int(n_arms)
        self.decisions = DecisionLog()
        self.t = 0  # pulls observed so far
        self._pending: Batch | None = None
        self._cut = False  # a batch was answered in part: the run is over

    @abstractmethod
    def _next_batch(self) -> Batch | None:
        """The next pulls, or ``None`` to stop."""

    @abstractmethod
    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        """Update the state with the run sums of ``batch``."""

    @property
    def pending(self) -> Batch | None:
        """The batch asked for and not yet answered (``None`` when none is outstanding).

        A live experiment's status reads it to name the batch a committed algorithm plays.
        """
        return self._pending

    def next_batch(self) -> Batch | None:
        """Ask: the next batch of pulls, or ``None`` once the algorithm has stopped."""
        if self._pending is not None:
            return self._pending  # asked twice without an answer: the same question again
        if self._cut:
            return None
        batch = self._next_batch()
        if batch is not None:
            if isinstance(batch, IIDBatch) and not batch.materialised:
                top = batch.n_arms - 1 if batch.n_pulls else -1  # O(K): runs not computed
            else:
                top = int(batch.arms.max()) if batch.n_runs else -1
            if top >= self.n_arms:
                raise ArmOutOfRangeError(f"{type(self).__name__} asked for arm {top} of "
                                         f"{self.n_arms}")
        self._pending = batch
        return batch

    def observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None = None
                ) -> None:
        """Tell: reward sums per run of ``batch`` (and cost sums, shape (runs, m), if any).

        ``batch`` is the batch returned by :meth:`next_batch`, or a prefix of it
        (:meth:`Batch.truncated`) when the experiment ends part-way through the batch (a
        simulation cut off at its horizon). A prefix is the run's last answer: the algorithm
        updates on it (identifiers may recommend from a cut phase) and then asks for nothing
        more. To answer a batch unit by unit, in any order and over days, use
        :class:`banditkit.Experiment`, which calls ``observe`` once the batch is complete.
        """
        pending = self._pending
        if pending is None:
            why = (" (its last batch was answered in part, which ends the run)" if self._cut
                   else "")
            raise ValueError("observe() with no batch pending: call next_batch() first, and "
                             "answer each batch once (an algorithm that has stopped asks for "
                             f"nothing more{why})")
        if batch is not pending and not batch.is_prefix_of(pending):
            raise ValueError("batch must be the batch next_batch() returned, or a prefix of it "
                             "(Batch.truncated), in the same pull order")
        rewards = as_numbers(rewards, "rewards")
        if rewards.ndim != 1:
            raise ValueError(f"rewards must be a 1-D array with one sum per run of the batch, "
                             f"got shape {rewards.shape}")
        if rewards.shape[0] != batch.n_runs:
            raise ValueError(f"rewards must hold one sum per run of the batch ({batch.n_runs}), "
                             f"got {rewards.shape[0]}")
        if not np.isfinite(rewards).all():
            raise ValueError("rewards must be finite")
        if costs is None and self.n_costs:
            raise ValueError(f"costs are required: {type(self).__name__} observes the sums of "
                             f"its m = {self.n_costs} costs for every run")
        if costs is not None:
            costs = as_numbers(costs, "costs")
            if costs.ndim == 1:
                costs = costs[:, None]
            if costs.shape[0] != batch.n_runs:
                raise ValueError(f"costs must have one row per run ({batch.n_runs}), got "
                                 f"{costs.shape[0]}")
            if self.n_costs and (costs.ndim != 2 or costs.shape[1] != self.n_costs):
                raise ValueError(f"costs must have shape (runs, m={self.n_costs}), got "
                                 f"{costs.shape}")
            if not np.isfinite(costs).all():
                raise ValueError("costs must be finite")
        self._check_observation(batch, rewards, costs)  # refuses before any state changes
        self._pending = None
        self._cut = batch.n_pulls < pending.n_pulls
        self.decisions.record(batch)
        self.t += batch.n_pulls
        self._observe(batch, rewards, costs)

    def observe_arm_sums(self, batch: Batch, sums: np.ndarray, pulls: np.ndarray) -> None:
        """Tell, by arm: ``sums[a]`` the total reward of the ``pulls[a]`` pulls of arm ``a``.

        Only for an algorithm whose update reads nothing else (:attr:`observes_arm_sums`: the
        IPS estimates of Xiong et al.). The same exchange as :meth:`observe` — ``batch`` is the
        pending batch or a prefix of it, and is recorded in :attr:`decisions` — but the
        batch's runs are never read: an :class:`IIDBatch` of 10⁹ pulls is answered in O(K)
        (a live experiment answers from its per-arm running totals). ``pulls`` is checked
        against the batch's size (and, when its runs are known, against its allocation), and
        ``sums`` against :attr:`reward_range`.

        With 0/1 rewards the sums are integers and the update equals :meth:`observe`'s on the
        same pulls, bit for bit; with other rewards it equals it up to the rounding of the
        sums' order of addition.
        """
        if not self.observes_arm_sums or self.n_costs:
            raise ValueError(f"{type(self).__name__} observes run sums (call observe()): its "
                             "update needs more than per-arm reward sums")
        pending = self._pending
        if pending is None:
            raise ValueError("observe_arm_sums() with no batch pending: call next_batch() "
                             "first, and answer each batch once")
        if batch is not pending and not batch.is_prefix_of(pending):
            raise ValueError("batch must be the batch next_batch() returned, or a prefix of it "
                             "(Batch.truncated)")
        sums = as_numbers(sums, "sums")
        pulls_arr = np.asarray(pulls)
        K = self.n_arms
        if sums.shape != (K,) or not np.isfinite(sums).all():
            raise ValueError(f"sums must be {K} finite numbers, one per arm, got shape "
                             f"{sums.shape}")
        if (pulls_arr.shape != (K,) or pulls_arr.dtype.kind not in "iu"
                or np.any(pulls_arr < 0) or int(pulls_arr.sum()) != batch.n_pulls):
            raise ValueError(f"pulls must be {K} non-negative integers, one per arm, summing "
                             f"to the batch's {batch.n_pulls} pulls")
        pulls_arr = pulls_arr.astype(np.int64)
        known = not isinstance(batch, IIDBatch) or batch.materialised
        if known and not np.array_equal(pulls_arr, batch.allocation(K)):
            raise ValueError("pulls must be the batch's pulls of each arm")
        if self.reward_range is not None:
            low, high = self.reward_range
            n = pulls_arr.astype(float)
            slack = 1e-9 * np.maximum(n, 1.0)
            bad = np.flatnonzero((sums < low * n - slack) | (sums > high * n + slack))
            if bad.size:
                a = int(bad[0])
                raise ValueError(f"sums must be sums of rewards in [{low:g}, {high:g}]: arm {a} "
                                 f"with {int(n[a])} pull(s) got {sums[a]:g}")
        self._pending = None
        self._cut = batch.n_pulls < pending.n_pulls
        self.decisions.record(batch)
        self.t += batch.n_pulls
        self._observe_arm_sums(batch, sums)

    def _observe_arm_sums(self, batch: Batch, sums: np.ndarray) -> None:
        """Update from per-arm reward sums (algorithms with :attr:`observes_arm_sums`)."""
        raise TypeError(f"{type(self).__name__} sets observes_arm_sums but does not define "
                        "_observe_arm_sums")

    def _check_observation(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None
                           ) -> None:
        """Refuse an outcome this algorithm knows cannot be true (sums outside what bounded
        rewards give, missing costs...), before :meth:`observe` changes any state, so the
        batch stays pending and can be answered again. The default checks the run sums
        against :attr:`reward_range` and :attr:`cost_range`."""
        if self.reward_range is not None:
            _check_run_sums(batch, rewards, self.reward_range, "rewards")
        if self.cost_range is not None and costs is not None:
            for i in range(costs.shape[1]):
                _check_run_sums(batch, costs[:, i], self.cost_range, "costs")

    def engine(self, env: object, horizon: int | None) -> Engine | None:
        """The fastest exact engine for running this fresh algorithm on ``env`` for at most
        ``horizon`` pulls, or ``None`` for the protocol loop (:mod:`banditkit.engines`).

        :func:`banditkit.simulate` asks it once per trial, only while the algorithm is fresh
        (nothing observed, nothing pending). The default reads :attr:`engines`; a class may
        override this method instead.
        """
        if self.engines is None:
            return None
        module, _, function = self.engines.partition(":")
        return getattr(importlib.import_module(module), function)(self, env, horizon)

    @property
    def fresh(self) -> bool:
        """Whether nothing has been asked or observed yet (what an engine may start from)."""
        return (self.t == 0 and self._pending is None and not self._cut
                and self.decisions.n_batches == 0)

    @property
    def stops_by_itself(self) -> bool:
        """Whether ``next_batch`` returns ``None`` by itself at some point: identifiers do, and
        a policy that knows it does may say so (a class attribute ``stops_by_itself = True``);
        :func:`banditkit.simulate` needs a horizon for the others, which would run for ever."""
        return self.kind == "identification"

    @property
    def recommendation(self) -> int | None:
        """The identified item (identifiers) or ``None``."""
        return None

    @property
    def info(self) -> dict:
        """Algorithm-specific facts worth recording with a trial (phases, eliminations...)."""
        return {}
