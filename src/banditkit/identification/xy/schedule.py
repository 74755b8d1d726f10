"""The phase schedule of a static allocation (XY-static, XY-oracle): what its phases are
before any reward is seen, computed once per (arms, design, γ) and shared by every trial.

Fiez et al. (NeurIPS 2019), Section 5 and Appendix F: phase t adds ⌈γ^t⌉ pulls, and the
cumulative allocation after phase t is the largest of the efficient roundings (Appendix B) of
the fixed design λ to the cumulative budgets so far
(:class:`~banditkit.identification.xy._StaticAllocation`). None of this reads a reward: from a
fresh start the pulls of every phase, hence the Gram matrix ``A_t = Σ_x N_t(x) x xᵀ`` and its
pseudo-inverse, are the same in every trial on the instance. A figure runs 20 trials on one
Soare instance, so the roundings and the ~110 eigendecompositions of a trial are done once per
process; a trial only draws its noise and solves ``θ̂_t = A_t⁺ b_t`` (see
:mod:`~banditkit.identification.xy_blocks`).

The schedule is built in chunks of 64 phases, extended on demand; each chunk's arrays are
exactly those the phase-chunk driver computed per trial before (the same roundings, the same
batched ``eigh`` with the pseudo-inverse of
:class:`~banditkit.estimation.least_squares.LeastSquares`), so the numbers do not change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...design import round_allocations
from ..memo import ArrayMemo

__all__ = ["CHUNK", "SCHEDULE_MEMO", "PhaseChunk", "PhaseSchedule", "gram_pinv",
           "phase_schedule"]

CHUNK = 64  # phases per chunk
_RCOND = 1e-12  # as LeastSquares
_ARRAYS = ("targets", "counts", "ends", "phase_of", "arm_of", "pos_of", "run_counts", "run_ends",
           "A_inv", "full_rank")


def gram_pinv(X: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pseudo-inverses of ``A = Σ_k counts[p, k] x_k x_kᵀ`` for every row ``p``, and whether
    each ``A`` has full rank.

    Batched symmetric eigendecomposition with the cut of
    :class:`~banditkit.estimation.least_squares.LeastSquares` (eigenvalues ≤ 10⁻¹² of the
    largest are dropped), so the rank test and the inverse are the sequential class's.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (a design's support: the other arms have no pulls and add nothing to ``A``).
    counts : array of int, shape (P, K)
        Cumulative pulls of each arm after each phase.

    Returns
    -------
    A_inv : array, shape (P, d, d)
    full_rank : array of bool, shape (P,)
    """
    A = np.matmul(counts.astype(float)[:, None, :] * X.T[None], X)
    w, V = np.linalg.eigh(A)
    keep = w > _RCOND * np.maximum(w[:, -1:], 0.0)
    inv_w = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
    A_inv = (V * inv_w[:, None, :]) @ np.swapaxes(V, 1, 2)
    return A_inv, keep.sum(axis=1) == X.shape[1]


@dataclass(frozen=True)
class PhaseChunk:
    """Phases ``first + 1 … first + n`` of a static allocation from a fresh start.

    Attributes
    ----------
    first : int
        Phases before the chunk.
    targets : array of int64, shape (n,)
        Cumulative budget asked for at the end of each phase (Σ_{s ≤ t} ⌈γ^s⌉).
    counts : array of int64, shape (n, p)
        Cumulative pulls of each support arm after each phase.
    ends : array of int64, shape (n,)
        Cumulative pulls after each phase.
    phase_of, arm_of, pos_of, run_counts : arrays of int64, shape (r,)
        The runs of every phase's batch in pull order (phase by phase, arms in index order as
        :meth:`~banditkit.protocol.Batch.from_allocation` gives them): the phase (within the
        chunk), the arm, its position in the support, and the pulls.
    run_ends : array of int64, shape (n,)
        Runs up to the end of each phase (within the chunk).
    A_inv : array, shape (n, d, d)
        ``A_t⁺`` after each phase.
    full_rank : array of bool, shape (n,)
        Whether ``A_t`` has rank d (the stopping rule certifies nothing before).
    """

    first: int
    targets: np.ndarray
    counts: np.ndarray
    ends: np.ndarray
    phase_of: np.ndarray
    arm_of: np.ndarray
    pos_of: np.ndarray
    run_counts: np.ndarray
    run_ends: np.ndarray
    A_inv: np.ndarray
    full_rank: np.ndarray

    def __post_init__(self) -> None:
        # Every trial on the instance reads these arrays: none may write into them.
        for name in _ARRAYS:
            getattr(self, name).flags.writeable = False

    @property
    def n_phases(self) -> int:
        return int(self.targets.size)

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in _ARRAYS)

    def cut(self, n_phase: int, room: int, X: np.ndarray, support: np.ndarray,
            counts0: np.ndarray) -> PhaseChunk:
        """The first ``n_phase`` phases, the last one's runs cut after ``room`` of its pulls
        (as :func:`banditkit.simulate` cuts the batch that crosses the horizon);
        ``counts0`` are the support's pulls before the chunk."""
        last = n_phase - 1
        r0 = int(self.run_ends[last - 1]) if last else 0
        lens = np.diff(np.r_[0, np.minimum(np.cumsum(self.run_counts[r0:self.run_ends[last]]),
                                           room)])
        keep = np.flatnonzero(lens > 0) + r0
        sel = np.r_[np.arange(r0), keep]
        run_counts = np.r_[self.run_counts[:r0], lens[lens > 0]]
        counts = self.counts[:n_phase].copy()
        counts[last] = counts[last - 1] if last else counts0
        np.add.at(counts[last], self.pos_of[keep], run_counts[r0:])
        A_inv = self.A_inv[:n_phase].copy()
        full_rank = self.full_rank[:n_phase].copy()
        a, f = gram_pinv(X[support], counts[last:])
        A_inv[last], full_rank[last] = a[0], f[0]
        run_ends = self.run_ends[:n_phase].copy()
        run_ends[last] = sel.size
        return PhaseChunk(self.first, self.targets[:n_phase], counts,
                          counts.sum(axis=1), self.phase_of[sel], self.arm_of[sel],
                          self.pos_of[sel], run_counts, run_ends, A_inv, full_rank)


