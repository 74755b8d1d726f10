"""Issue 37 §2: segments in the metric family (readout/segments.py). Units carry a segment
label declared at create; ``Experiment.family()`` compares the arms within each segment with
Holm across the whole family; the label is stored in ``units.segment`` (format 11, an older
experiment upgraded by a writable open)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.live.errors import ExperimentError
from banditkit.live.readout.family import holm
from banditkit.live.store.schema import FORMAT
from banditkit.rng import stream

LABELS = ["US", "EU", "other"]


def _counted(units_ids, arms, labels, rewards, first_waiting, fixes):
    """Per (label, arm) the rewards counted: ids below the first unit still waiting, the
    corrected value in place of the recorded one."""
    out: dict = {}
    for u, a, s, r in zip(units_ids, arms, labels, rewards, strict=True):
        if u < first_waiting:
            out.setdefault((s, a), []).append(fixes.get(u, r))
    return out


def test_the_family_compares_the_arms_in_each_declared_segment(where, capsys):
    """Three arms under BatchedThompson, three declared segments with different base rates
    and a lift of arm "a" only in "US": family() has the reward overall and per segment
    (3 × 2 = 6 … 8 members), each segment's difference equal to an independent recomputation
    over the resolved prefix (a unit left waiting stops the counting; a correction counted),
    Holm over all of them; CLI text and JSON and the page show the segments. On SQLite and
    PostgreSQL."""
    from banditkit.cli import main
    from banditkit.service.page import render_page

    rng = np.random.default_rng(4)
    base = {"US": 0.1, "EU": 0.3, "other": 0.2}
    ids, arms, labels, rewards = [], [], [], []
    with where.create(algorithm="BatchedThompson", arms=["control", "a", "b"], seed=2,
                      horizon=3000, reward_type="binary",
                      params={"batch_size": 1000, "draws": 100, "control_floor": 0.3},
                      verdicts={"segments": LABELS, "sequence": "asymptotic",
                                "tune_n": 300}) as exp:
        for _ in range(2):
            seg = rng.choice(LABELS, 1000).tolist()
            got = exp.assign(1000, segments=seg)
            rate = np.array([base[s] + (0.25 if s == "US" and a == "a" else 0.0)
                             for s, a in zip(seg, got["arm"], strict=True)])
            r = (rng.random(1000) < rate) * 1.0
            ids += got["unit"].tolist()
            arms += got["arm"].tolist()
            labels += seg
            rewards += r.tolist()
        waiting = ids[1500]  # the resolved prefix ends here
        keep = [i for i, u in enumerate(ids) if u != waiting]
        exp.record([ids[i] for i in keep], [rewards[i] for i in keep])
        fixed = ids[3]
        exp.correct([fixed], [1.0 - rewards[3]], reason="test")
        frame = exp.family(alpha=0.05)
        html = render_page(exp, title="segments")
    assert frame.attrs["family_size"] == 8
    assert frame[["segment", "arm"]].values.tolist() == [
        [s, a] for s in ["all", *LABELS] for a in ["a", "b"]]
    counted = _counted(ids, arms, labels, rewards, waiting, {fixed: 1.0 - rewards[3]})
    for row in frame[frame["segment"] != "all"].itertuples():
        x, c = np.array(counted[(row.segment, row.arm)]), np.array(
            counted[(row.segment, "control")])
        assert row.diff == pytest.approx(x.mean() - c.mean(), rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(frame["p_holm"], holm(frame["p"].to_numpy()))
    us_a = frame[(frame["segment"] == "US") & (frame["arm"] == "a")].iloc[0]
    assert us_a["verdict"] == "better"
    assert (frame.loc[frame["segment"].isin(["EU", "other"]), "verdict"] == "undecided").all()
    assert "<h2>Metric family</h2>" in html and "<td>US</td>" in html
    cli = ["experiment", "status", where.target] + (
        [] if where.name is None else ["--name", where.name])
    assert main([*cli, "--family", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["family"]["rows"]
    assert [r["segment"] for r in rows] == ["all", "all", "US", "US", "EU", "EU", "other",
                                            "other"]
    assert main([*cli, "--family"]) == 0
    assert "8 differences (4 metric-segment pairs" in capsys.readouterr().out


def test_segments_are_declared_at_create_and_refused_otherwise(tmp_path):
    def create(name, **verdicts):
        return Experiment.create(tmp_path / f"{name}.sqlite", algorithm="FixedAllocation",
                                 arms=["c", "t"], seed=0, reward_type="binary",
                                 params={"batch_size": 10}, verdicts=verdicts)

    for bad in (["US", "US"], [], ["x" * 61], "US", [1]):
        with pytest.raises(ExperimentError, match=r"verdicts\['segments'\] must be a list"):
            create("bad", segments=bad)
    with create("none") as exp, pytest.raises(ExperimentError,
                                              match="segments: this experiment declared no"):
        exp.assign(2, segments=["US", "US"])
    with create("some", segments=["US", "EU"]) as exp:
        with pytest.raises(ExperimentError, match=r"segments: label 1 is 'FR', not one of "
                                                  r"the declared segments \['US', 'EU'\]"):
            exp.assign(2, segments=["US", "FR"])
        with pytest.raises(ExperimentError, match=r"segments must be a list of labels, one "
                                                  r"per unit \(2\)"):
            exp.assign(2, segments=["US"])
        assert exp.units().empty  # refused before any work
        got = exp.assign(2, keys=["k1", "k2"], segments=["EU", "US"])
        # a sticky key's unit keeps its first label
        again = exp.assign(1, keys=["k1"], segments=["US"])
        assert again["unit"].tolist() == got["unit"].tolist()[:1]
        assert exp.verdict_spec.as_json()["segments"] == ["US", "EU"]
    stored = dict(sqlite3.connect(tmp_path / "some.sqlite").execute(
        "SELECT id, segment FROM units"))
    assert stored == {got["unit"][0]: "EU", got["unit"][1]: "US"}


def test_a_format_10_experiment_gets_the_segment_column_on_a_writable_open(tmp_path):
    path = tmp_path / "ten.sqlite"
    with Experiment.create(path, algorithm="FixedAllocation", arms=["a", "b"], seed=1,
                           reward_type="binary", params={"batch_size": 4}) as exp:
        exp.assign(3)
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE units DROP COLUMN segment")
    conn.execute("UPDATE meta SET value = '10' WHERE key = 'format'")
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match=r"format 10.*open it once for writing"):
        Experiment.open(path, readonly=True)
    with Experiment.open(path) as exp:
        assert len(exp.units()) == 3
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0] \
        == str(FORMAT) == "11"
    assert [r[0] for r in conn.execute("SELECT segment FROM units")] == [None] * 3
    conn.close()


def test_false_verdicts_across_segments_under_adaptive_allocation(tmp_path):
    """30 null experiments (every arm equal within each segment; segments at base rates 0.05,
    0.2 and 0.5), BatchedThompson with a control floor of 0.2 moving units to the arms that
    lead by chance, three segments, four looks of 400 units, sequences tuned at 150 units (where
    they are narrowest, so false verdicts are possible): a run errs when any member of the
    family (overall and per segment, both arms) has a verdict at any look. At most 4 of 30
    (P(more) ≈ 0.016 at α = 0.05); the raw anytime p-values without Holm err at least as often.
    The longer run is ``benchmarks/bench_readout.py segments``."""
    labels = np.array(["low", "mid", "high"])
    base = np.array([0.05, 0.2, 0.5])
    errs = raw = 0
    for r in range(30):
        noise = stream(37, "segments-null", r)
        with Experiment.create(tmp_path / f"s{r}.sqlite", algorithm="BatchedThompson",
                               arms=["c", "a", "b"], seed=r, horizon=1600,
                               reward_type="binary",
                               params={"batch_size": 400, "draws": 100, "control_floor": 0.2},
                               verdicts={"segments": labels.tolist(), "sequence": "asymptotic",
                                         "tune_n": 150}) as exp:
            wrong = unadjusted = False
            for _ in range(4):
                seg = noise.integers(0, 3, 400)
                got = exp.assign(400, segments=labels[seg].tolist())
                exp.record(got["unit"], (noise.random(400) < base[seg]) * 1.0)
                frame = exp.family()
                wrong |= bool((frame["verdict"] != "undecided").any())
                unadjusted |= bool((frame["p"] <= 0.05).any())
        errs += wrong
        raw += unadjusted
    assert errs <= 4 and raw >= errs


def test_the_http_service_takes_segments_and_shows_the_planned_look(tmp_path):
    """POST assign with ``segments`` (a label not declared: 400 naming it), GET status with the
    planned look (issue 37: both declared in ``verdicts`` at create)."""
    pytest.importorskip("starlette")
    from service_support import Server, call

    db = tmp_path / "db"
    db.mkdir()
    server = Server(db)
    try:
        status, created = call(server.port, "POST", "/experiments", {
            "name": "seg", "algorithm": "FixedAllocation", "arms": ["control", "b"],
            "seed": 0, "reward_type": "binary", "params": {"batch_size": 4},
            "verdicts": {"segments": ["US", "EU"], "looks": 2, "look_every": 4}})
        assert status == 201, created
        status, refused = call(server.port, "POST", "/experiments/seg/assign",
                               {"n": 2, "segments": ["US", "FR"]})
        assert status == 400 and "label 1 is 'FR'" in json.dumps(refused)
        status, refused = call(server.port, "POST", "/experiments/seg/assign",
                               {"n": 2, "segments": "US"})
        assert status == 400 and "segments must be a list" in json.dumps(refused)
        status, got = call(server.port, "POST", "/experiments/seg/assign",
                           {"n": 4, "segments": ["US", "EU", "US", "EU"]})
        assert status == 200, got
        units = [u["unit"] for u in got["units"]]
        status, ok = call(server.port, "POST", "/experiments/seg/record",
                          {"units": units, "rewards": [1, 0, 1, 1]})
        assert status == 200 and ok["recorded"] == 4
        status, state = call(server.port, "GET", "/experiments/seg/status")
        assert status == 200 and state["planned"]["look"] == 1
        assert [r["arm"] for r in state["planned"]["arms"]] == ["b"]
        assert state["verdicts"]["segments"] == ["US", "EU"]
    finally:
        server.stop()
    with Experiment.open(db / "seg.sqlite", readonly=True) as exp:
        assert exp.family()["segment"].tolist() == ["all", "US", "EU"]
