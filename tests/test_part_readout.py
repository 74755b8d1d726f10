"""The readout part alone (banditkit.live.readout: Readout, Guard, read_history, verify):
status counts the resolved prefix and shows what is not yet counted, units carry their
propensities, a guardrail breach is stored once, the history's groups, and verify finds an
edit. A real SQLite store with the journal, outcomes and operations it reads through; no
Experiment."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.live.assignment.assigner import Assigner
from banditkit.live.assignment.operations import Operations
from banditkit.live.errors import ExperimentError
from banditkit.live.outcomes.recorder import Outcomes
from banditkit.live.readout.guard import Guard
from banditkit.live.readout.history import read_history
from banditkit.live.readout.reader import Readout, check_status, check_units
from banditkit.live.readout.verify import verify
from parts_support import Setup

LATENCY = {"metric": "latency", "rule": "max_increase", "margin": 0.1, "range": [0, 1]}


class Part:
    def __init__(self, folder, **given):
        s = self.s = Setup(folder, **given)
        d, store, clock, journal = s.definition, s.store, s.clock, s.journal
        self.ops = Operations(d, clock, journal)
        self.guard = Guard(d, store, clock, journal)
        self.outcomes = Outcomes(d, store, clock, journal, journal.observe_if_complete,
                                 self.guard.pause_on_breach)
        self.assigner = Assigner(d, store, clock, journal, self.ops)
        self.readout = Readout(d, store, journal, self.outcomes, self.ops, self.guard)

    def assign(self, n):
        with self.s.transaction() as conn:
            return self.assigner.assign(conn, n, None, None)

    def record(self, units, rewards, metrics=None):
        inputs = self.outcomes.record_inputs(units, rewards, None, metrics)
        with self.s.transaction() as conn:
            self.outcomes.record(conn, *inputs)

    def status(self, **given):
        args = check_status(given.get("intervals", "anytime"), 0.05,
                            given.get("count", "resolved"), None,
                            self.s.definition.verdict_spec(self.s.journal.reward_range))
        with self.s.transaction() as conn:
            self.outcomes.plugin_catch_up(conn)
            return self.readout.status(conn, *args)


@pytest.fixture
def part(tmp_path):
    p = Part(tmp_path)
    yield p
    p.s.close()


def test_status_counts_the_resolved_prefix(part):
    got = part.assign(12)
    rng = np.random.default_rng(3)
    rewards = rng.integers(0, 2, 12).astype(float)
    part.record(got.unit[1:], rewards[1:].tolist())  # the first unit still waits
    waiting = part.status()
    assert waiting.uncounted == 11 and int(waiting.arms["counted"].sum()) == 0
    assert waiting.batch_pending == 1 and not waiting.finished
    part.record(got.unit[:1], rewards[:1].tolist())
    done = part.status()
    arms = np.asarray(got.arm_index)
    means = [rewards[arms == a].mean() for a in range(3)]
    np.testing.assert_allclose(done.arms["mean"].to_numpy(float), means)
    assert done.uncounted == 0 and done.batches_observed == 1
    assert done.arms["counted"].tolist() == [4, 4, 4]
    assert done.control == "a" and done.arms.index.tolist() == ["a", "b", "c"]


def test_arguments_are_refused_by_name():
    spec = None
    with pytest.raises(ExperimentError, match="count must be 'resolved'"):
        check_status("anytime", 0.05, "all", None, spec)
    with pytest.raises(ExperimentError, match="limit must be an integer >= 1"):
        check_units(None, False, None, 0)


def test_units_carry_their_propensities(part):
    part.assign(14)  # 12 slots of the batch, 2 overflow units
    with part.s.transaction() as conn:
        frame = part.readout.unit_frame(*part.readout.unit_rows(conn, None, False, None, None))
    assert frame["kind"].tolist() == ["algorithm"] * 12 + ["overflow"] * 2
    np.testing.assert_allclose(frame["propensity"].iloc[:12], 1 / 3)
    np.testing.assert_allclose(frame["propensity"].iloc[12:], 1 / 3)  # the design's shares
    assert frame["arm"].tolist() == [["a", "b", "c"][i] for i in frame["arm_index"]]


def test_a_breach_is_stored_once_and_pauses(tmp_path):
    p = Part(tmp_path, guardrails=[LATENCY], params={"batch_size": 300})
    try:
        got = p.assign(300)
        arms = np.asarray(got.arm_index)
        latency = (arms == 1).astype(float)  # arm b doubles the latency: always 1 vs 0
        p.record(got.unit, [1.0] * 300, metrics={"latency": latency.tolist()})
        with p.s.transaction() as conn:
            p.guard.pause_on_breach(conn)  # again: the breach is stored once
            rows = conn.execute("SELECT guardrail, arm FROM pauses").fetchall()
            frame = p.guard.frame(conn)
            assert "paused by its guardrails" in p.ops.paused(conn)
        assert rows == [(0, 1)]
        assert frame["breached"].tolist() == [True, False]
        assert frame["pausing"].tolist() == [True, False]
    finally:
        p.s.close()


def test_the_history_and_verify(part):
    for _ in range(3):
        got = part.assign(12)
        part.record(got.unit, [1.0] * 12)
    with part.s.transaction() as conn:
        history = read_history(conn, 2, 3, part.s.store.label)
        assert verify(conn, part.s.definition, part.s.store, part.outcomes.plugin_tuning) == 36
    assert history.first_batch.tolist() == [0, 2] and history.last_batch.tolist() == [1, 2]
    assert history.assigned.sum(axis=1).tolist() == [24, 12]
    with part.s.transaction() as conn:
        conn.execute("UPDATE units SET reward = 0 WHERE id = 5")
        with pytest.raises(ExperimentError, match="edited by hand"):
            verify(conn, part.s.definition, part.s.store, part.outcomes.plugin_tuning)


def test_a_correction_through_the_parts_is_counted_by_every_readout(tmp_path):
    """Outcomes.correct finds what changes, Operations keeps its audit row and counts it, and
    the readout (status, quantiles, Bayesian summaries, family) counts the corrected value:
    the coordinator's ``correct`` is these three calls (issue 37 §1 in the parts' layout)."""
    part = Part(tmp_path, reward_type="binary")
    got = part.assign(12)
    rewards = [1.0, 0.0, 1.0] * 4
    part.record(got.unit, rewards)
    unit, arm = got.unit[0], got.arm_index[0]

    def read():
        means = part.status().arms["mean"].to_numpy(float)
        with part.s.transaction() as conn:
            return (means, part.readout.quantiles(conn, 0.5, 0.05)["counted"].tolist(),
                    part.readout.bayesian(conn)["counted"].tolist(),
                    part.readout.family(conn, 0.05)["diff"].to_numpy(float))

    before = read()
    with part.s.transaction() as conn:
        with pytest.raises(ExperimentError, match="rewards must be 0 or 1"):
            part.outcomes.correct(conn, np.array([unit]), np.array([2.0]))
        changed = part.outcomes.correct(conn, np.array([unit]), np.array([1.0 - rewards[0]]))
        assert changed["units"] == [unit] and changed["recorded"] == [rewards[0]]
        part.ops.audit(conn, "ana", "correct", {**changed, "reason": "typo"})
        part.ops.count_correction(conn)
        assert part.ops.state(conn)["corrections"] == 1
        assert part.outcomes.correct(conn, np.array([unit]),
                                     np.array([1.0 - rewards[0]])) is None  # a retry
        assert part.outcomes.counted_prefix(conn, True).total[arm] == \
            part.outcomes.counted_prefix(conn, False).total[arm] + 1.0 - 2 * rewards[0]
    after = read()
    shift = np.zeros(3)
    shift[arm] = (1.0 - 2 * rewards[0]) / 4
    np.testing.assert_allclose(after[0], before[0] + shift)
    assert after[1] == before[1] == after[2] == before[2] == [4, 4, 4]
    assert not np.allclose(after[3], before[3])
    part.s.close()
