"""Top-two Thompson sampling (Russo, 2016, "Simple Bayesian algorithms for best arm
identification", Section 3, TTTS) with the Chernoff (GLR) stopping rule of Garivier and
Kaufmann (2016, "Optimal best arm identification with fixed confidence", Section 3).

Sampling (one pull per round): draw θ from the posterior; I = argmax θ. With probability β
(1/2 by default, Russo's recommendation) pull I; otherwise redraw θ until its argmax J ≠ I and
pull J. Redrawing is done in a block of 64 draws, then in one block up to ``max_redraws``
(1,000) in all; when no draw differs (the posterior names I with probability above 0.999), J is
the arm other than I with the largest mean among the last block's draws — a cap Russo's
algorithm does not have, needed to bound the time per pull.

Stopping: with î the empirical best (ties to the lowest index) and every arm pulled once, stop
when Z(t) = min_{j ≠ î} Z_{î,j}(t) > β(t, δ), where Z_{î,j} is the generalised likelihood ratio

    n_î kl(μ̂_î, m) + n_j kl(μ̂_j, m),   m = (n_î μ̂_î + n_j μ̂_j)/(n_î + n_j),

(Bernoulli kl; the Gaussian form is (μ̂_î − μ̂_j)² / (2σ²(1/n_î + 1/n_j))). The threshold is
β(t, δ) = log(2t(K − 1)/δ) by default (``threshold="theory"``), for which Garivier & Kaufmann
(2016, Theorem 10) prove P(τ < ∞, î_τ ≠ a*) ≤ δ in the Bernoulli model, whatever the sampling
rule; ``threshold="heuristic"`` is log((log t + 1)/δ), the smaller threshold of their
experiments (Section 6), not proved δ-correct. The recommendation is the empirical best arm.
"""

from __future__ import annotations

import numpy as np

from ..estimation.posteriors import check_prior, kl_bernoulli, sample_posterior
from ..protocol import Algorithm, Batch
from ..validation import check_positive, check_positive_int, check_probability

__all__ = ["TopTwoThompson", "chernoff_statistic", "stopping_threshold"]

_BLOCK = 64


def stopping_threshold(t: int, delta: float, n_arms: int, kind: str = "theory") -> float:
    """β(t, δ): log(2t(K − 1)/δ) ("theory") or log((log t + 1)/δ) ("heuristic")."""
    if kind == "theory":
        return float(np.log(2.0 * t * max(n_arms - 1, 1) / delta))
    return float(np.log((np.log(max(t, 1)) + 1.0) / delta))


def chernoff_statistic(pulls: np.ndarray, sums: np.ndarray, model: str = "bernoulli",
                       sigma: float = 1.0) -> tuple[int, float]:
    """(î, Z(t)): the empirical best arm and min_{j≠î} of the GLR statistic (0 while an arm is
    unpulled)."""
    K = pulls.size
    if K == 1:
        return 0, np.inf
    if np.any(pulls == 0):
        means = np.divide(sums, pulls, out=np.zeros(K), where=pulls > 0)
        return int(np.argmax(means)), 0.0
    means = sums / pulls
    best = int(np.argmax(means))
    others = np.arange(K) != best
    n_b, n_j = pulls[best], pulls[others]
    mu_b, mu_j = means[best], means[others]
    if model == "gaussian":
        z = (mu_b - mu_j) ** 2 / (2 * sigma ** 2 * (1.0 / n_b + 1.0 / n_j))
    else:
        m = (n_b * mu_b + n_j * mu_j) / (n_b + n_j)
        z = n_b * kl_bernoulli(mu_b, m) + n_j * kl_bernoulli(mu_j, m)
    z = np.where(mu_j < mu_b, z, 0.0)
    return best, float(z.min())


