"""ReplicableGBAI: G-BAI (Xiong et al., Algorithm 1) whose final recommendation is a
replicable query (issue 25 §2; docs/replicable-bai.md).

G-BAI's pulls are drawn i.i.d. from the G-optimal design with ξ: two executions sharing ξ pull
exactly the same arms, and only ``argmax_z zᵀθ̂_T`` can differ between them. Here the argmax is
replaced by a replicable choice (Impagliazzo et al. 2022's randomised rounding; Esfandiari et
al., ICLR 2023, Section 2):

1. the empirical gaps ĝ_z = max_z' z'ᵀθ̂ − zᵀθ̂ (θ̂ the IPS estimate, unchanged);
2. the near-best set S = {z : ĝ_z < b}, with b = w(1 − u), u ~ Uni[0, 1) from ξ — one cell of
   a grid of width w whose offset is shared;
3. the recommendation: the first item of S in a random order drawn from ξ.

Given the pulls (shared), every (z' − z)ᵀθ̂ is Gaussian around a mean that both executions
share, with standard deviation s_{z'z} = σ/T · (Σ_a n_a ((z' − z)ᵀA⁻¹x_a)²)^{1/2}, computed
from the pull counts n_a. With r = max s · sqrt(2 log(|Z|²/δ_r)), both executions' gaps are
within r of those means with probability ≥ 1 − 2δ_r, so |ĝ_z − ĝ'_z| ≤ 2r; z is in one S and
not the other only if b falls between them, probability ≤ 2r/w. The width
w = 2|Z| r/(ρ − 2δ_r) makes the union over all |Z| items ≤ ρ − 2δ_r (none is exempt: b can fall
below the best item's gap too, unlike the fixed-confidence rule, whose threshold never comes
near z*): S, and so the recommendation, agree with probability ≥ 1 − ρ.

The price is in the error probability, not the samples (the budget is fixed): S holds every
item whose gap is below about w, and the recommendation is uniform on S, so the best item is
returned for sure only when Δ_min ≳ w + 2ε_T — a gap about |Z|/ρ times larger than G-BAI needs.
"""

from __future__ import annotations

import math

import numpy as np

from ..protocol import Batch
from ..rng import SeedLike
from ..validation import check_positive, check_probability
from .g_bai import GBAI
from .replicable_rule import empirical_gaps

__all__ = ["ReplicableGBAI"]


class ReplicableGBAI(GBAI):
    """G-BAI with a ρ-replicable recommendation.

    Parameters
    ----------
    X, Z, budget, design_tol
        As :class:`~banditkit.identification.GBAI`.
    rho : float in (0, 1]
        Target replicability ρ: two executions sharing ``rng`` pull the same arms (always) and
        recommend the same item with probability ≥ 1 − ρ.
    sigma : float
        Sub-Gaussian scale σ of the reward noise (1, RAGE's and G-BAI's assumption).
    delta_r : float, optional
        δ_r, the probability allowed for an execution's gaps to leave their radius r; default
        ρ/4 (must be < ρ/2).
    rng : Generator or seed
        ξ: the pulls, then (once, at the recommendation) the offset u and the order of S.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *,
                 rho: float = 0.3, sigma: float = 1.0, delta_r: float | None = None,
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        rho = check_probability(rho, "rho", open_high=False)
        sigma = check_positive(sigma, "sigma")
        dr = rho / 4.0 if delta_r is None else check_probability(delta_r, "delta_r")
        if not 2.0 * dr < rho:
            raise ValueError(f"delta_r must be < rho/2 = {rho / 2:g} (the rounding gets "
                             f"rho - 2*delta_r), got {dr:g}")
        super().__init__(X, Z, budget, design_tol=design_tol, rng=rng)
        self.rho, self.sigma, self.delta_r = rho, sigma, dr
        self._pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.radius: float | None = None
        self.width: float | None = None
        self.threshold: float | None = None
        self.near_best: np.ndarray | None = None

    def observe_arm_sums(self, batch: Batch, sums: np.ndarray, pulls: np.ndarray) -> None:
        super().observe_arm_sums(batch, sums, pulls)  # validates, then updates θ̂
        self._pulls += np.asarray(pulls, dtype=np.int64)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        super()._observe(batch, rewards, costs)
        self._pulls += batch.allocation(self.n_arms)

    def gap_radius(self) -> float:
        """r: every (z' − z)ᵀθ̂ within r of its mean given the pulls, w.p. ≥ 1 − δ_r."""
        T = int(self._pulls.sum())
        U = np.linalg.solve(self._information, self.X.T).T @ self.Z.T  # (K, M): x_aᵀA⁻¹z
        V = (U * self._pulls[:, None]).T @ U  # Σ_a n_a (zᵀA⁻¹x_a)(z'ᵀA⁻¹x_a)
        diag = np.diag(V)
        var = np.maximum(diag[:, None] + diag[None, :] - 2.0 * V, 0.0)
        M = self.Z.shape[0]
        return (self.sigma / T * math.sqrt(float(var.max()))
                * math.sqrt(2.0 * math.log(M * M / self.delta_r)))

    def _recommend(self) -> int:
        M = self.Z.shape[0]
        u = self.xi.random()  # read before the data decides anything
        order = self.xi.permutation(M)
        if M == 1:
            return 0
        self.radius = self.gap_radius()
        self.width = 2.0 * M * self.radius / (self.rho - 2.0 * self.delta_r)
        gaps = empirical_gaps(self.Z @ self.theta_hat)
        self.threshold = self.width * (1.0 - u)  # b: one grid boundary, offset by ξ
        near = gaps < self.threshold
        self.near_best = np.flatnonzero(near)
        return int(order[np.argmax(near[order])])  # the first member of S in ξ's order

    @property
    def info(self) -> dict:
        return {**super().info, "rho": self.rho, "gap_radius": self.radius,
                "grid_width": self.width, "threshold": self.threshold,
                "near_best": None if self.near_best is None else self.near_best.tolist()}
