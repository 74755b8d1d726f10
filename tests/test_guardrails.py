"""Guardrails (issue 16 §3): metrics recorded beside the reward pause a live experiment when an
arm harms them with confidence; resume continues with the decisions of an unpaused run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.live.readout.guardrails import Guardrail, evaluate
from live_support import as_where, reward_table, unit_rewards

ARMS = ["a", "b", "c"]
PARAMS = {"rho": 0.3, "beta": 3}
LATENCY = {"metric": "latency", "rule": "max_increase", "margin": 0.1, "range": [0, 1]}
#: units after which a planted breach (arm c's metric rate 0.6 against the control's 0.2,
#: margin 0.1, guardrail_alpha 0.05) has paused the experiment: measured 172–994 units
#: (median 416, 95% quantile 794) over seeds 0–199 of test_planted_breach_pauses's setup
#: (docs/experiment.md, Guardrails)
PLANTED_WITHIN = 1_000


def _create(path, guardrails=None, horizon=30_000, **kwargs):
    kwargs.setdefault("overflow", "off")  # _run stops when assign hands out nothing
    return as_where(path).create(algorithm="ReplicableElimination", arms=ARMS, seed=1,
                                 horizon=horizon, params=PARAMS, guardrails=guardrails,
                                 **kwargs)


def _run(exp, rng, rates, *, rewards=0.5, stop_at=None):
    """Assign 100 at a time and record at once: rewards Bernoulli(``rewards``), metric
    Bernoulli(rates[arm]). Returns the units assigned before assign handed out nothing."""
    n = 0
    while stop_at is None or n < stop_at:
        units = exp.assign(100)
        if len(units) == 0:
            return n, units.attrs["reason"]
        arm = units["arm_index"].to_numpy()
        exp.record(units["unit"].tolist(), (rng.random(len(units)) < rewards).astype(float),
                   metrics={"latency": (rng.random(len(units)) < np.asarray(rates)[arm])
                            .astype(float)})
        n += len(units)
    return n, None


@pytest.mark.parametrize("seed", range(5))
def test_planted_breach_pauses(tmp_path, seed):
    exp = _create(tmp_path / "g.sqlite", [LATENCY])
    n, reason = _run(exp, np.random.default_rng(seed), [0.2, 0.2, 0.6], stop_at=5_000)
    assert reason is not None and "paused" in reason and "'c'" in reason and n <= PLANTED_WITHIN
    state = exp.status()
    assert state.paused is not None and "WARNING: PAUSED" in str(state)
    rails = state.guardrails.set_index("arm")
    assert rails.loc["c", "breached"] and rails.loc["c", "pausing"]
    assert rails.loc["c", "diff_low"] > 0.1 and not rails.loc["b", "pausing"]
    from banditkit.service.page import render_page  # the watch page shows the pause first

    page = render_page(exp, title="g")
    assert "PAUSED: " in page and page.index("PAUSED: ") < page.index("<h2>Arms</h2>")
    again = exp.assign(5)  # still paused: nothing, and the same reason
    assert len(again) == 0 and again.attrs["reason"] == reason
    keyed = exp.assign(keys=["user-1"])  # sticky units too: a paused arm gets no traffic
    assert len(keyed) == 0 and keyed.attrs["reason"] == reason
    assert list(keyed.columns)[-2:] == ["key", "repeated"]  # a keyed call's columns, empty
    assert exp.resume() == 1 and exp.status().paused is None and len(exp.assign(5)) == 5
    exp.close()


@pytest.mark.parametrize("seed", range(3))
def test_clean_experiment_does_not_pause(tmp_path, seed):
    exp = _create(tmp_path / "g.sqlite", [LATENCY, {"metric": "errors", "rule": "max_decrease",
                                                   "margin": 0.0, "range": [0, 1]}],
                  horizon=3_000)
    rng = np.random.default_rng(100 + seed)
    n = 0
    while True:
        units = exp.assign(100)
        if len(units) == 0:
            break
        k = len(units)
        exp.record(units["unit"].tolist(), (rng.random(k) < 0.5).astype(float),
                   metrics={"latency": rng.random(k), "errors": (rng.random(k) < 0.3) * 1.0})
        n += k
    state = exp.status()
    assert state.finished and n >= 3_000 and state.paused is None
    assert not state.guardrails["breached"].any()
    exp.close()


def test_rule_direction_and_alpha_split():
    # diff 0.4 on 400 values per arm: max_increase breached, max_decrease (mirror) not
    up = Guardrail("m", "max_increase", 0.1, 0.0, 1.0)
    down = Guardrail("m", "max_decrease", 0.1, 0.0, 1.0)
    n = np.full((1, 3), 400)
    total = np.array([[80.0, 80.0, 240.0]])  # 0/1 values: the sum of squares is the sum
    assert evaluate([up], n, total, total, 0, 0.05).breached.tolist() == [[False, False, True]]
    assert not evaluate([down], n, total, total, 0, 0.05).breached.any()
    assert evaluate([down], n, total, total, 2, 0.05).breached.tolist() == [[True, True, False]]
    assert not evaluate([up], n, total, total, 2, 0.05).breached.any()
    # one-sided: only the harm's end is finite
    one = evaluate([up], n, total, total, 0, 0.05)
    assert np.isinf(one.diff_high[0, 1:]).all() and np.isfinite(one.diff_low[0, 1:]).all()
    # the verdicts' exact sequence on each difference, one-sided, α split over G × (K − 1):
    # the control's own sequence at α·0.1/G, each difference at α·0.9/(G(K − 1))
    from banditkit.live.readout.sequences import bernstein_sequence, difference_sequence
    two = evaluate([up, up], np.vstack([n, n]), np.vstack([total, total]),
                   np.vstack([total, total]), 0, 0.05)
    c_low, c_high = bernstein_sequence(400.0, 80.0, 80.0, 0.05 * 0.1 / 2)
    low, _ = difference_sequence(n[0], total[0], total[0], 0, c_low, c_high,
                                 0.05 * 0.9 / (2 * 2), side="lower")
    assert two.diff_low[0, 1:] == pytest.approx(low[1:])
    assert two.diff_low[0, 2] < one.diff_low[0, 2]
    # the mirror rule is the same sequence on 1 − x
    mirrored = evaluate([down], n, 400 - total, 400 - total, 0, 0.05)
    assert -mirrored.diff_high[0, 1:] == pytest.approx(one.diff_low[0, 1:])


def test_a_continuous_guardrail_uses_the_one_sided_asymptotic_sequence():
    from banditkit.live.readout.sequences import one_sided_from
    latency = Guardrail("latency", "max_increase", 0.0, None, None)
    n = np.full((1, 3), 2000)
    mean, sd = np.array([200.0, 200.0, 220.0]), 100.0
    total = n * mean
    total_sq = (n - 1) * sd ** 2 + n * mean ** 2
    got = evaluate([latency], n, total, total_sq, 0, 0.05, n_tune=1000)
    v = np.full(3, 2 * sd ** 2 / 2000)
    want = one_sided_from(mean - mean[0], v, n[0], 0, 0.05 / 2, n_tune=1000)
    assert got.diff_low[0, 1:] == pytest.approx(want[1:])
    assert got.breached.tolist() == [[False, False, True]]
    # max_decrease mirrors it: arm 1 lower by 20 breaches, upper end = −(lower end of −d)
    faster = Guardrail("latency", "max_decrease", 0.0, None, None)
    slow = evaluate([faster], n, total[:, ::-1], total_sq[:, ::-1], 0, 0.05, n_tune=1000)
    assert slow.breached.tolist() == [[False, True, True]]
    assert slow.diff_high[0, 2] == pytest.approx(-want[2])


def test_resume_gives_the_decisions_of_an_unpaused_run(tmp_path):
    table = reward_table([0.3, 0.5, 0.7])
    metric = np.array([0.1, 0.1, 0.9])  # arm c's latency planted: it breaches early
    runs = {}
    for name, rails in (("plain", None), ("guarded", [LATENCY])):
        path = str(tmp_path / f"{name}.sqlite")
        exp = _create(path, rails, horizon=3_000)
        pauses = 0
        while True:
            units = exp.assign(37)
            if len(units) == 0:
                if exp.status().finished:
                    break
                assert rails and "paused" in units.attrs["reason"]
                # a unit assigned before the pause is still recorded while paused
                lifted = exp.resume()
                assert lifted, "paused, and resume lifted nothing"
                pauses += lifted
                continue
            ids = units["unit"].tolist()
            rewards = unit_rewards(path, ids, table)
            exp.record(ids, rewards, metrics=None if rails is None else
                       {"latency": metric[units["arm_index"].to_numpy()]})
        runs[name] = (exp.decisions(), pauses)
        exp.close()
    assert runs["guarded"][1] == 1  # it did pause (once: a resumed breach does not again)
    assert runs["guarded"][0].same_as(runs["plain"][0])


def _until_paused(exp, rates, rng, hold=0):
    """Assign and record (metric Bernoulli(rates[arm])) until assign hands out nothing,
    holding back the last ``hold`` units of each call to the next one: those still held are
    returned (units assigned before the pause, not yet answered)."""
    held: list[int] = []
    held_arms: list[int] = []
    while True:
        units = exp.assign(100)
        if len(units) == 0 and "paused" in units.attrs["reason"]:
            return held
        assert len(units) or held, f"never paused: {units.attrs['reason']}"
        ids = held + units["unit"].tolist()
        arms = np.array(held_arms + units["arm_index"].tolist(), dtype=np.int64)
        # the batch waits for the held units: answer them before asking again
        cut = len(ids) - hold if len(units) else len(ids)
        held, held_arms = ids[cut:], arms[cut:].tolist()
        exp.record(ids[:cut], [0.0] * cut,
                   metrics={"latency": (rng.random(cut) < np.asarray(rates)[arms[:cut]]) * 1.0})


def test_record_while_paused_and_pause_is_stored(where):
    path = where
    exp = _create(path, [LATENCY])
    late = _until_paused(exp, [0.0, 0.0, 1.0], np.random.default_rng(3), hold=2)
    assert len(late) == 2 and exp.status().paused is not None
    exp.close()
    # stored in the file: another process sees the pause, and still records assigned units
    other = path.open()
    assert len(other.assign(3)) == 0 and other.status().paused is not None
    assert other.record(late, [1.0] * 2, metrics={"latency": [0.0] * 2}) == 2
    other.close()
    conn = path.connect()
    assert conn.execute("SELECT COUNT(*) FROM pauses WHERE resumed_at IS NULL").fetchone() == (1,)
    conn.close()


def test_breach_pause_commits_with_its_record(tmp_path, monkeypatch):
    """The pause is written in the transaction of the record that breached: a record that
    fails after the check leaves neither its rewards nor the pause; retried, both."""
    exp = _create(tmp_path / "g.sqlite", [LATENCY])
    original = Experiment._pause_on_breach
    failed = []

    def fail(self, conn):
        original(self, conn)
        if conn.execute("SELECT COUNT(*) FROM pauses").fetchone() == (1,) and not failed:
            failed.append(conn.execute("SELECT COUNT(reward) FROM units").fetchone()[0])
            raise ExperimentError("disk full")

    monkeypatch.setattr(Experiment, "_pause_on_breach", fail)
    with pytest.raises(ExperimentError, match="disk full"):
        _until_paused(exp, [0.0, 0.0, 1.0], np.random.default_rng(4))
    monkeypatch.undo()
    state = exp.status()
    assert state.paused is None and len(failed) == 1
    assert int(state.arms["recorded"].sum()) < failed[0]  # the failed record's rewards: gone
    waiting = exp.units(unanswered=True)
    arms = waiting["arm_index"].to_numpy()
    exp.record(waiting["unit"].tolist(), [0.0] * len(waiting),
               metrics={"latency": (arms == 2) * 1.0})
    assert exp.status().paused is not None
    exp.close()


BAD_CREATE = [
    ("not a list", "guardrails must be a list"),
    ([{"metric": "x", "rule": "max_increase", "range": [0, 1]}],
     r"guardrails\[0\].*missing: \['margin'\]"),
    ([{"metric": "x", "rule": "max_increase", "margin": -1}],
     r"guardrails\[0\]\.margin must be a number >= 0 \(in the metric's units\)"),
    ([{**LATENCY, "range": "fast"}], r"guardrails\[0\]\.range must be two finite numbers"),
    ([{**LATENCY, "rule": "smaller"}], r"guardrails\[0\]\.rule must be one of"),
    ([{**LATENCY, "range": [1, 1]}], r"guardrails\[0\]\.range must be two finite numbers lo < hi"),
    ([{**LATENCY, "range": [2, 1]}], r"guardrails\[0\]\.range"),
    ([{**LATENCY, "margin": 1.5}], r"guardrails\[0\]\.margin must be a number in \[0, hi"),
    ([{**LATENCY, "margin": 1.0}], r"guardrails\[0\]\.margin must be a number in \[0, hi"),
    ([{**LATENCY, "margin": -0.1}], r"guardrails\[0\]\.margin"),
    ([{**LATENCY, "metric": "1x"}], r"guardrails\[0\]\.metric must be a name"),
    ([LATENCY, LATENCY], r"guardrails\[1\]\.metric 'latency' has a guardrail already"),
]


@pytest.mark.parametrize("guardrails, message", BAD_CREATE)
def test_create_refusals(tmp_path, guardrails, message):
    with pytest.raises(ExperimentError, match=message):
        _create(tmp_path / "g.sqlite", guardrails)
    assert not (tmp_path / "g.sqlite").exists()
    with pytest.raises(ExperimentError, match="guardrail_alpha must be a number in"):
        _create(tmp_path / "g.sqlite", [LATENCY], guardrail_alpha=1.0)


BAD_RECORD = [
    (None, "metrics are required"),
    ({}, r"metrics: \['latency'\] missing"),
    ({"latency": [0.1] * 4, "speed": [0.1] * 4}, r"metrics: no guardrail on \['speed'\]"),
    ({"latency": [0.1, 0.1, np.nan, 0.1]}, r"metrics\['latency'\] must be finite"),
    ({"latency": [0.1, 0.1, 0.1]}, r"metrics\['latency'\] must be numbers, one per unit \(4\)"),
    ({"latency": [0.1, 0.1, 2.0, 0.1]}, r"in its declared range \[0, 1\]"),
    ({"latency": ["a"] * 4}, r"metrics\['latency'\] must be numbers"),
]


@pytest.mark.parametrize("metrics, message", BAD_RECORD)
def test_record_refusals_change_nothing(tmp_path, metrics, message):
    exp = _create(tmp_path / "g.sqlite", [LATENCY])
    ids = exp.assign(4)["unit"].tolist()
    with pytest.raises(ExperimentError, match=message):
        exp.record(ids, [1.0] * 4, metrics=metrics)
    assert exp.units()["reward"].isna().all()
    assert exp.record(ids, [1.0] * 4, metrics={"latency": [0.1] * 4}) == 4
    # a retried call with other metrics is refused; with the same ones it records nothing
    with pytest.raises(ExperimentError, match="already has metrics"):
        exp.record(ids, [1.0] * 4, metrics={"latency": [0.2] * 4})
    assert exp.record(ids, [1.0] * 4, metrics={"latency": [0.1] * 4}) == 0
    exp.close()


def test_metrics_without_guardrails_refused(tmp_path):
    exp = _create(tmp_path / "g.sqlite")
    ids = exp.assign(2)["unit"].tolist()
    with pytest.raises(ExperimentError, match="metrics: this experiment has no guardrails"):
        exp.record(ids, [1.0, 0.0], metrics={"latency": [0.1, 0.2]})
    assert exp.record(ids, [1.0, 0.0]) == 2 and exp.resume() == 0
    assert exp.status().guardrails.empty
    exp.close()


def test_cli_guardrail_pause_and_resume(tmp_path, capsys):
    import pandas as pd

    from banditkit.cli import main

    path = tmp_path / "ab.sqlite"
    create = ["experiment", "create", str(path), "--algorithm", "ReplicableElimination",
              "--arms", "a,b,c", "--horizon", "30000", "--seed", "1", "--param", "rho=0.3",
              "--param", "beta=3", "--overflow", "off"]
    with pytest.raises(SystemExit) as exit_:
        main([*create, "--guardrail", "latency:max_increase"])
    assert exit_.value.code == 2
    assert "METRIC:RULE:MARGIN:LO:HI" in capsys.readouterr().err
    assert main([*create, "--guardrail", "latency:max_increase:0.1:1:0"]) == 2
    assert "guardrails[0].range must be two finite numbers lo < hi" in capsys.readouterr().err
    assert not path.exists()
    assert main([*create, "--guardrail", "latency:max_increase:0.1:0:1"]) == 0
    out, answers = tmp_path / "day.csv", tmp_path / "answers.csv"
    days = 0
    for _ in range(40):
        out.unlink(missing_ok=True)
        assert main(["experiment", "assign", str(path), "100", "--out", str(out)]) == 0
        units = pd.read_csv(out)
        if units.empty:
            break
        frame = units.assign(reward=0, metric_latency=(units["arm"] == "c") * 1.0)
        frame[["unit", "reward"]].to_csv(answers, index=False)  # no metric column: refused
        assert main(["experiment", "record", str(path), str(answers)]) == 2
        assert "metrics are required" in capsys.readouterr().err
        frame[["unit", "reward", "metric_latency"]].to_csv(answers, index=False)
        assert main(["experiment", "record", str(path), str(answers)]) == 0
        days += 1
    assert days > 1 and units.empty
    err = capsys.readouterr().err
    assert "WARNING: PAUSED" in err and "'c'" in err
    assert main(["experiment", "status", str(path)]) == 0
    assert capsys.readouterr().out.startswith("WARNING: PAUSED")
    assert main(["experiment", "status", str(path), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["paused"] and [r["arm"] for r in status["guardrails"] if r["pausing"]] == ["c"]
    assert main(["experiment", "resume", str(path)]) == 0
    assert "1 pause(s) lifted" in capsys.readouterr().out  # the breach (none by hand)
    out.unlink()
    assert main(["experiment", "assign", str(path), "5", "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == 5


def test_http_guardrail_pause_and_resume(tmp_path):
    from service_support import Server, call

    server = Server(tmp_path)
    try:
        port = server.port
        bad = {"name": "g", "algorithm": "ReplicableElimination", "arms": ARMS, "seed": 1,
               "horizon": 30_000, "params": PARAMS,
               "guardrails": [{**LATENCY, "rule": "lower"}]}
        status, answer = call(port, "POST", "/experiments", bad)
        assert status == 400 and "guardrails[0].rule must be one of" in answer["error"]
        status, _ = call(port, "POST", "/experiments", {**bad, "guardrails": [LATENCY]})
        assert status == 201
        paused = None
        for _ in range(40):
            _, answer = call(port, "POST", "/experiments/g/assign", {"n": 100})
            if not answer["units"]:
                paused = answer["reason"]
                break
            ids = [u["unit"] for u in answer["units"]]
            latency = [float(u["arm"] == "c") for u in answer["units"]]
            status, refused = call(port, "POST", "/experiments/g/record",
                                   {"units": ids, "rewards": [0] * len(ids),
                                    "metrics": {"speed": latency}})
            assert status == 400 and "no guardrail on ['speed']" in refused["error"]
            assert call(port, "POST", "/experiments/g/record",
                        {"units": ids, "rewards": [0] * len(ids),
                         "metrics": {"latency": latency}}) == (200, {"recorded": len(ids)})
        assert paused is not None and "paused" in paused
        _, state = call(port, "GET", "/experiments/g/status")
        assert state["paused"] and any(r["pausing"] for r in state["guardrails"])
        assert call(port, "POST", "/experiments/g/resume", {}) == (200, {"resumed": 1})
        _, answer = call(port, "POST", "/experiments/g/assign", {"n": 3})
        assert len(answer["units"]) == 3
    finally:
        server.stop()


def test_verify_finds_edited_metrics(where):
    path = where
    exp = _create(path, [LATENCY])
    ids = exp.assign(18)["unit"].tolist()
    exp.record(ids, [1.0] * 18, metrics={"latency": np.linspace(0, 1, 18)})
    assert exp.verify() == 18
    conn = path.connect()
    conn.execute("UPDATE units SET metrics = '[0.5]' WHERE id = ?", (ids[0],))  # was 0.0
    conn.commit()
    with pytest.raises(ExperimentError, match=r"'latency' summing to .* but the totals"):
        exp.verify()
    conn.execute("UPDATE units SET metrics = '[0.0]' WHERE id = ?", (ids[0],))
    conn.execute("UPDATE metric_totals SET n = n + 1 WHERE batch = -1 AND arm = 1")
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match="all batches, arm 'b'"):
        exp.verify()
    exp.close()


def test_guardrails_on_each_difference_keep_their_level_when_no_arm_harms():
    # 3 equal arms, 20 looks of 200 latencies per arm: how often does any guardrail ever
    # pause? At most guardrail_alpha (0.05) within Monte-Carlo error, for both kinds
    from banditkit.rng import stream

    rng = stream(3, "guardrail-null")
    kinds = {"continuous": (Guardrail("latency", "max_increase", 0.0, None, None), 300),
             "bounded": (Guardrail("latency", "max_increase", 0.0, 0.0, 2000.0), 30)}
    for name, (rail, runs) in kinds.items():
        paused = 0
        for _ in range(runs):
            x = np.minimum(rng.lognormal(5.19, 0.47, (20 * 200, 3)), 2000.0)
            n = np.zeros((1, 3))
            total, total_sq = np.zeros((1, 3)), np.zeros((1, 3))
            for look in range(20):
                chunk = x[look * 200:(look + 1) * 200]
                n += 200
                total += chunk.sum(0)
                total_sq += (chunk ** 2).sum(0)
                if evaluate([rail], n, total, total_sq, 0, 0.05, n_tune=2000).breached.any():
                    paused += 1
                    break
        assert paused / runs <= 0.05 + 2 * (0.05 * 0.95 / runs) ** 0.5, (name, paused)
