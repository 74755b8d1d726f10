"""OD-LinBAI (Yang & Tan, "Minimax optimal fixed-budget best arm identification in linear
bandits", NeurIPS 2022, Algorithm 1): successive halving of the arms with a G-optimal design
on the span of the survivors, one of the stationary baselines of Xiong et al. ("P1-RAGE",
Section 6, Appendix D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..design import g_optimal, round_allocation
from ..estimation.least_squares import LeastSquares
from ..protocol import Batch
from ..rng import SeedLike
from ..validation import check_positive
from .fixed_budget import FixedBudgetIdentifier, ranked_by
from .item_designs import ITEM_DESIGNS, canonical_order

__all__ = ["ODLinBAI", "PhaseDesign", "phase_design"]

_RANK_RTOL = 1e-10


@dataclass(frozen=True, eq=False)
class PhaseDesign:
    """A phase's arms in the coordinates of their span, and their G-optimal design.

    Attributes
    ----------
    arms : ndarray of int, shape (n,)
        The arms (indices into X), in increasing order.
    basis : ndarray, shape (d, d_r)
        Orthonormal basis of ``span(X[arms])`` (the identity when ``d_r = d``).
    features : ndarray, shape (n, d_r)
        ``X[arms] @ basis``: the arms in ``R^{d_r}``.
    weights : ndarray, shape (n,)
        G-optimal design π_r on ``features``.
    """

    arms: np.ndarray
    basis: np.ndarray
    features: np.ndarray
    weights: np.ndarray

    @property
    def dim(self) -> int:
        """d_r, the dimension of the span of the phase's arms."""
        return int(self.basis.shape[1])


def _compute_phase_design(X: np.ndarray, arms: np.ndarray, tol: float) -> PhaseDesign:
    A = X[arms]
    d = X.shape[1]
    _, s, vt = np.linalg.svd(A, full_matrices=False)
    # The cutoff of banditkit.validation.check_spans, so that the G-optimal solver accepts the
    # reduced arms (the authors use numpy.linalg.matrix_rank's, ~10⁶ times smaller: they
    # differ only for nearly dependent arms).
    rank = int(np.sum(s > _RANK_RTOL * max(float(s[0]) if s.size else 0.0, 1.0) * max(A.shape)))
    if rank == d:
        basis = np.eye(d)
    else:
        basis = vt[:rank].T
    features = A @ basis
    if rank == 0:  # every survivor is the zero vector: nothing to design
        weights = np.full(arms.size, 1.0 / arms.size)
    else:
        order = canonical_order(features)  # the design of the set, whatever the labels
        weights = np.empty(arms.size)
        weights[order] = g_optimal(features[order], tol=tol).weights
    return PhaseDesign(arms, basis, features, weights)


def phase_design(X: np.ndarray, arms: np.ndarray, tol: float) -> PhaseDesign:
    """The design of one OD-LinBAI phase over the arms ``X[arms]`` (Yang & Tan 2022,
    Algorithm 1): dimension reduction to ``d_r = dim span(X[arms])`` (coordinates in an
    orthonormal basis of the span when ``d_r < d``), then the G-optimal design there.

    Depends only on the *set* of arms, so it is memoised per process
    (:data:`.item_designs.ITEM_DESIGNS`). The G-optimal design and least-squares predictions
    do not depend on which orthonormal basis of the span is used, so taking one computed from
    the set (rather than, as Yang & Tan and the authors' code, re-expressing the previous
    phase's coordinates only when the rank drops) changes nothing but rounding errors.
    """
    arms = np.unique(np.asarray(arms, dtype=np.int64))
    return ITEM_DESIGNS.get(("od-linbai", X, arms, float(tol)),
                            lambda: _compute_phase_design(X, arms, tol))


