"""The environment interface: answer a whole batch in one vectorised call, and know the truth."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..protocol import Batch

__all__ = ["Environment", "Outcome"]


@dataclass(frozen=True)
class Outcome:
    """An environment's answer to a batch: reward sums per run, and cost sums (runs × m) if any."""

    rewards: np.ndarray
    costs: np.ndarray | None = None


class Environment(ABC):
    """A bandit environment. Stateless: the noise stream and the time of the first pull are
    passed to :meth:`pull`, so one environment object serves every trial.

    Attributes
    ----------
    n_arms : int
        Number of arms that can be pulled.
    n_items : int
        Number of candidate answers of an identification problem (``n_arms`` unless the problem
        is transductive).
    stationary : bool
        Whether rewards depend on the pull time; stationary environments answer a run of ``n``
        pulls from its sufficient statistic in O(1).
    """

    n_arms: int
    n_items: int
    stationary: bool = True
    n_costs: int = 0

    @abstractmethod
    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        """Sample the outcome of ``batch``, whose first pull happens at time ``t0`` (0-based)."""

    @abstractmethod
    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        """Pseudo-regret of each run of ``batch`` (expected reward lost to the best arm)."""

    @abstractmethod
    def best_item(self, horizon: int | None = None) -> int:
        """Index of the best item (the answer a best-arm identifier should give)."""

    def violation(self, batch: Batch, t0: int = 0) -> np.ndarray | None:
        """Positive constraint violation of each run, shape (runs, m); ``None`` if unconstrained."""
        return None

    def _check_batch(self, batch: Batch) -> None:
        if batch.arms.size and int(batch.arms.max()) >= self.n_arms:
            raise ValueError(f"batch pulls arm {int(batch.arms.max())}, but the environment has "
                             f"{self.n_arms} arms")
