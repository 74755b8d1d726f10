"""The outcome window (banditkit.live.outcomes.window) and the resolved prefix status counts
(banditkit.live.outcomes.resolved_prefix), through the real Experiment on both stores, with an
injected clock instead of sleeping: refusals by name, the stored and shown window, the exact window
comparison, both rules, a batch that goes on after the window, the prefix rule in status and
guardrails, replay and verify, the upgrade of a format 5 file, and a fast version of
benchmarks/bench_reporting.py."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from live_support import DOWNGRADE_TO_5

T0 = 1_700_000_000.0
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 7,
              "horizon": 30_000, "params": {"rho": 0.2}}


class Clock:
    """A clock the test moves by hand (seconds since the epoch)."""

    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _create(where, clock, **kw):
    # overflow off: these tests watch the algorithm's own batch wait and resolve (with
    # overflow on, assign serves overflow units meanwhile; tests/test_overflow.py)
    return where.create(**{**DEFINITION, "overflow": "off", **kw}, clock=clock)


# -- create: refused by name, stored, shown ------------------------------------------------------
@pytest.mark.parametrize(("kw", "message"), [
    ({"outcome_window": -1}, "outcome_window must be a number of seconds"),
    ({"outcome_window": 0}, "outcome_window must be a number of seconds"),
    ({"outcome_window": float("nan")}, "outcome_window must be a number of seconds"),
    ({"outcome_window": float("inf")}, "outcome_window must be a number of seconds"),
    ({"outcome_window": "86400"}, "outcome_window must be a number of seconds"),
    ({"outcome_window": True}, "outcome_window must be a number of seconds"),
    ({"outcome_window": 1e12}, "outcome_window must be a number of seconds"),
    ({"missing": "zeros"}, "missing must be 'zero'"),
    ({"missing": 0}, "missing must be 'zero'"),
    ({"clock": 5}, "clock must be a function"),
])
def test_a_bad_window_rule_or_clock_is_refused_by_name_and_creates_nothing(tmp_path, kw,
                                                                           message):
    path = tmp_path / "e.sqlite"
    with pytest.raises(ExperimentError, match=message):
        Experiment.create(path, **{**DEFINITION, **kw})
    assert not path.exists()


def test_zero_is_refused_for_a_constrained_policy_whose_costs_it_cannot_know(tmp_path):
    path = tmp_path / "c.sqlite"
    with pytest.raises(ExperimentError, match=r"missing: 'zero' .* needs missing='expire'"):
        Experiment.create(path, algorithm="DEBORAS", arms=["a", "b", "c"], seed=1, horizon=1000,
                          thresholds=[0.5], missing="zero")
    assert not path.exists()
    with Experiment.create(path, algorithm="DEBORAS", arms=["a", "b", "c"], seed=1, horizon=1000,
                           thresholds=[0.5]) as exp:
        assert exp.window.missing == "expire"  # the default with costs


def test_the_window_and_rule_are_stored_shown_and_kept_on_reopen(where):
    clock = Clock()
    with _create(where, clock) as exp:
        status = exp.status()
        assert (status.outcome_window, status.missing) == (86_400.0, "zero")
        assert "86400 s (1 d) [default]" in status.window_note
        assert "missing='zero' [default]" in str(status)
    with where.open(clock=clock) as exp:
        assert (exp.window.seconds, exp.window.missing) == (86_400.0, "zero")
    other = type(where)(where.target + "2", where.name) if where.name is None else \
        type(where)(where.target, where.name + "x")
    with other.create(**DEFINITION, outcome_window=3600, missing="expire") as exp:
        status = exp.status()
        assert (status.outcome_window, status.missing) == (3600.0, "expire")
        assert "[default]" not in status.window_note
        assert "withdrawn" in status.window_note


def test_rewards_outside_zero_one_default_to_expire(tmp_path):
    with Experiment.create(tmp_path / "g.sqlite", algorithm="BatchedThompson",
                           arms=["a", "b"], seed=1,
                           params={"batch_size": 10, "posterior": "gaussian"}) as exp:
        assert exp.window.missing == "expire"


# -- resolution -------------------------------------------------------------------------------
def test_the_window_closes_exactly_at_assigned_at_plus_window(where):
    """[assigned_at, assigned_at + window): a reward a microsecond before is recorded; at the
    instant itself the unit is resolved (missing='zero': reward 0, imputed) and a reward is
    refused by name."""
    clock = Clock()
    with _create(where, clock, outcome_window=10.0) as exp:
        units = exp.assign(2)["unit"].tolist()
        clock.t = T0 + 10.0 - 1e-6
        assert exp.record([units[0]], [1]) == 1
        assert exp.units(unanswered=True)["unit"].tolist() == [units[1]]
        clock.t = T0 + 10.0
        assert exp.units(unanswered=True).empty
        row = exp.units(ids=[units[1]]).iloc[0]
        assert row["reward"] == 0 and bool(row["imputed"]) and row["expired_at"] is None
        with pytest.raises(ExperimentError, match=f"unit {units[1]}'s outcome window"):
            exp.record([units[1]], [1])
        assert exp.status().arms["recorded"].sum() == 2


def test_expire_withdraws_the_unit_and_hands_its_slot_out_again(where):
    clock = Clock()
    with _create(where, clock, outcome_window=60.0, missing="expire") as exp:
        first = exp.assign(3)
        clock.t += 59
        assert exp.units(unanswered=True).shape[0] == 3
        clock.t += 1
        expired = exp.units(ids=first["unit"])
        assert expired["expired_at"].notna().all() and not expired["imputed"].any()
        again = exp.assign(3)  # the three slots first
        assert sorted(exp.units(ids=again["unit"])["slot"]) == sorted(expired["slot"])
        with pytest.raises(ExperimentError, match="expired"):
            exp.record(first["unit"][:1], [1])


def test_the_readme_flow_with_one_unit_never_answered_goes_on_after_the_window(where):
    """The README's experiment: units 1 and 2 answered, 3 never. Before the window closes,
    assign hands out nothing once the batch is out, and status says why, which unit, and when
    it resolves; after it, the batch is observed and the next one handed out."""
    clock = Clock()
    with _create(where, clock, outcome_window=3600.0) as exp:
        first = exp.assign(3)
        exp.record(first["unit"][:2], [1, 0])
        rest = exp.assign(20_000)
        exp.record(rest["unit"], np.zeros(len(rest)))
        clock.t += 1800
        stalled = exp.assign(100)
        assert stalled.empty and "1 still waiting" in stalled.attrs["reason"]
        status = exp.status()
        (warning,) = [w for w in status.warnings if w.startswith("assign hands out no unit")]
        unit3 = int(first["unit"][2])
        assert f"unit {unit3}" in warning and "1 unit(s) without an outcome" in warning
        assert status.waiting_units.resolves_at in warning
        assert status.waiting_units.resolves_at.startswith("2023-11-14T23:13:20")  # T0 + 1 h
        assert status.batches_observed == 0
        clock.t = T0 + 3600
        more = exp.assign(100)
        assert len(more) == 100 and (more["batch"] == 1).all()
        status = exp.status()
        assert status.batches_observed == 1
        assert not [w for w in status.warnings if w.startswith("assign hands out")]
        assert exp.units(ids=[unit3])["imputed"].tolist() == [True]
        assert exp.verify() == len(first) + len(rest) + len(more)


def test_an_assign_whose_client_timed_out_resolves_by_the_window(where):
    """Units nobody knows (the client never read the answer) resolve when their window
    closes, so the batch completes."""
    clock = Clock()
    with _create(where, clock, outcome_window=30.0) as exp:
        lost = exp.assign(50)  # the client timed out: nobody answers these
        seen = exp.assign(20_000)
        exp.record(seen["unit"], np.ones(len(seen)))
        assert exp.assign(10).empty
        clock.t += 30
        assert len(exp.assign(10)) == 10
        assert exp.units(ids=lost["unit"])["imputed"].all()


# -- the resolved prefix ------------------------------------------------------------------------
def _per_arm(frame):
    return {arm: group["unit"].tolist() for arm, group in frame.groupby("arm")}


def _below(units, cursor):
    """Per arm, how many of ``units`` (assign's frame) have an id below ``cursor``."""
    ids = units["unit"].to_numpy()
    return {arm: int((ids[units["arm"].to_numpy() == arm] < cursor).sum())
            for arm in ("a", "b", "c")}


def test_status_counts_every_arm_up_to_the_first_unit_of_any_arm_still_waiting(where):
    """One cursor for all arms (issue 23): each arm counts its units before the first unit
    of *any* arm still waiting, so an arm whose own units all answered is still not counted
    past another arm's waiting unit."""
    clock = Clock()
    with _create(where, clock, outcome_window=100.0) as exp:
        units = exp.assign(60)
        per_arm = _per_arm(units)
        # arm a: its 3rd unit waits; b: its 1st; c: all answered
        wait_a, wait_b = per_arm["a"][2], per_arm["b"][0]
        answered = [u for u in units["unit"] if u not in (wait_a, wait_b)]
        exp.record(answered, np.ones(len(answered)))
        status = exp.status()
        arms = status.arms
        want = _below(units, min(wait_a, wait_b))
        assert arms["counted"].tolist() == [want["a"], want["b"], want["c"]]
        assert want["c"] < len(per_arm["c"])  # c's own units all answered, not all counted
        assert (arms["recorded"] == [len(per_arm["a"]) - 1, len(per_arm["b"]) - 1,
                                     len(per_arm["c"])]).all()
        assert status.uncounted == len(answered) - sum(want.values())
        assert f"{status.uncounted} recorded outcome(s) not yet counted" in str(status)
        assert "a unit still waiting" in str(status)
        old = exp.status(count="recorded").arms
        assert (old["counted"] == old["recorded"]).all()
        exp.record([wait_a], [0])  # G moves to b's waiting unit, or stays there
        arms = exp.status().arms
        want = _below(units, wait_b)
        assert arms["counted"].tolist() == [want["a"], want["b"], want["c"]]
        assert want["b"] == 0 and np.isnan(arms.loc["b", "mean"])
        clock.t += 100  # b's first unit resolves as 0: every arm's prefix reaches its end
        arms = exp.status().arms
        assert arms["counted"].tolist() == [len(per_arm[k]) for k in "abc"]
        assert arms.loc["b", "imputed"] == 1
        assert arms.loc["a", "mean"] == pytest.approx(1 - 1 / len(per_arm["a"]))
        assert exp.status().uncounted == 0
        assert exp.verify() == 60


def test_an_arms_outcomes_behind_another_arms_waiting_unit_wait_for_it(where):
    """The first unit assigned waits; every other arm's outcomes, all recorded, stay
    uncounted until it resolves, and then one call moves every arm at once."""
    clock = Clock()
    with _create(where, clock, outcome_window=100.0) as exp:
        units = exp.assign(90)
        first = int(units["unit"].min())
        arm0 = units.loc[units["unit"] == first, "arm"].item()
        rest = [u for u in units["unit"] if u != first]
        exp.record(rest, np.ones(len(rest)))
        status = exp.status()
        assert (status.arms["counted"] == 0).all() and status.uncounted == 89
        exp.record([first], [1])  # one call: G passes every arm's units
        arms = exp.status().arms
        assert arms["counted"].tolist() == [len(_per_arm(units)[k]) for k in "abc"]
        assert (arms["mean"] == 1.0).all() and exp.status().uncounted == 0
        assert arm0 in "abc"


def test_the_counted_sets_equal_a_recount_after_random_out_of_order_resolutions(where):
    """Random record / expire / window sequences in any order: after each call every arm's
    counted outcomes, imputed zeros, mean and guardrail difference equal a brute-force
    recount from the units table — its units with id below the first unit of any arm still
    waiting."""
    rng = np.random.default_rng(23)
    clock = Clock()
    rail = {"metric": "latency", "rule": "max_increase", "margin": 500, "range": [0, 1000]}
    latency: dict[int, float] = {}
    with _create(where, clock, outcome_window=50.0, guardrails=[rail]) as exp:
        for step in range(12):
            if step == 0 or rng.random() < 0.5:
                exp.assign(int(rng.integers(1, 40)))
            table = exp.units()
            open_ = table[table["reward"].isna() & table["expired_at"].isna()]
            if len(open_):
                pick = rng.choice(open_["unit"].to_numpy(),
                                  size=int(rng.integers(1, len(open_) + 1)), replace=False)
                cut = int(rng.integers(0, len(pick) + 1))
                if cut:
                    values = rng.uniform(0, 1000, cut)
                    latency.update(zip(pick[:cut].tolist(), values.tolist(), strict=True))
                    exp.record(pick[:cut].tolist(), rng.integers(0, 2, cut).astype(float),
                               metrics={"latency": values.tolist()})
                if cut < len(pick) and rng.random() < 0.5:
                    exp.expire(pick[cut:].tolist())
            clock.t += float(rng.choice([0.0, 20.0, 60.0]))
            status = exp.status()
            table = exp.units()
            waiting = table[table["reward"].isna() & table["expired_at"].isna()]
            G = int(waiting["unit"].min()) if len(waiting) else int(table["unit"].max()) + 1
            below = table[table["unit"] < G]
            seen = {}
            for arm in "abc":
                mine = below[below["arm"] == arm]
                assert status.arms.loc[arm, "counted"] == mine["reward"].notna().sum()
                assert status.arms.loc[arm, "imputed"] == mine["imputed"].sum()
                if mine["reward"].notna().any():
                    assert status.arms.loc[arm, "mean"] == pytest.approx(
                        mine["reward"].mean())
                seen[arm] = [latency[u] for u in mine["unit"] if u in latency]
            for _, row in status.guardrails.iterrows():
                if seen[row["arm"]] and seen["a"] and row["arm"] != "a":
                    assert row["diff"] == pytest.approx(
                        np.mean(seen[row["arm"]]) - np.mean(seen["a"]))
            recorded = table["reward"].notna().sum()
            assert status.uncounted == recorded - below["reward"].notna().sum()
            exp.verify()  # the stored prefix equals verify's recount from the units


def test_status_refuses_an_unknown_count_by_name(tmp_path):
    with Experiment.create(tmp_path / "e.sqlite", **DEFINITION) as exp:
        with pytest.raises(ExperimentError, match="count must be 'resolved'"):
            exp.status(count="all")


def test_guardrails_count_the_prefix_and_pause_when_the_window_resolves_it(where):
    """Values far beyond the margin recorded after each arm's first waiting unit do not pause
    the experiment (they are not counted yet); once the window resolves the waiting units,
    the next call counts them and the guardrail pauses it."""
    clock = Clock()
    rail = {"metric": "latency", "rule": "max_increase", "margin": 10, "range": [0, 1000]}
    with _create(where, clock, outcome_window=100.0, guardrails=[rail]) as exp:
        units = exp.assign(600)
        per_arm = _per_arm(units)
        waiting = [us[0] for us in per_arm.values()]
        others = [u for us in per_arm.values() for u in us[1:]]
        arm_of = dict(zip(units["unit"], units["arm"], strict=True))
        latency = [1000.0 if arm_of[u] == "b" else 0.0 for u in others]
        exp.record(others, np.ones(len(others)), metrics={"latency": latency})
        status = exp.status()
        assert status.paused is None and status.guardrails["diff"].isna().all()
        assert exp.status(count="recorded").guardrails["breached"].any()
        clock.t += 100
        assert exp.assign(1).attrs["reason"].startswith("the experiment is paused")
        assert exp.units(ids=waiting)["imputed"].all()


def test_replay_reaches_the_same_state_and_verify_checks_the_prefix(where):
    clock = Clock()
    with _create(where, clock, outcome_window=5.0) as exp:
        rng = np.random.default_rng(3)
        for _ in range(40):
            units = exp.assign(600)["unit"].to_numpy()
            keep = units[rng.random(units.size) < 0.7]
            if keep.size:
                exp.record(keep, (rng.random(keep.size) < 0.3).astype(float))
            clock.t += 2
        before = exp.status()
        decisions = exp.decisions()
        assert before.batches_observed >= 1 and before.arms["imputed"].sum() > 0
    with where.open(clock=clock) as again:
        after = again.status()
        assert after.arms.equals(before.arms)
        assert (after.batches_observed, after.pulls_observed) == (before.batches_observed,
                                                                  before.pulls_observed)
        assert again.decisions().same_as(decisions)
        assert again.verify() > 0
    # read later, read-only: nothing is resolved (or written); the overdue units are named
    with where.open(readonly=True, clock=Clock(clock.t + 3600)) as late:
        status = late.status()
        assert status.arms.equals(before.arms)
        assert any("past their outcome window" in w for w in status.warnings)
    conn = where.connect()
    try:  # an edit of the prefix's sums is found by verify
        conn.execute("UPDATE prefix SET n = n + 1 WHERE arm = 0")
        conn.commit()
    finally:
        conn.close()
    with where.open(clock=clock) as edited:
        with pytest.raises(ExperimentError, match="resolved prefix"):
            edited.verify()


def test_a_format_5_file_is_upgraded_on_a_writable_open_and_refused_read_only(tmp_path):
    """A file written before outcome windows: its units wait as before (no window), status
    counts its prefix as the upgrade built it, and the read-only open asks for one writable
    open first."""
    path = tmp_path / "old.sqlite"
    with Experiment.create(path, **DEFINITION) as exp:
        units = exp.assign(30)
        exp.record(units["unit"][1:], np.ones(29))
        expected = exp.status().arms[["assigned", "recorded", "counted"]]
    _downgrade(path)
    with pytest.raises(ExperimentError, match=r"format 5.*open it once for writing"):
        Experiment.open(path, readonly=True)
    with Experiment.open(path, clock=Clock(T0 + 10 * 86_400)) as exp:
        status = exp.status()
        assert status.outcome_window is None and "outcome window: none" in status.window_note
        assert status.arms[["assigned", "recorded", "counted"]].equals(expected)
        assert exp.units(unanswered=True).shape[0] == 1  # no window: it still waits
        exp.verify()
    with Experiment.open(path, readonly=True) as exp:
        assert exp.status().outcome_window is None


def test_a_format_8_file_has_its_prefix_rebuilt_to_the_one_cursor_on_upgrade(tmp_path):
    """Format 8 summed each arm up to its own first waiting unit; format 9's sums mean
    something else, so the upgrade rebuilds them from the units (here: format 8's sums, put
    back by hand, counted the other arms past the first unit, which waits)."""
    path = tmp_path / "old.sqlite"
    with Experiment.create(path, **DEFINITION) as exp:
        units = exp.assign(60)
        first = int(units["unit"].min())
        exp.record([u for u in units["unit"] if u != first], np.ones(59))
        assert (exp.status().arms["counted"] == 0).all()
    arm_of = dict(zip(units["unit"], units["arm_index"], strict=True))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM prefix").fetchone()[0] == 0  # G: the first unit
    # what format 8 stored: each arm up to its own first waiting unit (the other arms: all)
    for arm in range(3):
        n = sum(1 for u, a in arm_of.items() if a == arm and u != first)
        conn.execute("INSERT INTO prefix (arm, cursor, n, reward, reward_sq) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (arm, first if arm == arm_of[first] else max(arm_of) + 1, n, n, n))
    conn.execute("ALTER TABLE units DROP COLUMN segment")  # format 11's
    conn.execute("UPDATE meta SET value = '8' WHERE key = 'format'")
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match=r"format 8.*open it once for writing"):
        Experiment.open(path, readonly=True)
    with Experiment.open(path) as exp:
        assert (exp.status().arms["counted"] == 0).all()
        exp.verify()
        exp.record([first], [1.0])
        assert exp.status().arms["counted"].sum() == 60
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0] == "11"
    conn.close()


