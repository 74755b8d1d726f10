"""G-BAI (Xiong et al., Algorithm 1), its i.i.d. sampler and its lock-step driver."""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pytest

from banditkit.draws import _TABLE_FROM
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.envs.nonstationary import NonStationaryLinearBandit
from banditkit.identification.fixed_budget import iid_arms, runs_batch
from banditkit.identification.g_bai import GBAI, gbai_lockstep
from banditkit.identification.item_designs import g_design
from banditkit.protocol import Batch
from banditkit.rng import derive_seed
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")

# Arms spanning R^2 with a non-uniform G-optimal design (the third arm is the long one).
X3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.5, 1.2]])


def _weights(rng: np.random.Generator, K: int) -> np.ndarray:
    w = rng.random(K) ** 3
    w[rng.random(K) < 0.3] = 0.0  # zero weights anywhere, including first and last
    if w.sum() == 0:
        w[-1] = 1.0
    return w / w.sum()


@pytest.mark.parametrize("n", [1, 7, _TABLE_FROM - 1, _TABLE_FROM, 30_000])
def test_iid_arms_are_numpys_choice_bit_for_bit(n):
    # iid_arms replaces rng.choice(K, n, p=w): the same arms and the same stream position,
    # on both sides of the table threshold
    for case in range(40):
        meta = np.random.default_rng(case)
        K = int(meta.integers(1, 70))
        w = _weights(meta, K)
        a, b = np.random.default_rng(1000 + case), np.random.default_rng(1000 + case)
        assert np.array_equal(iid_arms(a, w, n), b.choice(K, size=n, p=w))
        assert a.random() == b.random()


def test_runs_batch_equals_from_sequence():
    rng = np.random.default_rng(3)
    for seq in [np.zeros(0, np.int64), np.array([2]), rng.integers(0, 3, 500),
                np.repeat([1, 0, 1], [4, 1, 2])]:
        seq = np.asarray(seq, dtype=np.int64)
        a, b = runs_batch(seq), Batch.from_sequence(seq)
        assert np.array_equal(a.arms, b.arms) and np.array_equal(a.counts, b.counts)


def test_basis_arms_are_sampled_uniformly():
    # X = {e_i}: λ* is uniform (Xiong et al., Section 4) and G-BAI is uniform sampling
    d, T = 6, 60_000
    algo = GBAI(np.eye(d), None, T, rng=11)
    np.testing.assert_allclose(algo.sampling_weights, np.full(d, 1 / d), atol=1e-12)
    trial = simulate(algo, LinearBandit(np.eye(d), np.linspace(0, 1, d)), seed=2)
    counts = trial.counts
    assert counts.sum() == T
    expected = T / d
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 25.7  # the 0.9999 quantile of chi-square with 5 degrees of freedom


def test_pulls_are_drawn_from_lambda_star_with_xi():
    T = 5000
    algo = GBAI(X3, None, T, rng=np.random.default_rng(5))
    weights = g_design(X3, 0.01)[0]
    assert weights.min() > 0 and not np.allclose(weights, 1 / 3)  # a non-trivial design
    batch = algo.next_batch()
    expected = iid_arms(np.random.default_rng(5), weights, T)
    assert batch.n_pulls == T
    assert np.array_equal(batch.sequence(), expected)


def test_kiefer_wolfowitz_value():
    X = make_instance("soare", d=10, omega=0.1).X
    _, A = g_design(X, 0.01)
    worst = np.max(np.einsum("ij,jk,ik->i", X, np.linalg.inv(A), X))
    assert 10 - 1e-9 <= worst <= 10 * 1.01


def _expected_estimate(algo_factory, X, thetas):
    """E[θ̂_T] over every pull sequence, with noiseless rewards x_tᵀθ_t (the IPS estimate is
    linear in the rewards, so noise adds nothing to the expectation)."""
    T, K = thetas.shape[0], X.shape[0]
    total = np.zeros(X.shape[1])
    for seq in itertools.product(range(K), repeat=T):
        algo = algo_factory()
        p = 1.0
        for t, a in enumerate(seq):
            p *= algo.sampling_weights[a]
            # every arm the draw could give: tell the copy this one-pull batch is the one it
            # asked for (observe() refuses any other)
            algo._pending = Batch(np.array([a]), np.array([1]))
            algo.observe(algo._pending, np.array([X[a] @ thetas[t]]))
        assert algo.recommendation is not None
        total += p * algo.theta_hat
    return total