class PhaseSchedule:
    """The phases of a static allocation of design ``weights`` with growth ``gamma`` on arms
    ``X``, from a fresh start, built :data:`CHUNK` phases at a time on demand.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms.
    weights : array, shape (K,)
        The fixed design λ.
    gamma : float
        Phase growth factor (> 1).
    """

    def __init__(self, X: np.ndarray, weights: np.ndarray, gamma: float) -> None:
        self.X = X
        self.weights = np.asarray(weights, dtype=float)
        self.gamma = gamma
        self.support = np.flatnonzero(self.weights > 0)
        self._chunks: list[PhaseChunk] = []

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._chunks)

    def chunk(self, i: int) -> PhaseChunk:
        """Chunk ``i`` (phases ``64 i + 1 … 64 (i + 1)``)."""
        while len(self._chunks) <= i:
            self._chunks.append(self._next())
        return self._chunks[i]

    def _next(self) -> PhaseChunk:
        K = self.X.shape[0]
        prev = self._chunks[-1] if self._chunks else None
        first = prev.first + prev.n_phases if prev else 0
        target0 = int(prev.targets[-1]) if prev else 0
        counts0 = np.zeros(K, dtype=np.int64)
        if prev:
            counts0[self.support] = prev.counts[-1]
        phases = first + 1 + np.arange(CHUNK)
        sizes = np.array([math.ceil(self.gamma ** int(s)) for s in phases], dtype=np.int64)
        targets = target0 + np.cumsum(sizes)
        rounded = round_allocations(self.weights, targets)
        # Pulls already made are never taken back: the running maximum of the roundings.
        cum = np.maximum.accumulate(np.maximum(rounded, counts0), axis=0)
        alloc = np.diff(np.vstack([counts0, cum]), axis=0)
        phase_of, arm_of = np.nonzero(alloc)
        run_counts = alloc[phase_of, arm_of]
        pos = np.zeros(K, dtype=np.int64)
        pos[self.support] = np.arange(self.support.size)
        run_ends = np.searchsorted(phase_of, np.arange(CHUNK), side="right")
        counts = np.ascontiguousarray(cum[:, self.support])
        A_inv, full_rank = gram_pinv(self.X[self.support], counts)
        return PhaseChunk(first, targets, counts, counts.sum(axis=1), phase_of, arm_of,
                          pos[arm_of], run_counts, run_ends, A_inv, full_rank)


#: Schedules by (arms, design, γ): one per instance of a figure's fixed instance; an
#: instance-per-trial figure adds one per trial (kept small: support-sized counts).
SCHEDULE_MEMO = ArrayMemo(16, max_size=256e6, size=lambda s: s.nbytes)


def phase_schedule(X: np.ndarray, weights: np.ndarray, gamma: float) -> PhaseSchedule:
    """The memoised :class:`PhaseSchedule` of ``(X, weights, gamma)`` (bit-for-bit what a
    fresh one computes)."""
    return SCHEDULE_MEMO.get(("schedule", X, np.asarray(weights, dtype=float), float(gamma)),
                             lambda: PhaseSchedule(X, weights, gamma))
