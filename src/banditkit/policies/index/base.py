"""Sequential index policies: one pull per round, the arm maximising a score computed from each
arm's sufficient statistics (pulls, reward sum), the time t and, for randomised policies, a fixed
number of draws from the internal stream ξ per round.

The score is a pure function of arrays of shape (..., K), so the same numpy operations run for
one trial (:class:`IndexPolicy`) and for many trials in lock-step
(:mod:`banditkit.policies.index.lockstep`): the two agree bit for bit. Draws from ξ are
fixed in number per round (``draws`` per round, of kind ``"uniform"`` or ``"normal"``), so a
lock-step driver can read each trial's ξ in blocks and still see the same numbers as the
sequential class, which reads them one round at a time.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from ...protocol import Algorithm, Batch
from ...validation import check_positive_int, check_range

__all__ = ["IndexPolicy", "check_reward_range", "draw_xi"]


def check_reward_range(value: object, name: str = "reward_range"
                       ) -> tuple[float, float] | None:
    """``None`` (unbounded rewards) or a finite pair (lo, hi), lo < hi."""
    return None if value is None else check_range(value, name)


def draw_xi(rng: np.random.Generator, kind: str, shape: tuple[int, ...]) -> np.ndarray:
    """``shape`` draws of ``kind`` ("uniform": ``rng.random``, "normal":
    ``rng.standard_normal``). Both fill arrays element by element from the stream, so one call
    for B rounds reads what B calls of one round read (the lock-step driver relies on it)."""
    if kind == "uniform":
        return rng.random(shape)
    return rng.standard_normal(shape)


class IndexPolicy(Algorithm):
    """A fully sequential policy playing ``argmax_k score_k`` (ties to the lowest index).

    Subclasses define :meth:`scores` (vectorised over leading axes), ``draws`` (ξ values per
    round; 0 for deterministic policies), ``draw_kind`` and ``initial_rounds`` (whether arm t is
    played at round t < K first, as UCB1 and KL-UCB do).

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    rng : Generator, optional
        Internal randomness ξ (needed when ``draws`` > 0).
    horizon : int, optional
        Stop after this many pulls; unbounded by default.
    reward_range : (lo, hi) or None
        Interval every reward lies in; observations outside it are refused before any state
        changes. ``None``: rewards unbounded (Gaussian models).
    """

    kind = "regret"
    #: Decision-log runs per pull (:func:`banditkit.simulate.check_memory`): one pull a batch.
    runs_per_pull = 1.0
    #: The compiled trial and the lock-step runner (:mod:`banditkit.engines`).
    engines = "banditkit.policies.index.lockstep:index_engine"
    draws: int = 0
    draw_kind: str = "uniform"
    initial_rounds: bool = True

    def __init__(self, n_arms: int, *, rng: np.random.Generator | None = None,
                 horizon: int | None = None,
                 reward_range: tuple[float, float] | None = (0.0, 1.0)) -> None:
        super().__init__(check_positive_int(n_arms, "n_arms"))
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.reward_range = check_reward_range(reward_range)
        if self.draws and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (the internal randomness xi of "
                             f"{type(self).__name__}), got {type(rng).__name__}")
        self.rng = rng
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)

    @property
    def n_draws(self) -> int:
        """ξ values read per round."""
        return self.draws

    @abstractmethod
    def scores(self, pulls: np.ndarray, sums: np.ndarray, t: int, xi: np.ndarray | None
               ) -> np.ndarray:
        """Scores of shape (..., K) from ``pulls``, ``sums`` (..., K), the number t of pulls so
        far, and this round's draws ``xi`` (..., n_draws) (``None`` when ``draws`` is 0)."""

    def _next_batch(self) -> Batch | None:
        if self.horizon is not None and self.t >= self.horizon:
            return None
        xi = draw_xi(self.rng, self.draw_kind, (self.n_draws,)) if self.n_draws else None
        if self.initial_rounds and self.t < self.n_arms:
            return Batch.single(self.t)  # arm t at round t: every arm once, in index order
        return Batch.single(int(np.argmax(self.scores(self.pulls, self.sums, self.t, xi))))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
