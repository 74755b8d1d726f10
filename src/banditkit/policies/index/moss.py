"""MOSS (Audibert and Bubeck, 2009, "Minimax policies for adversarial and stochastic bandits",
COLT, Section 3 / Theorem 5; also Audibert & Bubeck 2010, JMLR, Section 2.2): after one pull of
each arm, play the arm maximising

    B_k = μ̂_k + sqrt( max(log(n / (K n_k)), 0) / n_k ),

with n the horizon, K the number of arms and n_k the pulls of arm k ("Minimax Optimal Strategy
in the Stochastic case"). Its regret is at most 49 sqrt(nK) (the minimax rate, without UCB1's
sqrt(log n) factor) and O(K log(n) / Δ) on a fixed instance. Rewards in [0, 1] (their
assumption), so that is the default ``reward_range``.

Deterministic (no ξ; ties to the lowest index). It is an index policy, so
:func:`banditkit.simulate` and :func:`banditkit.simulate_trials` run it through the lock-step
engine of :mod:`banditkit.policies.index.lockstep`.
"""

from __future__ import annotations

import numpy as np

from ...validation import check_positive_int
from .base import IndexPolicy

__all__ = ["MOSS"]


class MOSS(IndexPolicy):
    """MOSS of Audibert & Bubeck (2009).

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    horizon : int
        n, which the index needs (MOSS is not anytime); it also stops there.
    reward_range : (lo, hi) or None
        (0, 1) by default (the paper's); ``None`` runs it outside its guarantee on unbounded
        rewards.
    """

    def __init__(self, n_arms: int, horizon: int, *,
                 reward_range: tuple[float, float] | None = (0.0, 1.0)) -> None:
        horizon = check_positive_int(horizon, "horizon")
        super().__init__(n_arms, horizon=horizon, reward_range=reward_range)

    def scores(self, pulls: np.ndarray, sums: np.ndarray, t: int, xi: np.ndarray | None
               ) -> np.ndarray:
        """μ̂ + sqrt(max(log(n / (K n_k)), 0) / n_k) for arms pulled at least once."""
        width = np.maximum(np.log(self.horizon / (self.n_arms * pulls)), 0.0)
        return sums / pulls + np.sqrt(width / pulls)
