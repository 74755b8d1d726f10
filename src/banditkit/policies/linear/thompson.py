"""Linear Thompson sampling (Agrawal and Goyal, 2013, "Thompson sampling for contextual bandits
with linear payoffs", ICML, Algorithm 1).

Each round draws θ̃ ~ N(θ̂, v² V⁻¹) around the ridge estimate θ̂ (V = λI + Σ_s x_s x_sᵀ; the
paper's B(t) with λ = 1) and plays argmax_k x_kᵀθ̃ (ties to the lowest index). The paper's scale
is

    v = R √(24/ε · d · ln(1/δ)),   ε ∈ (0, 1],

with R the sub-Gaussian constant of the noise, δ the failure probability of Theorem 1 and ε the
parameter trading regret for computation (Theorem 1: Õ(d²/ε · √(T^{1+ε})) regret); the paper
suggests ε = 1/ln T when T is known, which is the default here (``epsilon=None`` with a
horizon). ``v=`` sets the scale directly: v = R is the common practical choice (the exact
Bayesian posterior for N(0, R²) noise and a N(0, R²/λ · I) prior), far smaller than the
theory's (v ≈ 80 for d = 5, δ = 0.01, T = 10⁵), which over-explores at practical horizons.

The draw is a Cholesky draw, as DESIGN.md asks: θ̃ = θ̂ + v C⁻ᵀz with V = C Cᵀ and z standard
normal (Cov = v² C⁻ᵀC⁻¹ = v² V⁻¹); C is kept by rank-one updates
(:mod:`banditkit.policies.linear.index`). Each round reads exactly d standard normals from ξ,
so many trials run in lock-step, each with its own ξ, and agree bit for bit with this class.

Like OFUL, the default ``reward_range`` is (−1, 1) with R = 1 (the paper assumes ‖x‖, ‖θ*‖ ≤ 1
and R-sub-Gaussian noise; rewards in [lo, hi] are (hi − lo)/2-sub-Gaussian).
"""

from __future__ import annotations

import math

import numpy as np

from ...validation import check_positive, check_probability
from .index import (
    LinearIndexPolicy,
    LinearState,
    check_sub_gaussian_range,
    matvec_rows,
    solve_upper_transpose,
)

__all__ = ["LinearThompson", "paper_scale"]


def paper_scale(R: float, d: int, epsilon: float, delta: float) -> float:
    """v = R √(24/ε · d · ln(1/δ)) (Agrawal & Goyal 2013, Algorithm 1 and Theorem 1)."""
    return R * math.sqrt(24.0 / epsilon * d * math.log(1.0 / delta))


class LinearThompson(LinearIndexPolicy):
    """Linear Thompson sampling of Agrawal & Goyal (2013), one pull per round.

    Parameters
    ----------
    X : array (K, d)
        The arms.
    rng : Generator
        Internal randomness ξ (d standard normals a round).
    lam : float
        Ridge regulariser λ > 0; 1 (the paper's B = I_d) by default.
    delta : float
        δ ∈ (0, 1) of the paper's scale; 0.01 by default (the paper leaves it to the user).
    epsilon : float, optional
        ε ∈ (0, 1] of the paper's scale; default 1/ln T (the paper's suggestion when T is
        known; capped at 1), which needs ``horizon``.
    R : float
        Sub-Gaussian constant of the noise; 1 by default.
    v : float, optional
        The posterior scale, overriding the paper's formula (v = R: the practical choice).
    horizon : int, optional
        Stop after this many pulls.
    reward_range : (lo, hi) or None
        Rewards outside it are refused; (−1, 1) by default. R must be at least (hi − lo)/2.
    """

    cholesky = True

    def __init__(self, X: np.ndarray, rng: np.random.Generator, *, lam: float = 1.0,
                 delta: float = 0.01, epsilon: float | None = None, R: float = 1.0,
                 v: float | None = None, horizon: int | None = None,
                 reward_range: tuple[float, float] | None = (-1.0, 1.0)) -> None:
        self.delta = check_probability(delta, "delta")
        self.R = check_positive(R, "R")
        reward_range = check_sub_gaussian_range(reward_range, self.R)
        super().__init__(X, lam=lam, rng=rng, horizon=horizon, reward_range=reward_range)
        if epsilon is None:
            if v is None and self.horizon is None:
                raise ValueError("epsilon must be given (in (0, 1]) when there is no horizon: "
                                 "its default is the paper's 1/ln T")
            self.epsilon = (None if self.horizon is None
                            else min(1.0, 1.0 / math.log(max(self.horizon, 2))))
        else:
            self.epsilon = check_probability(epsilon, "epsilon", open_high=False)
        if v is None:
            assert self.epsilon is not None
            self.v = paper_scale(self.R, self.d, self.epsilon, self.delta)
        else:
            self.v = check_positive(v, "v")

    @property
    def n_draws(self) -> int:
        return self.d

    def scores(self, state: LinearState, t: int, xi: np.ndarray | None) -> np.ndarray:
        """x_kᵀθ̃ = x_kᵀθ̂ + v x_kᵀC⁻ᵀz for each trial's d standard normals z (``xi``)."""
        assert xi is not None and state.chol is not None
        y = solve_upper_transpose(state.chol, xi)
        return state.m + self.v * matvec_rows(self.X, y)
