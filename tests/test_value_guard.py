"""Issue 37 §1: a value that cannot be summed is refused by name before anything is stored; an
outlier is warned about; a wrong reward is fixed by a recorded correction that keeps the audit
trail and the sequences' guarantee (banditkit/live/inputs.py, live/outcomes/value_guard.py and
live/outcomes/corrections.py). On SQLite and PostgreSQL (the ``where`` fixture)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.inputs import MAX_MAGNITUDE
from banditkit.live.outcomes.value_guard import OutlierWarning
from live_support import Where


def _another(where: Where, tag: str) -> Where:
    """A second experiment beside ``where``'s, on the same backend."""
    if where.name is None:
        return Where(where.target.replace(".sqlite", f"_{tag}.sqlite"))
    return Where(where.target, f"{where.name}_{tag}")


def _continuous(where, **kw):
    kw.setdefault("params", {"batch_size": 100})
    return where.create(algorithm="FixedAllocation", arms=["control", "new"], seed=0,
                        reward_type="continuous", **kw)


def _recorded(exp) -> tuple[int, float]:
    with exp._transaction() as conn:
        return conn.execute("SELECT COUNT(reward), COALESCE(SUM(reward), 0) FROM units"
                            ).fetchone()


def test_a_reward_that_would_overflow_the_sums_is_refused_by_name_before_storing(where):
    rng = np.random.default_rng(0)
    with _continuous(where, params={"batch_size": 500}) as exp:
        units = exp.assign(500)["unit"].tolist()
        exp.record(units[:450], rng.normal(10, 2, 450))
        before = exp.status().arms[["low", "high"]].to_numpy()
        assert np.isfinite(before).all()
        for call in (lambda: exp.record(units[450:452], [1.0, 1e155]),
                     lambda: exp.record_many([(units[450:451], [2.0]),
                                              (units[451:452], [-1e155])])):
            with pytest.raises(ExperimentError, match=r"rewards must lie within ±1e\+60.*unit "
                                                      rf"{units[451]} got -?1e\+155"):
                call()
        assert _recorded(exp)[0] == 450  # nothing of either call was stored
        # the bound itself is summable: its square times 2**63 units stays finite
        with pytest.warns(OutlierWarning):
            exp.record(units[450:451], [MAX_MAGNITUDE])
        arms = exp.status().arms
        assert np.isfinite(arms[["mean", "low", "high"]].to_numpy(float)).all()
        assert np.isfinite(arms.loc["new", ["diff_low", "diff_high"]].to_numpy(float)).all()


def test_covariates_denominators_and_metrics_beyond_the_bound_are_refused(where):
    with _continuous(where, verdicts={"sequence": "asymptotic", "cuped": True}) as exp:
        with pytest.raises(ExperimentError, match=r"covariates must lie within ±1e\+60"):
            exp.assign(2, covariates=[1.0, 1e100])
        got = exp.assign(2, covariates=[1.0, 2.0])
        assert len(got) == 2
    with _continuous(_another(where, "r"),
                     verdicts={"sequence": "asymptotic", "ratio": True}) as exp:
        got = exp.assign(2)
        with pytest.raises(ExperimentError, match=r"denominators must lie within ±1e\+60"):
            exp.record(got["unit"], [1.0, 2.0], denominators=[1.0, 1e61])
    with _another(where, "g").create(algorithm="FixedAllocation", arms=["control", "new"], seed=0,
                              reward_type="continuous", params={"batch_size": 10},
                              guardrails=[{"metric": "latency", "rule": "max_increase",
                                           "margin": 0.0}]) as exp:
        got = exp.assign(2)
        with pytest.raises(ExperimentError, match=r"metrics\['latency'\] must lie within"):
            exp.record(got["unit"], [1.0, 2.0], metrics={"latency": [1.0, 2e70]})
        assert _recorded(exp)[0] == 0


def test_an_outlier_is_warned_about_and_still_recorded(where):
    rng = np.random.default_rng(1)
    with _continuous(where) as exp:
        units = exp.assign(100)["unit"].tolist()
        with warnings.catch_warnings():
            warnings.simplefilter("error", OutlierWarning)  # no warning for ordinary values
            exp.record(units[:80], rng.normal(10, 2, 80))
        with pytest.warns(OutlierWarning, match=rf"unit {units[80]} got 5000, more than 50 "
                                                "standard deviations") as caught:
            assert exp.record(units[80:82], [5000.0, 10.5]) == 2
        # it points at the caller's record line, not at the library's inside
        assert [w.filename for w in caught if w.category is OutlierWarning] == [__file__]
        assert _recorded(exp)[0] == 82
        with warnings.catch_warnings():
            warnings.simplefilter("error", OutlierWarning)
            exp.record(units[82:83], [10 + 2 * 49.0])  # within 50 s.d.: no warning


