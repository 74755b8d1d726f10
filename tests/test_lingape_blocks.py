"""LinGapE in speculative blocks: every trial makes simulate's decisions from the same noise
(pulls, counts, stopping round, recommendation, pairs met; B and C_t to round-off), its
low-rank state equals the state computed from scratch, and other cases fall back to simulate."""

from functools import partial

import numpy as np
import pytest

from banditkit.envs import LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.envs.instances.rage import soare
from banditkit.identification.lingape import LinGapE, fresh_state
from banditkit.identification.lingape_blocks import _Blocks, simulate_lingape
from banditkit.rng import derive_seed
from banditkit.simulate import simulate as simulate_auto
from lingape_support import assert_same_trial

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")


def lingape(env, delta=0.05, theta_bound=None, **params):
    bound = float(np.linalg.norm(env.theta)) if theta_bound is None else theta_bound
    return LinGapE(env.X, env.Z, delta, theta_bound=bound, **params)


def check(env, seeds, horizon=None, **params):
    trials = []
    for seed in seeds:
        ref = simulate(lingape(env, **params), env, horizon=horizon, seed=seed)
        block = simulate_lingape(lingape(env, **params), env, horizon=horizon, seed=seed)
        assert_same_trial(block, ref)
        trials.append(block)
    return trials


def seeds(n, root=0):
    return [derive_seed(root, "lingape-blocks-test", k) for k in range(n)]


@pytest.mark.parametrize("d", [2, 4, 6])
def test_equals_simulate_on_soare_until_stopping(d):
    trials = check(soare(d, omega=0.3), seeds(4, root=d))
    assert all(t.stopped for t in trials)
    assert len({t.n_pulls for t in trials}) > 1
    # long fixed-pair stretches: most pulls were accepted in blocks far longer than one
    assert max(t.n_pulls for t in trials) > 500


def test_equals_simulate_with_low_rank_updates_only_and_with_refreshes_inside_blocks():
    # refresh_every=10**9: the state moves by the Woodbury formulas alone for the whole trial;
    # refresh_every=37: fresh recomputations between blocks of every size.
    env = soare(5, omega=0.2)
    check(env, seeds(3, root=11), refresh_every=10**9)
    check(env, seeds(3, root=12), refresh_every=37)


def test_equals_simulate_on_multivariate_testing():
    env = make_instance("multivariate-testing", rng=np.random.default_rng(5), D=3)
    check(env, seeds(3, root=3), delta=0.1)


@pytest.mark.parametrize("noise", ["bernoulli", "rademacher"])
def test_equals_simulate_with_bounded_rewards(noise):
    # click-through-like: non-negative features, means in (0, 1) (Bernoulli) or (−1, 1)
    rng = np.random.default_rng(8)
    X = rng.uniform(0.0, 0.5, size=(9, 3))
    X[:3] = np.eye(3)
    theta = np.array([0.6, 0.25, 0.1])
    env = LinearBandit(X, theta, noise=noise)
    assert 0 < env.means.min() and env.means.max() < 1
    check(env, seeds(3, root=4), delta=0.1, theta_bound=1.0)


def test_equals_simulate_on_a_transductive_problem_with_all_parameters():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 3))
    Z = rng.normal(size=(11, 3))
    env = LinearBandit(X, np.array([0.6, -0.3, 0.4]), Z, sigma=0.5)
    check(env, seeds(3, root=5), horizon=4000, delta=0.1, theta_bound=1.0, sigma=0.5,
          regularizer=0.5, epsilon=0.05)


def test_equals_simulate_when_cut_off_by_the_horizon():
    env = soare(8, omega=0.05)
    for horizon in (9, 10, 700, 2501):  # the initialisation alone, one round, long blocks
        trials = check(env, seeds(2, root=horizon), horizon=horizon)
        assert all(not t.stopped and t.n_pulls == horizon for t in trials)


def test_a_generator_seed_ends_where_simulate_leaves_it():
    # The rewound and redrawn blocks leave the stream exactly after the accepted pulls: the
    # next number drawn from a Generator passed as seed is the one simulate would leave next.
    env = soare(4, omega=0.3)
    g_ref, g_block = np.random.default_rng(42), np.random.default_rng(42)
    ref = simulate(lingape(env), env, seed=g_ref, horizon=1234)
    block = simulate_lingape(lingape(env), env, seed=g_block, horizon=1234)
    assert_same_trial(block, ref)
    assert g_ref.bit_generator.state == g_block.bit_generator.state


