"""Lock-step LinGapE: every trial identical to simulate of the sequential class (pulls, batches,
counts, stopping time, recommendation, info), whatever the grouping; other environments fall
back to simulate."""

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs import LinearBandit
from banditkit.envs.instances.rage import soare
from banditkit.identification.lingape_lockstep import lingape_lockstep, make_lingape
from banditkit.protocol import Batch, DecisionLog
from banditkit.rng import derive_seed, stream


def seeds_for(n, root=0):
    return [derive_seed(root, "lingape-test", k) for k in range(n)]


def rngs_for(n):
    return [stream(0, "xi", k) for k in range(n)]


def assert_same_trial(a, b):
    assert a.n_pulls == b.n_pulls
    assert a.decisions.same_as(b.decisions)
    np.testing.assert_array_equal(a.decisions.batch_sizes(), b.decisions.batch_sizes())
    assert a.decisions.n_batches == b.decisions.n_batches == a.n_batches == b.n_batches
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.recommendation == b.recommendation
    assert a.correct == b.correct and a.stopped == b.stopped
    assert a.info == b.info  # steps, pairs solved, and the floats B and C_t bit for bit
    np.testing.assert_array_equal(a.checkpoints, b.checkpoints)
    assert a.regret is None and b.regret is None


def check_against_simulate(env, n, horizon=None, root=0, **params):
    seeds = seeds_for(n, root)
    rngs = rngs_for(n)
    trials = lingape_lockstep(env, rngs, seeds, horizon, None, **params)
    assert len(trials) == n
    for rng, seed, trial in zip(rngs, seeds, trials, strict=True):
        ref = simulate(make_lingape(env, rng, **params), env, horizon=horizon, seed=seed)
        assert_same_trial(trial, ref)
    return trials


def test_numpy_draws_normals_in_blocks_as_one_at_a_time():
    # The premise of reading each trial's noise in blocks: standard_normal(n) in one call gives
    # the numbers of n single calls (after a first call of size K, as the initialisation makes).
    for s in range(20):
        g1, g2 = np.random.default_rng(s), np.random.default_rng(s)
        one_by_one = np.concatenate([g1.standard_normal(7)]
                                    + [g1.standard_normal(1) for _ in range(3000)])
        np.testing.assert_array_equal(one_by_one, g2.standard_normal(3007))


def test_products_over_a_trial_axis_equal_the_per_trial_products_bit_for_bit():
    # The premise of the exact lock-step: np.matmul over a leading trial axis and ndarray.dot on
    # one trial's operands give the same bits (both reach BLAS gemv/dot with the same sizes),
    # for the shapes of every figure (d up to 36, a few to 30000 items), strided vectors included.
    rng = np.random.default_rng(1)
    for d, M, n in [(2, 30000, 3), (3, 7, 5), (9, 2000, 4), (22, 64, 7), (35, 36, 20),
                    (36, 40, 2), (64, 65, 3)]:
        S = rng.normal(size=(n, d + 1, d))
        x = rng.normal(size=(n, d))
        Z = rng.normal(size=(M, d))
        ux = np.matmul(S, x[:, :, None])[:, :, 0]
        u = ux[:, :d]  # strided, as in the driver
        xu = np.matmul(x[:, None, :], u[:, :, None])[:, 0, 0]
        zu = np.matmul(Z, u[:, :, None])[:, :, 0]
        for k in range(n):
            one = S[k].dot(x[k])
            assert np.array_equal(one, ux[k])
            assert x[k].dot(one[:d]) == xu[k]
            assert np.array_equal(Z.dot(one[:d]), zu[k])


@pytest.mark.parametrize("d, omega, n", [(2, 0.5, 12), (3, 0.3, 10), (6, 0.25, 6)])
def test_lockstep_equals_simulate_until_stopping(d, omega, n):
    trials = check_against_simulate(soare(d, omega=omega), n, delta=0.05)
    assert all(t.stopped for t in trials)
    pulls = {t.n_pulls for t in trials}
    assert len(pulls) > 1  # trials stop at different times and drop out of the arrays


def test_lockstep_equals_simulate_across_refreshes_and_many_seeds():
    # A refresh every 37 pulls puts dozens of recomputations of A⁻¹ from scratch inside each
    # trial, between Sherman–Morrison stretches; 30 seeds.
    check_against_simulate(soare(4, omega=0.3), 30, root=7, delta=0.1, refresh_every=37)