class TopTwoThompson(Algorithm):
    """Top-two Thompson sampling (Russo 2016) with Chernoff stopping.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    rng : Generator
        Internal randomness ξ (posterior draws and the β coin).
    delta : float
        Confidence δ ∈ (0, 1).
    beta : float
        Probability of pulling the leader I, in (0, 1); Russo's 1/2 by default.
    posterior : {"beta", "gaussian"}
        Beta(1, 1)-Bernoulli posterior (rewards in [0, 1], Bernoulli GLR) or Gaussian
        N(μ̂, σ²/(n + 1)) (Gaussian GLR with variance σ²).
    threshold : {"theory", "heuristic"}
        β(t, δ) of the stopping rule (module docstring).
    sigma : float
        Noise scale of the Gaussian form.
    max_redraws : int
        Cap on the posterior redraws looking for a challenger.
    prior : (a0, b0)
        Beta prior, both ≥ 1.
    horizon : int, optional
        Budget cap: stop (unstopped) after this many pulls.
    """

    kind = "identification"

    def __init__(self, n_arms: int, rng: np.random.Generator, *, delta: float = 0.05,
                 beta: float = 0.5, posterior: str = "beta", threshold: str = "theory",
                 sigma: float = 1.0, max_redraws: int = 1_000,
                 prior: tuple[float, float] = (1.0, 1.0), horizon: int | None = None) -> None:
        super().__init__(check_integer_at_least_2(n_arms))
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (the internal randomness xi), got "
                             f"{type(rng).__name__}")
        self.delta = check_probability(delta, "delta")
        self.beta = check_probability(beta, "beta")
        if posterior not in ("beta", "gaussian"):
            raise ValueError(f"posterior must be 'beta' or 'gaussian', got {posterior!r}")
        if threshold not in ("theory", "heuristic"):
            raise ValueError(f"threshold must be 'theory' or 'heuristic', got {threshold!r}")
        self.posterior, self.threshold = posterior, threshold
        self.sigma = check_positive(sigma, "sigma")
        self.max_redraws = check_positive_int(max_redraws, "max_redraws")
        self.prior = check_prior(prior)
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.reward_range = (0.0, 1.0) if posterior == "beta" else None
        self.rng = rng
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self._stopped = False
        self._statistic = 0.0

    def _draw(self, size: int) -> np.ndarray:
        return sample_posterior(self.rng, self.posterior, self.pulls, self.sums, size,
                                prior=self.prior, sigma=self.sigma)

    def _challenger(self, leader: int) -> int:
        # a first block of 64 draws, then (if all name the leader) the rest of the cap at once:
        # at most two calls to the sampler per pull however concentrated the posterior is
        for size in (_BLOCK, max(self.max_redraws - _BLOCK, 1)):
            theta = self._draw(size)
            best = np.argmax(theta, axis=1)
            differ = np.flatnonzero(best != leader)
            if differ.size:
                return int(best[differ[0]])
        means = theta.mean(axis=0)
        means[leader] = -np.inf
        return int(np.argmax(means))

    def _next_batch(self) -> Batch | None:
        if self._stopped or (self.horizon is not None and self.t >= self.horizon):
            return None
        leader = int(np.argmax(self._draw(1)[0]))
        if self.rng.random() < self.beta:
            return Batch.single(leader)
        return Batch.single(self._challenger(leader))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        _, z = chernoff_statistic(self.pulls, self.sums,
                                  "gaussian" if self.posterior == "gaussian" else "bernoulli",
                                  self.sigma)
        self._statistic = z
        if z > stopping_threshold(self.t, self.delta, self.n_arms, self.threshold):
            self._stopped = True

    @property
    def recommendation(self) -> int | None:
        if self.t == 0:
            return None
        means = np.divide(self.sums, self.pulls, out=np.zeros(self.n_arms),
                          where=self.pulls > 0)
        return int(np.argmax(means))

    @property
    def info(self) -> dict:
        return {"statistic": self._statistic, "stopped_by_rule": self._stopped}


def check_integer_at_least_2(n_arms: object) -> int:
    k = check_positive_int(n_arms, "n_arms")
    if k < 2:
        raise ValueError(f"n_arms must be at least 2 for best-arm identification, got {k}")
    return k
