"""UCB1 (Auer, Cesa-Bianchi and Fischer, 2002, "Finite-time analysis of the multiarmed bandit
problem", Figure 1): pull each arm once, then the arm maximising
μ̂_k + sqrt(2 ln t / n_k). Auer et al.'s analysis assumes rewards in [0, 1]; observe()
does not refuse others, since UCB1 is also run as a baseline on Gaussian instances.

Fully sequential: each batch is one pull. Ties go to the lowest index, so UCB1 has no internal
randomness and two executions differ only through the rewards they see.
"""

from __future__ import annotations

import numpy as np

from ..protocol import Algorithm, Batch
from ..validation import check_positive_int

__all__ = ["UCB1"]


class UCB1(Algorithm):
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
    """

    kind = "regret"

    def __init__(self, n_arms: int, *, exploration: float = 2.0, horizon: int | None = None
                 ) -> None:
        super().__init__(check_positive_int(n_arms, "n_arms"))
        if (isinstance(exploration, bool)
                or not isinstance(exploration, (int, float, np.integer, np.floating))
                or not (np.isfinite(exploration) and exploration >= 0)):
            raise ValueError(f"exploration must be a non-negative number, got {exploration}")
        self.exploration = float(exploration)
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self._unpulled = 0  # lowest arm index not yet pulled

    def indices(self) -> np.ndarray:
        """Current UCB indices (``inf`` for arms never pulled)."""
        idx = np.full(self.n_arms, np.inf)
        seen = self.pulls > 0
        n = self.pulls[seen]
        idx[seen] = self.sums[seen] / n + np.sqrt(self.exploration * np.log(max(self.t, 1)) / n)
        return idx

    def _next_batch(self) -> Batch | None:
        if self.horizon is not None and self.t >= self.horizon:
            return None
        if self._unpulled < self.n_arms:  # initialisation: each arm once, in index order
            return Batch.single(self._unpulled)
        n = self.pulls
        idx = self.sums / n + np.sqrt(self.exploration * np.log(self.t) / n)
        return Batch.single(int(idx.argmax()))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        while self._unpulled < self.n_arms and self.pulls[self._unpulled] > 0:
            self._unpulled += 1
