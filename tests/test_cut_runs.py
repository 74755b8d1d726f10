"""Every registered algorithm survives a run cut part-way through a batch.

A simulation whose horizon is shorter than the algorithm's own T (or an identifier's budget
cap) answers the last batch in part (``Batch.truncated``), which ends the run
(:meth:`banditkit.protocol.Algorithm.observe`). The cut may fall after a single pull, so some
arms of an exploration batch have no pull at all: no algorithm may then divide by a zero
count, fit a design that does not span R^d, or eliminate on the partial data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from banditkit.envs import ConstrainedBandit, LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.registry import make_policy, policy_names
from banditkit.simulate import simulate

ENVS = {
    "K-armed": make_instance("bernoulli"),
    "linear": LinearBandit(np.vstack([np.eye(3), [0.6, 0.8, 0.0]]),
                           np.array([0.5, 0.1, -0.2]), noise="rademacher"),
    "constrained": ConstrainedBandit([0.9, 0.5, 0.3], [[0.8, 0.2, 0.1]], [0.5],
                                     safe_strategy=[0.0, 0.0, 1.0]),
}


def _build(name: str):
    """The first environment and horizon that the policy's factory accepts: T = 10⁸ for regret
    policies, long enough for every batched one to explore; a budget of 10⁴ for fixed-budget
    identifiers, none for those that stop by themselves."""
    for env in ENVS.values():
        for horizon in (10**4, None):
            try:
                algo = make_policy(name, env, np.random.default_rng(0), horizon=horizon)
            except (ValueError, TypeError):
                continue
            return env, (10**8 if algo.kind == "regret" else horizon)
    raise AssertionError(f"no test environment fits {name}")


@pytest.mark.parametrize("name", policy_names())
def test_a_run_cut_inside_a_batch_ends_cleanly(name):
    env, horizon = _build(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # 0/0 means on arms the cut left unpulled
        # OPLB solves a linear programme every round (~6 ms): its cuts stop at 333 pulls
        for cut in (1, 2, 7, 50, 333) + ((1000, 3000) if name != "OPLB" else ()):
            algo = make_policy(name, env, np.random.default_rng(0), horizon=horizon)
            trial = simulate(algo, env, horizon=cut, seed=1)
            assert trial.n_pulls <= cut


@pytest.mark.parametrize("name", ["LinearElimination", "ReplicableLinearElimination",
                                  "ReplicableLinearLSE", "BatchedElimination",
                                  "ReplicableBatchedElimination", "ReplicableElimination"])
def test_a_cut_exploration_batch_eliminates_nothing(name):
    """The partial data of a cut batch decides nothing: the active set stays as it was (some
    linear fits would quietly accept pulls that do not span R^d)."""
    env, horizon = _build(name)
    algo = make_policy(name, env, np.random.default_rng(0), horizon=horizon)
    batch = algo.next_batch()
    assert batch.n_pulls > 1 and batch.n_runs > 1  # an exploration batch over several arms
    before = np.array(algo.active).copy()
    part = batch.truncated(1)
    algo.observe(part, env.pull(part, np.random.default_rng(1)).rewards)
    np.testing.assert_array_equal(algo.active, before)
    assert algo.next_batch() is None
