"""Experiment.ingest: exposures and outcomes from the edge (banditkit.live.outcomes.ingest)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.client import Assigner
from edge_support import MEANS_DEFAULT, feed_assign, feed_edge

MEANS = MEANS_DEFAULT
ALGORITHMS = [
    ("ReplicableElimination", ["a", "b", "c"], {"rho": 0.3, "beta_floor": False}, 1500),
    ("RAGE", np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.3]]), {"delta": 0.1}, 700),
    ("BatchedThompson", ["a", "b", "c"], {"batch_size": 100, "draws": 2000}, 400),
]


@pytest.mark.parametrize("algorithm, arms, params, horizon", ALGORITHMS,
                         ids=[a[0] for a in ALGORITHMS])
def test_the_same_decisions_as_assign_and_record(tmp_path, algorithm, arms, params, horizon):
    made = []
    for name in ("assign.db", "edge.db"):
        made.append(Experiment.create(tmp_path / name, algorithm=algorithm, arms=arms,
                                      seed=5, horizon=horizon, params=params))
    served, edge = made
    with served, edge:
        feed_assign(served, MEANS)
        feed_edge(edge, MEANS)
        a, b = served.decisions(), edge.decisions()
        assert a.same_as(b) and a.n_batches >= 2
        # every slot of every batch filled, each by a unit of the slot's arm
        ua, ub = served.units(), edge.units()
        slots = [sorted(map(tuple, u.loc[u["kind"] == "algorithm",
                                          ["batch", "slot", "arm"]].to_numpy().tolist()))
                 for u in (ua, ub)]
        assert slots[0] == slots[1]
        sa, sb = served.status(), edge.status()
        assert sa.recommendation == sb.recommendation
        assert sa.arms["recorded"].tolist() == sb.arms["recorded"].tolist()


def _fresh(tmp_path, name="e.db", **kw):
    return Experiment.create(tmp_path / name, algorithm="BatchedElimination",
                             arms=["control", "b", "c"], seed=2, horizon=600,
                             params={"q": 4.0}, **kw)


def _exposures(e, keys):
    assigner = Assigner(e.allocation())
    return [assigner.exposure(k, assigner.assign(k)) for k in keys]


def test_duplicates_reordering_and_late_outcomes(tmp_path):
    with _fresh(tmp_path) as e:
        exposures = _exposures(e, [f"k{i}" for i in range(10)])
        # outcomes first: they wait for their exposure
        early = e.ingest([], [{"key": "k0", "value": 1}, {"key": "k1", "value": 0}])
        assert early.outcomes["waiting"] == 2 and early.new == 2
        assert e.ingest([], [{"key": "k0", "value": 1}]).repeated == 1
        first = e.ingest(exposures + exposures[:3], [{"key": "k2", "value": 1}])
        assert first.exposures["new"] == 10 and first.exposures["repeated"] == 3
        assert first.outcomes["recorded"] == 3  # k2, and k0 and k1 that waited
        again = e.ingest(exposures, [{"key": "k2", "value": 1}])
        assert again.new == 0 and again.repeated == 11 and again.refused == 0
        units = e.units()
        assert len(units) == 10 and units["reward"].notna().sum() == 3
        # a different value for a recorded key: refused alone, the others kept
        mixed = e.ingest([], [{"key": "k2", "value": 0}, {"key": "k3", "value": 1}])
        assert mixed.refused == 1 and mixed.outcomes["recorded"] == 1
        assert "already has outcome 1" in mixed.refusals[0].reason
        assert mixed.refusals[0].index == 0 and mixed.refusals[0].key == "k2"


def test_refusals_are_per_event_and_broken_clients_are_flagged(tmp_path):
    with _fresh(tmp_path) as e:
        good = _exposures(e, ["a", "b"])
        version = good[0]["version"]
        other = next(arm for arm in ("control", "b", "c") if arm != good[0]["arm"])
        bad = [
            {"key": "x1", "arm": "nope", "version": version},
            {"key": "", "arm": "b", "version": version},
            {"key": "x3", "arm": "b", "version": "feedfeedfeedfeed"},
            {"key": "a", "arm": other, "version": version},  # a key on two arms
            {"key": "x5", "arm": "b", "version": version, "colour": "red"},
            {"key": "x6", "arm": "b", "version": version, "time": "yesterday"},
            "not an object",
        ]
        result = e.ingest(good + bad, [{"key": "a", "value": float("nan")},
                                       {"key": "b"}, {"key": "a", "value": 5.0}])
        reasons = {(r.kind, r.index): r.reason for r in result.refusals}
        assert result.exposures["new"] == 2 and result.exposures["refused"] == 7
        assert "arm must be one of" in reasons[("exposure", 2)]
        assert "key has 0 characters" in reasons[("exposure", 3)]
        assert "never published" in reasons[("exposure", 4)]
        assert "exposed on arm" in reasons[("exposure", 5)]
        assert "unknown field" in reasons[("exposure", 6)]
        assert "time must be" in reasons[("exposure", 7)]
        assert "an exposure is an object" in reasons[("exposure", 8)]
        assert "value must be a finite number" in reasons[("outcome", 0)]
        assert "value is required" in reasons[("outcome", 1)]
        assert "rewards must lie in [0, 1]" in reasons[("outcome", 2)]
        # an arm the version did not offer
        e.pause("test")
        paused = e.allocation()
        refused = e.ingest([{"key": "z", "arm": "b", "version": paused.version}], [])
        assert "control only" in refused.refusals[0].reason
        e.resume()
        version = e.allocation().version  # the control's 4 slots filled: its weight is 0
        filled = e.ingest([{"key": f"c{i}", "arm": "control", "version": version}
                           for i in range(4)], [])
        assert filled.exposures["new"] == 4
        weights = e.allocation()
        assert weights.weights[0] == 0
        out = e.ingest([{"key": "y", "arm": "control", "version": weights.version}], [])
        assert "was not offered" in out.refusals[0].reason
        status = e.status()
        assert any("looks broken" in w and "another arm" in w and "did not offer" in w
                   for w in status.warnings)


def test_outcome_window_applies_from_the_exposure_time(tmp_path):
    clock = [1_000_000.0]
    with _fresh(tmp_path, clock=lambda: clock[0], outcome_window=60, missing="zero") as e:
        x = _exposures(e, ["a", "b", "c"])
        for event in x:
            event["time"] = clock[0] - 10
        e.ingest(x, [{"key": "a", "value": 1, "time": clock[0] + 30}])
        late = e.ingest([], [{"key": "b", "value": 1, "time": clock[0] + 55}])
        assert "after the outcome window" in late.refusals[0].reason
        clock[0] += 3600  # c's window closed unanswered: 0 was recorded by the rule
        c = e.ingest([], [{"key": "c", "value": 1}])
        assert "closed before its outcome came" in c.refusals[0].reason
        # an exposure arriving long after its time, with its outcome: still recorded
        old = _exposures(e, ["d"])
        old[0]["time"] = clock[0] - 50
        ok = e.ingest(old, [{"key": "d", "value": 1, "time": clock[0] - 20}])
        assert ok.outcomes["recorded"] == 1 and ok.refused == 0


def test_propensity_log_and_one_feeding_path(tmp_path):
    with _fresh(tmp_path) as e:
        first = e.allocation()
        result = e.ingest(_exposures(e, [f"k{i}" for i in range(5)]), [])
        second = e.allocation()  # 7 slots left: other weights than the batch's thirds
        assert second.weights != first.weights
        more = e.ingest(_exposures(e, [f"k{i}" for i in range(5, 20)]), [])
        units = e.units()
        assert set(units["kind"]) == {"algorithm", "overflow"}
        kinds = units["kind"].value_counts()
        # the salt (from the creation time) decides how many of the 20 keys find a slot of
        # their arm among the 12: at least 8 are overflow
        assert result.exposures["algorithm"] + more.exposures["algorithm"] == \
            kinds["algorithm"] <= 12
        assert result.exposures["overflow"] + more.exposures["overflow"] == \
            kinds["overflow"] >= 8
        assert result.exposures["rollout"] == more.exposures["rollout"] == 0
        # the propensity log: each exposure's arm's weight in the version it was made under
        expected = [(first if i < 5 else second).weights[a]
                    for i, a in enumerate(units["arm_index"])]
        assert units["propensity"].tolist() == pytest.approx(expected)
        with pytest.raises(ExperimentError, match="fed from the edge"):
            e.assign(1)
    with _fresh(tmp_path, "served.db") as s:
        s.assign(1)
        with pytest.raises(ExperimentError, match="assigned by assign"):
            s.ingest(_exposures(s, ["k"]), [])


def test_whole_call_refusals_name_the_parameter(tmp_path):
    with _fresh(tmp_path) as e:
        with pytest.raises(ExperimentError, match="exposures must be a list"):
            e.ingest({"key": "a"}, [])
        with pytest.raises(ExperimentError, match="outcomes must be a list"):
            e.ingest([], "k,1")
        with pytest.raises(ExperimentError, match="at most 100000"):
            e.ingest([{}] * 100_001, [])
        with pytest.raises(ExperimentError, match="who"):
            e.ingest([], [], who="")
    with Experiment.open(tmp_path / "e.db", readonly=True) as r:
        with pytest.raises(ExperimentError, match="read-only"):
            r.ingest([], [])
    # the edge cannot fill slots drawn i.i.d. from the internal randomness: no allocation is
    # published, and an exposure under a version of its own making is refused before anything
    # is kept
    with Experiment.create(tmp_path / "g.db", algorithm="GBAI", arms=np.eye(3), seed=0,
                           horizon=3000) as g:
        with pytest.raises(ExperimentError, match=r"allocation: GBAI draws each batch's pulls "
                           r"i\.i\.d\..*replicability.*assign/record"):
            g.allocation()
        with pytest.raises(ExperimentError, match=r"ingest: GBAI draws each batch's pulls "
                           r"i\.i\.d\..*drawn, not planned"):
            g.ingest([{"key": "k", "arm": "0", "version": "v"}], [])
        assert len(g.units()) == 0 and g.assign(1) is not None  # still served by assign


def test_costs_of_a_constrained_policy_come_with_the_outcomes(tmp_path):
    """An experiment with thresholds fed from the edge: each outcome carries its costs (one per
    threshold), kept with an outcome that waits for its exposure; the costs reach the same
    totals as through record, and an outcome without them (or with them, unconstrained) is
    refused alone."""
    with Experiment.create(tmp_path / "edge.db", algorithm="DEBORAS", arms=["a", "b"], seed=3,
                           horizon=3000, thresholds=[0.5]) as edge:
        keys = [f"k{i}" for i in range(6)]
        exposures = _exposures(edge, keys)
        costs = {k: 0.1 * i for i, k in enumerate(keys)}
        rewards = {k: i % 2 for i, k in enumerate(keys)}
        early = edge.ingest([], [{"key": "k0", "value": 0, "costs": [costs["k0"]]}])
        assert early.outcomes["waiting"] == 1
        result = edge.ingest(exposures, [{"key": k, "value": rewards[k], "costs": costs[k]}
                                         for k in keys[1:4]]
                             + [{"key": "k4", "value": 0}, {"key": "k5", "value": 1,
                                                             "costs": [0.1, 0.2]}])
        assert result.outcomes["recorded"] == 4, result.as_json()  # k0 (waiting) and k1..k3
        reasons = {r.key: r.reason for r in result.refusals}
        assert set(reasons) == {"k4", "k5"}
        assert "DEBORAS records 1 cost(s) with each outcome" in reasons["k4"]
        assert "got 2" in reasons["k5"]
        units = edge.units().set_index("key")
        for k in keys[:4]:
            assert units.loc[k, "reward"] == rewards[k]
            assert json.loads(units.loc[k, "costs"]) == pytest.approx([costs[k]])
        # the status' mean cost per arm is that of the units recorded on it
        recorded = units[units["reward"].notna()]
        means = {arm: [costs[k] for k in recorded.index[recorded["arm"] == arm]]
                 for arm in ("a", "b")}
        arms = edge.status().arms
        for arm, values in means.items():
            if values:
                assert arms.loc[arm, "cost_1"] == pytest.approx(sum(values) / len(values))
    with _fresh(tmp_path) as e:  # no thresholds: costs refused by name
        x = _exposures(e, ["a"])
        refused = e.ingest(x, [{"key": "a", "value": 1, "costs": [0.5]}]).refusals
        assert len(refused) == 1 and "records no costs" in refused[0].reason
        bad = e.ingest([], [{"key": "b", "value": 1, "costs": "high"}]).refusals
        assert "costs must be a number or a list of numbers" in bad[0].reason


def test_cli_ingest_reads_a_csv_and_lists_the_refused_rows(tmp_path, capsys):
    import csv

    from banditkit.cli import main

    path = tmp_path / "shop.db"
    assert main(["experiment", "create", str(path), "--algorithm", "BatchedElimination",
                 "--arms", "control,b,c", "--seed", "1", "--horizon", "600",
                 "--param", "q=4"]) == 0
    with Experiment.open(path) as e:
        assigner = Assigner(e.allocation())
    rows = [["key", "arm", "version", "value", "time"]]
    for i in range(10):
        arm = assigner.assign(f"u{i}")
        rows.append([f"u{i}", arm, assigner.version, int(arm == "c"), 1764000000 + i])
    rows += [["u99", "zzz", assigner.version, "", ""], ["u98", "", "", "x", ""]]
    with (tmp_path / "events.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    capsys.readouterr()
    assert main(["experiment", "ingest", str(path), str(tmp_path / "events.csv")]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ingested 20 new event(s), 0 repeated, 2 refused")
    assert "line 12: exposure refused: arm must be one of" in err
    assert "line 13: outcome refused: value must be a finite number, got 'x'" in err
    assert main(["experiment", "ingest", str(path), str(tmp_path / "events.csv")]) == 0
    assert "0 new event(s), 20 repeated" in capsys.readouterr()[0]
    for content, word in (("", "no rows"), ("key,colour\nk,red\n", "needs a column key"),
                          ("key,arm\nk,b\n", "no version column")):
        (tmp_path / "bad.csv").write_text(content)
        assert main(["experiment", "ingest", str(path), str(tmp_path / "bad.csv")]) == 2
        assert word in capsys.readouterr()[1]
    assert main(["experiment", "ingest", str(path), str(tmp_path / "none.csv")]) == 2
    assert "argument FILE: no file" in capsys.readouterr()[1]


def test_null_experiments_through_the_edge_keep_their_verdicts_valid(tmp_path):
    """The fast version of benchmarks/bench_edge.py's validity section (300 runs there):
    exposures up to two versions late, outcomes in value-dependent order, peeking every
    other round; at 5% per run, 3 or more false verdicts in 6 runs has probability 0.2%
    (the rewards are seeded; the arms follow each experiment's salt, from its creation time)."""
    from edge_support import null_run

    results = [null_run(tmp_path / f"{run}.db", 11, run, horizon=300, batch_size=100,
                        chunk=50, look_every=2) for run in range(6)]
    assert sum(r["false"] for r in results) <= 2
    assert all(r["versions"] >= 3 and r["units"] >= 300 for r in results)


def test_metric_parts_and_guardrail_metrics_come_with_the_outcomes(tmp_path):
    """A ratio experiment's denominators and a guardrail's metric ride on each outcome (also
    one that waits for its exposure); an outcome without them is refused alone."""
    rail = {"metric": "latency", "rule": "max_increase", "margin": 0.1, "range": [0, 1]}
    with Experiment.create(tmp_path / "r.db", algorithm="FixedAllocation",
                           arms=["control", "treatment"], seed=0, reward_type="continuous",
                           params={"batch_size": 40}, verdicts={"ratio": True},
                           guardrails=[rail]) as e:
        exposures = _exposures(e, [f"k{i}" for i in range(6)])
        early = e.ingest([], [{"key": "k0", "value": 3.0, "denominator": 2.0,
                               "metrics": {"latency": 0.2}}])
        assert early.outcomes["waiting"] == 1
        outcomes = [{"key": f"k{i}", "value": float(i), "denominator": 1.0 + i,
                     "metrics": {"latency": 0.1}} for i in range(1, 4)]
        outcomes += [{"key": "k4", "value": 1.0, "metrics": {"latency": 0.1}},  # no denominator
                     {"key": "k5", "value": 1.0, "denominator": 1.0}]  # no latency
        result = e.ingest(exposures, outcomes)
        assert result.outcomes["recorded"] == 4 and result.refused == 2
        reasons = {r.key: r.reason for r in result.refusals}
        assert "denominators are required" in reasons["k4"]
        assert "latency" in reasons["k5"]
        units = e.units().set_index("key")
        assert units.loc["k0", "reward"] == 3.0 and np.isnan(units.loc["k4", "reward"])
    import sqlite3

    stored = dict(sqlite3.connect(tmp_path / "r.db").execute(
        "SELECT k.key, u.denominator FROM units u JOIN keys k ON k.unit = u.id"))
    assert stored["k0"] == 2.0 and stored["k3"] == 4.0 and stored["k4"] is None


def test_a_format_9_experiment_gets_the_edge_tables_on_a_writable_open(tmp_path):
    """Format 10 added the edge's tables; a format 9 file (without them) is brought to 10 by a
    writable open, its prefix kept, and is then fed from the edge."""
    import sqlite3

    path = tmp_path / "nine.sqlite"
    Experiment.create(path, algorithm="FixedAllocation", arms=["a", "b"], seed=1,
                      params={"batch_size": 4}).close()
    conn = sqlite3.connect(path)
    for table in ("edge_versions", "edge_units", "edge_slots", "edge_outcomes", "edge_flags"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("ALTER TABLE units DROP COLUMN segment")  # format 11's
    conn.execute("UPDATE meta SET value = '9' WHERE key = 'format'")
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match=r"format 9.*open it once for writing"):
        Experiment.open(path, readonly=True)
    with Experiment.open(path) as e:
        version = e.allocation().version
        assert e.ingest([{"key": "k", "arm": "a", "version": version}]).new == 1
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0] == "11"
    conn.close()
