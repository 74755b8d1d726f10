"""Regret-minimising policies: UCB1, batched and replicable elimination (K-armed and linear)."""

from .batched_elimination import BatchedElimination
from .linear_elimination import LinearElimination
from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
from .replicable_linear import ReplicableLinearElimination, ReplicableLinearLSE
from .ucb import UCB1
from .ucb_lockstep import ucb1_lockstep

__all__ = [
    "UCB1",
    "BatchedElimination",
    "LinearElimination",
    "ReplicableBatchedElimination",
    "ReplicableElimination",
    "ReplicableLinearElimination",
    "ReplicableLinearLSE",
    "ucb1_lockstep",
]
