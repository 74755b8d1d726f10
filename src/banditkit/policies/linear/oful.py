"""OFUL (Abbasi-Yadkori, Pál and Szepesvári, 2011, "Improved algorithms for linear stochastic
bandits", Algorithm 1) and its practical form LinUCB (Li, Chu, Langford and Schapire, 2010;
Chu, Li, Reyzin and Schapire, 2011).

Rewards are x_tᵀθ* + η_t with η_t conditionally R-sub-Gaussian, ‖θ*‖₂ ≤ S, ‖x‖₂ ≤ L. OFUL plays
the optimistic arm of the confidence ellipsoid C_{t−1} around the ridge estimate θ̂:

    x_t = argmax_k  x_kᵀθ̂ + √β_t ‖x_k‖_{V⁻¹},   V = λI + Σ_s x_s x_sᵀ,

with the radius of Theorem 2 (``radius="self-normalized"``, the default):

    √β_t = R √(2 log(det(V)^{1/2} det(λI)^{−1/2} / δ)) + √λ S
         = R √(log(det V / det λI) + 2 log(1/δ)) + √λ S,

or its determinant-free bound (Theorem 2, second part, ``radius="determinant-free"``):
√β_t = R √(d log((1 + t L²/λ)/δ)) + √λ S, and the usual practical scalings: a multiplier
``radius_scale`` on either theoretical radius, or ``radius="constant"``, the constant α of
LinUCB (Li et al. 2010, with λ = 1; Chu et al. 2011 take α = √(½ ln(2TK/δ))).

Theorem 3's regret bound (O(d log(T) √T) with probability 1 − δ) assumes mean rewards in
[−1, 1]; rewards in [lo, hi] are (hi − lo)/2-sub-Gaussian, so the default ``reward_range``
(−1, 1) with R = 1 is the paper's setting (Rademacher ±1 rewards on the unit-sphere instances
of ``linear-random-unit``); ``reward_range=None`` with R = σ runs it on Gaussian noise.

No internal randomness: ties go to the lowest index.
"""

from __future__ import annotations

import math

import numpy as np

from ...validation import check_positive, check_probability
from .index import LinearIndexPolicy, LinearState, check_sub_gaussian_range

__all__ = ["OFUL", "RADII"]

RADII = ("self-normalized", "determinant-free", "constant")


class OFUL(LinearIndexPolicy):
    """OFUL of Abbasi-Yadkori et al. (2011), one pull per round.

    Parameters
    ----------
    X : array (K, d)
        The arms.
    lam : float
        Ridge regulariser λ > 0 (V₀ = λI); 1 by default.
    delta : float
        Confidence δ ∈ (0, 1) of the ellipsoids (Theorem 2); 0.01 by default (the paper leaves
        it to the user).
    R : float
        Sub-Gaussian constant of the noise; 1 (rewards in [−1, 1]) by default.
    S : float
        Bound on ‖θ*‖₂; 1 by default.
    L : float, optional
        Bound on ‖x‖₂ for every arm; default the largest arm norm. Arms longer than a given L
        are refused. Only the determinant-free radius reads it.
    radius : {"self-normalized", "determinant-free", "constant"}
        The confidence radius √β_t (see the module docstring).
    radius_scale : float
        Multiplier of the theoretical radius (1 = the paper); ignored by ``"constant"``.
    alpha : float
        The constant radius of ``radius="constant"`` (LinUCB's α).
    horizon : int, optional
        Stop after this many pulls.
    reward_range : (lo, hi) or None
        Rewards outside it are refused; (−1, 1) by default. R must be at least (hi − lo)/2.
    """

    def __init__(self, X: np.ndarray, *, lam: float = 1.0, delta: float = 0.01, R: float = 1.0,
                 S: float = 1.0, L: float | None = None, radius: str = "self-normalized",
                 radius_scale: float = 1.0, alpha: float = 1.0, horizon: int | None = None,
                 reward_range: tuple[float, float] | None = (-1.0, 1.0)) -> None:
        if radius not in RADII:
            raise ValueError(f"radius must be one of {RADII}, got {radius!r}")
        self.radius = radius
        self.delta = check_probability(delta, "delta")
        self.R = check_positive(R, "R")
        self.S = check_positive(S, "S")
        self.radius_scale = check_positive(radius_scale, "radius_scale")
        if (isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating))
                or not (math.isfinite(alpha) and alpha >= 0)):
            raise ValueError(f"alpha must be a non-negative number (LinUCB's constant radius; 0 "
                             f"is greedy), got {alpha!r}")
        self.alpha = float(alpha)
        reward_range = check_sub_gaussian_range(reward_range, self.R)
        super().__init__(X, lam=lam, horizon=horizon, reward_range=reward_range)
        longest = float(np.sqrt(np.max(np.sum(self.X * self.X, axis=1))))
        if L is None:
            self.L = longest
        else:
            self.L = check_positive(L, "L")
            if longest > self.L * (1 + 1e-12):
                raise ValueError(f"L must bound every arm's norm (Theorem 2 assumes "
                                 f"||x||_2 <= L): the longest arm has norm {longest:.6g} > "
                                 f"L = {self.L:g}")
        # the radius's constant parts, computed once (Python floats: the same in every path)
        self._two_log = 2.0 * math.log(1.0 / self.delta)
        self._bias = math.sqrt(self.lam) * self.S

    def confidence_radius(self, state: LinearState, t: int) -> np.ndarray:
        """√β_t for each trial of ``state`` after t pulls, shape (n,)."""
        n = state.logdet.shape[0]
        if self.radius == "constant":
            return np.full(n, self.alpha)
        if self.radius == "self-normalized":
            width = self.R * np.sqrt(state.logdet + self._two_log) + self._bias
        else:
            level = self.d * math.log((1.0 + t * self.L**2 / self.lam) / self.delta)
            width = np.full(n, self.R * math.sqrt(level) + self._bias)
        return self.radius_scale * width

    def scores(self, state: LinearState, t: int, xi: np.ndarray | None) -> np.ndarray:
        """x_kᵀθ̂ + √β_t ‖x_k‖_{V⁻¹} (q is clipped at 0 against rounding)."""
        rad = self.confidence_radius(state, t)
        return state.m + rad[:, None] * np.sqrt(np.maximum(state.q, 0.0))
