"""UCB1 (Auer, Cesa-Bianchi and Fischer, 2002, "Finite-time analysis of the multiarmed bandit
problem", Figure 1): pull each arm once, then the arm maximising
μ̂_k + sqrt(2 ln t / n_k). Auer et al.'s analysis assumes rewards in [0, 1], so that is the
default ``reward_range`` and other rewards are refused; ``reward_range=None`` runs it as a
baseline on unbounded (Gaussian) rewards, outside the guarantee.

Fully sequential: each batch is one pull. Ties go to the lowest index, so UCB1 has no internal
randomness and two executions differ only through the rewards they see.
"""

from __future__ import annotations

import numpy as np

from .base import IndexPolicy

__all__ = ["UCB1"]


class UCB1(IndexPolicy):
    """UCB1 of Auer et al. (2002).

    Parameters
    ----------
    n_arms : int
        Number of arms K ≥ 1.
    exploration : float
        The constant c in μ̂_k + sqrt(c ln t / n_k); Auer et al.'s value is 2 (the default).
        Esfandiari et al. (ICLR 2023, Appendix H) do not state theirs; the rounds in which
        their UCB pairs differ match c ≈ 4.5 on their instance (``docs/replicable.md``).
    horizon : int, optional
        Stop after this many pulls (``next_batch`` returns ``None``); unbounded by default.
    reward_range : (lo, hi) or None
        Rewards outside it are refused; (0, 1) by default (Auer et al.'s assumption).
    """

    def __init__(self, n_arms: int, *, exploration: float = 2.0, horizon: int | None = None,
                 reward_range: tuple[float, float] | None = (0.0, 1.0)) -> None:
        if (isinstance(exploration, bool)
                or not isinstance(exploration, (int, float, np.integer, np.floating))
                or not (np.isfinite(exploration) and exploration >= 0)):
            raise ValueError(f"exploration must be a non-negative number, got {exploration}")
        super().__init__(n_arms, horizon=horizon, reward_range=reward_range)
        self.exploration = float(exploration)

    def scores(self, pulls: np.ndarray, sums: np.ndarray, t: int, xi: np.ndarray | None
               ) -> np.ndarray:
        """μ̂ + sqrt(c ln t / n) for arms pulled at least once (all of them after round K)."""
        bonus = np.sqrt(self.exploration * np.log(max(t, 1)) / pulls)
        return sums / pulls + bonus

    def indices(self) -> np.ndarray:
        """Current UCB indices (``inf`` for arms never pulled)."""
        idx = np.full(self.n_arms, np.inf)
        seen = self.pulls > 0
        idx[seen] = self.scores(self.pulls[seen], self.sums[seen], self.t, None)
        return idx
