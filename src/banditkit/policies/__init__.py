"""Regret-minimising policies: UCB1, batched and replicable elimination (K-armed and linear),
and the constrained policies (DEBORA, DEBORA-S, DEBORA-H and their optimistic baselines)."""

from .batched_elimination import BatchedElimination
from .constrained_baselines import (
    OptimisticConstrained,
    OptimisticMixingConstrained,
    SafeOptimisticConstrained,
)
from .debora import DEBORA, DEBORAH, DEBORAS
from .linear_elimination import LinearElimination
from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
from .replicable_linear import ReplicableLinearElimination, ReplicableLinearLSE
from .ucb import UCB1
from .ucb_lockstep import ucb1_lockstep

__all__ = [
    "DEBORA",
    "DEBORAH",
    "DEBORAS",
    "UCB1",
    "BatchedElimination",
    "LinearElimination",
    "OptimisticConstrained",
    "OptimisticMixingConstrained",
    "ReplicableBatchedElimination",
    "ReplicableElimination",
    "ReplicableLinearElimination",
    "ReplicableLinearLSE",
    "SafeOptimisticConstrained",
    "ucb1_lockstep",
]
