"""The batch protocol: runs, truncation, decision logs and their comparison."""

import numpy as np
import pytest

from banditkit import Batch, DecisionLog


def _log(seq_batches):
    log = DecisionLog()
    for seq in seq_batches:
        log.record(Batch.from_sequence(np.asarray(seq)))
    return log


def test_from_sequence_round_trips_and_merges_repeats():
    seq = np.array([2, 2, 0, 1, 1, 1, 2])
    b = Batch.from_sequence(seq)
    assert b.arms.tolist() == [2, 0, 1, 2]
    assert b.counts.tolist() == [2, 1, 3, 1]
    assert np.array_equal(b.sequence(), seq)
    assert b.n_pulls == 7
    assert b.allocation(4).tolist() == [1, 3, 3, 0]


def test_allocation_is_exact_past_2_to_the_53():
    b = Batch(np.array([0, 1, 0]), np.array([2**53, 3, 1]))  # 2⁵³ + 1 is not a float64
    assert b.allocation(2).tolist() == [2**53 + 1, 3]


def test_from_allocation_skips_zero_arms():
    b = Batch.from_allocation(np.array([3, 0, 2]))
    assert b.arms.tolist() == [0, 2] and b.counts.tolist() == [3, 2]


def test_single_is_a_one_pull_batch():
    b = Batch.single(4)
    assert b.n_pulls == 1 and b.arms.tolist() == [4] and b.counts.tolist() == [1]
    with pytest.raises(ValueError, match="non-negative"):
        Batch.single(-1)


def test_truncated_keeps_exact_prefix():
    rng = np.random.default_rng(0)
    for _ in range(50):
        seq = rng.integers(0, 3, size=rng.integers(1, 40))
        b = Batch.from_sequence(seq)
        n = int(rng.integers(0, seq.size + 1))
        t = b.truncated(n)
        assert np.array_equal(t.sequence(), seq[:n])
        assert t.n_pulls == n


def test_sum_runs_matches_manual_sums():
    b = Batch(np.array([1, 0, 1]), np.array([2, 3, 1]))
    per_pull = np.arange(6, dtype=float)
    assert b.sum_runs(per_pull).tolist() == [0 + 1, 2 + 3 + 4, 5]
    with pytest.raises(ValueError, match="per-pull"):
        b.sum_runs(np.ones(5))


@pytest.mark.parametrize("arms,counts,match", [
    ([0, 1], [1], "same length"),
    ([0], [0], ">= 1"),
    ([-1], [2], "non-negative"),
])
def test_bad_batches_are_refused(arms, counts, match):
    with pytest.raises(ValueError, match=match):
        Batch(np.array(arms), np.array(counts))


def test_count_differences_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(200):
        a = [rng.integers(0, 3, size=rng.integers(0, 10)) for _ in range(rng.integers(1, 4))]
        b = [rng.integers(0, 3, size=rng.integers(0, 10)) for _ in range(rng.integers(1, 4))]
        sa, sb = np.concatenate(a), np.concatenate(b)
        m = min(sa.size, sb.size)
        expected = int(np.sum(sa[:m] != sb[:m])) + abs(sa.size - sb.size)
        assert _log(a).count_differences(_log(b)) == expected


def test_same_as_compares_pulls_not_batch_boundaries():
    assert _log([[0, 0, 1]]).same_as(_log([[0], [0, 1]]))
    assert not _log([[0, 0, 1]]).same_as(_log([[0, 1, 1]]))


def test_count_differences_on_huge_runs_is_cheap():
    a, b = DecisionLog(), DecisionLog()
    a.record(Batch(np.array([0, 1]), np.array([10**12, 10**12])))
    b.record(Batch(np.array([0, 1]), np.array([10**12 + 5, 10**12 - 5])))
    assert a.count_differences(b) == 5


def test_strategies_take_part_in_sameness():
    a, b = DecisionLog(), DecisionLog()
    a.record(Batch(np.array([0]), np.array([3]), strategy=np.array([0.5, 0.5])))
    b.record(Batch(np.array([0]), np.array([3]), strategy=np.array([0.6, 0.4])))
    assert not a.same_as(b)
    assert a.same_as(a)