def test_lockstep_equals_simulate_when_cut_off_by_the_horizon():
    env = soare(8, omega=0.05)
    trials = check_against_simulate(env, 5, horizon=700, delta=0.05, refresh_every=250)
    assert all(not t.stopped and t.n_pulls == 700 for t in trials)
    # not stopped: the recommendation is the empirical best item, not i_t
    assert all(t.recommendation is not None for t in trials)


def test_lockstep_equals_simulate_on_a_transductive_problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 3))
    Z = rng.normal(size=(11, 3))
    env = LinearBandit(X, np.array([0.6, -0.3, 0.4]), Z, sigma=0.5)
    check_against_simulate(env, 6, horizon=4000, delta=0.1, theta_bound=1.0, sigma=0.5,
                           regularizer=0.5, epsilon=0.05)


def test_results_do_not_depend_on_the_grouping():
    env = soare(3, omega=0.3)
    seeds, rngs = seeds_for(7, root=2), rngs_for(7)
    whole = lingape_lockstep(env, rngs, seeds, None, None, delta=0.05)
    for size in (1, 3):
        parts = []
        for start in range(0, 7, size):
            parts += lingape_lockstep(env, rngs[start:start + size], seeds[start:start + size],
                                      None, None, delta=0.05)
        for a, b in zip(whole, parts, strict=True):
            assert_same_trial(a, b)


@pytest.mark.parametrize("case", ["bernoulli", "greedy", "short-horizon", "one-item"])
def test_other_cases_fall_back_to_simulate(case):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [np.cos(0.5), np.sin(0.5)]])
    env, params, horizon = LinearBandit(X, np.array([0.7, 0.1])), {"delta": 0.1}, None
    if case == "bernoulli":
        env, horizon = LinearBandit(X, np.array([0.7, 0.1]), noise="bernoulli"), 1500
    elif case == "greedy":
        params["selection"], horizon = "greedy", 1500
    elif case == "short-horizon":
        horizon = 2  # shorter than the initialisation: simulate truncates its first batch
    else:
        env = LinearBandit(X, np.array([0.7, 0.1]), X[:1])
    trials = check_against_simulate(env, 4, horizon=horizon, **params)
    if case == "short-horizon":
        assert all(t.n_pulls == 2 for t in trials)
    if case == "one-item":
        assert all(t.n_pulls == 0 and t.recommendation == 0 for t in trials)


def test_bad_input_is_refused():
    env = soare(3)
    with pytest.raises(ValueError, match="same length"):
        lingape_lockstep(env, rngs_for(2), seeds_for(3), None, None, delta=0.05)
    with pytest.raises(ValueError, match="delta"):
        lingape_lockstep(env, rngs_for(2), seeds_for(2), None, None, delta=1.5)
    with pytest.raises(ValueError, match="horizon"):
        lingape_lockstep(env, rngs_for(2), seeds_for(2), 0, None, delta=0.05)


def test_decision_log_from_runs_equals_recording_each_batch():
    batches = [Batch(np.array([0, 1, 2]), np.array([1, 1, 1])), Batch.single(1),
               Batch.single(1), Batch(np.array([2, 0]), np.array([4, 1])), Batch.single(0)]
    recorded = DecisionLog()
    for b in batches:
        recorded.record(b)
    counts = np.concatenate([b.counts for b in batches])
    counts.flags.writeable = False  # shared between trials by the driver, never written
    built = DecisionLog.from_runs(np.concatenate([b.arms for b in batches]), counts,
                                  np.cumsum([b.n_runs for b in batches]))
    assert built.same_as(recorded) and built.n_batches == recorded.n_batches
    np.testing.assert_array_equal(built.batch_sizes(), recorded.batch_sizes())
    assert [b.arms.tolist() for b in built.batches()] == [b.arms.tolist() for b in batches]
    built.record(Batch.single(2))  # it goes on growing like any log
    recorded.record(Batch.single(2))
    assert built.same_as(recorded)
    with pytest.raises(ValueError, match="batch_ends"):
        DecisionLog.from_runs(np.array([0, 1]), np.array([1, 1]), np.array([1]))
