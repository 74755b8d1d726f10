"""Stationary K-armed bandits with Bernoulli or Gaussian rewards.

A run of ``n`` pulls of arm ``k`` is answered by its sufficient statistic: one Binomial(n, μ_k)
draw for Bernoulli arms, one Normal(n μ_k, n σ²) draw for Gaussian arms. A batch therefore
costs O(runs), whatever its number of pulls.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..protocol import Batch
from ..validation import check_in_unit_interval
from .base import Environment, Outcome

__all__ = ["BernoulliBandit", "GaussianBandit", "StationaryBandit", "bernoulli_rule",
           "bernoulli_rules"]


class StationaryBandit(Environment):
    """Common truth of stationary K-armed bandits: means, best arm, gaps."""

    def __init__(self, means: npt.ArrayLike) -> None:
        means = np.asarray(means, dtype=float)
        if means.ndim != 1:
            raise ValueError(f"means must be a 1-D array with one mean per arm, got shape "
                             f"{means.shape}")
        if means.size < 2:  # with one arm there is nothing to choose or identify
            raise ValueError(f"means must hold at least 2 arms (one mean per arm), got "
                             f"{means.size}")
        if not np.all(np.isfinite(means)):
            raise ValueError("means must be finite numbers")
        self.means = means
        self.n_arms = self.n_items = int(means.size)

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.means))

    @property
    def gaps(self) -> np.ndarray:
        """μ* − μ_k for every arm."""
        return self.means.max() - self.means

    def best_item(self, horizon: int | None = None) -> int:
        return self.best_arm

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        return batch.counts * self.gaps[batch.arms]


class BernoulliBandit(StationaryBandit):
    """K arms with Bernoulli(μ_k) rewards.

    Parameters
    ----------
    means : array of float in [0, 1], shape (K,)
    """

    def __init__(self, means: npt.ArrayLike) -> None:
        super().__init__(check_in_unit_interval(means, "means"))

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        self._check_batch(batch)
        return Outcome(rng.binomial(batch.counts, self.means[batch.arms]).astype(float))

    def __repr__(self) -> str:
        return f"BernoulliBandit(means={self.means.tolist()})"


class GaussianBandit(StationaryBandit):
    """K arms with Normal(μ_k, σ²) rewards.

    Parameters
    ----------
    means : array of float, shape (K,)
    sigma : float > 0
        Noise standard deviation, shared by all arms.
    """

    def __init__(self, means: npt.ArrayLike, sigma: float = 1.0) -> None:
        super().__init__(means)
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma}")
        self.sigma = float(sigma)

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        self._check_batch(batch)
        n = batch.counts.astype(float)
        noise = rng.standard_normal(batch.n_runs) * np.sqrt(n) * self.sigma
        return Outcome(n * self.means[batch.arms] + noise)

    def __repr__(self) -> str:
        return f"GaussianBandit(means={self.means.tolist()}, sigma={self.sigma})"


def bernoulli_rule(mu: float) -> tuple[float, bool]:
    """(threshold, above) such that numpy's binomial(1, μ) from uniform U is
    ``U > threshold`` if ``above`` else ``U <= threshold`` (its inversion algorithm): what a
    compiled kernel needs to draw :meth:`BernoulliBandit.pull`'s reward of one pull."""
    if mu <= 0.5:
        return math.exp(math.log(1.0 - mu)), True
    p = 1.0 - mu        # numpy inverts the complement and returns 1 − X
    q = 1.0 - p
    return math.exp(math.log(q)), False


def bernoulli_rules(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(thresholds, below) of every arm (:func:`bernoulli_rule`), as arrays."""
    thresholds = np.zeros(len(means))
    below = np.zeros(len(means), dtype=np.bool_)
    for k, mu in enumerate(means):
        thresholds[k], above = bernoulli_rule(float(mu))
        below[k] = not above
    return thresholds, below