def test_observe_refuses_what_was_not_asked():
    from banditkit.envs import BernoulliBandit
    from banditkit.identification import GBAI
    from banditkit.policies import UCB1

    algo = UCB1(3)
    with pytest.raises(ValueError, match="no batch pending"):
        algo.observe(Batch(np.array([0]), np.array([1])), np.array([1.0]))
    batch = algo.next_batch()
    other = Batch(np.array([(int(batch.arms[0]) + 1) % 3]), np.array([1]))
    with pytest.raises(ValueError, match="must be the batch next_batch"):
        algo.observe(other, np.array([1.0]))
    with pytest.raises(ValueError, match="1-D array"):
        algo.observe(batch, np.array([[1.0]]))
    algo.observe(batch, np.array([1.0]))  # refusals changed nothing: the batch is still owed
    assert algo.t == 1
    with pytest.raises(ValueError, match="no batch pending"):  # answered once only
        algo.observe(batch, np.array([1.0]))
    # an identifier that stopped asks for nothing more
    env = BernoulliBandit([0.2, 0.5, 0.8])
    g = GBAI(np.eye(3), None, 30, rng=0)
    while (b := g.next_batch()) is not None:
        g.observe(b, env.pull(b, np.random.default_rng(1)).rewards)
    with pytest.raises(ValueError, match="no batch pending"):
        g.observe(Batch(np.array([0]), np.array([1])), np.array([1.0]))


def test_a_prefix_is_the_last_answer_of_a_run():
    """A batch answered in part (a simulation cut at its horizon) ends the run: no new batch is
    issued on the partial data, and a later observe says why."""
    from banditkit.envs import BernoulliBandit
    from banditkit.policies import ReplicableElimination

    env = BernoulliBandit([0.2, 0.5, 0.8])
    algo = ReplicableElimination(3, 100_000, 0.3, rng=0)
    b = algo.next_batch()
    part = b.truncated(b.n_pulls - 1)  # every arm has pulls: no NaN means in the last update
    assert part.is_prefix_of(b) and not b.is_prefix_of(part)
    with pytest.raises(ValueError, match="must be the batch next_batch"):  # not in pull order
        algo.observe(Batch(b.arms[::-1], b.counts[::-1]), np.zeros(b.n_runs))
    algo.observe(part, env.pull(part, np.random.default_rng(0)).rewards)
    assert algo.t == part.n_pulls
    assert algo.next_batch() is None
    with pytest.raises(ValueError, match="answered in part"):
        algo.observe(b, np.zeros(b.n_runs))


def test_a_refused_outcome_leaves_the_batch_pending():
    from banditkit.envs import ConstrainedBandit
    from banditkit.policies import DEBORAS

    env = ConstrainedBandit([0.9, 0.5], [[0.8, 0.2]], [0.5])
    algo = DEBORAS(2, 100, env.alpha, rho=0.3, delta=0.05, rng=0)
    batch = algo.next_batch()
    out = env.pull(batch, np.random.default_rng(0))
    with pytest.raises(ValueError, match="costs are required"):
        algo.observe(batch, out.rewards, None)
    with pytest.raises(ValueError, match="rewards must be sums"):
        algo.observe(batch, out.rewards + 2 * batch.counts, out.costs)
    algo.observe(batch, out.rewards, out.costs)
    assert algo.t == batch.n_pulls and algo.decisions.n_batches == 1


def test_bounded_reward_policies_refuse_impossible_sums():
    from banditkit.policies import ReplicableElimination

    algo = ReplicableElimination(3, 45_000, 0.3, np.random.default_rng(0))
    batch = algo.next_batch()
    n = batch.counts.astype(float)
    impossible = np.r_[1e9, -5.0, 3.0][: batch.n_runs]  # the sums a user once typed in
    with pytest.raises(ValueError, match=r"sums of rewards in \[0, 1\]"):
        algo.observe(batch, impossible)
    algo.observe(batch, 0.5 * n)  # still pending after the refusal
    assert algo.t == int(n.sum())


def test_strings_and_nested_means_are_refused():
    from banditkit.envs import BernoulliBandit
    from banditkit.policies import ReplicableElimination

    with pytest.raises(TypeError, match="rho must be a number"):
        ReplicableElimination(3, 1000, "0.3", np.random.default_rng(0))
    with pytest.raises(ValueError, match="1-D array with one mean per arm"):
        BernoulliBandit([[0.2, 0.3], [0.4, 0.5]])


def test_observe_refuses_text_and_booleans():
    """numpy would read '0.5' and True as numbers: a reward given as text or a flag is a
    user's mistake (a CSV column read as strings), refused before any state changes."""
    from banditkit.policies import UCB1

    algo = UCB1(2, horizon=10)
    b = algo.next_batch()
    for bad in (["1"], [True], np.array(["0.5"]), [None]):
        with pytest.raises(ValueError, match="rewards must be numbers"):
            algo.observe(b, bad)
    algo.observe(b, np.array([1]))  # integers are numbers
    assert algo.t == 1


def test_flags_among_numbers_are_refused():
    from banditkit.validation import as_numbers

    for bad in ([1.0, True], (True, 2), [[0.5, False]]):
        with pytest.raises(ValueError, match="x must be numbers"):
            as_numbers(bad, "x")
    np.testing.assert_array_equal(as_numbers([1, 2.5], "x"), [1.0, 2.5])