def test_a_correction_replaces_a_wrong_reward_in_the_readout_and_keeps_the_trail(where):
    rng = np.random.default_rng(2)
    with _continuous(where, params={"batch_size": 400}) as exp:
        got = exp.assign(400)
        units = got["unit"].tolist()
        arm = dict(zip(units, got["arm"], strict=True))
        values = rng.normal(10, 2, 400)
        exp.record(units, values)
        right = exp.status().arms.copy()
        # the readouts beside status count what status counts
        beside = (exp.quantiles(0.5), exp.bayesian(), exp.family())
        wrong_unit = units[350]
    # the same experiment, but unit 350's reward wildly wrong (a unit slip)
    where = _another(where, "typo")
    with _continuous(where, params={"batch_size": 400}) as exp:
        got = exp.assign(400)
        assert got["unit"].tolist() == units
        typo = values.copy()
        typo[350] *= 1e12
        exp.record(units[:300], typo[:300])
        with pytest.warns(OutlierWarning):
            exp.record(units[300:], typo[300:])
        wrong = exp.status().arms
        a = arm[wrong_unit]
        assert not math.isclose(wrong.loc[a, "mean"], right.loc[a, "mean"])
        with pytest.raises(ExperimentError, match="reason must be a non-empty text"):
            exp.correct([wrong_unit], [values[350]], reason="")
        with pytest.raises(ExperimentError, match=r"rewards must lie within"):
            exp.correct([wrong_unit], [1e200], reason="x")
        assert exp.correct([wrong_unit], [values[350] + 1], reason="a first guess") == 1
        assert exp.correct([wrong_unit], [values[350]], reason="cents, not dollars",
                           who="ana") == 1  # the latest correction counts
        assert exp.correct([wrong_unit], [values[350]], reason="retry") == 0  # idempotent
        fixed = exp.status().arms
        for column in ("mean", "low", "high", "diff", "diff_low", "diff_high"):
            np.testing.assert_allclose(fixed[column].to_numpy(float),
                                       right[column].to_numpy(float), rtol=1e-9)
        for got_now, then in zip((exp.quantiles(0.5), exp.bayesian(), exp.family()), beside,
                                 strict=True):
            numeric = then.select_dtypes("number").columns
            np.testing.assert_allclose(got_now[numeric].to_numpy(float),
                                       then[numeric].to_numpy(float), rtol=1e-9)
        # the recorded value stays (units, verify), the correction is in the audit log
        assert exp.units([wrong_unit])["reward"].iloc[0] == typo[350]
        exp.verify()
        log = exp.corrections()
        assert log[["unit", "arm", "recorded", "previous", "reward", "who", "reason"]
                   ].values.tolist()[-1] == [wrong_unit, a, typo[350], values[350] + 1,
                                             values[350], "ana", "cents, not dollars"]
        assert len(log) == 2
        assert "correct" in exp.audit()["action"].tolist()
    with where.open() as again:  # a reopened experiment counts the correction too
        np.testing.assert_allclose(again.status().arms["mean"].to_numpy(float),
                                   right["mean"].to_numpy(float), rtol=1e-9)


def test_a_correction_is_refused_for_units_without_a_reported_reward(where):
    with _continuous(where) as exp:
        units = exp.assign(3)["unit"].tolist()
        exp.record(units[:1], [1.0])
        with pytest.raises(ExperimentError, match="has no reward recorded yet"):
            exp.correct(units[1:2], [2.0], reason="x")
        with pytest.raises(ExperimentError, match="was never assigned"):
            exp.correct([10**6], [2.0], reason="x")
        with pytest.raises(ExperimentError, match="rewards must be finite"):
            exp.correct(units[:1], [float("nan")], reason="x")
        assert exp.corrections().empty


def test_a_correction_of_a_binary_reward_recomputes_the_exact_sequences_sums(where):
    """The plug-in's sums (the exact default) are summed afresh with the corrected value: the
    corrected experiment reads exactly as one recorded right from the start."""
    rng = np.random.default_rng(3)
    kw = dict(algorithm="FixedAllocation", arms=["control", "new"], seed=0,
              reward_type="binary", params={"batch_size": 400})
    y = (rng.random(400) < 0.3) * 1.0
    with where.create(**kw) as exp:
        units = exp.assign(400)["unit"].tolist()
        exp.record(units, y)
        right = exp.status().arms
    flipped = y.copy()
    flipped[[3, 50, 200]] = 1 - flipped[[3, 50, 200]]
    with _another(where, "f").create(**kw) as exp:
        assert exp.assign(400)["unit"].tolist() == units
        exp.record(units, flipped)
        with pytest.raises(ExperimentError, match="rewards must be 0 or 1"):
            exp.correct([units[3]], [0.5], reason="x")
        assert exp.correct([units[i] for i in (3, 50, 200)], y[[3, 50, 200]],
                           reason="a logging bug flipped them") == 3
        fixed = exp.status().arms
        for column in ("mean", "low", "high", "diff_low", "diff_high"):
            np.testing.assert_allclose(fixed[column].to_numpy(float),
                                       right[column].to_numpy(float), rtol=1e-12)


