"""The outcomes part alone (banditkit.live.outcomes.recorder.Outcomes): rewards recorded once,
refusals by name, the outcome window's rule at its exact edge, expiry, the waiting units, and
the coordinator's hooks called when a batch completes or guardrail values arrive. A real
SQLite store and journal; the hooks are this test's stand-in for the coordinator."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.outcomes.recorder import Outcomes
from parts_support import Setup

LATENCY = {"metric": "latency", "rule": "max_increase", "margin": 0.1, "range": [0, 1]}


class Part:
    """A setup with its Outcomes, the hooks recording their calls."""

    def __init__(self, folder, **given):
        self.s = Setup(folder, **given)
        self.completed = []
        self.breached = []

        def complete(conn):
            self.completed.append(self.s.journal.observed)
            self.s.journal.observe_if_complete(conn)

        self.outcomes = Outcomes(self.s.definition, self.s.store, self.s.clock, self.s.journal,
                                 complete, lambda conn: self.breached.append(1))

    def assigned(self, arms, batch=0):
        with self.s.transaction() as conn:
            self.s.journal.pending(conn)
            return self.s.units(conn, batch, arms)

    def record(self, units, rewards, metrics=None):
        inputs = self.outcomes.record_inputs(units, rewards, None, metrics)
        with self.s.transaction() as conn:
            return self.outcomes.record(conn, *inputs)

    def totals(self, batch=0):
        with self.s.transaction() as conn:
            return {a: (n, r, t) for a, n, r, t in conn.execute(
                "SELECT arm, assigned, recorded, reward FROM totals WHERE batch = ? "
                "ORDER BY arm", (batch,))}


@pytest.fixture
def part(tmp_path):
    p = Part(tmp_path, outcome_window=60.0, missing="zero")
    yield p
    p.s.close()


def test_arguments_are_refused_by_name_before_any_work(part):
    check = part.outcomes.record_inputs
    with pytest.raises(ExperimentError, match=r"rewards must be numbers.*one per unit \(2\)"):
        check([1, 2], [1.0], None, None)
    with pytest.raises(ExperimentError, match="rewards must be finite: unit 2"):
        check([1, 2], [1.0, np.nan], None, None)
    with pytest.raises(ExperimentError, match="costs: FixedAllocation records no costs"):
        check([1], [1.0], [[0.5]], None)


def test_a_reward_is_recorded_once(part):
    units = part.assigned([0, 1, 2, 0])
    new = part.record(units[:3], [1.0, 0.0, 1.0])
    assert [(r, u, b, a) for r, _, u, b, a, _ in new] == [
        (1.0, units[0], 0, 0), (0.0, units[1], 0, 1), (1.0, units[2], 0, 2)]
    assert part.totals() == {0: (2, 1, 1.0), 1: (1, 1, 0.0), 2: (1, 1, 1.0)}
    assert part.record(units[:2], [1.0, 0.0]) == []  # a retry counts nothing twice
    with pytest.raises(ExperimentError, match=f"unit {units[1]} already has reward 0.0"):
        part.record(units[1:2], [1.0])
    with pytest.raises(ExperimentError, match="unit 999 was never assigned"):
        part.record([999], [1.0])
    assert part.totals()[0] == (2, 1, 1.0)  # the refused calls changed nothing


def test_the_last_reward_of_a_batch_calls_the_completion_hook(part):
    with part.s.transaction() as conn:
        _, batch = part.s.journal.pending(conn)
    units = part.assigned(np.repeat(batch.arms, batch.counts).tolist())
    part.record(units[:-1], [1.0] * 11)
    assert part.s.journal.observed == 0
    part.record(units[-1:], [0.0])
    assert part.s.journal.observed == 1 and part.completed[-1] == 0


def test_the_window_closes_at_its_exact_edge(part):
    units = part.assigned([0, 1])
    part.s.seconds.now += 60.0 - 1e-6  # a microsecond before the window closes
    with part.s.transaction() as conn:
        assert part.outcomes.resolve(conn) == 0
    part.s.seconds.now += 1e-6
    with part.s.transaction() as conn:
        assert part.outcomes.resolve(conn) == 2
        rows = conn.execute("SELECT reward, imputed FROM units ORDER BY id").fetchall()
    assert rows == [(0.0, 1), (0.0, 1)]  # missing="zero": reward 0, by the rule
    assert part.totals() == {0: (1, 1, 0.0), 1: (1, 1, 0.0)}
    with pytest.raises(ExperimentError, match="closed before its reward came"):
        part.record(units[:1], [1.0])


def test_expire_as_the_rule_and_by_hand(tmp_path):
    p = Part(tmp_path, outcome_window=60.0, missing="expire")
    try:
        units = p.assigned([0, 1, 2])
        with p.s.transaction() as conn:
            assert p.outcomes.expire(conn, units[:1], None) == 1
            with pytest.raises(ExperimentError, match=f"unit {units[0] + 100} was never"):
                p.outcomes.expire(conn, [units[0] + 100], None)
        assert p.totals() == {0: (0, 0, 0.0), 1: (1, 0, 0.0), 2: (1, 0, 0.0)}
        p.s.seconds.now += 30
        with p.s.transaction() as conn:
            assert p.outcomes.expire(conn, None, 31.0) == 0  # none older than 31 s
            assert p.outcomes.expire(conn, None, 29.0) == 2
        later = p.assigned([1])
        p.s.seconds.now += 60
        with p.s.transaction() as conn:
            assert p.outcomes.resolve(conn) == 1
            (expired,) = conn.execute("SELECT expired_at FROM units WHERE id = ?",
                                      (later[0],)).fetchone()
        assert expired is not None and p.totals()[1] == (0, 0, 0.0)
    finally:
        p.s.close()


def test_the_waiting_units_and_when_they_resolve(part):
    part.assigned([2])
    part.s.seconds.now += 10
    part.assigned([0])
    with part.s.transaction() as conn:
        waiting = part.outcomes.waiting(conn)
    assert (waiting.units, waiting.oldest_arm, waiting.overdue) == (2, "c", 0)
    assert waiting.resolves_at.startswith("2027-01-01T00:01:00")
    part.s.seconds.now += 50  # the oldest unit's window closes now: overdue until resolved
    with part.s.transaction() as conn:
        waiting = part.outcomes.waiting(conn)
    assert waiting.overdue == 1
    warnings = part.outcomes.waiting_warnings(waiting, blocked=True)
    assert "1 unit(s) are past their outcome window" in warnings[-1]
    assert "waits for 2 unit(s) without an outcome; the oldest, unit 1 (arm 'c')" in warnings[0]


def test_guardrail_values_call_the_breach_hook(tmp_path):
    p = Part(tmp_path, guardrails=[LATENCY])
    try:
        units = p.assigned([0, 1])
        p.record(units[:1], [1.0], metrics={"latency": [0.2]})
        assert p.breached == [1]
        with pytest.raises(ExperimentError, match="metrics"):
            p.record(units[1:], [1.0])  # a guardrail's value is required
        with p.s.transaction() as conn:
            assert conn.execute("SELECT n, total FROM metric_totals WHERE batch = -1"
                                ).fetchall() == [(1, 0.2)]
    finally:
        p.s.close()


# -- the feed from the edge (outcomes/ingest.py) -------------------------------------------------
def test_ingest_fills_each_arms_slots_first_and_keeps_early_outcomes_waiting(tmp_path):
    from banditkit.live.assignment.allocation import Allocator
    from banditkit.live.assignment.operations import Operations
    from banditkit.live.outcomes.ingest import Ingest, edge_warnings

    part = Part(tmp_path)
    s = part.s
    ops = Operations(s.definition, s.clock, s.journal)
    allocator = Allocator(s.definition, s.store, s.clock, s.journal, ops)
    ingest = Ingest(s.definition, s.store, s.clock, s.journal, ops, allocator, part.outcomes)

    def call(exposures, outcomes=()):
        now, events = ingest.read(exposures, outcomes)
        with s.transaction() as conn:
            return ingest.ingest(conn, now, events)

    try:
        with s.transaction() as conn:
            version = allocator.publish(conn, "x", 5.0, True).version
        t = s.seconds.now
        seen = [{"key": f"u{i}", "arm": "a", "version": version, "time": t + i}
                for i in range(5)]  # 4 slots of arm a, then an overflow unit
        later = {"version": version, "time": t + 10}  # after the first exposures
        first = call([*seen, {"key": "u0", "arm": "a", **later},
                      {"key": "u1", "arm": "b", **later},
                      {"key": "v", "arm": "b", "version": "nope"}],
                     [{"key": "u0", "value": 1}, {"key": "w", "value": 0}])
        assert first.exposures == {"new": 5, "repeated": 1, "refused": 2, "algorithm": 4,
                                   "overflow": 1, "rollout": 0}
        assert first.outcomes == {"new": 2, "repeated": 0, "refused": 0, "waiting": 1,
                                  "recorded": 1}
        with s.transaction() as conn:
            rows = conn.execute("SELECT kind, slot, arm, propensity, reward FROM units "
                                "ORDER BY id").fetchall()
            _, batch = s.journal.pending(conn)
            assert edge_warnings(conn) and "1 exposure(s) of a key" in edge_warnings(conn)[0]
        arm_a_slots = np.flatnonzero(np.repeat(batch.arms, batch.counts) == 0)
        assert [r[1] for r in rows[:4]] == arm_a_slots.tolist()  # arm a's slots in order
        assert rows[4][:2] == (1, -1)  # the fifth: overflow
        assert all(r[3] == pytest.approx(1 / 3) for r in rows)
        assert rows[0][4] == 1.0 and all(r[4] is None for r in rows[1:])
        late = call([{"key": "w", "arm": "c", "version": version}])  # its outcome waited
        assert late.outcomes["recorded"] == 1 and late.exposures["new"] == 1
        # the version after a call is kept by it: an application that read it from a
        # read-only process (which keeps none) is heard after the weights moved on
        with s.transaction() as conn:
            after = allocator.current(conn, "x", store_batch=False).version
        assert after != version
        call([{"key": "z", "arm": "c", "version": version}])  # the weights move on
        assert call([{"key": "y", "arm": "b", "version": after}]).exposures["new"] == 1
        again = call([{"key": "w", "arm": "c", "version": version}], [{"key": "w", "value": 0}])
        assert (again.new, again.repeated, again.refused) == (0, 2, 0)
    finally:
        s.close()
