"""Environments: sufficient statistics have the right law, and the truth is right."""

import numpy as np
import pytest

from banditkit import Batch
from banditkit.envs import (
    BernoulliBandit,
    ConstrainedBandit,
    GaussianBandit,
    LinearBandit,
    NonStationaryLinearBandit,
    make_instance,
    optimal_safe_strategy,
)


def test_bernoulli_run_sums_have_binomial_mean_and_variance():
    env = BernoulliBandit([0.2, 0.7])
    rng = np.random.default_rng(0)
    batch = Batch(np.array([0, 1] * 2000), np.full(4000, 50))
    sums = env.pull(batch, rng).rewards.reshape(-1, 2)
    # 2000 Binomial(50, p) draws per arm: mean 50p ± 5 s.e., variance within 15%.
    for k, p in enumerate([0.2, 0.7]):
        assert abs(sums[:, k].mean() - 50 * p) < 5 * np.sqrt(50 * p * (1 - p) / 2000)
        assert abs(sums[:, k].var() / (50 * p * (1 - p)) - 1) < 0.15
    assert np.all((sums >= 0) & (sums <= 50))


def test_gaussian_run_sums_have_normal_law():
    env = GaussianBandit([0.0, 1.0], sigma=2.0)
    sums = env.pull(Batch(np.ones(5000, int), np.full(5000, 9)), np.random.default_rng(1)).rewards
    assert abs(sums.mean() - 9.0) < 5 * 6 / np.sqrt(5000)
    assert abs(sums.std() / 6.0 - 1) < 0.05  # sd of a sum of 9 = 2 * 3


def test_a_million_pull_batch_costs_one_draw_per_run():
    env = BernoulliBandit([0.5, 0.5])
    out = env.pull(Batch(np.array([0, 1]), np.array([10**9, 10**9])), np.random.default_rng(0))
    assert out.rewards.shape == (2,)
    assert abs(out.rewards[0] / 1e9 - 0.5) < 1e-3


def test_regret_and_truth_of_multi_armed():
    env = BernoulliBandit([0.1, 0.5, 0.3])
    assert env.best_arm == 1 and env.best_item() == 1
    assert np.allclose(env.gaps, [0.4, 0.0, 0.2])
    assert np.allclose(env.regret(Batch(np.array([0, 2]), np.array([2, 5]))), [0.8, 1.0])


@pytest.mark.parametrize("means,match", [([0.1, 1.2], r"\[0, 1\]"), ([np.nan], r"\[0, 1\]")])
def test_bernoulli_means_validated(means, match):
    with pytest.raises(ValueError, match=match):
        BernoulliBandit(means)


