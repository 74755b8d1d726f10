"""The defaults of a live experiment: where they differ from the papers', and the parameters in
force.

The figures and ``banditkit audit`` keep every paper's defaults (a reproduction must). A live
experiment is a practitioner's decision, and one paper default is wrong for it: the batched
eliminations' final commit. Algorithms 1 and 2 of Esfandiari et al. (ICLR 2023) play the rest
of the horizon on the surviving arm *with the smallest index*; at a horizon too short to
eliminate anything (the common case for conversion rates a few points apart) that is whatever
arm the user listed first, usually the control, whatever the data say. The README's example
(arms 0.10 / 0.12 / 0.15, T = 30,000, ρ = 0.2, β = 2304) sent 20,784 of 30,000 visitors to the
worst arm that way.

:data:`LIVE_DEFAULTS` replaces that rule by the empirical best surviving arm
(``commit="argmax"``, :mod:`banditkit.policies.commit`) and keeps everything else of the paper
(β with its 2304 floor, so the eliminations stay within Theorem 4's argument). Measured by
``benchmarks/live_defaults.py`` (ρ = 0.2, 20 seeds on each of five instances, arms listed worst
first): the argmax commit put 65–77% of the horizon on the best arm and committed to it in
100/100 runs. The paper's rule and replicable-argmax (whose grid, at these sample sizes, is
wider than the gaps) committed to the first-listed arm every time; round-robin ended uniform;
the floor-less β with argmax found the best arm on 3 arms (64%) but on 4 arms spent the
horizon on exploration batches and ended uniform (25% each). The price: the argmax commit is a
function of the rewards, so two executions that agree on every elimination can commit to
different arms when the best surviving arms are close — not covered by the replicability
proof, only measured (``banditkit audit ReplicableElimination --instance bernoulli
--instance-param "means=[0.10,0.12,0.15]" --pairs 100 --horizon 30000 --param rho=0.2 --param
commit=argmax --seed 0``: 100/100 identical pairs, non-replication ≤ 0.036 at 95%);
:meth:`banditkit.Experiment.status` says so in its ``reason``.

Linear Thompson sampling (Agrawal & Goyal 2013) has the same problem in its posterior scale:
the paper's v = R√(24/ε·d·ln 1/δ) is about 87 at T = 10⁶ on ``replicable-bandits:linear``'s
instance, and its regret there was 231,938 against 203 for the practical v = R and 559 for
OFUL (``banditkit run replicable-bandits:linear-regret``, 40 trials, seed 0). A live LinTS takes
v = R (:data:`LIVE_FOLLOWS`: the R in force, the user's or the default 1).

A user's own parameters always win; the file stores every parameter in force (given, live
default or the factory's default), so a later change of these defaults never changes an
existing experiment.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...registry import get_policy

__all__ = ["LIVE_DEFAULTS", "LIVE_FOLLOWS", "NOT_PROVED", "params_in_force"]

#: Parameters a live experiment uses where the user gives none, per registered algorithm
#: (every other parameter keeps its paper default).
LIVE_DEFAULTS: dict[str, dict[str, Any]] = {
    "BatchedElimination": {"commit": "argmax"},
    "ReplicableBatchedElimination": {"commit": "argmax"},
    "ReplicableElimination": {"commit": "argmax"},
    "ReplicableLinearElimination": {"commit": "argmax"},
    # issue 23: Thompson sampling starves the control the verdicts compare with; a floor of 20%
    # (benchmarks/bench_verdicts.py floor, docs/experiment.md) keeps it measured
    "BatchedThompson": {"control_floor": 0.2},
}

#: Parameters whose live default is another parameter's value in force, per algorithm:
#: ``{algorithm: {parameter: source}}``.
LIVE_FOLLOWS: dict[str, dict[str, str]] = {
    "LinearThompson": {"v": "R"},
}

#: Algorithms whose replicability the argmax commit takes outside the paper's proof.
NOT_PROVED = ("ReplicableBatchedElimination", "ReplicableElimination",
              "ReplicableLinearElimination")


def params_in_force(algorithm: str, given: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Every parameter of ``algorithm`` as the experiment runs it, and which came from
    :data:`LIVE_DEFAULTS`.

    Order of precedence: ``given`` (the user's), then :data:`LIVE_DEFAULTS` and
    :data:`LIVE_FOLLOWS`, then the factory's own defaults. Values are JSON values (a tuple
    default becomes a list), as the file stores them. ``algorithm`` must be registered
    (``ValueError`` otherwise, from the registry).
    """
    entry = get_policy(algorithm)
    algorithm = entry.name  # an old name (registry.ALIASES) has the current one's defaults
    live = {k: v for k, v in LIVE_DEFAULTS.get(algorithm, {}).items() if k not in given}
    merged = {**entry.parameters(), **live, **dict(given)}
    for parameter, source in LIVE_FOLLOWS.get(algorithm, {}).items():
        if parameter not in given:
            merged[parameter] = live[parameter] = merged[source]
    return json.loads(json.dumps(merged)), sorted(live)
