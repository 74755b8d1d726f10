"""Regret-minimising policies: UCB1, KL-UCB, MOSS, Bayes-UCB, EXP3-IX, Thompson sampling
(sequential and batched), OFUL
and linear Thompson sampling, batched and replicable elimination (K-armed and linear), and the
constrained policies (DEBORA, DEBORA-S, DEBORA-H and their optimistic baselines)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "DEBORA",
    "DEBORAH",
    "DEBORAS",
    "EXP3IX",
    "KLUCB",
    "MOSS",
    "OFUL",
    "OPLB",
    "UCB1",
    "BatchedElimination",
    "BatchedThompson",
    "BayesUCB",
    "FixedAllocation",
    "LinearElimination",
    "LinearThompson",
    "OptimisticConstrained",
    "OptimisticMixingConstrained",
    "ReplicableBatchedElimination",
    "ReplicableElimination",
    "ReplicableLinearElimination",
    "ReplicableLinearLSE",
    "SafeOptimisticConstrained",
    "ThompsonSampling",
    "ucb1_lockstep",
]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".batched_elimination": ["BatchedElimination"],
    ".batched_thompson": ["BatchedThompson"],
    ".bayes_ucb": ["BayesUCB"],
    ".exp3_ix": ["EXP3IX"],
    ".fixed_allocation": ["FixedAllocation"],
    ".oplb": ["OPLB"],
    ".moss": ["MOSS"],
    ".constrained_baselines": ["OptimisticConstrained", "OptimisticMixingConstrained",
                               "SafeOptimisticConstrained"],
    ".debora": ["DEBORA", "DEBORAH", "DEBORAS"],
    ".kl_ucb": ["KLUCB"],
    ".linear_elimination": ["LinearElimination"],
    ".replicable_elimination": ["ReplicableBatchedElimination", "ReplicableElimination"],
    ".replicable_linear": ["ReplicableLinearElimination", "ReplicableLinearLSE"],
    ".thompson": ["ThompsonSampling"],
    ".ucb": ["UCB1"],
    ".ucb_lockstep": ["ucb1_lockstep"],
    ".oful": ["OFUL"],
    ".linear_thompson": ["LinearThompson"],
}, globals())

if TYPE_CHECKING:
    from .batched_elimination import BatchedElimination
    from .batched_thompson import BatchedThompson
    from .bayes_ucb import BayesUCB
    from .constrained_baselines import (
        OptimisticConstrained,
        OptimisticMixingConstrained,
        SafeOptimisticConstrained,
    )
    from .debora import DEBORA, DEBORAH, DEBORAS
    from .exp3_ix import EXP3IX
    from .fixed_allocation import FixedAllocation
    from .kl_ucb import KLUCB
    from .linear_elimination import LinearElimination
    from .linear_thompson import LinearThompson
    from .moss import MOSS
    from .oful import OFUL
    from .oplb import OPLB
    from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
    from .replicable_linear import ReplicableLinearElimination, ReplicableLinearLSE
    from .thompson import ThompsonSampling
    from .ucb import UCB1
    from .ucb_lockstep import ucb1_lockstep
