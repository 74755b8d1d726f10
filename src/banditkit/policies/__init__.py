"""Regret-minimising policies: UCB1, KL-UCB, MOSS, Bayes-UCB, EXP3-IX, Thompson sampling
(sequential and batched), OFUL
and linear Thompson sampling, batched and replicable elimination (K-armed and linear), and the
constrained policies (DEBORA, DEBORA-S, DEBORA-H and their optimistic baselines).

Every policy is imported from here (``from banditkit.policies import UCB1``). A family is a
subpackage with its engines beside its classes (DESIGN.md, "Engines"): ``index`` (the
sequential index policies, their lock-step runner ``lockstep`` and compiled trials
``kernels``), ``exp3_ix`` (+ ``lockstep``, ``kernel``), ``linear`` (OFUL, linear Thompson
sampling, + ``lockstep``, ``kernel``; the linear eliminations), ``elimination`` (batched and
replicable, K arms), ``constrained`` (DEBORA and its baselines). The former flat module names
(:data:`MOVED`) still import, as the same module objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import alias_moved_modules, lazy_exports

#: Former module names → where the module now lives (``banditkit.policies.X``).
MOVED = {
    "index_policy": "index.base",
    "ucb": "index.ucb",
    "kl_ucb": "index.kl_ucb",
    "moss": "index.moss",
    "bayes_ucb": "index.bayes_ucb",
    "thompson": "index.thompson",
    "sequential_lockstep": "index.lockstep",
    "sequential_kernels": "index.kernels",
    "ucb_lockstep": "index.ucb_lockstep",
    "exp3_ix_lockstep": "exp3_ix.lockstep",
    "exp3_ix_kernel": "exp3_ix.kernel",
    "linear_index": "linear.index",
    "oful": "linear.oful",
    "linear_thompson": "linear.thompson",
    "linear_lockstep": "linear.lockstep",
    "linear_kernel": "linear.kernel",
    "linear_elimination": "linear.elimination",
    "replicable_linear": "linear.replicable",
    "batched_elimination": "elimination.batched",
    "replicable_elimination": "elimination.replicable",
    "debora": "constrained.debora",
    "constrained_baselines": "constrained.baselines",
    "safe_lp": "constrained.safe_lp",
    "oplb": "constrained.oplb",
}

alias_moved_modules(__name__, MOVED)

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
    ".elimination.batched": ["BatchedElimination"],
    ".batched_thompson": ["BatchedThompson"],
    ".index.bayes_ucb": ["BayesUCB"],
    ".exp3_ix": ["EXP3IX"],
    ".fixed_allocation": ["FixedAllocation"],
    ".constrained.oplb": ["OPLB"],
    ".index.moss": ["MOSS"],
    ".constrained.baselines": ["OptimisticConstrained", "OptimisticMixingConstrained",
                               "SafeOptimisticConstrained"],
    ".constrained.debora": ["DEBORA", "DEBORAH", "DEBORAS"],
    ".index.kl_ucb": ["KLUCB"],
    ".linear.elimination": ["LinearElimination"],
    ".elimination.replicable": ["ReplicableBatchedElimination", "ReplicableElimination"],
    ".linear.replicable": ["ReplicableLinearElimination", "ReplicableLinearLSE"],
    ".index.thompson": ["ThompsonSampling"],
    ".index.ucb": ["UCB1"],
    ".index.ucb_lockstep": ["ucb1_lockstep"],
    ".linear.oful": ["OFUL"],
    ".linear.thompson": ["LinearThompson"],
}, globals())

if TYPE_CHECKING:
    from .batched_thompson import BatchedThompson
    from .constrained.baselines import (
        OptimisticConstrained,
        OptimisticMixingConstrained,
        SafeOptimisticConstrained,
    )
    from .constrained.debora import DEBORA, DEBORAH, DEBORAS
    from .constrained.oplb import OPLB
    from .elimination.batched import BatchedElimination
    from .elimination.replicable import ReplicableBatchedElimination, ReplicableElimination
    from .exp3_ix import EXP3IX
    from .fixed_allocation import FixedAllocation
    from .index.bayes_ucb import BayesUCB
    from .index.kl_ucb import KLUCB
    from .index.moss import MOSS
    from .index.thompson import ThompsonSampling
    from .index.ucb import UCB1
    from .index.ucb_lockstep import ucb1_lockstep
    from .linear.elimination import LinearElimination
    from .linear.oful import OFUL
    from .linear.replicable import ReplicableLinearElimination, ReplicableLinearLSE
    from .linear.thompson import LinearThompson