def _downgrade(path: Path) -> None:
    """The file as banditkit's format 5 wrote it: no imputed column, no prefix tables, no
    window in its meta."""
    conn = sqlite3.connect(path)
    try:
        for statement in DOWNGRADE_TO_5:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


# -- value-dependent reporting: the fast version of benchmarks/bench_reporting.py -------------
_spec = importlib.util.spec_from_file_location(
    "bench_reporting", Path(__file__).resolve().parent.parent / "benchmarks" / "bench_reporting.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_reporting"] = bench  # its dataclasses look their module up there
_spec.loader.exec_module(bench)


def test_conversions_at_once_and_zeros_at_the_window_give_no_false_verdicts(tmp_path):
    """30 null experiments (4 arms at 0.3, BatchedThompson) through Experiment, conversions
    recorded in the call of their assignment and zeros only when the window (6 calls) closes:
    counting the resolved prefix gives at most 4 runs with a false verdict (alpha =
    0.05: 1.5 expected; 5 or more has probability 0.02 under 0.05); counting everything
    recorded (the behaviour before windows) gives at least 6 (5 of 12 in a trial run)."""
    setting = bench.Setting("binary", ticks=16, per_tick=200, batch=400, window=6, rate=0.3)
    results = [bench.run_one(setting, 11, r, tmp_path) for r in range(30)]
    resolved = sum(r.resolved is not None for r in results)
    recorded = sum(r.recorded is not None for r in results)
    assert resolved <= 4, (resolved, recorded)
    assert recorded >= 6, (resolved, recorded)
