"""A fixed-split A/B/n test as an algorithm: every batch splits its pulls over the arms in fixed
proportions, whatever the rewards say.

This is the design every practitioner tool runs by default (GrowthBook, Eppo, Statsig,
Optimizely: a fixed traffic split, analysed by a sequential test; /work/shared/research/
live-experiments.md) and the baseline a bandit is compared with. It learns nothing: the
verdicts come from :meth:`banditkit.Experiment.status`'s confidence sequences on the
differences to the control (:mod:`banditkit.live.readout.sequences`).

Each batch of n pulls gives arm k round(n·w_k) pulls by the design apportionment of Fiez et al.
(2019, Appendix B; :func:`banditkit.design.rounding.round_allocation`): Σ = n exactly, each arm
within one pull of n·w_k. A live experiment hands a batch's pulls to units in a shuffled order
(``order="shuffled"``), so each unit's arm is a draw without replacement from the batch: the
realised split of every complete batch is the design's, and the shares at any time are within
K pulls of it.
"""

from __future__ import annotations

import numpy as np

from ..design.rounding import round_allocation
from ..protocol import Algorithm, Batch
from ..validation import check_positive_int

__all__ = ["FixedAllocation"]


class FixedAllocation(Algorithm):
    """Pulls split over the arms in fixed proportions, batch after batch.

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    weights : sequence of float, optional
        The arms' shares (non-negative, summing to a positive number; normalised). Default:
        equal, 1/K each.
    batch_size : int
        Pulls per batch (1,000 by default: the split is exact at every 1,000 pulls).
    horizon : int, optional
        Stop after this many pulls (the last batch is cut to fit); ``None``: run until stopped.
    reward_range : (lo, hi), optional
        Bounds to check every reward against (``None``: any finite reward).
    """

    kind = "regret"

    def __init__(self, n_arms: int, *, weights: object = None, batch_size: int = 1000,
                 horizon: int | None = None,
                 reward_range: tuple[float, float] | None = None) -> None:
        super().__init__(check_positive_int(n_arms, "n_arms"))
        if weights is None:
            w = np.full(self.n_arms, 1.0 / self.n_arms)
        else:
            try:
                w = np.asarray(weights, dtype=float)
            except (TypeError, ValueError):
                w = np.full(1, np.nan)
            if (w.shape != (self.n_arms,) or not np.isfinite(w).all() or (w < 0).any()
                    or not w.sum() > 0):
                raise ValueError(f"weights must be {self.n_arms} non-negative numbers (one per "
                                 f"arm) with a positive sum, got {weights!r}")
            w = w / w.sum()
        self.weights = w
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        if reward_range is not None:
            lo, hi = (float(v) for v in reward_range)
            if not lo < hi:
                raise ValueError(f"reward_range must be (lo, hi) with lo < hi, got "
                                 f"{reward_range!r}")
            reward_range = (lo, hi)
        self.reward_range = reward_range

    def _next_batch(self) -> Batch | None:
        n = self.batch_size
        if self.horizon is not None:
            if self.t >= self.horizon:
                return None
            n = min(n, self.horizon - self.t)
        return Batch.from_allocation(round_allocation(self.weights, n))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        pass  # a fixed split learns nothing

    @property
    def info(self) -> dict:
        return {"weights": self.weights.round(6).tolist(), "batch_size": self.batch_size}
