"""Replicable successive elimination: a ρ-replicable, δ-correct K-armed best-arm identifier
(docs/replicable-bai.md; issue 25).

Successive elimination in phases (Even-Dar, Mannor & Mansour 2006; the phase schedule
ε_t = 2^{-t} of RAGE, Fiez et al. 2019, Algorithm 1, with X = Z = the K unit vectors, whose
optimal design is uniform on the active arms), with every keep/drop decision taken through the
replicable rounding of :class:`~banditkit.identification.replicable_rule.ReplicableGapRule`
(Impagliazzo et al. 2022; Esfandiari et al., ICLR 2023, Section 2 and Theorem 4's random
threshold). The simplest instance of the rule, and the unit test of it.

Phase t: every active arm is pulled n_t times (fresh samples), with
n_t = ⌈2 R² ln(2K/δ_t) / ε̃_t²⌉ (R the width of the reward range): by Hoeffding's inequality
and a union bound over the K arms every mean is then within ε̃_t/2, so every difference of
means within ε̃_t, with probability ≥ 1 − δ_t. The gaps ĝ_a = max_b μ̂_b − μ̂_a are rounded on
the grid of width ε_t with offsets from ξ and arm a is dropped when the rounded gap exceeds
1.5 ε_t. It stops when one arm is left and recommends it.
"""

from __future__ import annotations

import math

import numpy as np

from ..protocol import Batch
from ..rng import SeedLike
from ..validation import check_integer, check_range
from .replicable_rule import ReplicablePhasedIdentifier

__all__ = ["ReplicableSuccessiveElimination"]


class ReplicableSuccessiveElimination(ReplicablePhasedIdentifier):
    """ρ-replicable successive elimination for K-armed best-arm identification.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    rho : float in (0, 1]
        Target replicability ρ (Esfandiari et al., Definition 1): two executions sharing ``rng``
        pull the same arms and recommend the same arm with probability ≥ 1 − ρ.
    delta : float in (0, 1)
        Target confidence: the recommendation is the best arm with probability ≥ 1 − δ.
    rng : Generator or seed
        The internal randomness ξ (the rounding offsets, |K| uniforms per phase).
    split : {"window", "phases"}
        How ρ is spread over the decisions
        (:class:`~banditkit.identification.replicable_rule.ReplicableGapRule`).
    sample_delta : float, optional
        δ_s, the confidence the samples are sized for (default min(δ, ρ/4)).
    reward_range : (lo, hi)
        The interval every reward lies in (Hoeffding's inequality needs one); [0, 1] by
        default. Rewards outside it are refused.

    Notes
    -----
    Under the good event (probability ≥ 1 − δ_s) the best arm is never dropped and, after
    phase t, every surviving arm has Δ_a ≤ 2ε_t + ε̃_t: it stops after at most
    ⌈log₂(2/Δ_min)⌉ + 1 phases with O(Σ_a (K/ρ)² R² log(K log(1/Δ_a)/δ) / Δ_a²) pulls —
    successive elimination's sample complexity times the (2.5(K − 1)/ρ_q)² of the rule.
    """

    def __init__(self, n_arms: int, rho: float = 0.3, delta: float = 0.05,
                 rng: SeedLike = None, *, split: str = "window",
                 sample_delta: float | None = None,
                 reward_range: tuple[float, float] = (0.0, 1.0)) -> None:
        K = check_integer(n_arms, "n_arms", 2)
        super().__init__(K, K, rho, delta, rng, split=split, sample_delta=sample_delta)
        self.reward_range = check_range(reward_range, "reward_range")

    def samples_per_arm(self, accuracy: float, delta_t: float) -> int:
        """n_t = ⌈2 R² ln(2K/δ_t) / ε̃_t²⌉: every mean within ε̃_t/2 w.p. ≥ 1 − δ_t."""
        lo, hi = self.reward_range
        return max(1, math.ceil(2.0 * (hi - lo) ** 2 * math.log(2.0 * self.n_arms / delta_t)
                                / accuracy**2))

    def _phase_batch(self, t: int, accuracy: float, delta_t: float) -> Batch:
        n = self.samples_per_arm(accuracy, delta_t)
        return Batch(self.active.copy(), np.full(self.active.size, n, dtype=np.int64))

    def _values(self, batch: Batch, rewards: np.ndarray) -> np.ndarray | None:
        pulls = batch.allocation(self.n_arms)[self.active]
        if np.any(pulls == 0):  # a truncated phase: some active arm has no estimate
            return None
        sums = batch.arm_sums(rewards, self.n_arms)[self.active]
        return sums / pulls
