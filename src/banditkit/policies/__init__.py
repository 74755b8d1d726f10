"""Regret-minimising policies: UCB1, batched and replicable elimination (K-armed and linear),
and the constrained policies (DEBORA, DEBORA-S, DEBORA-H and their optimistic baselines)."""

from .batched_elimination import BatchedElimination

# KL-UCB and Thompson sampling (sequential, batched)
from .batched_thompson import BatchedThompson
from .constrained_baselines import OptimisticConstrained, SafeOptimisticConstrained
from .debora import DEBORA, DEBORAH, DEBORAS
from .kl_ucb import KLUCB
from .linear_elimination import LinearElimination
from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
from .replicable_linear import ReplicableLinearElimination, ReplicableLinearLSE
from .thompson import ThompsonSampling
from .ucb import UCB1
from .ucb_lockstep import ucb1_lockstep

__all__ = [
    "DEBORA",
    "DEBORAH",
    "DEBORAS",
    # KL-UCB and Thompson sampling
    "KLUCB",
    "UCB1",
    "BatchedElimination",
    "BatchedThompson",
    "LinearElimination",
    "OptimisticConstrained",
    "ReplicableBatchedElimination",
    "ReplicableElimination",
    "ReplicableLinearElimination",
    "ReplicableLinearLSE",
    "SafeOptimisticConstrained",
    "ThompsonSampling",
    "ucb1_lockstep",
]
