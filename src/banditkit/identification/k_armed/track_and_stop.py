"""Track-and-Stop for K-armed best-arm identification (Garivier & Kaufmann 2016, "Optimal best
arm identification with fixed confidence", COLT, Section 3), asymptotically optimal:
lim E[τ_δ]/log(1/δ) = T*(μ).

* Every arm is pulled once (one batch), then one pull per round.
* Sampling rule: the plug-in optimal proportions w*(μ̂(t)) (:mod:`.oracle`, Theorem 5) tracked by
  - **D-tracking** (GK16, eq. (9)–(10)): if U_t = {a : N_a(t) < √t − K/2} is not empty, pull
    argmin_{a ∈ U_t} N_a(t) (forced exploration); else argmax_a t w*_a(μ̂(t)) − N_a(t);
  - **C-tracking** (Lemma 7): argmax_a Σ_{s ≤ t} w^{ε_s}_a(μ̂(s)) − N_a(t), where w^ε is the L∞
    projection of w* onto {w ∈ Σ_K : w_a ≥ ε} and ε_t = (K² + t)^{−1/2}/2. We take
    w^ε = max(w* − η, ε) with η such that it sums to 1, an L∞ projection (its distance to w*,
    max(η, max_a ε − w*_a), is the least possible). The sum starts at the first round's pulls
    (one per arm), as if the uniform allocation had been tracked during it.
  Ties go to the lowest index. While the empirical best is tied, w* is the uniform allocation.
* Stopping: the Chernoff rule (:mod:`.base`), β(t, δ) = log(2t(K − 1)/δ) (GK16, Theorem 10) by
  default, their experiments' log((log t + 1)/δ) as ``threshold="heuristic"``.
* Recommendation: the empirical best arm.

Section 6 of GK16 runs D-tracking and C-tracking on μ₁ = (0.5, 0.45, 0.43, 0.4), w*(μ₁) =
(0.417, 0.390, 0.136, 0.057), and μ₂ = (0.3, 0.21, 0.2, 0.19, 0.18), w*(μ₂) = (0.336, 0.251,
0.177, 0.132, 0.104); :func:`~.oracle.characteristic_time` gives these weights to the third
decimal (tests/test_k_armed.py).
"""

from __future__ import annotations

import math

import numpy as np

from ...protocol import Batch
from .base import KArmedIdentifier, check_threshold
from .solvers import weights_solver

__all__ = ["TRACKINGS", "KArmedTrackAndStop", "project_floor"]

TRACKINGS = ("D", "C")


def project_floor(w: np.ndarray, eps: float) -> np.ndarray:
    """max(w − η, ε) with η such that the result sums to 1 (ε ≤ 1/K): the L∞ projection of
    the distribution w onto {v ∈ Σ_K : v_a ≥ ε} that takes the excess equally from the arms
    above the floor."""
    K = w.size
    order = np.sort(w)[::-1]
    eta = 0.0
    for k in range(K, 0, -1):  # k arms above the floor: the largest k
        eta = (order[:k].sum() - (1.0 - (K - k) * eps)) / k
        if order[k - 1] - eta > eps or k == 1:
            break
    return np.maximum(w - eta, eps)


class KArmedTrackAndStop(KArmedIdentifier):
    """Track-and-Stop (Garivier & Kaufmann 2016) for K arms.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    tracking : {"D", "C"}
        D-tracking (default, as GK16's experiments) or C-tracking.
    model : {"bernoulli", "gaussian"}
        The exponential family of w* and of the GLR (:mod:`.base`).
    sigma : float
        σ of the Gaussian model.
    threshold : {"theory", "heuristic"}
        β(t, δ) of the Chernoff stopping rule.
    horizon : int, optional
        Budget cap.

    Notes
    -----
    Deterministic (no internal randomness). w* is solved at every round
    (:func:`~.solvers.weights_solver`, compiled when numba is available).
    """

    #: The compiled kernel (:mod:`banditkit.engines`; :mod:`.tas_kernel`).
    engines = "banditkit.identification.k_armed.tas_kernel:tas_engine"

    def __init__(self, n_arms: int, delta: float = 0.05, *, tracking: str = "D",
                 model: str = "bernoulli", sigma: float = 1.0, threshold: str = "theory",
                 horizon: int | None = None) -> None:
        if tracking not in TRACKINGS:
            raise ValueError(f"tracking must be one of {TRACKINGS}, got {tracking!r}")
        super().__init__(n_arms, delta=delta, model=model, sigma=sigma,
                         threshold=check_threshold(threshold), horizon=horizon)
        self.tracking = tracking
        self.weights = np.full(self.n_arms, 1.0 / self.n_arms)
        self._cum = np.ones(self.n_arms)  # Σ_s w^{ε_s}(s) of C-tracking
        self._solve = weights_solver()
        self.forced = 0

    def _choose(self) -> Batch:
        t, K = self.t, self.n_arms
        N = self.pulls
        self._solve(self.means(), self.gaussian, self.sigma, self.weights)
        if self.tracking == "D":
            under = np.flatnonzero(N < math.sqrt(t) - K / 2)
            if under.size:
                self.forced += 1
                return Batch.single(int(under[np.argmin(N[under])]))
            return Batch.single(int(np.argmax(t * self.weights - N)))
        eps = 0.5 / math.sqrt(K * K + t)
        self._cum += project_floor(self.weights, eps)
        return Batch.single(int(np.argmax(self._cum - N)))

    @property
    def info(self) -> dict:
        return {**super().info, "forced": self.forced}
