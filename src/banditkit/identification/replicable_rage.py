"""ReplicableRAGE: a ρ-replicable, δ-correct transductive best-arm identifier (issue 25;
docs/replicable-bai.md).

RAGE (Fiez, Jain, Jamieson & Ratliff, NeurIPS 2019, Algorithm 1) with the same phases and the
same designs — λ_t = argmin_λ max_{y ∈ Y(Ẑ_t)} ‖y‖²_{A(λ)⁻¹}, a function of the arms and the
active items only, hence identical in two executions with the same active set — and every
data-dependent decision (which items to drop, when to stop, the recommendation) taken through
the replicable rounding of :class:`~banditkit.identification.replicable_rule.ReplicableGapRule`
(Impagliazzo et al. 2022; Esfandiari et al., ICLR 2023, Section 2, Theorem 4's random
threshold). Only the accuracy of a phase changes: RAGE's 2^{-t} becomes ε̃_t, so

    N_t = max(⌈2 ρ(Y(Ẑ_t)) (1 + ε) log(|Z|²/δ_t) / ε̃_t²⌉, r(ε)),

RAGE's N_t with (2^t)² replaced by ε̃_t⁻² (Fiez et al., Lemma 2: every y ∈ Y(Ẑ_t) is then
estimated within ε̃_t with probability ≥ 1 − δ_t).
"""

from __future__ import annotations

import math

import numpy as np

from ..design import pairwise_design, round_allocation, rounding_min_samples
from ..estimation.least_squares import LeastSquares
from ..protocol import Batch
from ..rng import SeedLike
from .elimination import check_problem
from .rage import DESIGN_MEMO
from .replicable_rule import ReplicablePhasedIdentifier

__all__ = ["ReplicableRAGE"]


class ReplicableRAGE(ReplicablePhasedIdentifier):
    """ρ-replicable RAGE: identify ``argmax_{z∈Z} zᵀθ*`` by pulling arms X.

    Phase t = 1, 2, … while more than one item is active:

    * δ_t = 6δ_s/(π² t²) and the accuracy ε̃_t of the rule (``split``);
    * λ_t and ρ(Y(Ẑ_t)) as in RAGE (:func:`banditkit.design.pairwise_design`, memoised with
      RAGE's designs);
    * N_t = max(⌈2 ρ(Y(Ẑ_t))(1+ε) log(|Z|²/δ_t)/ε̃_t²⌉, r(ε)) pulls rounded from λ_t;
    * θ̂_t by least squares on this phase's pulls; ĝ_z = max_{z'∈Ẑ_t} z'ᵀθ̂_t − zᵀθ̂_t;
    * |Z| offsets u_{t,·} from ξ; drop z when ĝ_z, rounded on the grid of width 2^{-t} shifted by
      u_{t,z}2^{-t}, exceeds 1.5·2^{-t}.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d)
        Items; distinct rows.
    delta : float in (0, 1)
        Target confidence δ.
    rho : float in (0, 1]
        Target replicability ρ: two executions sharing ``rng`` (and independent rewards) pull
        the same arms and recommend the same item with probability ≥ 1 − ρ.
    epsilon : float
        RAGE's rounding factor ε (1/10).
    design_tol : float
        Certified relative gap of each design solve (as :class:`~banditkit.identification.RAGE`).
    rng : Generator or seed
        The internal randomness ξ (the rounding offsets: |Z| uniforms per phase).
    split : {"window", "phases"}
        How ρ is spread over the decisions (default ``"window"``: factor (2.5(|Z|−1)/ρ_q)² on
        the samples of every phase; ``"phases"``: ρ_t = 6ρ_q/(π²t²) per phase).
    sample_delta : float, optional
        δ_s, the confidence the samples are sized for (default min(δ, ρ/4)).

    Notes
    -----
    Assumes 1-sub-Gaussian noise and max Δ ≤ 2, as RAGE (Theorem 2). Under the good event
    (probability ≥ 1 − δ_s) z* survives every phase and Ẑ_{t+1} ⊆ {Δ ≤ 2·2^{-t} + ε̃_t}, so the
    sample complexity is RAGE's bound (Theorem 2) with each phase's term multiplied by
    (2^{-t}/ε̃_t)² (and log(|Z|²/δ_t) at δ_s): a factor (2.5(|Z| − 1)/(ρ − 2δ_s))² with the
    ``"window"`` split. Designs memoised per process, shared with RAGE (same keys).
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray, delta: float = 0.05, rho: float = 0.3,
                 epsilon: float = 0.1, *, design_tol: float = 0.01, rng: SeedLike = None,
                 split: str = "window", sample_delta: float | None = None) -> None:
        X, Z, delta = check_problem(X, Z, delta)
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        if not (math.isfinite(design_tol) and design_tol > 0):
            raise ValueError(f"design_tol must be a finite number > 0, got {design_tol!r}")
        super().__init__(X.shape[0], Z.shape[0], rho, delta, rng, split=split,
                         sample_delta=sample_delta)
        self.X, self.Z = X, Z
        self.epsilon, self.design_tol = float(epsilon), float(design_tol)
        self._design_values: list[float] = []

    def phase_samples(self, design_value: float, support: int, accuracy: float,
                      delta_t: float) -> int:
        """N_t = max(⌈2 ρ_t (1+ε) log(|Z|²/δ_t) / ε̃_t²⌉, r(ε)) (Fiez et al., Lemma 2)."""
        log_term = math.log(self.Z.shape[0] ** 2 / delta_t)
        n = math.ceil(2.0 * design_value * (1.0 + self.epsilon) * log_term / accuracy**2)
        return max(n, rounding_min_samples(support, self.epsilon))

    def _phase_batch(self, t: int, accuracy: float, delta_t: float) -> Batch:
        design, value = DESIGN_MEMO.get(
            ("rage", self.X, self.Z[self.active], self.design_tol),
            lambda: pairwise_design(self.X, self.Z, self.active, self.design_tol))
        self._design_values.append(float(value))
        n_t = self.phase_samples(value, design.support.size, accuracy, delta_t)
        return Batch.from_allocation(round_allocation(design.weights, n_t))

    def _values(self, batch: Batch, rewards: np.ndarray) -> np.ndarray | None:
        fit = LeastSquares.from_batch(self.X, batch, rewards)
        if fit.rank < self.X.shape[1]:  # only a truncated phase: differences not estimable
            return None
        return self.Z[self.active] @ fit.theta

    @property
    def info(self) -> dict:
        return {**super().info, "design_values": list(self._design_values)}
