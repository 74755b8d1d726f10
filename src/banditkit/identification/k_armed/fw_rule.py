"""Frank-Wolfe sampling as a K-armed sampling rule (Wang, Tzeng & Proutière 2021, "Fast pure
exploration via Frank-Wolfe", NeurIPS, Algorithm 1, in its best-arm instance), to combine with
a stopping and a recommendation rule in :class:`~.composed.ComposedIdentifier`.

The rule runs one Frank-Wolfe step per round on the non-smooth objective
F(x; μ̂) = min_{j ≠ î} C_j(x), C_j(x) = x_î d(μ̂_î, m_j) + x_j d(μ̂_j, m_j),
m_j = (x_î μ̂_î + x_j μ̂_j)/(x_î + x_j), whose maximiser over the simplex is w*(μ̂) (GK16):

* forced exploration: when √(t/K) is an integer, or when the empirical best is tied (μ̂ is
  outside the set where F is defined), the vertex is the uniform allocation 1/K;
* otherwise, with the r-subdifferential H = {∇C_j(x(t)) : C_j(x(t)) < F(x(t)) + r_t},
  r_t = r_scale · t^(−r_exponent) (r_scale = 1/K, r_exponent = 0.9), the vertex is
  z(t) = argmax_{p ∈ Δ_K} min_{h ∈ H} ⟨p − x(t), h⟩: the arm of the largest gradient coordinate
  when H has one element (ties to the lowest index), else the small matrix game's solution
  (:func:`~banditkit.identification.fw_game.solve_fw_game`, an exact simplex method);
* x(t + 1) = x(t) + (z(t) − x(t))/(t + 1), and the arm pulled tracks Σ_s z(s) (C-tracking:
  argmin_a N_a(t) − Σ_s z_a(s), ties to the lowest index).

∇C_j has two non-zero coordinates, d(μ̂_î, m_j) and d(μ̂_j, m_j) (the envelope theorem on the
inner minimisation over the alternative's common mean). These are the choices of the linear
:class:`~banditkit.identification.fw_sampling.FrankWolfeSampling` with the canonical basis
(its module docstring says which are the authors' code's and which could not be checked
against the paper's text); the rule is deterministic.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...validation import check_positive
from .oracle import divergence
from .rules import SamplingRule

if TYPE_CHECKING:
    from .base import KArmedIdentifier

__all__ = ["FrankWolfe", "fw_gradients"]


def fw_gradients(x: np.ndarray, means: np.ndarray, best: int, gaussian: bool, sigma: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(C, d_best, d_alt): C_j(x) for every j (∞ at ``best``), and the two non-zero
    coordinates of ∇C_j, ∂C_j/∂x_î = d(μ̂_î, m_j) and ∂C_j/∂x_j = d(μ̂_j, m_j)."""
    K = means.shape[0]
    values, d_best, d_alt = np.full(K, math.inf), np.zeros(K), np.zeros(K)
    top, x_b = float(means[best]), float(x[best])
    for j in range(K):
        if j == best:
            continue
        m = (x_b * top + x[j] * means[j]) / (x_b + x[j])
        d_best[j] = divergence(top, m, gaussian, sigma)
        d_alt[j] = divergence(float(means[j]), m, gaussian, sigma)
        values[j] = x_b * d_best[j] + x[j] * d_alt[j]
    return values, d_best, d_alt


class FrankWolfe(SamplingRule):
    """Frank-Wolfe sampling (Wang, Tzeng & Proutière 2021) for K arms (module docstring).

    Parameters
    ----------
    r_exponent : float
        r_t = r_scale · t^(−r_exponent); 0.9.
    r_scale : float, optional
        1/K by default.
    """

    def __init__(self, r_exponent: float = 0.9, r_scale: float | None = None) -> None:
        self.r_exponent = check_positive(r_exponent, "r_exponent")
        self.r_scale = None if r_scale is None else check_positive(r_scale, "r_scale")

    def start(self, n_arms: int) -> None:
        self.x = np.full(n_arms, 1.0 / n_arms)  # the FW iterate, x(K) after the first batch
        self.sumz = np.ones(n_arms)  # Σ z(s): the first batch's vertices, one pull each
        self.forced = self.games = 0

    def _vertex(self, alg: KArmedIdentifier, means: np.ndarray, best: int) -> np.ndarray:
        K, t = alg.n_arms, alg.t
        z = np.zeros(K)
        values, d_best, d_alt = fw_gradients(self.x, means, best, alg.gaussian, alg.sigma)
        scale = 1.0 / K if self.r_scale is None else self.r_scale
        j = int(np.argmin(values))
        near = np.flatnonzero(values < values[j] + scale * t ** (-self.r_exponent))
        if near.size == 1:  # one gradient: its largest coordinate, ties to the lowest index
            gradient = np.zeros(K)
            gradient[best], gradient[j] = d_best[j], d_alt[j]
            z[int(np.argmax(gradient))] = 1.0
            return z
        G = np.zeros((K, near.size))
        G[best, :] = d_best[near]
        G[near, np.arange(near.size)] = d_alt[near]
        self.games += 1
        from ..fw_game import solve_fw_game  # imports numba: only when a game is played

        return solve_fw_game(G, self.x)[0]

    def choose(self, alg: KArmedIdentifier) -> int:
        K, t = alg.n_arms, alg.t
        means = alg.means()
        best = int(np.argmax(means))
        root = math.isqrt(t // K)
        tied = int(np.count_nonzero(means == means[best])) > 1
        if (t % K == 0 and root * root == t // K) or tied:
            z = np.full(K, 1.0 / K)
            self.forced += 1
        else:
            z = self._vertex(alg, means, best)
        gamma = 1.0 / (t + 1)
        self.x *= 1.0 - gamma
        self.x += gamma * z
        self.sumz += z
        return int(np.argmin(alg.pulls - self.sumz))

    @property
    def info(self) -> dict:
        return {"forced": self.forced, "games": self.games}
