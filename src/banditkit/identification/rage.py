"""RAGE: Randomized Adaptive Gap Elimination (Fiez, Jain, Jamieson & Ratliff, NeurIPS 2019,
Algorithm 1) for fixed-confidence transductive linear bandits.
"""

from __future__ import annotations

import math

import numpy as np

from ..design import pairwise_design, round_allocation, rounding_min_samples
from ..estimation.least_squares import LeastSquares
from ..protocol import Algorithm, Batch
from .elimination import check_problem, dominated
from .memo import ArrayMemo

__all__ = ["RAGE"]

#: Phase designs, reused across trials of one instance (a design depends only on X, the
#: surviving items and the tolerance; see :mod:`.memo`).
DESIGN_MEMO = ArrayMemo(256)

class RAGE(Algorithm):
    """RAGE (Fiez et al. 2019, Algorithm 1): identify ``argmax_{z∈Z} zᵀθ*`` by pulling arms X.

    Phase ``t = 1, 2, ...`` (while more than one item is active):

    * ``δ_t = δ / t²``;
    * ``λ_t = argmin_λ max_{y∈Y(Ẑ_t)} ||y||²_{A(λ)⁻¹}`` and ``ρ_t`` its value, over the pairwise
      differences ``Y(Ẑ_t)`` of the active items (:func:`banditkit.design.xy_optimal`);
    * ``N_t = max(⌈2 (2^t)² ρ_t (1+ε) log(|Z|²/δ_t)⌉, r(ε))`` with the rounding bound
      ``r(ε) = 2p/ε`` of Pukelsheim's procedure (``p`` the support size of λ_t, Appendix B);
    * ``N_t`` pulls rounded from λ_t (:func:`banditkit.design.round_allocation`) — the whole
      phase is one batch;
    * least squares ``θ̂_t = A_t⁻¹ b_t`` on *this phase's pulls only*;
    * remove every ``z`` for which some active ``z'`` has
      ``||z' − z||_{A_t⁻¹} √(2 log(|Z|²/δ_t)) < (z' − z)ᵀθ̂_t``.

    It stops when one item is left and recommends it. Each phase costs one design solve and
    O(|X| d² + |Ẑ_t|² d) arithmetic, whatever ``N_t``: the estimate is computed from per-arm
    reward sums (sufficient statistics), never from individual pulls.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (measurement vectors); must span R^d.
    Z : array, shape (M, d)
        Items; distinct rows.
    delta : float
        Confidence δ ∈ (0, 1).
    epsilon : float
        Rounding approximation factor ε (the paper's default 1/10).
    design_tol : float
        Certified relative optimality gap of each design solve. ``ρ_t`` is the exact objective
        at the returned design, an upper bound on the optimum, so a looser solve only costs
        samples, never correctness.
    rng : numpy.random.Generator, optional
        Unused: RAGE is deterministic given the rewards. Accepted for a uniform factory
        signature.

    Notes
    -----
    Deviations from the paper, none affecting the guarantee (Theorem 2):

    * The paper's experiments ran Frank–Wolfe until λ changed by < 1% (Appendix F); here the
      design solve stops on a certified gap ``design_tol`` and ``ρ_t`` is the value actually
      achieved by the returned λ.
    * When the active items' differences do not span R^d the design is solved with the arms,
      scaled small, added to the directions (:func:`banditkit.design.pairwise_design`): the
      exact optimum is then singular, which the design solver does not represent; this costs
      about 1% of ρ.
    * Designs are memoised per process (:data:`DESIGN_MEMO`): trials on the same instance
      reuse the design of an identical active set. This changes no number.
    * If the arms pulled in a phase do not span R^d (only when a caller truncates a batch)
      nothing is eliminated in that phase.
    """

    kind = "identification"

    def __init__(self, X: np.ndarray, Z: np.ndarray, delta: float, epsilon: float = 0.1, *,
                 design_tol: float = 0.01, rng: np.random.Generator | None = None) -> None:
        X, Z, delta = check_problem(X, Z, delta)
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        if not (math.isfinite(design_tol) and design_tol > 0):
            raise ValueError(f"design_tol must be a finite number > 0, got {design_tol!r}")
        super().__init__(X.shape[0])
        self.X, self.Z, self.delta = X, Z, delta
        self.epsilon, self.design_tol = float(epsilon), float(design_tol)
        self.active = np.arange(Z.shape[0])
        self.phase = 0  # phases completed
        self._rho: list[float] = []
        self._active_sizes: list[int] = []
        self._phase_pulls: list[int] = []

    def _threshold_log(self, t: int) -> float:
        """``log(|Z|² / δ_t)`` with ``δ_t = δ / t²``."""
        return math.log(self.Z.shape[0] ** 2 * t * t / self.delta)

    def _next_batch(self) -> Batch | None:
        if self.active.size <= 1:
            return None
        t = self.phase + 1
        design, rho = DESIGN_MEMO.get(
            ("rage", self.X, self.Z[self.active], self.design_tol),
            lambda: pairwise_design(self.X, self.Z, self.active, self.design_tol))
        n_t = math.ceil(2.0 * 4.0 ** t * rho * (1.0 + self.epsilon) * self._threshold_log(t))
        n_t = max(n_t, rounding_min_samples(design.support.size, self.epsilon))
        self._rho.append(float(rho))
        self._active_sizes.append(int(self.active.size))
        return Batch.from_allocation(round_allocation(design.weights, n_t))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        t = self.phase + 1
        fit = LeastSquares.from_batch(self.X, batch, rewards)
        width = math.sqrt(2.0 * self._threshold_log(t))
        drop = dominated(self.Z, self.active, fit, width, strict=True)
        self.active = self.active[~drop]
        self.phase = t
        self._phase_pulls.append(batch.n_pulls)

    @property
    def recommendation(self) -> int | None:
        """The last active item once RAGE has stopped; before that, None."""
        return int(self.active[0]) if self.active.size == 1 else None

    @property
    def info(self) -> dict:
        """``phases``, the active-set sizes and pulls of each phase, and ``design_values``: ρ_t,
        each phase's XY design value (not a replicability ρ)."""
        return {"phases": self.phase, "active_sizes": list(self._active_sizes),
                "phase_pulls": list(self._phase_pulls), "design_values": list(self._rho)}
