"""IIDBatch: an i.i.d. epoch described by the design's cdf, its size and ξ's PCG64 state — the
same pulls as drawing them at once (ξ.choice), ξ left where that draw leaves it, any range of
pulls in O(range), and the IPS identifiers answered from per-arm sums without its runs."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.identification.fixed_budget import FixedBudgetIdentifier, iid_arms, runs_batch
from banditkit.identification.g_bai import GBAI
from banditkit.identification.p1 import P1RAGE, P1Peace
from banditkit.identification.peace import MixedPeace, Peace
from banditkit.protocol import Batch, DecisionLog, IIDBatch

W = np.array([0.1, 0.0, 0.45, 0.2, 0.25])
IID = (GBAI, P1RAGE, P1Peace, MixedPeace)


@pytest.mark.parametrize("n", [0, 1, 7, 1023, 1024, 20_000])
@pytest.mark.parametrize("half_used", [False, True])
def test_draw_gives_choices_arms_and_leaves_xi_where_choice_does(n, half_used):
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    if half_used:  # a 32-bit draw (a tie broken with ξ.integers) leaves half an output buffered
        a.integers(3), b.integers(3)
        assert a.bit_generator.state["has_uint32"] == 1
    batch = IIDBatch.draw(a, W, n)
    assert isinstance(batch, IIDBatch) and not batch.materialised and batch.n_pulls == n
    expected = b.choice(W.size, size=n, p=W)
    assert a.bit_generator.state == b.bit_generator.state  # every later draw is unchanged
    np.testing.assert_array_equal(a.integers(0, 7, 50), b.integers(0, 7, 50))
    np.testing.assert_array_equal(batch.sequence(), expected)
    eager = Batch.from_sequence(expected)
    np.testing.assert_array_equal(batch.arms, eager.arms)
    np.testing.assert_array_equal(batch.counts, eager.counts)
    assert batch.materialised


def test_any_range_of_slots_is_the_materialised_sequence():
    batch = IIDBatch.draw(np.random.default_rng(3), W, 50_000)
    seq = iid_arms(np.random.default_rng(3), W, 50_000)
    rng = np.random.default_rng(0)
    for start in [0, 1, 49_999, *rng.integers(0, 50_000, 10).tolist()]:
        count = min(int(rng.integers(0, 3000)), 50_000 - start)
        np.testing.assert_array_equal(batch.arms_between(start, count),
                                      seq[start: start + count])
    slots = rng.choice(50_000, 700, replace=False)  # scattered, unsorted, some consecutive
    slots = np.r_[slots, np.arange(100, 140)]
    np.testing.assert_array_equal(batch.arms_at(slots), seq[slots])
    assert not batch.materialised  # none of this computed the runs
    with pytest.raises(ValueError, match="not within"):
        batch.arms_between(49_990, 11)


def test_a_prefix_is_the_first_draws_without_computing_runs():
    batch = IIDBatch.draw(np.random.default_rng(4), W, 10_000)
    head = batch.truncated(1234)
    assert isinstance(head, IIDBatch) and head.n_pulls == 1234
    assert head.is_prefix_of(batch) and not batch.is_prefix_of(head)
    assert not batch.materialised and not head.materialised
    np.testing.assert_array_equal(head.sequence(), batch.sequence()[:1234])
    other = IIDBatch.draw(np.random.default_rng(5), W, 10_000)
    assert not head.is_prefix_of(other)


def test_other_bit_generators_are_drawn_at_once():
    a = np.random.Generator(np.random.MT19937(2))
    b = np.random.Generator(np.random.MT19937(2))
    batch = IIDBatch.draw(a, W, 500)
    assert type(batch) is Batch
    np.testing.assert_array_equal(batch.sequence(), b.choice(W.size, 500, p=W))
    assert a.random() == b.random()


def test_the_description_is_checked():
    state = np.random.default_rng(0).bit_generator.state
    with pytest.raises(ValueError, match=r"end at 1\.0"):
        IIDBatch(np.cumsum(W) * 2, state, 5)  # a cdf not normalised
    with pytest.raises(ValueError, match="PCG64"):
        IIDBatch(np.cumsum(W), np.random.Generator(np.random.MT19937(0)).bit_generator.state, 5)


def test_a_decision_log_defers_lazy_batches_and_reads_as_an_eager_one():
    xi = np.random.default_rng(8)
    lazy = [IIDBatch.draw(xi, W, 3000), Batch.from_allocation(np.array([2, 0, 1, 0, 0])),
            IIDBatch.draw(xi, W[::-1], 500)]
    log, eager = DecisionLog(), DecisionLog()
    for batch in lazy:
        log.record(batch)
    assert log.n_batches == 3 and not lazy[0].materialised  # recording computed nothing
    for batch in lazy:
        eager.record(Batch(batch.arms, batch.counts))
    assert log.same_as(eager) and eager.same_as(log)
    np.testing.assert_array_equal(log.batch_sizes(), [3000, 3, 500])
    assert log.count_differences(eager) == 0


def _eager_sample(self, weights, n):
    """The old sampling path: the whole epoch drawn at once (iid_arms, then its runs)."""
    return runs_batch(iid_arms(self.xi, weights, n))


@pytest.mark.parametrize("cls", IID)
@pytest.mark.parametrize("seed, T", [(0, 500), (1, 4000), (2, 20_000)])
def test_simulations_are_those_of_the_eager_draws_bit_for_bit(cls, seed, T, monkeypatch):
    env = make_instance("soare", d=4, omega=0.3)
    lazy_algo = cls(env.X, None, T, rng=seed)
    lazy = simulate(lazy_algo, env, seed=seed + 10)
    monkeypatch.setattr(FixedBudgetIdentifier, "_sample", _eager_sample)
    eager_algo = cls(env.X, None, T, rng=seed)
    eager = simulate(eager_algo, env, seed=seed + 10)
    assert lazy.decisions.same_as(eager.decisions)
    np.testing.assert_array_equal(lazy.decisions.batch_sizes(), eager.decisions.batch_sizes())
    assert lazy.recommendation == eager.recommendation and lazy.info == eager.info
    np.testing.assert_array_equal(lazy_algo.theta_hat, eager_algo.theta_hat)  # exact
    assert lazy_algo.xi.random() == eager_algo.xi.random()  # ξ at the same place


def _binary_env() -> LinearBandit:
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    return LinearBandit(X, np.array([0.3, 0.5, 0.8]), noise="bernoulli")


@pytest.mark.parametrize("cls", IID)
def test_per_arm_sums_make_the_decisions_of_run_sums(cls):
    """The IPS identifiers answered by arm (the live path, which never computes the runs)
    decide as when answered by run, with 0/1 rewards bit for bit."""
    env = _binary_env()
    by_run, by_arm = cls(env.X, None, 3000, rng=5), cls(env.X, None, 3000, rng=5)
    noise = np.random.default_rng(1)
    while (batch := by_run.next_batch()) is not None:
        lazy = by_arm.next_batch()
        assert isinstance(lazy, IIDBatch) and not lazy.materialised
        rewards = np.asarray(env.pull(batch, noise, by_run.t).rewards, dtype=float)
        by_run.observe(batch, rewards)
        K = env.X.shape[0]
        by_arm.observe_arm_sums(lazy, batch.arm_sums(rewards, K), batch.allocation(K))
        assert not lazy.materialised
        np.testing.assert_array_equal(by_arm.theta_hat, by_run.theta_hat)
    assert by_arm.next_batch() is None
    assert by_arm.recommendation == by_run.recommendation
    assert by_arm.decisions.same_as(by_run.decisions)  # the deferred log reads the same


def test_observe_arm_sums_refuses_what_cannot_be_the_batchs():
    env = _binary_env()
    algo = GBAI(env.X, None, 100, rng=0)
    batch = algo.next_batch()
    seq = batch.sequence()  # leaves the runs uncomputed
    pulls = np.bincount(seq, minlength=4)
    with pytest.raises(ValueError, match="summing to the batch's 100 pulls"):
        algo.observe_arm_sums(batch, np.zeros(4), pulls + 1)
    with pytest.raises(ValueError, match="one per arm"):
        algo.observe_arm_sums(batch, np.zeros(3), pulls)
    batch.arms  # noqa: B018 - the runs are now known: the pulls must be the batch's own
    with pytest.raises(ValueError, match="the batch's pulls of each arm"):
        algo.observe_arm_sums(batch, np.zeros(4), np.r_[pulls[1:], pulls[0]])
    algo.observe_arm_sums(batch, np.zeros(4), pulls)
    assert algo.next_batch() is None and algo.recommendation is not None
    peace = Peace(env.X, None, 100, rng=0)
    with pytest.raises(ValueError, match="observes run sums"):
        peace.observe_arm_sums(peace.next_batch(), np.zeros(4), np.full(4, 25))


def test_a_budget_whose_log_cannot_fit_is_refused_without_drawing_it():
    """simulate's memory check refuses 10¹² pulls by name, and asking for the batch (O(K):
    a description) never draws them."""
    env = make_instance("soare", d=4, omega=0.3)
    algo = GBAI(env.X, None, 10**12, rng=0)
    with pytest.raises(ValueError, match=r"horizon = 1000000000000 cannot fit in memory"):
        simulate(algo, env, horizon=10**12)
    assert not algo.next_batch().materialised
