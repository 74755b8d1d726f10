"""EB-TCε₀: the Top Two algorithm with the Empirical-Best leader and the Transportation-Cost
challenger (Jourdan, Degenne & Kaufmann 2023, "An ε-best-arm identification algorithm for
fixed-confidence and beyond", NeurIPS; EB-TC is Jourdan, Degenne, Baudry, de Heide & Kaufmann
2022, "Top two algorithms revisited"), for best-arm identification with Gaussian arms of known
σ, with fixed β and tracking.

* Every arm is pulled once (one batch), then one pull per round n:
* leader B_n = argmax_a μ̂_a (the empirical best; ties to the lowest index);
* challenger C_n = argmin_{j ≠ B_n} (μ̂_{B_n} − μ̂_j + ε₀)/√(1/N_{B_n} + 1/N_j), the
  transportation cost with slack ε₀ > 0 (ε₀ = 0 is EB-TC of Jourdan et al. 2022);
* tracking with fixed β (one procedure per leader): with T_n(i) the number of rounds in which
  i was the leader (this one included) and N^i_{n,j} the pulls of j in those rounds, pull
  B_n if N^{B_n}_{n,B_n} ≤ β T_n(B_n), else C_n; β = 1/2.
* Stopping: the Chernoff (GLR) rule of :mod:`.base` in the Gaussian model
  (Z = min_j (μ̂_î − μ̂_j)²/(2σ²(1/N_î + 1/N_j))), β(t, δ) = log(2t(K − 1)/δ) by default
  (``"theory"``: the threshold Garivier & Kaufmann prove for Bernoulli arms, Theorem 10, kept
  the default so that runs recorded before stay the same), the paper's own Gaussian threshold
  c(t, δ) = 2 C_G(½ log((K − 1)/δ)) + 4 log(4 + log(t/2)) (``"gaussian"``, Jourdan et al.
  2022/2023 with Kaufmann & Koolen 2021's C_G, :mod:`.thresholds`), or ``"heuristic"``
  log((log t + 1)/δ); recommend the empirical best. The paper's (ε, δ)-stopping with slack ε
  is its ε = 0 case here (the exact best arm).

ε₀ = 0.1 is our default within the paper's requirement ε₀ > 0 (the value of its experiments
could not be read here: the search tool gives that paper's first page only). The IDS choice of
β (the paper's other variant) is not implemented. On Bernoulli rewards (in [0, 1], so
½-sub-Gaussian) run it with ``sigma=0.5``.
"""

from __future__ import annotations

import math

import numpy as np

from ...protocol import Batch
from .base import KArmedIdentifier, check_threshold
from .thresholds import CHERNOFF_THRESHOLDS

__all__ = ["EBTC", "tc_challenger"]


def tc_challenger(means: np.ndarray, pulls: np.ndarray, leader: int, epsilon0: float) -> int:
    """The transportation-cost challenger argmin_{j ≠ leader} (μ̂_B − μ̂_j + ε₀)/√(1/N_B + 1/N_j)
    (ties to the lowest index)."""
    n = pulls.astype(float)
    cost = (means[leader] - means + epsilon0) / np.sqrt(1.0 / n[leader] + 1.0 / n)
    cost[leader] = math.inf
    return int(np.argmin(cost))


class EBTC(KArmedIdentifier):
    """EB-TCε₀ with fixed β and tracking (Jourdan, Degenne & Kaufmann 2023).

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    epsilon0 : float
        Slack ε₀ ≥ 0 of the challenger's transportation cost (0.1 by default).
    beta : float
        Target share of the leader, in (0, 1); 1/2.
    sigma : float
        Known σ of the Gaussian arms (the challenger's scale and the GLR's).
    threshold : {"theory", "heuristic", "gaussian"}
        β(t, δ) of the Chernoff stopping rule; ``"gaussian"`` is the paper's own.
    horizon : int, optional
        Budget cap.

    Notes
    -----
    Deterministic (no internal randomness: the tracking replaces Russo's coin).
    """

    #: The compiled kernel (:mod:`banditkit.engines`; :mod:`.eb_tc_kernel`).
    engines = "banditkit.identification.k_armed.eb_tc_kernel:ebtc_engine"

    def __init__(self, n_arms: int, delta: float = 0.05, *, epsilon0: float = 0.1,
                 beta: float = 0.5, sigma: float = 1.0, threshold: str = "theory",
                 horizon: int | None = None) -> None:
        super().__init__(n_arms, delta=delta, model="gaussian", sigma=sigma,
                         threshold=check_threshold(threshold, CHERNOFF_THRESHOLDS),
                         horizon=horizon)
        if not (math.isfinite(epsilon0) and epsilon0 >= 0):
            raise ValueError(f"epsilon0 must be a finite number >= 0, got {epsilon0!r}")
        if not (0 < beta < 1):
            raise ValueError(f"beta must be a number in (0, 1), got {beta!r}")
        self.epsilon0, self.beta = float(epsilon0), float(beta)
        self.leader_rounds = np.zeros(self.n_arms, dtype=np.int64)  # T_n(i)
        self.leader_pulls = np.zeros(self.n_arms, dtype=np.int64)  # N^i_{n,i}

    def challenger(self, leader: int) -> int:
        """argmin_{j ≠ leader} (μ̂_B − μ̂_j + ε₀)/√(1/N_B + 1/N_j) (ties to the lowest index)."""
        return tc_challenger(self.means(), self.pulls, leader, self.epsilon0)

    def _choose(self) -> Batch:
        leader = int(np.argmax(self.means()))
        self.leader_rounds[leader] += 1
        if self.leader_pulls[leader] <= self.beta * self.leader_rounds[leader]:
            self.leader_pulls[leader] += 1
            return Batch.single(leader)
        return Batch.single(self.challenger(leader))