def test_block_state_equals_the_state_from_scratch():
    # After a trial run by Woodbury updates alone, A⁻¹, θ̂, Zθ̂, the quadratic forms and
    # log det A equal their direct computation from the counts and reward sums.
    env = LinearBandit(np.random.default_rng(0).normal(size=(6, 4)), np.array([1.0, 0.5, 0, 0]),
                       np.random.default_rng(1).normal(size=(9, 4)))
    alg = lingape(env, delta=0.1, regularizer=0.7, refresh_every=10**9)
    blocks = _Blocks(alg, env, 5000, np.random.default_rng(2))
    trial = blocks.run(None)
    assert trial.n_pulls > 1000 and blocks.n_blocks < trial.n_pulls / 5  # long blocks
    S, logdet, est, qz = fresh_state(env.X, env.Z, blocks.counts, blocks.rsum, 0.7)
    np.testing.assert_allclose(blocks.V, S[:4], rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(blocks.theta, S[4], rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(blocks.est, est, rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(blocks.qz, qz, rtol=1e-9)
    assert blocks.logdet == pytest.approx(logdet, rel=1e-12)
    np.testing.assert_array_equal(blocks.counts, np.bincount(
        np.concatenate([np.arange(6), blocks.seq[:blocks.steps]]), minlength=6))


def test_next_arms_is_the_sequential_argmin_including_ties():
    env = soare(5, omega=0.3)
    blocks = _Blocks(lingape(env), env, None, np.random.default_rng(0))
    rng = np.random.default_rng(9)
    support = np.array([0, 2, 3, 5])
    for trial in range(40):
        blocks.counts = rng.integers(1, 50, size=6)
        # equal ratios and integer ratios make exact ties between keys
        inv_p = rng.choice([1.0, 2.0, 3.0, 4.0, 1.7], size=4) if trial % 2 else (
            rng.uniform(1.0, 9.0, size=4))
        L = int(rng.integers(1, 300))
        pos = blocks._next_arms(support, inv_p, L)
        counts = blocks.counts[support].copy()
        expected = []
        for _ in range(L):  # LinGapE._select, one pull at a time
            p = int((counts * inv_p).argmin())
            expected.append(p)
            counts[p] += 1
        np.testing.assert_array_equal(pos, expected)


def test_block_draws_equal_one_pull_draws():
    # The premise of drawing a block at once: one env.pull of L one-pull runs gives the rewards
    # of L single-pull calls, and leaves the generator in the same state.
    for noise, theta in [("gaussian", [0.3, 0.2]), ("bernoulli", [0.3, 0.6]),
                         ("rademacher", [0.3, -0.6])]:
        env = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]), np.array(theta),
                           noise=noise)
        arms = np.random.default_rng(0).integers(0, 3, size=500)
        g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
        from banditkit.protocol import Batch
        block = env.pull(Batch(arms, np.ones(500, dtype=np.int64)), g1).rewards
        single = np.concatenate([env.pull(Batch.single(a), g2).rewards for a in arms])
        np.testing.assert_array_equal(block, single)
        assert g1.bit_generator.state == g2.bit_generator.state


@pytest.mark.parametrize("case", ["greedy", "short-horizon", "one-item", "non-stationary"])
def test_other_cases_fall_back_to_simulate(case):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [np.cos(0.5), np.sin(0.5)]])
    env, params, horizon = LinearBandit(X, np.array([0.7, 0.1])), {"delta": 0.1}, None
    if case == "greedy":
        params["selection"], horizon = "greedy", 1500
    elif case == "short-horizon":
        horizon = 2  # shorter than the initialisation: simulate truncates its first batch
    elif case == "one-item":
        env = LinearBandit(X, np.array([0.7, 0.1]), X[:1])
    else:
        class Drifting(LinearBandit):  # a subclass may answer pulls differently: not blocked
            pass
        env, horizon = Drifting(X, np.array([0.7, 0.1])), 1500
    for seed in seeds(2, root=9):
        ref = simulate(lingape(env, **params), env, horizon=horizon, seed=seed)
        block = simulate_lingape(lingape(env, **params), env, horizon=horizon, seed=seed)
        assert_same_trial(block, ref)
        assert block.info == ref.info  # the same code ran: the floats too, bit for bit
    if case == "short-horizon":
        assert block.n_pulls == 2
    if case == "one-item":
        assert block.n_pulls == 0 and block.recommendation == 0


def test_bad_horizon_is_refused():
    env = soare(3)
    with pytest.raises(ValueError, match="horizon"):
        simulate_lingape(lingape(env), env, horizon=0)


def test_equals_simulate_with_many_items_checked_through_bounds(monkeypatch):
    # |Z| = 240 > the pruning threshold: chunks are checked over the items that may matter,
    # the rest ruled out by bounds (or all items when the bounds cannot rule them out).
    rng = np.random.default_rng(12)
    X = rng.normal(size=(8, 3))
    Z = rng.normal(size=(240, 3))
    env = LinearBandit(X, np.array([0.8, -0.4, 0.3]), Z)
    calls = {"pruned": 0, "all": 0}
    pruned = _Blocks._pruned

    def counting(self, *args):
        verdict = pruned(self, *args)
        calls["pruned" if verdict is not None else "all"] += 1
        return verdict

    monkeypatch.setattr(_Blocks, "_pruned", counting)
    check(env, seeds(2, root=13), horizon=6000, delta=0.1, theta_bound=1.0)
    assert calls["pruned"] > 0
