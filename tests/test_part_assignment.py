"""The assignment part alone (banditkit.live.assignment: Assigner and Operations): slots handed
out in the batch's order with their totals, all-or-nothing assign_many, sticky keys, nothing
while paused or stopped without rollout, overflow and rollout units beyond the slots, and the
operator's state with its audit rows. A real SQLite store and journal; no Experiment."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.live.assignment.assigner import Assigner, check_count
from banditkit.live.assignment.operations import Operations
from banditkit.live.errors import ExperimentError
from parts_support import Setup


class Part:
    def __init__(self, folder, **given):
        self.s = Setup(folder, **given)
        self.ops = Operations(self.s.definition, self.s.clock, self.s.journal)
        self.assigner = Assigner(self.s.definition, self.s.store, self.s.clock, self.s.journal,
                                 self.ops)

    def assign(self, n, keys=None):
        with self.s.transaction() as conn:
            return self.assigner.assign(conn, n, keys, None)

    def rows(self, sql, *args):
        with self.s.transaction() as conn:
            return conn.execute(sql, args).fetchall()


@pytest.fixture
def part(tmp_path):
    p = Part(tmp_path)
    yield p
    p.s.close()


def test_slots_go_out_in_the_batch_order_with_their_totals(part):
    first, second = part.assign(5), part.assign(7)
    assert first.unit == [1, 2, 3, 4, 5] and second.unit == list(range(6, 13))
    slots = [s for (s,) in part.rows("SELECT slot FROM units ORDER BY id")]
    np.testing.assert_array_equal(slots, part.s.journal.slot_order(0, 12))
    with part.s.transaction() as conn:
        _, batch = part.s.journal.pending(conn)
    arms = np.repeat(batch.arms, batch.counts)[slots]
    assert first.arm_index + second.arm_index == arms.tolist()
    assert part.rows("SELECT arm, assigned FROM totals WHERE batch = 0 ORDER BY arm") == [
        (a, int((arms == a).sum())) for a in range(3)]
    assert part.rows("SELECT handed FROM batches WHERE id = 0") == [(12,)]


def test_assign_many_is_all_or_nothing(part):
    with part.s.transaction() as conn:
        parts = part.assigner.assign_many(conn, [3, 4])
    assert [p.unit for p in parts] == [[1, 2, 3], [4, 5, 6, 7]]
    with part.s.transaction() as conn:
        assert part.assigner.assign_many(conn, [2, 4]) is None  # 5 slots left, 6 asked
    assert part.rows("SELECT COUNT(*) FROM units") == [(7,)]
    with pytest.raises(ExperimentError, match="n must be an integer >= 1, got 0"):
        check_count(0)


def test_a_key_keeps_its_unit_and_takes_no_slot(part):
    first = part.assign(2, ["u1", "u2"])
    again = part.assign(3, ["u2", "u3", "u1"])
    assert again.repeated == [True, False, True]
    assert again.unit == [first.unit[1], 3, first.unit[0]]
    assert again.arm_index[0] == first.arm_index[1]
    assert part.rows("SELECT handed FROM batches WHERE id = 0") == [(3,)]


def test_nothing_is_assigned_while_paused_and_overflow_beyond_the_slots(part):
    with part.s.transaction() as conn:
        assert part.ops.pause(conn, "a look", "ana") is True
        assert part.ops.pause(conn, "again", "ana") is False
    paused = part.assign(3)
    assert paused.unit == [] and "paused by ana" in paused.reason
    with part.s.transaction() as conn:
        assert part.ops.resume(conn, "ana") == 1
    assert len(part.assign(12).unit) == 12
    extra = part.assign(4)  # the batch's slots are all out: overflow units, by the design
    assert extra.overflow_units == extra.unit and len(extra.unit) == 4
    assert "4 overflow unit(s) (rule 'design')" in extra.reason
    assert part.rows("SELECT COUNT(*) FROM units WHERE kind = 1 AND slot = -1") == [(4,)]
    assert part.rows("SELECT SUM(assigned) FROM totals WHERE batch = -2") == [(4,)]
    assert [a for (a,) in part.rows("SELECT action FROM audit ORDER BY id")] == [
        "pause", "resume"]


def test_a_stop_rolls_out_its_arm_or_nothing(part):
    part.assign(2)
    with part.s.transaction() as conn:
        stopped = part.ops.stop(conn, "b", True, "ana")
    assert stopped["arm"] == "b" and stopped["rollout"] is True
    rolled = part.assign(3)
    assert rolled.arm_index == [1, 1, 1] and "rollout unit(s) on 'b'" in rolled.reason
    assert part.rows("SELECT COUNT(*) FROM units WHERE kind = 2") == [(3,)]
    with part.s.transaction() as conn:
        assert part.ops.archive(conn, "ana") is True
        assert part.ops.archive(conn, "ana") is False
    closed = part.assign(2)
    assert closed.unit == [] and "archived by ana" in closed.reason


# -- the published allocation (assignment/allocation.py) ---------------------------------------
class Edge(Part):
    def __init__(self, folder, **given):
        super().__init__(folder, **given)
        from banditkit.live.assignment.allocation import Allocator

        self.allocator = Allocator(self.s.definition, self.s.store, self.s.clock,
                                   self.s.journal, self.ops)

    def publish(self):
        with self.s.transaction() as conn:
            allocation = self.allocator.publish(conn, "shop", 5.0, True)
        self.allocator.committed(allocation)
        return allocation


def test_the_allocation_follows_the_remaining_slots_and_the_operator(tmp_path):
    part = Edge(tmp_path)
    try:
        first = part.publish()  # 12 slots, 4 per arm
        assert part.rows("SELECT id, n_pulls FROM batches") == [(0, 12)]  # stored, as assign
        assert (first.mode, first.batch, first.name) == ("batch", 0, "shop")
        assert first.weights == pytest.approx([1 / 3] * 3)
        assert part.publish().version == first.version  # the same state: the same version
        taken = part.assign(5).arm_index
        moved = part.publish()
        left = np.array([4 - taken.count(a) for a in range(3)], dtype=float)
        assert moved.weights == pytest.approx(list(left / left.sum()))
        assert moved.version != first.version
        assert part.rows("SELECT version FROM edge_versions ORDER BY published_at, version"
                         ) == sorted([(first.version,), (moved.version,)])
        with part.s.transaction() as conn:
            part.ops.pause(conn, "by hand", "t")
        paused = part.publish()
        assert (paused.mode, paused.weights) == ("control", [1.0, 0.0, 0.0])
        with part.s.transaction() as conn:
            part.ops.resume(conn, "t")
            part.ops.stop(conn, "c", True, "t")
        stopped = part.publish()
        assert (stopped.mode, stopped.weights) == ("rollout", [0.0, 0.0, 1.0])
    finally:
        part.s.close()


def test_an_experiment_fed_from_the_edge_is_refused_by_assign(part):
    with part.s.transaction() as conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('edge', '{}')")
    with pytest.raises(ExperimentError, match="fed from the edge"):
        part.assign(1)
    with part.s.transaction() as conn:
        assert part.assigner.assign_many(conn, [1]) is None
    assert part.rows("SELECT COUNT(*) FROM units") == [(0,)]
