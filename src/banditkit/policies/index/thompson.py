"""Thompson sampling (Thompson, 1933; Agrawal and Goyal, 2012, "Analysis of Thompson sampling
for the multi-armed bandit problem", Algorithm 1/2; Agrawal and Goyal, 2013, "Further optimal
regret bounds for Thompson sampling", Algorithm 2).

Each round draws θ_k from each arm's posterior and plays argmax θ_k (ties to the lowest index):

* ``posterior="beta"`` — Beta(S_k + a₀, F_k + b₀) with the uniform prior Beta(1, 1) of Agrawal &
  Goyal (2012) (S_k the reward sum, F_k = n_k − S_k). For 0/1 rewards this is the exact
  posterior. For rewards in [0, 1] that are not 0/1, Agrawal & Goyal replace each reward r by a
  Bernoulli(r) draw; the protocol gives run sums, not single rewards, so we add the fractional
  sum instead (S += r, F += 1 − r), the usual practical form; on Bernoulli instances the two
  coincide.
* ``posterior="gaussian"`` — N(μ̂_k, σ²/(n_k + 1)) with μ̂_k = S_k/(n_k + 1), Agrawal & Goyal
  (2013, Algorithm 2, σ = 1 for rewards in [0, 1]).

Randomness: every round reads a fixed number of values from ξ, so many trials can run in
lock-step with their own streams (:mod:`banditkit.policies.index.lockstep`) and agree bit
for bit with this class. The Gaussian form reads K standard normals. The Beta form reads 5K
uniforms and draws each Beta as G_a/(G_a + G_b) with one Marsaglia–Tsang (2000) attempt for each
Gamma (the normal by inversion, ``scipy.special.ndtri``); when either attempt is rejected (under
5% of arms at the prior, far fewer once data accrue) it inverts the Beta CDF at the fifth
uniform. Conditionally on acceptance a Marsaglia–Tsang draw is exactly Gamma-distributed, and
the fallback is exact and independent, so every θ_k is an exact Beta draw. Priors below 1
(Jeffreys' Beta(½, ½)) are allowed: a shape below 1 always takes the exact fallback
(:mod:`banditkit.estimation.beta_draws`).
"""

from __future__ import annotations

import numpy as np

from ...estimation.beta_draws import BETA_UNIFORMS, beta_from_uniforms
from ...estimation.beta_draws import gamma_attempt as _gamma_attempt  # noqa: F401 (tests)
from ...estimation.posteriors import bounded_reward_range, check_prior
from ...validation import check_positive
from .base import IndexPolicy

__all__ = ["BETA_UNIFORMS", "ThompsonSampling", "beta_from_uniforms", "check_prior",
           "posterior_draws"]

# the Beta sampler lives in estimation/beta_draws.py (top-two Thompson sampling draws its Betas
# the same way); its names stay importable from here


def posterior_draws(posterior: str, pulls: np.ndarray, sums: np.ndarray, xi: np.ndarray, *,
                    prior: tuple[float, float] = (1.0, 1.0), sigma: float = 1.0) -> np.ndarray:
    """One θ per arm from each arm's posterior, shape (..., K), from this round's ξ values."""
    if posterior == "gaussian":
        n1 = pulls + 1.0
        return sums / n1 + sigma * xi / np.sqrt(n1)
    a = sums + prior[0]
    b = (pulls - sums) + prior[1]
    return beta_from_uniforms(a, b, xi)


class ThompsonSampling(IndexPolicy):
    """Thompson sampling, one pull per round.

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    rng : Generator
        Internal randomness ξ (the posterior draws).
    posterior : {"beta", "gaussian"}
        Beta-Bernoulli (Agrawal & Goyal 2012, the default) or Gaussian (Agrawal & Goyal 2013).
    prior : (a0, b0)
        Beta prior, both > 0; (1, 1) uniform (Agrawal & Goyal 2012), (½, ½) Jeffreys'.
    sigma : float
        Posterior scale of the Gaussian form (1 for rewards in [0, 1], as Agrawal & Goyal).
    horizon : int, optional
        Stop after this many pulls.
    reward_range : (lo, hi) or None, optional
        (0, 1) for the Beta form (required); ``None`` (unbounded) by default for the Gaussian
        form.
    """

    initial_rounds = False  # the prior gives every arm a posterior before its first pull
    draw_kind = "uniform"

    def __init__(self, n_arms: int, rng: np.random.Generator, *, posterior: str = "beta",
                 prior: tuple[float, float] = (1.0, 1.0), sigma: float = 1.0,
                 horizon: int | None = None,
                 reward_range: tuple[float, float] | str | None = "default") -> None:
        if posterior not in ("beta", "gaussian"):
            raise ValueError(f"posterior must be 'beta' or 'gaussian', got {posterior!r}")
        self.posterior = posterior
        self.prior = check_prior(prior)
        self.sigma = check_positive(sigma, "sigma")
        reward_range = bounded_reward_range(
            posterior == "beta", reward_range,
            "posterior='beta': the Beta posterior counts successes and failures in [0, 1]")
        if posterior == "gaussian":
            self.draw_kind = "normal"
        super().__init__(n_arms, rng=rng, horizon=horizon, reward_range=reward_range)

    @property
    def n_draws(self) -> int:
        return self.n_arms if self.posterior == "gaussian" else BETA_UNIFORMS * self.n_arms

    draws = 1  # marks the policy as randomised (IndexPolicy checks rng); n_draws is per round

    def scores(self, pulls: np.ndarray, sums: np.ndarray, t: int, xi: np.ndarray | None
               ) -> np.ndarray:
        return posterior_draws(self.posterior, pulls, sums, xi, prior=self.prior,
                               sigma=self.sigma)
