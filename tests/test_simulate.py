"""The simulation driver and UCB1: exact bookkeeping, and UCB1's regret guarantee."""

import numpy as np
import pytest

from banditkit import Algorithm, Batch, simulate
from banditkit.envs import BernoulliBandit, GaussianBandit
from banditkit.policies import UCB1


class FixedSequence(Algorithm):
    """Pulls a fixed sequence in fixed batches; an identifier that stops and recommends 1."""

    kind = "identification"

    def __init__(self, batches, n_arms=3):
        super().__init__(n_arms)
        self._batches = list(batches)
        self.seen = []

    def _next_batch(self):
        return self._batches.pop(0) if self._batches else None

    def _observe(self, batch, rewards, costs):
        self.seen.append((batch.n_pulls, rewards.copy()))

    @property
    def recommendation(self):
        return 1


def test_horizon_truncates_the_last_batch_exactly():
    algo = UCB1(3)
    env = BernoulliBandit([0.2, 0.5, 0.4])
    tr = simulate(algo, env, horizon=1000, seed=0)
    assert tr.n_pulls == 1000 and tr.counts.sum() == 1000
    assert tr.decisions.runs()[1].sum() == 1000


def test_identifier_stops_and_is_scored():
    b = [Batch(np.array([0, 1]), np.array([5, 7])), Batch.single(2)]
    env = BernoulliBandit([0.2, 0.5, 0.4])
    tr = simulate(FixedSequence(b), env, seed=0)
    assert tr.stopped and tr.n_pulls == 13 and tr.n_batches == 2
    assert tr.counts.tolist() == [5, 7, 1]
    assert tr.correct is True and tr.recommendation == 1
    assert tr.regret is None


def test_budget_cap_cuts_an_identifier_mid_batch():
    b = [Batch(np.array([0, 1]), np.array([5, 7]))]
    algo = FixedSequence(b)
    tr = simulate(algo, BernoulliBandit([0.2, 0.5, 0.4]), horizon=8, seed=0)
    assert not tr.stopped and tr.n_pulls == 8 and tr.counts.tolist() == [5, 3, 0]
    assert algo.seen[0][0] == 8


def test_regret_at_checkpoints_equals_brute_force():
    env = GaussianBandit([0.0, 0.3, 1.0])
    # Gaussian rewards leave UCB1's [0, 1]: run it as an unbounded baseline
    tr = simulate(UCB1(3, reward_range=None), env, horizon=500, seed=3,
                  checkpoints=np.arange(1, 501))
    seq = tr.decisions.runs()
    pulls = np.repeat(*seq)
    assert np.allclose(tr.regret, np.cumsum(env.gaps[pulls]))


def test_same_seed_same_trial_different_seed_different_trial():
    env = BernoulliBandit([0.4, 0.5, 0.6])
    a = simulate(UCB1(3), env, horizon=2000, seed=11)
    b = simulate(UCB1(3), env, horizon=2000, seed=11)
    c = simulate(UCB1(3), env, horizon=2000, seed=12)
    assert a.decisions.same_as(b.decisions) and np.array_equal(a.regret, b.regret)
    assert not a.decisions.same_as(c.decisions)


def test_ucb1_pulls_every_arm_once_first():
    tr = simulate(UCB1(5), BernoulliBandit([0.1, 0.9, 0.5, 0.3, 0.2]), horizon=5, seed=0)
    assert np.repeat(*tr.decisions.runs()).tolist() == [0, 1, 2, 3, 4]


def test_ucb1_meets_the_auer_regret_bound():
    # Theorem 1 of Auer et al. (2002): E[R_T] <= sum_k 8 ln T / Δ_k + (1 + π²/3) sum_k Δ_k.
    means = np.array([0.9, 0.6, 0.5])
    env = BernoulliBandit(means)
    T = 3000
    gaps = means.max() - means
    bound = np.sum(8 * np.log(T) / gaps[1:]) + (1 + np.pi**2 / 3) * gaps.sum()
    regrets = [simulate(UCB1(3), env, horizon=T, seed=s).final_regret for s in range(20)]
    assert np.mean(regrets) <= bound
    # ... and it learns: far below the linear regret of uniform play.
    assert np.mean(regrets) < 0.25 * T * gaps.mean()


def test_ucb1_and_simulate_refuse_bad_input():
    with pytest.raises(ValueError, match="n_arms"):
        UCB1(0)
    with pytest.raises(ValueError, match="exploration"):
        UCB1(3, exploration=-1.0)
    with pytest.raises(ValueError, match="3 arms but env has 2"):
        simulate(UCB1(3), BernoulliBandit([0.1, 0.2]), horizon=10)
    with pytest.raises(ValueError, match="horizon"):
        simulate(UCB1(2), BernoulliBandit([0.1, 0.2]), horizon=-3)
    with pytest.raises(TypeError, match="algorithm"):
        simulate(object(), BernoulliBandit([0.1, 0.2]), horizon=3)


def test_observe_checks_reward_shape():
    algo = UCB1(2)
    b = algo.next_batch()
    with pytest.raises(ValueError, match="one sum per run"):
        algo.observe(b, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="finite"):
        algo.observe(b, np.array([np.nan]))


class StrategyPlayer(Algorithm):
    """Plays a fixed strategy per batch (as constrained algorithms do) on arm 0 and 1."""

    def __init__(self, strategies, size):
        super().__init__(2)
        self._strategies = list(strategies)
        self.size = size

    stops_by_itself = True  # it plays its strategies, then stops

    def _next_batch(self):
        if not self._strategies:
            return None
        x = self._strategies.pop(0)
        return Batch(np.array([0, 1]), np.array([self.size, self.size]), strategy=x)

    def _observe(self, batch, rewards, costs):
        assert costs is not None and costs.shape == (2, 2)


def test_violation_is_max_over_constraints_of_cumulative_positive_part():
    from banditkit.envs import ConstrainedBandit

    env = ConstrainedBandit([1.0, 0.5], [[0.9, 0.1], [0.2, 0.6]], [0.5, 0.5])
    xs = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.5, 0.5])]
    tr = simulate(StrategyPlayer(xs, 5), env, seed=0, checkpoints=np.array([10, 20, 30]))
    # Per pull excess: x=(1,0): (+0.4, -0.3); x=(0,1): (-0.4, +0.1); x=(.5,.5): (0, -0.1).
    c1 = np.array([4.0, 4.0, 4.0])
    c2 = np.array([0.0, 1.0, 1.0])
    assert np.allclose(tr.violation, np.maximum(c1, c2))
    # Regret uses the strategy: r.x* = 0.75 for x* = (0.5, 0.5).
    assert np.allclose(tr.regret, [10 * -0.25, 10 * -0.25 + 10 * 0.25, 0.0])


def test_simulate_refuses_no_horizon_for_a_policy_that_never_stops():
    from banditkit.envs import BernoulliBandit
    from banditkit.policies import UCB1

    with pytest.raises(ValueError, match="needs a horizon for UCB1"):
        simulate(UCB1(3), BernoulliBandit([0.2, 0.5, 0.7]), seed=0)
