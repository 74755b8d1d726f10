"""The journal part alone (banditkit.live.journal.replay.Journal): the algorithm asked, its
batch stored once, observed when every pull has a reward, replayed by another process's
journal, refused when the store was edited, kept or dropped after a rollback; the slot order.
A real SQLite store; no Experiment."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.journal.replay import Journal, build_algorithm
from parts_support import Setup


@pytest.fixture
def setup(tmp_path):
    s = Setup(tmp_path)
    yield s
    s.close()


def _batch_units(s, conn, batch):
    """Units for every slot of ``batch``, in slot order (arms from the batch's runs)."""
    return s.units(conn, 0, np.repeat(batch.arms, batch.counts).tolist())


def test_the_pending_batch_is_stored_once_and_read_back_by_another_journal(setup):
    s = setup
    with s.transaction() as conn:
        batch_id, batch = s.journal.pending(conn)
        assert (batch_id, batch.n_pulls, s.journal.stored_now) == (0, 12, 0)
        assert s.journal.pending(conn)[0] == 0  # asked again in the call: not stored again
        stored = conn.execute("SELECT id, n_pulls FROM batches").fetchall()
    assert stored == [(0, 12)]
    other = s.fresh_journal()
    with s.transaction(other) as conn:
        assert other.observed == 0 and other.pending(conn)[0] == 0
        assert other.stored_now is None  # found stored, not stored again
        assert conn.execute("SELECT COUNT(*) FROM batches").fetchone() == (1,)


@pytest.mark.parametrize("rewards", ["binary", "fractions"])
def test_a_batch_is_observed_when_its_last_pull_has_a_reward_and_replayed(setup, rewards):
    s = setup
    with s.transaction() as conn:
        _, batch = s.journal.pending(conn)
        units = _batch_units(s, conn, batch)
        values = ([1.0, 0.0, 1.0] * 4 if rewards == "binary"
                  else [0.25, 0.5, 0.75] * 4)
        s.record(conn, units[:-1], values[:-1])
        s.journal.observe_if_complete(conn)
        assert s.journal.observed == 0  # one pull still waits
        s.record(conn, units[-1:], values[-1:])
        s.journal.observe_if_complete(conn)
        assert s.journal.observed == 1 and s.journal.algorithm.t == 12
    expected = np.add.reduceat(np.asarray(values), np.r_[0, np.cumsum(batch.counts)[:-1]])
    with s.transaction() as conn:
        (stored,) = conn.execute("SELECT reward_sums FROM batches WHERE id = 0").fetchone()
    np.testing.assert_allclose(np.asarray(json.loads(stored)), expected)
    other = s.fresh_journal()
    with s.transaction(other):
        assert other.observed == 1 and other.algorithm.t == 12
        for mine, theirs in zip(other.algorithm.decisions.runs(),
                                s.journal.algorithm.decisions.runs(), strict=True):
            np.testing.assert_array_equal(mine, theirs)


def test_a_store_edited_by_hand_is_refused_by_name(setup):
    s = setup
    with s.transaction() as conn:
        _, batch = s.journal.pending(conn)
        units = _batch_units(s, conn, batch)
        s.record(conn, units, [1.0] * 12)
        s.journal.observe_if_complete(conn)
    with s.transaction() as conn:  # the totals kept with the units, edited
        conn.execute("UPDATE totals SET reward = reward + 1 WHERE batch = 0 AND arm = 1")
    with pytest.raises(ExperimentError, match=r"damaged.*batch 0.*edited by hand"), \
            s.transaction(s.fresh_journal()):
        pass
    with s.transaction() as conn:
        conn.execute("UPDATE totals SET reward = reward - 1 WHERE batch = 0 AND arm = 1")
        # the stored runs of batch 0, edited: the algorithm asks for other pulls
        _, counts = conn.execute("SELECT arms, counts FROM runs WHERE batch = 0").fetchone()
        edited = np.frombuffer(counts, dtype="<i8").copy()
        edited[0] += 1
        conn.execute("UPDATE runs SET counts = ? WHERE batch = 0", (edited.tobytes(),))
    journal = s.fresh_journal()
    with pytest.raises(ExperimentError, match="other pulls than stored batch 0"), \
            s.transaction(journal):
        pass
    assert journal.algorithm is None  # dropped: the next call rebuilds it


def test_a_refusal_keeps_the_algorithm_and_any_other_failure_drops_it(setup):
    s = setup
    with s.transaction() as conn:
        s.journal.pending(conn)
    algorithm = s.journal.algorithm
    mark = s.journal.snapshot()
    s.journal.rolled_back(mark, ExperimentError("units: unit 9 was never assigned"))
    assert s.journal.algorithm is algorithm
    s.journal.rolled_back(mark, RuntimeError("disk full"))
    assert s.journal.algorithm is None
    with s.transaction() as conn:  # rebuilt and replayed: the same pending batch
        assert s.journal.pending(conn)[0] == 0 and s.journal.stored_now is None


def test_the_slot_order(tmp_path):
    shuffled, in_order = Setup(tmp_path, "s.sqlite"), Setup(tmp_path, "b.sqlite", order="batch")
    try:
        np.testing.assert_array_equal(in_order.journal.slot_order(3, 12), np.arange(12))
        full = shuffled.journal.slot_order(3, 12)
        assert sorted(full.tolist()) == list(range(12)) and full.tolist() != list(range(12))
        # any cut of the calls gives the same slots, in any process
        pieces = np.concatenate([shuffled.journal.slot_order(3, 12, 0, 5),
                                 shuffled.fresh_journal().slot_order(3, 12, 5, 7)])
        np.testing.assert_array_equal(pieces, full)
        assert shuffled.journal.slot_order(4, 12).tolist() != full.tolist()  # per batch
    finally:
        shuffled.close()
        in_order.close()


def test_the_horizon_cuts_the_last_batch(tmp_path):
    s = Setup(tmp_path, horizon=20)
    try:
        with s.transaction() as conn:
            _, batch = s.journal.pending(conn)
            s.record(conn, _batch_units(s, conn, batch), [1.0] * 12)
            s.journal.observe_if_complete(conn)
            _, last = s.journal.pending(conn)
            assert last.n_pulls == 8  # 20 - 12
            s.record(conn, s.units(conn, 1, np.repeat(last.arms, last.counts).tolist()),
                     [0.0] * 8)
            s.journal.observe_if_complete(conn)
            assert s.journal.ask() is None and s.journal.pending(conn) is None
            assert "horizon of 20 pulls is spent" in s.journal.finished_reason()
    finally:
        s.close()


def test_the_journal_cuts_an_algorithm_that_does_not_know_the_horizon(setup):
    """An algorithm built without the horizon (an identifier that would go on) is cut by the
    journal: its last batch is the prefix that reaches the horizon, then nothing."""
    s = setup
    journal = Journal(replace(s.definition, horizon=20), s.store, s.clock)
    journal.adopt(build_algorithm(s.definition.replay_meta(), s.definition.problem))
    first = journal.ask()
    assert first.n_pulls == 12
    journal.algorithm.observe(first, np.zeros(first.n_runs))
    last = journal.ask()
    assert last.n_pulls == 8 and last.is_prefix_of(journal.algorithm.next_batch())
    journal.algorithm.observe(last, np.zeros(last.n_runs))
    assert journal.ask() is None
