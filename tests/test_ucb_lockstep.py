"""Lock-step UCB1 reproduces simulate(UCB1) trial by trial."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from banditkit import jit
from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.policies import UCB1, ucb1_lockstep
from banditkit.rng import derive_seed
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")


@pytest.mark.parametrize("env", [
    # means on both sides of 1/2 and at the edges: numpy inverts the complement above 1/2
    BernoulliBandit(np.array([0.44, 0.47, 0.5, 0.53, 0.56, 0.59, 0.95, 1.0])),
    BernoulliBandit(np.array([0.2, 0.0, 0.7])),  # μ = 0 draws nothing: falls back to simulate
    GaussianBandit(np.array([0.1, 0.3, 0.2]), sigma=0.5),
])
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_lockstep_equals_simulate_per_trial(env, compiled, monkeypatch):
    # both paths of index_lockstep: numpy rounds (BANDITKIT_JIT=0) and the compiled kernel
    if compiled and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    monkeypatch.setattr(jit, "available", lambda: compiled)
    T = 5000  # > one noise block (4096), so the numpy path's block refills are exercised
    seeds = [derive_seed(7, "lockstep", i, 1) for i in range(4)]
    checkpoints = np.array([1, 10, 999, 4096, 4097, T])
    # Gaussian rewards leave [0, 1], Auer et al.'s range: the baseline runs with no range
    rr = None if isinstance(env, GaussianBandit) else (0.0, 1.0)
    lock = ucb1_lockstep([env] * 4, [None] * 4, seeds, T, checkpoints, exploration=2.0,
                         reward_range=rr)
    for trial, seed in zip(lock, seeds, strict=True):
        ref = simulate(UCB1(env.n_arms, reward_range=rr), env, horizon=T, seed=seed,
                       checkpoints=checkpoints)
        assert trial.decisions.same_as(ref.decisions)
        assert np.array_equal(trial.counts, ref.counts)
        np.testing.assert_allclose(trial.regret, ref.regret, rtol=0, atol=1e-9)
        assert trial.n_pulls == ref.n_pulls == T and trial.n_batches == ref.n_batches


def test_lockstep_results_do_not_depend_on_grouping():
    env = BernoulliBandit(np.array([0.4, 0.5, 0.6]))
    seeds = [derive_seed(1, i) for i in range(3)]
    together = ucb1_lockstep([env] * 3, [None] * 3, seeds, 2000, None)
    alone = [ucb1_lockstep([env], [None], [s], 2000, None)[0] for s in seeds]
    for a, b in zip(together, alone, strict=True):
        assert a.decisions.same_as(b.decisions)


def test_lockstep_on_different_instances_runs_each_on_its_own():
    envs = [BernoulliBandit(np.array([0.4, 0.5, 0.6])), BernoulliBandit(np.array([0.7, 0.2]))]
    seeds = [derive_seed(3, i) for i in range(2)]
    lock = ucb1_lockstep(envs, [None] * 2, seeds, 800, None)
    for trial, env, seed in zip(lock, envs, seeds, strict=True):
        ref = simulate(UCB1(env.n_arms), env, horizon=800, seed=seed)
        assert trial.decisions.same_as(ref.decisions) and trial.counts.size == env.n_arms


def test_lockstep_other_exploration_and_bad_input():
    env = BernoulliBandit(np.array([0.3, 0.6]))
    s = derive_seed(2, 0)
    a = ucb1_lockstep([env], [None], [s], 1500, None, exploration=0.5)[0]
    b = simulate(UCB1(2, exploration=0.5), env, horizon=1500, seed=s)
    assert a.decisions.same_as(b.decisions)
    with pytest.raises(ValueError, match="same length"):
        ucb1_lockstep([env], [None], [s, s], 10, None)
    with pytest.raises(ValueError, match="exploration"):
        ucb1_lockstep([env], [None], [s], 10, None, exploration=-1.0)
