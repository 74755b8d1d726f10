"""What the K-armed fixed-confidence identifiers share: the per-arm counts and sums, one first
batch pulling every arm once, the reward model (Bernoulli rewards in [0, 1] or Gaussian with
known σ), the Chernoff (GLR) stopping rule of Garivier & Kaufmann (2016, Section 3) and the
empirical-best recommendation.

Chernoff stopping: Z(t) = min_{j ≠ î} [n_î d(μ̂_î, m) + n_j d(μ̂_j, m)], m the pooled mean, against
β(t, δ) = log(2t(K − 1)/δ) (``threshold="theory"``, GK16 Theorem 10, δ-correct for Bernoulli
arms whatever the sampling rule), log((log t + 1)/δ) (``"heuristic"``, their Section 6
experiments; not proved δ-correct) or, for Gaussian arms, Jourdan et al.'s c(t, δ)
(``"gaussian"``, :mod:`.thresholds`). The statistic and the threshold are
:func:`~banditkit.identification.top_two.chernoff_scalar` and
:func:`~banditkit.identification.top_two.stopping_threshold`, the ones top-two Thompson sampling
stops on.
"""

from __future__ import annotations

import numpy as np

from ...protocol import Algorithm, Batch
from ...validation import check_positive, check_positive_int, check_probability
from ..top_two import check_integer_at_least_2, chernoff_scalar
from .thresholds import chernoff_level

__all__ = ["MODELS", "THRESHOLDS", "KArmedIdentifier"]

MODELS = ("bernoulli", "gaussian")
THRESHOLDS = ("theory", "heuristic")


class KArmedIdentifier(Algorithm):
    """Base of the K-armed identifiers (see the module docstring).

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    model : {"bernoulli", "gaussian"}
        Bernoulli rewards (in [0, 1]; Bernoulli kl) or Gaussian rewards of known σ.
    sigma : float
        σ of the Gaussian model.
    horizon : int, optional
        Budget cap: ask for nothing after this many pulls.
    """

    kind = "identification"
    #: The stopping rule: "chernoff" (GLR, subclasses with a ``threshold``) or the subclass's own.
    stopping = "chernoff"

    def __init__(self, n_arms: int, *, delta: float, model: str, sigma: float,
                 threshold: str = "theory", horizon: int | None = None) -> None:
        super().__init__(check_integer_at_least_2(n_arms))
        self.delta = check_probability(delta, "delta")
        if model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {model!r}")
        self.model = model
        self.sigma = check_positive(sigma, "sigma")
        self.threshold = threshold
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.reward_range = (0.0, 1.0) if model == "bernoulli" else None
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self._stopped = False
        self.statistic = 0.0

    @property
    def gaussian(self) -> bool:
        return self.model == "gaussian"

    def means(self) -> np.ndarray:
        """μ̂ (0 for an unpulled arm)."""
        return np.divide(self.sums, self.pulls, out=np.zeros(self.n_arms),
                         where=self.pulls > 0)

    def _choose(self) -> Batch:
        """The next batch after every arm's first pull (subclasses)."""
        raise NotImplementedError

    def _next_batch(self) -> Batch | None:
        if self._stopped or (self.horizon is not None and self.t >= self.horizon):
            return None
        if self.t == 0:  # every arm once: the rule's statistics need a pull of each
            return Batch(np.arange(self.n_arms), np.ones(self.n_arms, dtype=np.int64))
        return self._choose()

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        if self.stopping == "chernoff":
            _, self.statistic = chernoff_scalar(self.pulls, self.sums, self.gaussian,
                                                self.sigma)
            if self.statistic > chernoff_level(self.t, self.delta, self.n_arms,
                                               self.threshold):
                self._stopped = True

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def recommendation(self) -> int | None:
        if self.t == 0:
            return None
        return int(np.argmax(self.means()))

    @property
    def info(self) -> dict:
        return {"statistic": self.statistic, "stopped_by_rule": self._stopped}


def check_threshold(threshold: str, allowed: tuple[str, ...] = THRESHOLDS) -> str:
    if threshold not in allowed:
        raise ValueError(f"threshold must be one of {allowed}, got {threshold!r}")
    return threshold
