"""Regret-minimising policies (UCB1, replicable elimination, constrained DEBORA...)."""

from .batched_elimination import BatchedElimination
from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
from .ucb import UCB1
from .ucb_lockstep import ucb1_lockstep

__all__ = [
    "UCB1",
    "BatchedElimination",
    "ReplicableBatchedElimination",
    "ReplicableElimination",
    "ucb1_lockstep",
]