class ODLinBAI(FixedBudgetIdentifier):
    """OD-LinBAI (Yang & Tan 2022, Algorithm 1), as Xiong et al. implement it (Appendix D).

    With ``R = ⌈log2 d⌉`` phases and the per-phase budget

        m = (T − min(K, d(d+1)/2) − Σ_{r=1}^{R−1} ⌈d/2^r⌉) / R,

    phase ``r = 1..R`` over the surviving arms ``A_{r−1}`` (``A_0 = X``):

    * dimension reduction: ``d_r = dim span(A_{r−1})``; when ``d_r < d`` the arms are expressed
      in an orthonormal basis of their span (:func:`phase_design`);
    * π_r, the G-optimal design of the (reduced) arms;
    * ``⌈π_r(a) m⌉`` pulls of each arm a, in a random order drawn from ξ (Xiong et al.,
      Appendix D);
    * least squares on *this phase's pulls only*, then keep the ``⌈d/2^r⌉`` arms of largest
      estimated mean (ties in a random order drawn with ξ, so the survivors do not depend
      on the arms' labels).

    The single arm left after phase R is recommended.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : None or array equal to X
        OD-LinBAI identifies the best *arm*: it eliminates the arms it pulls, so it is defined
        for ``Z = X`` only (Xiong et al.'s setting); another Z is refused.
    budget : int
        T ≥ K pulls; exactly T are made.
    design_tol : float
        Certified relative gap of each G-optimal design (Kiefer–Wolfowitz gap).
    rng : Generator or seed, optional
        ξ: the order of the pulls within each phase.

    Attributes
    ----------
    active : ndarray of int
        Surviving arms, best first by the last phase's estimate.
    n_phases : int
        R = ⌈log2 d⌉ (1 when d = 1).
    m : float
        Yang & Tan's per-phase budget.

    Notes
    -----
    Choices, following the authors' code (``algorithms/od_linbai.py``, FFTypeZero/bobw_linear)
    where Yang & Tan leave room:

    * ``m`` is a real number and the counts are ``⌈π_r(a) m⌉`` (the authors' code; Yang & Tan
      bound the support of π_r by ``d_r(d_r+1)/2`` so that the total stays within T — the
      reason for the terms subtracted in m).
    * Yang & Tan spend at most T pulls and leave the rest unused; here the *last* phase spends
      every pull left: the Pukelsheim rounding (:func:`banditkit.design.round_allocation`) of
      π_R to the remaining budget (at least m pulls), so exactly T pulls are made.
    * A Frank–Wolfe design may have a larger support than Yang & Tan's bound; should a phase
      r < R then ask for more than the pulls left after reserving ``max(1, ⌊m⌋)`` for each
      later phase, it gets the Pukelsheim rounding of π_r to that many instead.
    * ``m ≤ 0`` (a budget below ``min(K, d(d+1)/2) + Σ_{r<R} ⌈d/2^r⌉``): the authors' code
      returns a uniformly random arm without pulling. Here the phases run anyway, each with
      the Pukelsheim rounding of π_r to ``⌊T/R⌋`` pulls (the last: the rest), so the budget is
      spent and the halving still applies; ``info["short_budget"]`` records it.
    * ``d = 1`` (``⌈log2 1⌉ = 0``, a division by zero in the paper's m) runs one phase.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *,
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        tol = check_positive(design_tol, "design_tol")
        super().__init__(X, Z, budget, rng)
        if Z is not None and not (self.Z.shape == self.X.shape
                                  and np.array_equal(self.Z, self.X)):
            raise ValueError("ODLinBAI identifies the best arm: Z must be None or equal to X "
                             "(it eliminates the arms it pulls)")
        self.design_tol = tol
        K, d = self.X.shape
        self.n_phases = max(1, (d - 1).bit_length())  # ⌈log2 d⌉ in integers
        self.keep = [-(-d // 2 ** r) for r in range(1, self.n_phases + 1)]  # ⌈d / 2^r⌉
        self.m = (self.budget - min(K, d * (d + 1) / 2) - sum(self.keep[:-1])) / self.n_phases
        self.short_budget = self.m <= 0
        self.active = np.arange(K)
        self.phase = 0  # phases completed
        self._design: PhaseDesign | None = None
        self._sizes = [K]
        self._dims: list[int] = []

    def _allocation(self, design: PhaseDesign) -> np.ndarray:
        """This phase's pulls per arm of ``design.arms``."""
        later = self.n_phases - 1 - self.phase  # phases after this one
        if later <= 0:
            return round_allocation(design.weights, self.remaining, rng=self.xi)
        if self.short_budget:
            n = min(self.budget // self.n_phases, max(self.remaining - later, 0))
            return round_allocation(design.weights, n, rng=self.xi)
        counts = np.ceil(design.weights * self.m).astype(np.int64)
        cap = max(self.remaining - later * max(1, math.floor(self.m)), 0)
        return (counts if counts.sum() <= cap
                else round_allocation(design.weights, cap, rng=self.xi))

    def _next_batch(self) -> Batch | None:
        if self.remaining == 0:
            return None
        if self.phase >= self.n_phases:  # only after a truncated last phase: spend the rest
            uniform = np.full(self.n_arms, 1.0 / self.n_arms)
            return self._shuffled(round_allocation(uniform, self.remaining, rng=self.xi))
        design = phase_design(self.X, self.active, self.design_tol)
        self._design = design
        allocation = np.zeros(self.n_arms, dtype=np.int64)
        allocation[design.arms] = self._allocation(design)
        return self._shuffled(allocation)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        if self.phase >= self.n_phases:
            return
        design = self._design
        assert design is not None
        counts = batch.allocation(self.n_arms)[design.arms]
        sums = batch.arm_sums(rewards, self.n_arms)[design.arms]
        fit = LeastSquares.from_sums(design.features, counts, sums)
        # Back in R^d: basis @ θ_r is the minimum-norm least-squares fit on the pulled arms.
        self.theta_hat = design.basis @ fit.theta
        order = ranked_by(design.features @ fit.theta, self.xi)  # ties: a random order
        self.active = design.arms[order[:self.keep[self.phase]]]
        self._dims.append(design.dim)
        self._sizes.append(int(self.active.size))
        self.phase += 1

    def _recommend(self) -> int:
        """The best surviving arm (the single one after phase R)."""
        return int(self.active[0])

    @property
    def info(self) -> dict:
        """``phases`` (R), ``survivors`` (K, then after each phase), ``dims`` (d_r per phase),
        ``short_budget`` (m ≤ 0)."""
        return {"phases": self.n_phases, "survivors": list(self._sizes),
                "dims": list(self._dims), "short_budget": bool(self.short_budget)}
