"""Conjugate posteriors of the Bayesian bandit algorithms (Thompson sampling and its batched and
top-two forms) and the Kullback–Leibler divergences of their index and stopping rules, shared by
``policies/`` and ``identification/``.

* Beta-Bernoulli: prior Beta(a₀, b₀) (Beta(1, 1), uniform, in Agrawal & Goyal 2012), posterior
  Beta(S + a₀, F + b₀) with S the reward sum and F = n − S.
* Gaussian: N(μ̂, σ²/(n + 1)) with μ̂ = S/(n + 1) (Agrawal & Goyal 2013, Algorithm 2).
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_prior", "kl_bernoulli", "kl_gaussian", "sample_posterior"]


def check_prior(prior: object) -> tuple[float, float]:
    """A Beta prior (a0, b0) with both parameters finite and > 0: (1, 1) is the uniform prior of
    Agrawal & Goyal (2012), (½, ½) Jeffreys' prior (the samplers of
    :mod:`~banditkit.estimation.beta_draws` are exact for every positive shape)."""
    try:
        a0, b0 = (float(v) for v in prior)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ValueError(f"prior must be a pair (a0, b0) of finite numbers > 0, got {prior!r}"
                         ) from None
    if not (np.isfinite(a0) and np.isfinite(b0) and a0 > 0 and b0 > 0):
        raise ValueError(f"prior must be a pair (a0, b0) of finite numbers > 0, got {prior!r}")
    return a0, b0


def sample_posterior(rng: np.random.Generator, posterior: str, pulls: np.ndarray,
                     sums: np.ndarray, size: int, *, prior: tuple[float, float] = (1.0, 1.0),
                     sigma: float = 1.0) -> np.ndarray:
    """``size`` joint draws (size, K) of the arms' means from their posteriors."""
    K = pulls.size
    if posterior == "gaussian":
        n1 = pulls + 1.0
        return sums / n1 + sigma * rng.standard_normal((size, K)) / np.sqrt(n1)
    return rng.beta(sums + prior[0], (pulls - sums) + prior[1], size=(size, K))


def kl_bernoulli(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """kl(p, q) = p log(p/q) + (1 − p) log((1 − p)/(1 − q)) (0 log 0 = 0), the divergence of
    Bernoulli(p) from Bernoulli(q); ``inf`` where q ∈ {0, 1} and p ≠ q."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(p / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0)
    return a + b


def kl_gaussian(p: np.ndarray, q: np.ndarray, sigma: float = 1.0) -> np.ndarray:
    """(p − q)² / (2σ²), the divergence between Normal(p, σ²) and Normal(q, σ²)."""
    return (np.asarray(p, dtype=float) - np.asarray(q, dtype=float)) ** 2 / (2 * sigma ** 2)


def bounded_reward_range(bounded: bool, reward_range: object, why: str) -> object:
    """The reward range of a policy whose statistic may need rewards in [0, 1] (the Beta
    posterior of Thompson sampling, the Bernoulli kl of KL-UCB): ``"default"`` is [0, 1] when
    ``bounded`` and none otherwise; when ``bounded``, any other range is refused, the message
    ending with ``why``. Returns the range for ``check_reward_range``."""
    if isinstance(reward_range, str):
        if reward_range != "default":
            raise ValueError(f"reward_range must be a pair (lo, hi) or None, got "
                             f"{reward_range!r}")
        reward_range = (0.0, 1.0) if bounded else None
    if bounded and (reward_range is None or tuple(map(float, reward_range)) != (0.0, 1.0)):
        raise ValueError(f"reward_range must be (0, 1) for {why}")
    return reward_range
