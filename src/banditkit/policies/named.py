"""The K-armed policies by name (UCB1, batched and replicable elimination), for
``banditkit audit`` and any tool that builds an algorithm from a name (:mod:`banditkit.registry`).
"""

from __future__ import annotations

import numpy as np

from ..envs.base import Environment
from ..registry import need_horizon, register_policy
from .batched_elimination import BatchedElimination
from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
from .ucb import UCB1
from .ucb_lockstep import ucb1_lockstep

__all__ = ["batched_elimination", "replicable_batched_elimination", "replicable_elimination",
           "ucb1"]


# ---------------------------------------------------------------------------------------------
# The K-armed policies

@register_policy("UCB1", lockstep=ucb1_lockstep)
def ucb1(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         exploration: float = 2.0) -> UCB1:
    """UCB1 (Auer et al. 2002), sequential; no internal randomness."""
    return UCB1(env.n_arms, exploration=exploration, horizon=horizon)


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