def test_ips_estimate_is_exactly_unbiased_for_the_average_parameter():
    # an arbitrary schedule θ_1..θ_4: E[θ̂_T] = θ̄_T exactly (Xiong et al., Eq. (1), Alg. 1)
    thetas = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.2], [4.0, 1.0]])
    expected = _expected_estimate(lambda: GBAI(X3, None, 4, rng=0), X3, thetas)
    np.testing.assert_allclose(expected, thetas.mean(axis=0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("T", [3, 4, 57, 1000])
def test_spends_exactly_the_budget(T):
    env = LinearBandit(X3, np.array([0.3, -0.1]))
    trial = simulate(GBAI(X3, None, T, rng=1), env, seed=3)
    assert trial.n_pulls == T == trial.counts.sum()
    assert trial.stopped and trial.recommendation in range(3)


def test_recommendation_is_argmax_over_items():
    Z = np.array([[1.0, 1.0], [2.0, -1.0], [0.0, 0.5], [-1.0, 3.0]])
    env = LinearBandit(X3, np.array([0.4, 0.7]), Z=Z)
    algo = GBAI(X3, Z, 300, rng=4)
    simulate(algo, env, seed=9)
    assert algo.recommendation == int(np.argmax(Z @ algo.theta_hat))
    assert algo.recommendation == 3  # the best item, at this budget and seed


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="budget"):
        GBAI(X3, None, 2)
    with pytest.raises(TypeError, match="budget"):
        GBAI(X3, None, 10.0)
    with pytest.raises(ValueError, match="design_tol"):
        GBAI(X3, None, 10, design_tol=0.0)
    with pytest.raises(ValueError, match="span"):
        GBAI(np.array([[1.0, 0.0], [2.0, 0.0]]), None, 10)
    with pytest.raises(ValueError, match="Z"):
        GBAI(X3, np.ones((2, 3)), 10)


def _nonstationary(T: int) -> NonStationaryLinearBandit:
    t = np.arange(T)[:, None]
    schedule = np.hstack([np.sin(2 * np.pi * t / 97), 0.3 + 0.5 * np.cos(2 * np.pi * t / 31)])
    return NonStationaryLinearBandit(X3, schedule)


@pytest.mark.parametrize("kind", ["gaussian", "bernoulli", "nonstationary", "transductive"])
@pytest.mark.parametrize("horizon", [None, 700, 5000])
def test_lockstep_equals_simulate_trial_by_trial(kind, horizon):
    T = 700
    if kind == "gaussian":
        env = make_instance("soare", d=4, omega=0.3)
    elif kind == "bernoulli":
        env = LinearBandit(X3, np.array([0.2, 0.3]), noise="bernoulli", clip=True)
    elif kind == "nonstationary":
        env = _nonstationary(T)
    else:
        env = LinearBandit(X3, np.array([0.4, 0.7]), Z=np.array([[1.0, 1.0], [2.0, -1.0]]))
    if horizon == 5000 and kind == "nonstationary":
        horizon = None  # the schedule ends at T
    cut = 500 if horizon == 700 else horizon  # a cap below the budget: truncated trials
    n = 6
    seeds = [derive_seed(3, kind, i, 1) for i in range(n)]
    lock = gbai_lockstep([env] * n, [np.random.default_rng(100 + i) for i in range(n)],
                         seeds, cut, None, budget=T)
    for i, trial in enumerate(lock):
        ref = simulate(GBAI(env.X, env.Z, T, rng=np.random.default_rng(100 + i)), env,
                       horizon=cut, seed=seeds[i])
        assert trial.decisions.same_as(ref.decisions)
        assert np.array_equal(trial.decisions.batch_sizes(), ref.decisions.batch_sizes())
        assert np.array_equal(trial.counts, ref.counts)
        assert np.array_equal(trial.checkpoints, ref.checkpoints)
        assert trial.recommendation == ref.recommendation
        assert trial.correct == ref.correct and trial.stopped == ref.stopped
        assert (trial.n_pulls, trial.n_batches, trial.info) == (ref.n_pulls, ref.n_batches,
                                                                ref.info)
        assert trial.regret is None and trial.violation is None
    assert lock[0].stopped == (cut is None or cut >= T)


def test_lockstep_numbers_do_not_depend_on_grouping():
    envs = [make_instance("soare", d=4, omega=0.3), _nonstationary(400),
            LinearBandit(X3, np.array([1.0, -1.0]))]
    seeds = [derive_seed(8, i) for i in range(3)]
    together = gbai_lockstep(envs, [np.random.default_rng(i) for i in range(3)], seeds, 400,
                             None)
    for i in range(3):
        alone = gbai_lockstep([envs[i]], [np.random.default_rng(i)], [seeds[i]], 400, None)[0]
        assert alone.decisions.same_as(together[i].decisions)
        assert alone.recommendation == together[i].recommendation


def test_lockstep_refuses_bad_input():
    env = LinearBandit(X3, np.zeros(2))
    with pytest.raises(ValueError, match="same length"):
        gbai_lockstep([env], [np.random.default_rng(0)] * 2, [1, 2], 10, None)
    with pytest.raises(ValueError, match="budget or horizon"):
        gbai_lockstep([env], [np.random.default_rng(0)], [1], None, None)
    with pytest.raises(ValueError, match="budget"):
        gbai_lockstep([env], [np.random.default_rng(0)], [1], None, None, budget=2)


def test_lockstep_judges_correctness_over_the_simulated_horizon():
    # simulate asks env.best_item(horizon): with a schedule longer than the horizon the best
    # item over the first 800 times (item 2) is not the best over all 1000 (item 1)
    schedule = np.vstack([np.tile([1.0, 0.0], (750, 1)), np.tile([-10.0, 1.0], (250, 1))])
    env = NonStationaryLinearBandit(X3, schedule)
    assert env.best_item(800) == 2 and env.best_item(None) == 1
    seeds = [derive_seed(5, i) for i in range(4)]
    lock = gbai_lockstep([env] * 4, [np.random.default_rng(i) for i in range(4)], seeds, 800,
                         None, budget=700)
    for i, trial in enumerate(lock):
        ref = simulate(GBAI(X3, None, 700, rng=np.random.default_rng(i)), env, horizon=800,
                       seed=seeds[i])
        assert trial.recommendation == ref.recommendation == 2
        assert trial.correct and ref.correct
