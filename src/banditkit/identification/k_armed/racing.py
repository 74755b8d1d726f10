"""Racing (successive elimination) baselines of Garivier & Kaufmann's Table 1 (COLT 2016,
Section 6): **Chernoff-Racing** (GK16, Section 5) and **KL-Racing** (Kaufmann & Kalyanakrishnan
2013), for rewards in [0, 1] (Bernoulli kl) or Gaussian arms of known σ.

Both pull every arm once (round r = 1), then every remaining arm once per round (one batch);
after round r (t pulls in all, every remaining arm pulled r times), with B and W the empirical
best and worst remaining arms (ties to the lowest index):

* **Chernoff-Racing** eliminates W when r d(μ̂_B, m) + r d(μ̂_W, m) > β(t, δ), m = (μ̂_B + μ̂_W)/2:
  the Chernoff statistic Z_{B,W} with equal counts;
* **KL-Racing** eliminates W when L_B > U_W, the KL confidence bounds
  {q : r d(μ̂, q) ≤ β} of the round.

The run stops when one arm remains; it is recommended. Thresholds:

* ``"theory"`` (default): Chernoff-Racing β(t, δ) = log(2t(K − 1)/δ) (GK16, Theorem 10: a wrong
  elimination is a pair (W, a*) whose statistic crossed β, an event Theorem 10's proof bounds by
  δ/(K − 1) for each of the K − 1 pairs with a*); KL-Racing β(r, δ) = log(k₁ K r^α/δ) with
  k₁ = 405.5, α = 1.1 (Kaufmann & Kalyanakrishnan 2013, the constants of KL-LUCB, :mod:`.lucb`).
* ``"heuristic"``: log((log t + 1)/δ), with t the total pulls, the rate GK16's Table 1 ran every
  algorithm with (their Section 6, and the authors' code); not proved δ-correct.
"""

from __future__ import annotations

import math

import numpy as np

from ...protocol import Batch
from .base import KArmedIdentifier, check_threshold
from .lucb import KLLUCB_ALPHA, KLLUCB_K1
from .oracle import divergence, kl_bounds

__all__ = ["ChernoffRacing", "KLRacing"]


class _Racing(KArmedIdentifier):
    """Successive elimination of the empirical worst arm (module docstring)."""

    stopping = "elimination"

    def __init__(self, n_arms: int, delta: float = 0.05, *, threshold: str = "theory",
                 model: str = "bernoulli", sigma: float = 1.0,
                 horizon: int | None = None) -> None:
        super().__init__(n_arms, delta=delta, model=model, sigma=sigma,
                         threshold=check_threshold(threshold), horizon=horizon)
        # the arms still racing ("remaining" is simulate's name for a budget left)
        self.active = np.arange(self.n_arms)
        self.rounds = 0  # r: pulls of every remaining arm

    def _next_batch(self) -> Batch | None:
        if self._stopped or (self.horizon is not None and self.t >= self.horizon):
            return None
        return Batch(self.active.copy(), np.ones(self.active.size, dtype=np.int64))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        if batch.n_pulls < self.active.size:
            return  # a cut round: the run is over (simulate's horizon)
        self.rounds += 1
        mu = self.sums[self.active] / self.rounds
        best = int(np.argmax(mu))
        worst = int(np.argmin(mu))
        if best != worst and self._eliminates(float(mu[best]), float(mu[worst])):
            self.active = np.delete(self.active, worst)
            if self.active.size == 1:
                self._stopped = True

    def _eliminates(self, top: float, bottom: float) -> bool:
        raise NotImplementedError

    @property
    def recommendation(self) -> int | None:
        if self.t == 0:
            return None
        if self.active.size == 1:
            return int(self.active[0])
        return int(self.active[np.argmax(self.sums[self.active])])

    @property
    def info(self) -> dict:
        return {"rounds": self.rounds, "active": int(self.active.size),
                "stopped_by_rule": self._stopped}


class ChernoffRacing(_Racing):
    """Chernoff-Racing (Garivier & Kaufmann 2016, Section 5): eliminate the empirical worst
    remaining arm once its Chernoff statistic against the best exceeds β(t, δ).

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    threshold : {"theory", "heuristic"}
        log(2t(K − 1)/δ) or log((log t + 1)/δ) (module docstring).
    model : {"bernoulli", "gaussian"}
        The divergence d.
    sigma : float
        σ of the Gaussian model.
    horizon : int, optional
        Budget cap.
    """

    def _eliminates(self, top: float, bottom: float) -> bool:
        mid = 0.5 * (top + bottom)
        z = self.rounds * (divergence(top, mid, self.gaussian, self.sigma)
                           + divergence(bottom, mid, self.gaussian, self.sigma))
        if self.threshold == "heuristic":
            level = math.log((math.log(self.t) + 1.0) / self.delta)
        else:
            level = math.log(2.0 * self.t * (self.n_arms - 1) / self.delta)
        return z > level


class KLRacing(_Racing):
    """KL-Racing (Kaufmann & Kalyanakrishnan 2013): eliminate the empirical worst remaining
    arm once the best's lower KL bound exceeds its upper one.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    threshold : {"theory", "heuristic"}
        log(k₁ K r^α/δ) (k₁ = 405.5, α = 1.1) or log((log t + 1)/δ) (module docstring).
    model : {"bernoulli", "gaussian"}
        Bernoulli kl or the Gaussian divergence.
    sigma : float
        σ of the Gaussian model.
    horizon : int, optional
        Budget cap.
    """

    def _eliminates(self, top: float, bottom: float) -> bool:
        if self.threshold == "heuristic":
            level = math.log((math.log(self.t) + 1.0) / self.delta)
        else:
            level = math.log(KLLUCB_K1 * self.n_arms * self.rounds ** KLLUCB_ALPHA / self.delta)
        lower, _ = kl_bounds(top, self.rounds, level, self.gaussian, self.sigma)
        _, upper = kl_bounds(bottom, self.rounds, level, self.gaussian, self.sigma)
        return lower > upper