def test_a_corrected_cuped_experiment_reads_as_one_recorded_right(where):
    """CUPED's Σx·y is summed afresh with the corrected reward too."""
    rng = np.random.default_rng(5)
    x = rng.normal(5, 1, 400)
    y = 2 * x + rng.normal(0, 1, 400)
    kw = dict(params={"batch_size": 400}, verdicts={"sequence": "asymptotic", "cuped": True})
    with _continuous(where, **kw) as exp:
        units = exp.assign(400, covariates=x)["unit"].tolist()
        exp.record(units, y)
        right = exp.status().arms
    wrong = y.copy()
    wrong[[10, 300]] += 50.0
    with _continuous(_another(where, "c"), **kw) as exp:
        assert exp.assign(400, covariates=x)["unit"].tolist() == units
        exp.record(units, wrong)
        assert exp.correct([units[10], units[300]], y[[10, 300]], reason="double-counted") == 2
        fixed = exp.status().arms
    for column in ("mean", "low", "high", "diff", "diff_low", "diff_high"):
        np.testing.assert_allclose(fixed[column].to_numpy(float), right[column].to_numpy(float),
                                   rtol=1e-9)


def test_the_cli_corrects_from_a_csv_and_refuses_by_name(tmp_path, capsys):
    from banditkit import Experiment
    from banditkit.cli import main

    path = tmp_path / "c.sqlite"
    with Experiment.create(path, algorithm="FixedAllocation", arms=["control", "new"], seed=0,
                           reward_type="continuous", params={"batch_size": 10}) as exp:
        units = exp.assign(4)["unit"].tolist()
        exp.record(units, [1.0, 2.0, 3.0, 4000.0])
    csv = tmp_path / "fix.csv"
    csv.write_text(f"unit,reward\n{units[3]},4.0\n")
    assert main(["experiment", "correct", str(path), str(csv), "--reason", "cents",
                 "--who", "ops"]) == 0
    assert "corrected 1 unit(s)" in capsys.readouterr().out
    csv.write_text(f"unit,reward\n{units[3]},1e100\n")
    assert main(["experiment", "correct", str(path), str(csv), "--reason", "x"]) == 2
    assert "rewards must lie within ±1e+60" in capsys.readouterr().err
    with Experiment.open(path, readonly=True) as exp:
        log = exp.corrections()
    assert log[["unit", "reward", "who", "reason"]].values.tolist() == [
        [units[3], 4.0, "ops", "cents"]]


def test_the_service_refuses_a_poisoning_reward_and_takes_a_correction(tmp_path):
    import hashlib
    import json

    from service_support import Server, call

    token = "s3cret-long-enough"
    server = Server(str(tmp_path), token=token)
    try:
        port = server.port

        def post(path, body):
            return call(port, "POST", path, body, token=token)

        assert post("/experiments", {"name": "rev", "algorithm": "FixedAllocation",
                                     "arms": ["control", "new"], "seed": 0,
                                     "reward_type": "continuous",
                                     "params": {"batch_size": 10}})[0] == 201
        units = [u["unit"] for u in post("/experiments/rev/assign", {"n": 2})[1]["units"]]
        status, error = post("/experiments/rev/record", {"units": units,
                                                         "rewards": [1.0, 1e155]})
        assert status == 400 and "rewards must lie within ±1e+60" in error["error"]
        assert post("/experiments/rev/record", {"units": units,
                                                "rewards": [1.0, 2e9]}) == (200, {"recorded": 2})
        status, error = post("/experiments/rev/correct", {"units": units[1:], "rewards": [2.0]})
        assert status == 400 and "missing field(s) ['reason']" in error["error"]
        assert post("/experiments/rev/correct", {"units": units[1:], "rewards": [2.0],
                                                 "reason": "cents"}) == (200, {"corrected": 1})
        _, log = call(port, "GET", "/experiments/rev/audit", token=token)
        fix = log["audit"][-1]
        assert fix["action"] == "correct"
        detail = fix["detail"] if isinstance(fix["detail"], dict) else json.loads(fix["detail"])
        assert detail["reason"] == "cents" and detail["rewards"] == [2.0]
        assert fix["who"] == "token:" + hashlib.sha256(token.encode()).hexdigest()[:12]
    finally:
        server.stop()