def test_linear_bandit_best_item_and_gaps():
    Z = np.array([[1.0, 0, 0], [0, 0.9, 0.5]])
    env = LinearBandit(np.eye(3), [1.0, 0.5, 0.8], Z=Z)
    assert env.n_arms == 3 and env.n_items == 2
    assert np.allclose(env.item_values, [1.0, 0.85])
    assert env.best_item() == 0
    assert np.allclose(env.gaps, [0.0, 0.15])
    with pytest.raises(ValueError, match="theta must have length d = 3"):
        LinearBandit(np.eye(3), [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        LinearBandit(np.array([[np.nan, 1.0]]), [1.0, 1.0])


def test_linear_bernoulli_needs_valid_means_or_clip():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="clip"):
        LinearBandit(X, [1.5, 0.2], noise="bernoulli")
    env = LinearBandit(X, [1.5, 0.2], noise="bernoulli", clip=True)
    assert np.allclose(env.means, [1.0, 0.2])


def test_nonstationary_rewards_follow_the_schedule():
    T = 40
    schedule = np.zeros((T, 2))
    schedule[:20, 0] = 1.0  # arm 0 good first
    schedule[20:, 1] = 3.0  # arm 1 better later, and on average
    env = NonStationaryLinearBandit(np.eye(2), schedule, sigma=1e-9)
    out = env.pull(Batch(np.array([0, 1, 0]), np.array([10, 20, 10])), np.random.default_rng(0))
    assert np.allclose(out.rewards, [10.0, 3.0 * 10, 0.0], atol=1e-6)
    assert env.best_item() == 1
    assert env.best_item(horizon=20) == 0
    # Dynamic regret: first 10 pulls of arm 0 are optimal; pulls 10..29 of arm 1 lose 1 for
    # t < 20 and nothing after; pulls 30..39 of arm 0 lose 3 each.
    assert np.allclose(env.regret(Batch(np.array([0, 1, 0]), np.array([10, 20, 10]))),
                       [0.0, 10.0, 30.0])


def test_nonstationary_schedule_function_and_bounds():
    env = NonStationaryLinearBandit(np.eye(2), lambda t: np.column_stack([np.sin(t), np.cos(t)]),
                                    horizon=100)
    assert env.theta_at(np.array([0])).tolist() == [[0.0, 1.0]]
    with pytest.raises(ValueError, match="horizon is required"):
        NonStationaryLinearBandit(np.eye(2), lambda t: t)
    table = NonStationaryLinearBandit(np.eye(2), np.ones((5, 2)))
    with pytest.raises(ValueError, match="outside the schedule"):
        table.pull(Batch(np.array([0]), np.array([6])), np.random.default_rng(0))


def test_optimal_safe_strategy_closed_form():
    # max x1 + 0.5 x2  s.t.  0.9 x1 + 0.1 x2 <= 0.5  ->  x1 = 0.5.
    x = optimal_safe_strategy(np.array([1.0, 0.5]), np.array([[0.9, 0.1]]), np.array([0.5]))
    assert np.allclose(x, [0.5, 0.5], atol=1e-9)


def test_optimal_safe_strategy_matches_vertex_enumeration():
    rng = np.random.default_rng(3)
    for _ in range(20):
        K, m = 4, 2
        r, G = rng.random(K), rng.random((m, K))
        alpha = np.full(m, 0.6) + 0.4 * G.min(axis=1)  # feasible: the cheapest arm is safe-ish
        alpha = np.minimum(alpha, 1.0)
        try:
            x = optimal_safe_strategy(r, G, alpha)
        except ValueError:
            continue
        # Brute force over a fine grid of the simplex (K = 4): the LP value is an upper bound.
        grid = rng.dirichlet(np.ones(K), size=20000)
        feasible = np.all(grid @ G.T <= alpha + 1e-12, axis=1)
        assert np.all(G @ x <= alpha + 1e-9)
        assert r @ x >= (grid[feasible] @ r).max() - 1e-9


def test_constrained_bandit_regret_violation_and_validation():
    env = ConstrainedBandit([1.0, 0.5], [[0.9, 0.1]], [0.5], safe_strategy=[0.2, 0.8])
    assert np.allclose(env.optimal_strategy, [0.5, 0.5])
    b = Batch(np.array([0, 1]), np.array([3, 2]))
    assert np.allclose(env.regret(b), [3 * (0.75 - 1.0), 2 * (0.75 - 0.5)])
    assert np.allclose(env.violation(b)[:, 0], [3 * 0.4, 0.0])
    s = Batch(np.array([0]), np.array([4]), strategy=np.array([0.75, 0.25]))
    assert np.allclose(env.violation(s), [[4 * (0.7 - 0.5)]])
    out = env.pull(b, np.random.default_rng(0))
    assert out.costs.shape == (2, 1) and np.all(out.costs <= b.counts[:, None])
    with pytest.raises(ValueError, match="thresholds"):
        ConstrainedBandit([0.5, 0.5], [[0.5, 0.5]], [1.5])
    with pytest.raises(ValueError, match="strictly safe"):
        ConstrainedBandit([1.0, 0.5], [[0.9, 0.1]], [0.5], safe_strategy=[0.5, 0.5])
    with pytest.raises(ValueError, match="no safe strategy"):
        ConstrainedBandit([1.0, 0.5], [[0.9, 0.8]], [0.5])


def test_beta_costs_are_bounded_with_the_right_mean():
    env = ConstrainedBandit([0.3, 0.6], [[0.2, 0.7]], [0.9], noise="beta", concentration=5.0)
    out = env.pull(Batch(np.array([1]), np.array([20000])), np.random.default_rng(2))
    assert abs(out.rewards[0] / 20000 - 0.6) < 0.01
    assert abs(out.costs[0, 0] / 20000 - 0.7) < 0.01


def test_instance_registry():
    env = make_instance("bernoulli")
    assert env.n_arms == 6
    with pytest.raises(ValueError, match="unknown instance 'nope'"):
        make_instance("nope")
    with pytest.raises(ValueError, match="takes no parameter"):
        make_instance("bernoulli", K=3)
