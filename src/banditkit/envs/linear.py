"""Linear bandits: pulling arm x gives x^T θ* plus noise; items Z (transductive case) are the
candidate answers of identification, arms X the measurements.

Stationary, so a run of n pulls of x is answered by its sufficient statistic (one Normal or
Binomial draw per run).
"""

from __future__ import annotations

import numpy as np

from ..protocol import Batch
from ..validation import check_arms
from .base import Environment, Outcome

__all__ = ["LinearBandit"]

NOISES = ("gaussian", "bernoulli", "rademacher")


def _check_theta(theta: object, d: int) -> np.ndarray:
    theta = np.asarray(theta, dtype=float).reshape(-1)
    if theta.shape != (d,):
        raise ValueError(f"theta must have length d = {d} (the columns of X), got {theta.size}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("theta must be finite")
    return theta


class LinearBandit(Environment):
    """Stationary (transductive) linear bandit.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (measurement vectors).
    theta : array, shape (d,)
        True parameter θ*.
    Z : array, shape (M, d), optional
        Items to identify among; defaults to ``X``.
    noise : {"gaussian", "bernoulli", "rademacher"}
        Gaussian N(0, σ²) noise, Bernoulli rewards in {0, 1} with mean x^T θ*, or Rademacher
        rewards in {−1, +1} with mean x^T θ* (bounded, hence 1-sub-Gaussian, and linear on sets
        symmetric about 0 such as the unit ball, where {0, 1} rewards cannot be).
    sigma : float
        Gaussian noise standard deviation.
    clip : bool
        Bernoulli (Rademacher) only: clip the means x^T θ* to [0, 1] ([−1, 1]) instead of
        refusing means outside it.
        The truth (best item, gaps) stays that of the linear model.
    """

    def __init__(self, X: np.ndarray, theta: np.ndarray, Z: np.ndarray | None = None, *,
                 noise: str = "gaussian", sigma: float = 1.0, clip: bool = False) -> None:
        self.X = check_arms(X, "X")
        self.Z = self.X if Z is None else check_arms(Z, "Z")
        d = self.X.shape[1]
        if self.Z.shape[1] != d:
            raise ValueError(f"Z must have d = {d} columns like X, got {self.Z.shape[1]}")
        self.theta = _check_theta(theta, d)
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma}")
        self.noise, self.sigma, self.clip = noise, float(sigma), bool(clip)
        self.means = self.X @ self.theta
        if noise == "bernoulli":
            if clip:
                self.means = np.clip(self.means, 0.0, 1.0)
            elif np.any(self.means < 0) or np.any(self.means > 1):
                raise ValueError("with noise='bernoulli' every mean x^T theta must lie in [0, 1] "
                                 "(pass clip=True to clip them)")
        if noise == "rademacher":
            if clip:
                self.means = np.clip(self.means, -1.0, 1.0)
            elif np.any(np.abs(self.means) > 1):
                raise ValueError("with noise='rademacher' every mean x^T theta must lie in "
                                 "[-1, 1] (pass clip=True to clip them)")
        self.n_arms, self.d = self.X.shape
        self.n_items = self.Z.shape[0]

    @property
    def item_values(self) -> np.ndarray:
        """z^T θ* for every item."""
        return self.Z @ self.theta

    def best_item(self, horizon: int | None = None) -> int:
        return int(np.argmax(self.item_values))

    @property
    def gaps(self) -> np.ndarray:
        """Gaps of the items: max_z z^T θ* − z^T θ*."""
        v = self.item_values
        return v.max() - v

    def min_gap(self, horizon: int | None = None) -> float:
        """Δ(1) = (z_(1) − z_(2))ᵀθ*, the gap between the best and the second-best item
        (``inf`` with a single item); ``horizon`` is ignored (the same signature as
        :meth:`NonStationaryLinearBandit.min_gap`, whose θ̄_T is θ* here)."""
        if self.n_items < 2:
            return float("inf")
        v = np.sort(self.item_values)
        return float(v[-1] - v[-2])

    def mean_theta(self, horizon: int | None = None) -> np.ndarray:
        """θ̄_T = θ* for every T (stationary); a copy."""
        return self.theta.copy()

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.means))

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        return batch.counts * (self.means.max() - self.means[batch.arms])

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        self._check_batch(batch)
        n = batch.counts
        mu = self.means[batch.arms]
        if self.noise == "bernoulli":
            return Outcome(rng.binomial(n, mu).astype(float))
        if self.noise == "rademacher":  # sum of n signs = 2 Binomial(n, (1 + μ)/2) − n
            return Outcome(2.0 * rng.binomial(n, (1.0 + mu) / 2.0) - n)
        nf = n.astype(float)
        return Outcome(nf * mu + np.sqrt(nf) * self.sigma * rng.standard_normal(batch.n_runs))

    def __repr__(self) -> str:
        return (f"LinearBandit(K={self.n_arms}, d={self.d}, items={self.n_items}, "
                f"noise={self.noise!r})")
