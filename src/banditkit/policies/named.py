"""The K-armed policies by name (UCB1, batched and replicable elimination), for
``banditkit audit`` and any tool that builds an algorithm from a name (:mod:`banditkit.registry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from ..envs.base import Environment
from ..registry import need_horizon, register_policy
from ..rng import SeedLike
from ..trial import Trial
from .batched_thompson import BatchedThompson
from .elimination.batched import BatchedElimination
from .elimination.replicable import ReplicableBatchedElimination, ReplicableElimination
from .exp3_ix import EXP3IX
from .fixed_allocation import FixedAllocation
from .index.bayes_ucb import BayesUCB
from .index.kl_ucb import KLUCB
from .index.lockstep import index_lockstep
from .index.moss import MOSS
from .index.thompson import ThompsonSampling
from .index.ucb import UCB1

__all__ = [
    "batched_elimination",
    "batched_thompson",
    "bayes_ucb",
    "exp3_ix",
    "fixed_allocation",
    "kl_ucb",
    "klucb_lockstep",
    "moss",
    "replicable_batched_elimination",
    "replicable_elimination",
    "thompson_lockstep",
    "thompson_sampling",
    "ucb1",
]


# ---------------------------------------------------------------------------------------------
# The K-armed policies

@register_policy("UCB1")
def ucb1(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         exploration: float = 2.0, reward_range: tuple[float, float] | None = (0.0, 1.0)
         ) -> UCB1:
    """UCB1 (Auer et al. 2002), sequential; no internal randomness; rewards in [0, 1]."""
    return UCB1(env.n_arms, exploration=exploration, horizon=horizon,
                reward_range=reward_range)


@register_policy("BatchedElimination")
def batched_elimination(env: Environment, rng: np.random.Generator, *,
                        horizon: int | None = None, n_batches: int | None = None,
                        q: float | None = None, delta: float | None = None,
                        confidence: float = 1.0, commit: str = "lowest-index"
                        ) -> BatchedElimination:
    """Non-replicable batched elimination (Esfandiari et al. 2021)."""
    return BatchedElimination(env.n_arms, need_horizon("BatchedElimination", horizon),
                              n_batches=n_batches, q=q, delta=delta, confidence=confidence,
                              commit=commit)


@register_policy("ReplicableBatchedElimination")
def replicable_batched_elimination(
        env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
        rho: float = 0.3, rho_per_estimate: float | None = None, sample_rule: str = "lemma",
        n_batches: int | None = None, q: float | None = None, delta: float | None = None,
        confidence: float = 1.0, commit: str = "lowest-index", commit_share: float | None = None
        ) -> ReplicableBatchedElimination:
    """Algorithm 1 of Esfandiari et al. (2023): replicable means in batched elimination."""
    return ReplicableBatchedElimination(
        env.n_arms, need_horizon("ReplicableBatchedElimination", horizon), rho, rng,
        rho_per_estimate=rho_per_estimate, sample_rule=sample_rule, n_batches=n_batches, q=q,
        delta=delta, confidence=confidence, commit=commit, commit_share=commit_share)


@register_policy("ReplicableElimination")
def replicable_elimination(
        env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
        rho: float = 0.3, beta: int | None = None, beta_floor: bool = True,
        n_batches: int | None = None, q: float | None = None, delta: float | None = None,
        confidence: float = 1.0, commit: str = "lowest-index", commit_share: float | None = None
        ) -> ReplicableElimination:
    """Algorithm 2 of Esfandiari et al. (2023): β blow-up and a random threshold."""
    return ReplicableElimination(
        env.n_arms, need_horizon("ReplicableElimination", horizon), rho, rng, beta=beta,
        beta_floor=beta_floor, n_batches=n_batches, q=q, delta=delta, confidence=confidence,
        commit=commit, commit_share=commit_share)


# ---------------------------------------------------------------------------------------------
# KL-UCB and Thompson sampling (issue 16 §5, issue 18): sequential ones run in lock-step

def _make_klucb(n_arms: int, rng: np.random.Generator | None, **params: object) -> KLUCB:
    return KLUCB(n_arms, **params)  # type: ignore[arg-type]


def _make_ts(n_arms: int, rng: np.random.Generator | None, **params: object
             ) -> ThompsonSampling:
    return ThompsonSampling(n_arms, rng, **params)  # type: ignore[arg-type]


def klucb_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                   seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None,
                   *, divergence: str = "bernoulli", c: float = 0.0, sigma: float = 1.0,
                   reward_range: tuple[float, float] | str | None = "default") -> list[Trial]:
    """KL-UCB trials in lock-step, each equal to ``simulate`` of :class:`KLUCB`."""
    make = partial(_make_klucb, divergence=divergence, c=c, sigma=sigma,
                   reward_range=reward_range)
    return index_lockstep(make, envs, rngs, seeds, horizon, checkpoints)


def thompson_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                      seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None,
                      *, posterior: str = "beta", prior: tuple[float, float] = (1.0, 1.0),
                      sigma: float = 1.0,
                      reward_range: tuple[float, float] | str | None = "default"
                      ) -> list[Trial]:
    """Thompson sampling trials in lock-step, each with its own ξ ``rngs[i]``, each equal to
    ``simulate`` of :class:`ThompsonSampling`."""
    make = partial(_make_ts, posterior=posterior, prior=prior, sigma=sigma,
                   reward_range=reward_range)
    return index_lockstep(make, envs, rngs, seeds, horizon, checkpoints)


@register_policy("KLUCB")
def kl_ucb(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
           divergence: str = "bernoulli", c: float = 0.0, sigma: float = 1.0,
           reward_range: tuple[float, float] | str | None = "default") -> KLUCB:
    """KL-UCB (Garivier & Cappé 2011), Bernoulli or Gaussian kl, f(t) = log t + c log log t."""
    return KLUCB(env.n_arms, divergence=divergence, c=c, sigma=sigma, horizon=horizon,
                 reward_range=reward_range)


@register_policy("ThompsonSampling")
def thompson_sampling(env: Environment, rng: np.random.Generator, *,
                      horizon: int | None = None, posterior: str = "beta",
                      prior: tuple[float, float] = (1.0, 1.0), sigma: float = 1.0,
                      reward_range: tuple[float, float] | str | None = "default"
                      ) -> ThompsonSampling:
    """Thompson sampling (Agrawal & Goyal 2012/2013), Beta(1, 1) or Gaussian posterior."""
    return ThompsonSampling(env.n_arms, rng, posterior=posterior, prior=prior, sigma=sigma,
                            horizon=horizon, reward_range=reward_range)


@register_policy("BatchedThompson")
def batched_thompson(env: Environment, rng: np.random.Generator, *,
                     horizon: int | None = None, batch_size: int = 1000,
                     min_share: float = 0.01, posterior: str = "beta", draws: int = 10_000,
                     prior: tuple[float, float] = (1.0, 1.0), sigma: float = 1.0,
                     reward_range: tuple[float, float] | str | None = "default",
                     control_floor: float = 0.0, control_arm: int = 0) -> BatchedThompson:
    """Batched Thompson sampling: batches by posterior P(best), minimum share per arm."""
    return BatchedThompson(env.n_arms, rng, batch_size=batch_size, min_share=min_share,
                           posterior=posterior, draws=draws, prior=prior, sigma=sigma,
                           horizon=horizon, reward_range=reward_range,
                           control_floor=control_floor, control_arm=control_arm)


@register_policy("FixedAllocation")
def fixed_allocation(env: Environment, rng: np.random.Generator, *,
                     horizon: int | None = None, weights: Sequence[float] | None = None,
                     batch_size: int = 1000,
                     reward_range: tuple[float, float] | None = None) -> FixedAllocation:
    """A fixed-split A/B/n test: batches split by fixed weights (default equal)."""
    return FixedAllocation(env.n_arms, weights=weights, batch_size=batch_size, horizon=horizon,
                           reward_range=reward_range)


# ---------------------------------------------------------------------------------------------
# The regret baselines researchers compare against (issue 28 §3)

@register_policy("MOSS")
def moss(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         reward_range: tuple[float, float] | None = (0.0, 1.0)) -> MOSS:
    """MOSS (Audibert & Bubeck 2009): μ̂ + sqrt(max(log(n/(K n_k)), 0)/n_k); needs T."""
    return MOSS(env.n_arms, need_horizon("MOSS", horizon), reward_range=reward_range)


@register_policy("BayesUCB")
def bayes_ucb(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
              c: float = 0.0) -> BayesUCB:
    """Bayes-UCB (Kaufmann, Cappé & Garivier 2012): Beta quantile 1 − 1/(t (log n)^c)."""
    return BayesUCB(env.n_arms, c=c, horizon=horizon)


@register_policy("EXP3IX")
def exp3_ix(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
            eta: float | None = None, gamma: float | None = None) -> EXP3IX:
    """EXP3-IX (Neu 2015): exponential weights, implicit exploration; η = 2γ from T."""
    return EXP3IX(env.n_arms, need_horizon("EXP3IX", horizon), rng=rng, eta=eta, gamma=gamma)
