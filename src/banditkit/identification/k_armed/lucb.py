"""LUCB1 (Kalyanakrishnan, Tewari, Auer & Stone 2012, "PAC subset selection in stochastic
multi-armed bandits", ICML, Algorithm LUCB with the confidence bonus of LUCB1) and KL-LUCB
(Kaufmann & Kalyanakrishnan 2013, "Information complexity in bandit subset selection", COLT,
Section 3), for the best arm (m = 1) with fixed confidence δ and rewards in [0, 1].

Both pull every arm once (t = 1), then at each round t:

* h_t = the empirical best arm (ties to the lowest index); l_t = argmax_{a ≠ h_t} U_a(t);
* stop if U_{l_t}(t) − L_{h_t}(t) < ε (ε = 0: the two intervals are apart) and recommend h_t;
  else pull h_t and l_t (one batch of two pulls) and t ← t + 1.

Confidence bounds, with N_a pulls of arm a and mean μ̂_a:

* **LUCB1**: μ̂_a ± β(N_a, t), β(u, t) = √(log(k₁ K t⁴/δ)/(2u)), k₁ = 5/4 (Theorem 6 of
  Kalyanakrishnan et al.: δ-correct for rewards in [0, 1]).
* **KL-LUCB**: U_a = max{q ≥ μ̂_a : N_a kl(μ̂_a, q) ≤ β(t, δ)}, L_a = min{q ≤ μ̂_a : …} (Bernoulli
  kl, valid for rewards in [0, 1]; the Gaussian kl (x − y)²/(2σ²) with ``model="gaussian"``),
  β(t, δ) = log(k₁ K t^α/δ) with α = 1.1 and k₁ = 405.5 (Kaufmann & Kalyanakrishnan 2013:
  δ-correct for α > 1 and k₁ > 2e + 1 + e/(α − 1) + (e + 1)/(α − 1)² ≈ 405.3 at α = 1.1, the
  values of their experiments). ``threshold="heuristic"`` is log((log t + 1)/δ), which Garivier
  & Kaufmann (2016, Section 6) ran KL-LUCB with; not proved δ-correct.
"""

from __future__ import annotations

import math

import numpy as np

from ...protocol import Batch
from .base import KArmedIdentifier, check_threshold
from .solvers import bounds_solver

__all__ = ["KLLUCB", "LUCB"]

LUCB1_K1 = 5.0 / 4.0
KLLUCB_K1, KLLUCB_ALPHA = 405.5, 1.1


class LUCB(KArmedIdentifier):
    """LUCB1 (Kalyanakrishnan et al. 2012) for the best arm, rewards in [0, 1].

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    epsilon : float
        Stop once U_l − L_h < ε (ε = 0: exact best arm).
    k1 : float
        k₁ of β(u, t) = √(log(k₁ K t⁴/δ)/(2u)); 5/4 as in the paper.
    horizon : int, optional
        Budget cap.

    Notes
    -----
    Two pulls per round (h_t and l_t in one batch); deterministic.
    """

    stopping = "intervals"
    #: The compiled kernel (:mod:`banditkit.engines`; :mod:`.lucb_kernel`).
    engines = "banditkit.identification.k_armed.lucb_kernel:lucb1_engine"

    def __init__(self, n_arms: int, delta: float = 0.05, *, epsilon: float = 0.0,
                 k1: float = LUCB1_K1, horizon: int | None = None) -> None:
        super().__init__(n_arms, delta=delta, model="bernoulli", sigma=0.5, horizon=horizon)
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        if not (math.isfinite(k1) and k1 > 0):
            raise ValueError(f"k1 must be a positive finite number, got {k1!r}")
        self.epsilon, self.k1 = float(epsilon), float(k1)
        self.rounds = 1  # t of the paper: 1 once every arm is pulled
        self.gap = math.inf  # the last U_l − L_h

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(L, U) of every arm at the current round."""
        width = np.sqrt(math.log(self.k1 * self.n_arms * self.rounds ** 4 / self.delta)
                        / (2.0 * self.pulls))
        mu = self.means()
        return mu - width, mu + width

    def _choose(self) -> Batch | None:  # type: ignore[override]
        lower, upper = self.bounds()
        h = int(np.argmax(self.means()))
        masked = upper.copy()
        masked[h] = -math.inf
        l_arm = int(np.argmax(masked))
        self.gap = float(upper[l_arm] - lower[h])
        if self.gap < self.epsilon:
            self._stopped = True
            return None
        self.rounds += 1
        if self.horizon is not None and self.t + 2 > self.horizon:
            # one pull left in the budget: h_t alone, as simulate cuts a batch at its horizon
            # (and the compiled kernel at either cap); two would overshoot the budget
            return Batch(np.array([h]), np.ones(1, dtype=np.int64))
        return Batch(np.array([h, l_arm]), np.ones(2, dtype=np.int64))

    @property
    def info(self) -> dict:
        return {"rounds": self.rounds, "gap": self.gap, "stopped_by_rule": self._stopped}


class KLLUCB(LUCB):
    """KL-LUCB (Kaufmann & Kalyanakrishnan 2013) for the best arm.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    epsilon : float
        Stop once U_l − L_h < ε.
    threshold : {"paper", "heuristic"}
        β(t, δ) = log(k₁ K t^α/δ) (default; k₁ = 405.5, α = 1.1) or log((log t + 1)/δ).
    k1, alpha : float
        The paper threshold's constants.
    model : {"bernoulli", "gaussian"}
        Bernoulli kl (rewards in [0, 1]) or the Gaussian kl with known σ.
    sigma : float
        σ of the Gaussian model.
    horizon : int, optional
        Budget cap.
    """

    #: The compiled kernel (:mod:`banditkit.engines`; :mod:`.lucb_kernel`).
    engines = "banditkit.identification.k_armed.lucb_kernel:kl_lucb_engine"

    def __init__(self, n_arms: int, delta: float = 0.05, *, epsilon: float = 0.0,
                 threshold: str = "paper", k1: float = KLLUCB_K1,
                 alpha: float = KLLUCB_ALPHA, model: str = "bernoulli", sigma: float = 1.0,
                 horizon: int | None = None) -> None:
        super().__init__(n_arms, delta, epsilon=epsilon, k1=k1, horizon=horizon)
        if model not in ("bernoulli", "gaussian"):
            raise ValueError(f"model must be one of ('bernoulli', 'gaussian'), got {model!r}")
        if not (math.isfinite(alpha) and alpha > 1):
            raise ValueError(f"alpha must be a finite number > 1, got {alpha!r}")
        if not (math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
        self.threshold = check_threshold(threshold, ("paper", "heuristic"))
        self.alpha = float(alpha)
        self.model, self.sigma = model, float(sigma)
        self.reward_range = (0.0, 1.0) if model == "bernoulli" else None
        self._bounds = bounds_solver()

    def level(self) -> float:
        """β(t, δ) at the current round t."""
        t = self.rounds
        if self.threshold == "heuristic":
            return math.log((math.log(t) + 1.0) / self.delta)
        return math.log(self.k1 * self.n_arms * t ** self.alpha / self.delta)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lower, upper = np.empty(self.n_arms), np.empty(self.n_arms)
        self._bounds(self.means(), self.pulls, self.level(), self.gaussian, self.sigma, lower,
                     upper)
        return lower, upper
