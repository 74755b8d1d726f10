"""Lock-step LinGapE: every trial makes the decisions of the block driver (hence of simulate) on
its own environment and seed — pulls, counts, stopping round, recommendation, pairs met; B and
C_t to round-off — on a repeated instance, on per-trial instances sharing X, on per-trial X and
Z with Bernoulli noise, under a horizon cut, whatever the grouping; other cases fall back."""

import itertools

import numpy as np
import pytest

from banditkit.envs import LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.envs.instances.rage import soare
from banditkit.identification.lingape import make_lingape
from banditkit.identification.lingape_blocks import simulate_lingape
from banditkit.identification.lingape_lockstep import lingape_lockstep
from banditkit.rng import derive_seed, stream
from lingape_support import assert_same_trial


def seeds_for(n, root=0):
    return [derive_seed(root, "lingape-lockstep-test", k) for k in range(n)]


def rngs_for(n):
    return [stream(0, "xi", k) for k in range(n)]


def check(envs, horizon=None, root=0, **params):
    n = len(envs)
    seeds, rngs = seeds_for(n, root), rngs_for(n)
    trials = lingape_lockstep(envs, rngs, seeds, horizon, None, **params)
    assert len(trials) == n
    for env, rng, seed, trial in zip(envs, rngs, seeds, trials, strict=True):
        ref = simulate_lingape(make_lingape(env, rng, **params), env, horizon=horizon,
                               seed=seed)
        assert_same_trial(trial, ref)
        assert trial.seconds > 0
    return trials


def multivariate(n, root=0):
    return [make_instance("multivariate-testing", rng=stream(root, "mvt", k), D=3, min_gap=0.1)
            for k in range(n)]


def bernoulli_instances(n, K=6, M=5, d=3, root=0):
    """Small transductive instances, each its own X, Z and θ*, means in (0.2, 0.8)."""
    envs = []
    for k in range(n):
        rng = stream(root, "bernoulli", k)
        X = np.hstack([np.ones((K, 1)), rng.uniform(-1, 1, size=(K, d - 1))])
        Z = np.hstack([np.ones((M, 1)), rng.uniform(-1, 1, size=(M, d - 1))])
        theta = np.concatenate([[0.5], rng.uniform(-0.14, 0.14, size=d - 1)])
        env = LinearBandit(X, theta, Z, noise="bernoulli")
        assert np.all((env.means > 0.2) & (env.means < 0.8))
        envs.append(env)
    return envs


def test_a_repeated_instance_uses_the_shared_arrays_and_equals_the_block_driver():
    env = soare(3, omega=0.3)
    trials = check([env] * 8, delta=0.05)
    assert all(t.stopped for t in trials)
    assert len({t.n_pulls for t in trials}) > 1  # trials stop at different rounds


def test_per_trial_instances_with_the_same_arms_equal_the_block_driver():
    envs = multivariate(6)
    assert all(np.array_equal(e.X, envs[0].X) for e in envs)
    assert len({tuple(e.theta) for e in envs}) == 6  # θ* differs per trial
    trials = check(envs, delta=0.1, refresh_every=97)  # refreshes between SM stretches too
    assert all(t.stopped for t in trials)
    assert sum(t.correct for t in trials) >= 5


def test_per_trial_arms_and_items_with_bernoulli_noise_equal_the_block_driver():
    envs = bernoulli_instances(6)
    trials = check(envs, horizon=5000, delta=0.2, epsilon=0.2)
    assert len({t.n_pulls for t in trials}) > 1
    assert any(t.stopped for t in trials) and any(not t.stopped for t in trials)


def test_rademacher_noise_equals_the_block_driver():
    envs = bernoulli_instances(3, root=4)
    envs = [LinearBandit(e.X, e.theta, e.Z, noise="rademacher") for e in envs]
    check(envs, horizon=3000, delta=0.2, epsilon=0.2)


def test_a_horizon_cuts_some_trials_and_not_others():
    envs = multivariate(6, root=1)
    trials = check(envs, horizon=2500, delta=0.1)
    assert any(t.stopped for t in trials) and any(not t.stopped for t in trials)
    assert all(t.n_pulls == 2500 for t in trials if not t.stopped)


def test_results_do_not_depend_on_the_grouping():
    # Two shapes (two groups); then per-trial X and Z, where a group of several trials takes
    # the stacked path and a trial alone the shared one: the same numbers, floats included.
    cases = [(multivariate(3, root=2) + [soare(3, omega=0.3)] * 3, {"delta": 0.1}),
             (bernoulli_instances(6, root=3), {"delta": 0.2, "epsilon": 0.2})]
    for envs, params in cases:
        seeds, rngs = seeds_for(6, root=2), rngs_for(6)
        whole = lingape_lockstep(envs, rngs, seeds, 6000, None, **params)
        for cut in ([0, 2, 6], [0, 1, 2, 3, 4, 5, 6]):
            parts = []
            for lo, hi in itertools.pairwise(cut):
                parts += lingape_lockstep(envs[lo:hi], rngs[lo:hi], seeds[lo:hi], 6000, None,
                                          **params)
            for a, b in zip(whole, parts, strict=True):
                assert_same_trial(a, b)
                assert a.info == b.info


@pytest.mark.parametrize("case", ["greedy", "short-horizon", "one-item"])
def test_other_cases_fall_back_to_the_block_driver(case):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [np.cos(0.5), np.sin(0.5)]])
    envs, params, horizon = [LinearBandit(X, np.array([0.7, 0.1]))] * 3, {"delta": 0.1}, None
    if case == "greedy":
        params["selection"], horizon = "greedy", 1500
    elif case == "short-horizon":
        horizon = 2  # shorter than the initialisation: simulate truncates its first batch
    else:
        envs = [LinearBandit(X, np.array([0.7, 0.1]), X[:1])] * 3
    trials = check(envs, horizon=horizon, **params)
    if case == "short-horizon":
        assert all(t.n_pulls == 2 for t in trials)
    if case == "one-item":
        assert all(t.n_pulls == 0 and t.recommendation == 0 for t in trials)


def test_bad_input_is_refused():
    env = soare(3)
    with pytest.raises(ValueError, match="same length"):
        lingape_lockstep([env] * 3, rngs_for(2), seeds_for(3), None, None, delta=0.05)
    with pytest.raises(ValueError, match="delta"):
        lingape_lockstep([env] * 2, rngs_for(2), seeds_for(2), None, None, delta=1.5)
    with pytest.raises(ValueError, match="horizon"):
        lingape_lockstep([env] * 2, rngs_for(2), seeds_for(2), 0, None, delta=0.05)
