"""Continuous metrics beyond a plain mean (issue 23 §3): CUPED covariates, ratio metrics by the
delta method and winsorisation at a stated quantile — the pure estimators, then through
``Experiment`` (Python), the HTTP service and the CLI, with their refusals, and the upgrade of
a format 6 file (no covariate columns) to format 7."""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.live.readout.adjusted import cuped, ratio
from banditkit.live.readout.sequences import asymptotic_from, asymptotic_rho2
from banditkit.live.readout.statistics import compare
from banditkit.live.readout.sums import ArmSums
from banditkit.live.readout.verdict_spec import check_verdicts
from banditkit.live.store.schema import FORMAT
from banditkit.rng import stream

sys.path.insert(0, str(Path(__file__).parent))
from live_support import DOWNGRADE_TO_6

CONTINUOUS = {"reward_type": "continuous"}


def _cuped_data(seed: int, n: int, effect: float, rho: float = 0.8):
    rng = stream(seed, "cuped-data")
    arm = np.arange(n) % 2
    x = rng.normal(5.0, 2.0, n)
    noise = rng.normal(0.0, 2.0 * math.sqrt(1 - rho * rho) / rho, n)
    y = x + noise + effect * arm
    return arm, x, y


def _sums(arm, x, y, d=None):
    d = np.zeros_like(y) if d is None else d
    K = int(arm.max()) + 1
    per = [np.bincount(arm, w, minlength=K) for w in (
        np.ones_like(y), y, y * y, x, x * x, x * y, d, d * d, d * y)]
    n = per[0]
    return ArmSums(n.astype(np.int64), n.astype(np.int64), per[1], per[2], np.zeros(K, bool),
                   extra=np.stack(per[3:], axis=-1))


# --- the pure estimators ------------------------------------------------------------------

def test_cuped_from_running_sums_is_the_per_unit_adjustment_with_the_within_arm_theta():
    arm, x, y = _cuped_data(1, 4_001, effect=0.5)
    est = cuped(*(np.bincount(arm, w) for w in (np.ones_like(y), y, y * y, x, x * x, x * y)))
    # θ: the regression slope of y on x within arms (arm means removed), pooled
    xc = x - np.array([x[arm == a].mean() for a in (0, 1)])[arm]
    yc = y - np.array([y[arm == a].mean() for a in (0, 1)])[arm]
    theta = (xc * yc).sum() / (xc * xc).sum()
    assert est.theta == pytest.approx(theta, rel=1e-9)
    adjusted = y - theta * (x - x.mean())
    for a in (0, 1):
        assert est.mean[a] == pytest.approx(adjusted[arm == a].mean(), rel=1e-9)
        assert est.variance[a] == pytest.approx(adjusted[arm == a].var(ddof=1), rel=1e-9)
    # the variance falls by about 1 − ρ² (ρ = 0.8 within arms)
    plain = np.array([y[arm == a].var(ddof=1) for a in (0, 1)])
    assert np.allclose(est.variance / plain, 1 - 0.8 ** 2, atol=0.05)


def test_the_ratio_variance_is_the_delta_method_and_matches_the_spread_of_ratios():
    rng = stream(2, "ratio-data")
    reps, n = 400, 2_000
    orders = rng.poisson(1.5, (reps, n)).astype(float)
    revenue = orders * rng.gamma(2.0, 10.0, (reps, n)) + rng.normal(0, 1, (reps, n))
    est = ratio(np.full(reps, n), revenue.sum(1), (revenue ** 2).sum(1), orders.sum(1),
                (orders ** 2).sum(1), (orders * revenue).sum(1))
    # per replicate: the linearised values (y − R d)/d̄ have that variance
    r0 = revenue[0].sum() / orders[0].sum()
    z = (revenue[0] - r0 * orders[0]) / orders[0].mean()
    assert est.mean[0] == pytest.approx(r0) and est.variance[0] == pytest.approx(
        z.var(ddof=1), rel=1e-9)
    # across replicates: the ratios' spread is what the delta method says (MC error ~7%)
    assert np.var(est.mean, ddof=1) == pytest.approx(np.mean(est.variance / n), rel=0.2)


def test_cuped_and_ratio_differences_use_the_asymptotic_radius_on_both_arms():
    arm, x, y = _cuped_data(3, 6_000, effect=0.2)
    spec = check_verdicts("continuous", None, {"cuped": True, "tune_n": 3000}, None)
    c = compare(_sums(arm, x, y), None, intervals="anytime", alpha=0.05, control=0,
                spec=spec)
    est = cuped(*(np.bincount(arm, w) for w in (np.ones_like(y), y, y * y, x, x * x, x * y)))
    v = est.variance[1] / est.n[1] + est.variance[0] / est.n[0]
    N = est.n.sum()
    rho2 = asymptotic_rho2(2 * 3000, 0.05)
    radius = math.sqrt(v * 2 * (N * rho2 + 1) / (N * rho2)
                       * math.log(math.sqrt(N * rho2 + 1) / 0.05))
    assert c.diff[1] == pytest.approx(est.mean[1] - est.mean[0])
    assert c.diff_low[1] == pytest.approx(c.diff[1] - radius)
    assert c.diff_high[1] == pytest.approx(c.diff[1] + radius)
    lo, hi = asymptotic_from(c.diff, np.array([np.nan, v]), est.n, 0, 0.05, n_tune=3000)
    assert (lo[1], hi[1]) == pytest.approx((c.diff_low[1], c.diff_high[1]))


def test_cuped_keeps_its_level_under_the_null_and_narrows_the_difference():
    # 300 null experiments × 20 looks of 500 units per arm, on sums (fast)
    rng = stream(4, "cuped-null")
    runs, looks, step = 300, 20, 500
    spec = check_verdicts("continuous", None, {"cuped": True, "tune_n": 5000}, None)
    plain = check_verdicts("continuous", None, {"tune_n": 5000}, None)
    x = rng.lognormal(1.0, 0.8, (runs, looks * step, 2))
    y = 0.7 * x + rng.normal(0, 1.0, x.shape)
    cs = lambda a: np.cumsum(a, axis=1)[:, step - 1::step]  # noqa: E731
    n = np.broadcast_to(np.arange(1, looks + 1)[None, :, None] * step, (runs, looks, 2))
    sums = ArmSums(n, n, cs(y), cs(y * y), np.zeros(n.shape, bool),
                   extra=np.stack([cs(x), cs(x * x), cs(x * y), *(np.zeros(n.shape),) * 3],
                                  axis=-1))
    adj = compare(sums, None, intervals="anytime", alpha=0.05, control=0, spec=spec)
    raw = compare(sums, None, intervals="anytime", alpha=0.05, control=0, spec=plain)
    false = ((adj.verdict[..., 1] != "undecided").any(axis=1)).mean()
    assert false <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    width = (adj.diff_high - adj.diff_low)[:, -1, 1] / (raw.diff_high - raw.diff_low)[:, -1, 1]
    assert np.median(width) < 0.6  # ρ² ≈ 0.7 here: about √0.3 ≈ 0.55


def test_the_one_sided_asymptotic_end_is_where_the_half_normal_mixture_reaches_1_over_alpha():
    # independent of the closed form: integrate the one-sided normal mixture numerically
    from scipy.integrate import quad

    from banditkit.live.readout.sequences import one_sided_from

    for N, alpha, n_tune in ((2_000, 0.05, 1_000), (50_000, 0.01, 10_000), (400, 0.2, 5_000)):
        n = np.array([N / 2, N / 2])
        low = one_sided_from(np.zeros(2), np.array([np.nan, 1.0 / N]), n, 0, alpha,
                             n_tune=n_tune)
        s = -low[1] * N  # the boundary on the sum of N standardised values
        rho = math.sqrt(asymptotic_rho2(2 * n_tune, alpha))
        mixture, _ = quad(lambda lam, rho=rho, s=s, N=N: 2 / (rho * math.sqrt(2 * math.pi))
                          * math.exp(-lam * lam / (2 * rho * rho) + lam * s - lam * lam * N / 2),
                          0, np.inf)
        assert mixture == pytest.approx(1 / alpha, rel=1e-6)


def test_winsorised_verdicts_keep_their_level_under_the_null_with_a_moving_cap():
    # 300 null runs × 10 looks of 500 units per arm, lognormal(0, 1.5) rewards capped at the
    # pooled 0.99 quantile of the rewards counted so far (as status does at each look)
    rng = stream(8, "winsor-null")
    runs, looks, step = 300, 10, 500
    spec = check_verdicts("continuous", None, {"winsorize": 0.99, "tune_n": 5000}, None)
    y = rng.lognormal(0.0, 1.5, (runs, looks * step, 2))
    false = np.zeros(runs, dtype=bool)
    widths = []
    for t in range(1, looks + 1):
        seen = y[:, : t * step]
        rank = math.ceil(0.99 * 2 * t * step) - 1
        cap = np.partition(seen.reshape(runs, -1), rank, axis=1)[:, rank]
        capped = np.minimum(seen, cap[:, None, None])
        n = np.full((runs, 2), t * step)
        sums = ArmSums(n, n, capped.sum(1), (capped ** 2).sum(1), np.zeros((runs, 2), bool))
        c = compare(sums, None, intervals="anytime", alpha=0.05, control=0, spec=spec)
        false |= c.verdict[:, 1] != "undecided"
        widths.append(np.median(c.diff_high[:, 1] - c.diff_low[:, 1]))
    assert false.mean() <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    plain = check_verdicts("continuous", None, {"tune_n": 5000}, None)
    n = np.full((runs, 2), looks * step)
    raw = compare(ArmSums(n, n, y.sum(1), (y ** 2).sum(1), np.zeros((runs, 2), bool)), None,
                  intervals="anytime", alpha=0.05, control=0, spec=plain)
    assert widths[-1] < 0.8 * np.median(raw.diff_high[:, 1] - raw.diff_low[:, 1])


# --- the spec's refusals --------------------------------------------------------------------

@pytest.mark.parametrize("verdicts, match", [
    ({"winsorize": 0.5}, r"winsorize'\] must be a quantile in \(0.5, 1\)"),
    ({"winsorize": 1.0}, r"winsorize'\] must be a quantile in \(0.5, 1\)"),
    ({"winsorize": "0.99"}, r"winsorize'\] must be a quantile"),
    ({"cuped": 1}, r"cuped'\] must be true or false"),
    ({"ratio": "yes"}, r"ratio'\] must be true or false"),
    ({"ratio": True, "cuped": True}, r"ratio'\] takes neither"),
    ({"ratio": True, "winsorize": 0.99}, r"ratio'\] takes neither"),
    ({"cuped": 1, "winsorize": 0.99}, r"cuped'\] must be true or false"),
    ({"cuped": True, "winsorize": 1.5}, r"winsorize'\] must be a quantile in \(0.5, 1\)"),
])
def test_create_refuses_continuous_options_that_cannot_be_true_and_writes_nothing(
        tmp_path, verdicts, match):
    path = tmp_path / "x.sqlite"
    with pytest.raises(ExperimentError, match=match):
        Experiment.create(path, algorithm="FixedAllocation", arms=["c", "t"], seed=0,
                          verdicts=verdicts, **CONTINUOUS)
    assert not path.exists()


def test_the_options_need_a_normal_sequence(tmp_path):
    with pytest.raises(ExperimentError, match=r"cuped'\] needs a normal sequence"):
        Experiment.create(tmp_path / "x.sqlite", algorithm="FixedAllocation", arms=["c", "t"],
                          seed=0, reward_type="binary", verdicts={"cuped": True})
    assert not (tmp_path / "x.sqlite").exists()


# --- through Experiment ---------------------------------------------------------------------

def _experiment(tmp_path, name="e", **verdicts):
    return Experiment.create(tmp_path / f"{name}.sqlite", algorithm="FixedAllocation",
                             arms=["control", "treatment"], seed=0,
                             params={"batch_size": 400},
                             verdicts={"tune_n": 1000, **verdicts}, **CONTINUOUS)


def _units_table(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, arm, reward, covariate, denominator FROM units "
                            "ORDER BY id").fetchall()
    finally:
        conn.close()


def test_cuped_through_experiment_equals_the_estimator_on_the_units(tmp_path):
    rng = stream(5, "cuped-live")
    with _experiment(tmp_path, cuped=True) as exp:
        for look in range(4):
            units = exp.assign(400, covariates=rng.normal(10, 3, 400) if look % 2 else None)
            x = rng.normal(10, 3, 400)
            stored = units["unit"].to_numpy()
            # half the looks give the covariates at assign, half at record
            xs = (np.array([r[3] for r in _units_table(tmp_path / "e.sqlite")
                            if r[0] in set(stored.tolist())]) if look % 2 else x)
            y = xs + rng.normal(0, 1, 400) + 0.4 * (units["arm"] == "treatment").to_numpy()
            exp.record(stored, y, covariates=None if look % 2 else x)
        # a unit given a covariate at assign and then expired: counted nowhere
        gone = exp.assign(1, covariates=[1e6])["unit"].tolist()
        exp.expire(gone)
        state = exp.status()
        plain = exp.status(verdicts={"cuped": False})
        assert exp.verify() == 1600  # units not expired
    rows = [r for r in _units_table(tmp_path / "e.sqlite") if r[2] is not None]
    assert len(rows) == 1600
    arm = np.array([r[1] for r in rows])
    y = np.array([r[2] for r in rows])
    x = np.array([r[3] for r in rows])
    est = cuped(*(np.bincount(arm, w) for w in (np.ones_like(y), y, y * y, x, x * x, x * y)))
    assert state.arms["mean"].to_numpy() == pytest.approx(est.mean)
    assert state.arms.loc["treatment", "diff"] == pytest.approx(est.mean[1] - est.mean[0])
    assert state.arms.loc["treatment", "verdict"] == "better"
    assert state.verdicts["cuped"] is True and "CUPED" in state.interval_note
    width = lambda s: s.arms.loc["treatment", "diff_high"] - s.arms.loc[  # noqa: E731
        "treatment", "diff_low"]
    assert width(state) < 0.5 * width(plain)


def test_cuped_refuses_missing_wrong_or_changed_covariates_and_records_nothing(tmp_path):
    with _experiment(tmp_path, cuped=True) as exp:
        units = exp.assign(4)["unit"].tolist()
        before = _units_table(tmp_path / "e.sqlite")
        for kwargs, match in [
            ({}, r"covariates are required: unit"),
            ({"covariates": [1.0, 2.0]}, r"covariates must be numbers, one per unit \(4\)"),
            ({"covariates": [1.0, 2.0, float("nan"), 3.0]}, r"covariates must be finite"),
            ({"covariates": ["a", "b", "c", "d"]}, r"not a list of numbers"),
            ({"covariates": [1, 2, 3, 4], "denominators": [1, 1, 1, 1]},
             r"denominators: this experiment was not created with"),
        ]:
            with pytest.raises(ExperimentError, match=match):
                exp.record(units, [1.0, 2.0, 3.0, 4.0], **kwargs)
            assert _units_table(tmp_path / "e.sqlite") == before
        with pytest.raises(ExperimentError, match=r"covariates must be numbers, one per unit"):
            exp.assign(3, covariates=[1.0])
        assert _units_table(tmp_path / "e.sqlite") == before
        exp.record(units, [1.0, 2.0, 3.0, 4.0], covariates=[1, 2, 3, 4])
        assert exp.record(units, [1.0, 2.0, 3.0, 4.0], covariates=[1, 2, 3, 4]) == 0  # retry
        with pytest.raises(ExperimentError, match=r"unit \d+ already has covariate 1.0"):
            exp.record(units, [1.0, 2.0, 3.0, 4.0], covariates=[9, 2, 3, 4])
    with _experiment(tmp_path, "plain") as exp:
        with pytest.raises(ExperimentError, match=r"covariates: this experiment was not "
                                                  r"created with verdicts=\{'cuped': True\}"):
            exp.assign(2, covariates=[1.0, 2.0])


def test_cuped_with_imputed_zeros_needs_covariates_at_assign(tmp_path):
    with Experiment.create(tmp_path / "z.sqlite", algorithm="FixedAllocation",
                           arms=["control", "treatment"], seed=0, reward_type="binary",
                           missing="zero", outcome_window=60,
                           verdicts={"sequence": "asymptotic", "cuped": True}) as exp:
        with pytest.raises(ExperimentError, match=r"covariates are required: this experiment"):
            exp.assign(2)
        assert len(exp.assign(2, covariates=[0.5, 0.1])) == 2


def test_a_ratio_metric_through_experiment_is_the_ratio_of_sums_with_delta_variance(tmp_path):
    rng = stream(6, "ratio-live")
    with _experiment(tmp_path, ratio=True) as exp:
        for _ in range(3):
            units = exp.assign(400)
            orders = rng.poisson(1.2, 400).astype(float)
            lift = np.where(units["arm"] == "treatment", 1.3, 1.0)
            revenue = orders * rng.gamma(2.0, 10.0, 400) * lift
            with pytest.raises(ExperimentError, match=r"denominators are required"):
                exp.record(units["unit"], revenue)
            bad = orders.copy()
            bad[3] = -1
            with pytest.raises(ExperimentError, match=r"denominators must be finite and >= 0: "
                                                      r"value 3 is -1.0"):
                exp.record(units["unit"], revenue, denominators=bad)
            exp.record(units["unit"], revenue, denominators=orders)
        state = exp.status()
        assert exp.verify() == 1200
    rows = _units_table(tmp_path / "e.sqlite")
    arm = np.array([r[1] for r in rows])
    y, d = np.array([r[2] for r in rows]), np.array([r[4] for r in rows])
    est = ratio(*(np.bincount(arm, w) for w in (np.ones_like(y), y, y * y, d, d * d, d * y)))
    assert state.arms["mean"].to_numpy() == pytest.approx(
        [y[arm == a].sum() / d[arm == a].sum() for a in (0, 1)])
    assert state.arms["mean"].to_numpy() == pytest.approx(est.mean)
    assert state.arms.loc["treatment", "verdict"] == "better"
    assert "ratio metric" in state.interval_note


def test_winsorisation_caps_at_the_pooled_quantile_of_the_counted_rewards(tmp_path):
    rng = stream(7, "winsor-live")
    with _experiment(tmp_path, winsorize=0.9) as exp:
        units = exp.assign(400)
        rewards = rng.lognormal(0, 2, 400)
        exp.record(units["unit"][:300], rewards[:300])
        exp.record(units["unit"][301:], rewards[301:])  # unit 301 (index 300) waits
        state = exp.status()
    rows = _units_table(tmp_path / "e.sqlite")
    ids = np.array([r[0] for r in rows])
    arm = np.array([r[1] for r in rows])
    y = np.array([np.nan if r[2] is None else r[2] for r in rows])
    # counted: every arm's units before the first unit of any arm still waiting
    first = ids[np.isnan(y)].min() if np.isnan(y).any() else ids.max() + 1
    counted = (ids < first) & ~np.isnan(y)
    values = np.sort(y[counted])
    cap = values[math.ceil(0.9 * values.size) - 1]
    assert state.verdicts["winsorize_cap"] == pytest.approx(cap)
    for a, name in enumerate(exp.arm_names):
        mine = np.minimum(y[counted & (arm == a)], cap)
        assert state.arms.loc[name, "counted"] == mine.size
        assert state.arms.loc[name, "mean"] == pytest.approx(mine.mean())
    assert "pooled 0.9 quantile" in state.interval_note


# --- format 6 → 7 ------------------------------------------------------------------------

def test_a_format_6_file_is_upgraded_on_a_writable_open_and_keeps_its_verdicts(tmp_path):
    path = tmp_path / "old.sqlite"
    with _experiment(tmp_path, "old") as exp:
        units = exp.assign(400)
        exp.record(units["unit"], np.arange(400, dtype=float))
        before = exp.status().arms
    conn = sqlite3.connect(path)
    for statement in DOWNGRADE_TO_6:
        conn.execute(statement)
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match=r"format 6.*readonly=False"):
        Experiment.open(path, readonly=True)
    with Experiment.open(path) as exp:
        assert exp.verify() == 400
        after = exp.status().arms
    assert after[["counted", "mean", "diff_low"]].equals(before[["counted", "mean",
                                                                  "diff_low"]])
    conn = sqlite3.connect(path)
    assert json.loads(conn.execute("SELECT value FROM meta WHERE key = 'format'")
                      .fetchone()[0]) == FORMAT
    conn.close()


# --- HTTP and CLI ----------------------------------------------------------------------------

def test_the_http_service_takes_covariates_and_denominators(tmp_path):
    pytest.importorskip("starlette")
    from service_support import Server, call

    db = tmp_path / "db"
    db.mkdir()
    server = Server(db)
    try:
        status, created = call(server.port, "POST", "/experiments", {
            "name": "rev", "algorithm": "FixedAllocation", "arms": ["control", "b"],
            "seed": 0, "reward_type": "continuous", "verdicts": {"cuped": True}})
        assert status == 201, created
        status, got = call(server.port, "POST", "/experiments/rev/assign",
                           {"n": 2, "covariates": [3.0, 4.0]})
        assert status == 200, got
        units = [u["unit"] for u in got["units"]]
        status, refused = call(server.port, "POST", "/experiments/rev/record",
                               {"units": units, "rewards": [1.0, 2.0], "covariates": "x"})
        assert status == 400 and "covariates must be a list" in json.dumps(refused)
        status, refused = call(server.port, "POST", "/experiments/rev/record",
                               {"units": units, "rewards": [1.0, 2.0], "covariates": [3.0]})
        assert status == 400 and "covariates must be numbers, one per unit" in json.dumps(
            refused)
        status, ok = call(server.port, "POST", "/experiments/rev/record",
                          {"units": units, "rewards": [1.0, 2.0]})
        assert status == 200 and ok["recorded"] == 2
        status, refused = call(server.port, "POST", "/experiments/rev/record",
                               {"units": units, "rewards": [1.0, 2.0],
                                "denominators": [1, 1]})
        assert status == 400 and "denominators: this experiment" in json.dumps(refused)
        status, state = call(server.port, "GET", "/experiments/rev/status")
        assert status == 200 and state["verdicts"]["cuped"] is True
    finally:
        server.stop()


def test_the_cli_creates_a_ratio_experiment_and_records_denominators(tmp_path, capsys):
    from banditkit.cli import main

    path = tmp_path / "cli.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "FixedAllocation",
                 "--arms", "control,b", "--seed", "0", "--reward-type", "continuous",
                 "--ratio"]) == 0
    assert main(["experiment", "create", str(tmp_path / "bad.sqlite"), "--algorithm",
                 "FixedAllocation", "--arms", "a,b", "--seed", "0", "--reward-type",
                 "continuous", "--winsorize", "1.5"]) == 2
    assert "winsorize'] must be a quantile in (0.5, 1)" in capsys.readouterr().err
    assert not (tmp_path / "bad.sqlite").exists()
    with Experiment.open(path) as exp:
        units = exp.assign(4)["unit"].tolist()
    csv = tmp_path / "r.csv"
    csv.write_text("unit,reward\n" + "".join(f"{u},{i}\n" for i, u in enumerate(units)))
    assert main(["experiment", "record", str(path), str(csv)]) == 2
    assert "denominators are required" in capsys.readouterr().err
    csv.write_text("unit,reward,denominator\n"
                   + "".join(f"{u},{i},{1 + i % 2}\n" for i, u in enumerate(units)))
    assert main(["experiment", "record", str(path), str(csv)]) == 0
    with Experiment.open(path, readonly=True) as exp:
        state = exp.status()
    assert state.verdicts["ratio"] is True
    assert state.arms["counted"].sum() == 4


# --- fast versions of benchmarks/bench_continuous.py ---------------------------------------

def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_continuous", Path(__file__).parents[1] / "benchmarks" / "bench_continuous.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_latency_guardrail_pauses_far_sooner_than_subtracting_arm_intervals(tmp_path):
    # 10% slower (200 → 220 ms, s.d. 100): fixed-n needs ~340 per arm (one-sided, 80% power)
    bench = _bench()
    results = [bench.latency_run(tmp_path, 5, r, step=200, cap=6_000, null=False)
               for r in range(2)]
    for got in results:
        assert got["continuous"] <= 2_500 and got["bounded"] <= 5_000
        assert math.isinf(got["subtracted"])  # not by 6,000 per arm (it needs ~50,000)


def test_a_latency_guardrail_does_not_pause_when_nothing_is_slower(tmp_path):
    bench = _bench()
    for r in range(2):
        got = bench.latency_run(tmp_path, 6, r, step=500, cap=2_000, null=True)
        assert all(math.isinf(v) for v in got.values())


def test_the_revenue_model_keeps_the_lognormal_reward_and_correlates_with_its_covariate():
    bench = _bench()
    mean, sd, rho = bench.correlation(0, n=400_000)
    assert mean == pytest.approx(0.05 * math.exp(3.5 + 0.5), rel=0.05)  # $2.73
    # the s.d. of the covariate-free model (a purchase lognormal(3.5, 1) w.p. 0.05): $19.9
    assert sd == pytest.approx(math.sqrt(0.05 * math.exp(9.0) - (0.05 * math.exp(4.0)) ** 2),
                               rel=0.1)
    assert 0.35 < rho < 0.6


def test_cuped_decides_revenue_sooner_than_the_plain_sequence(tmp_path):
    bench = _bench()
    got = bench.revenue_run(tmp_path / "r.sqlite", 1, 0, step=2_000, cap=30_000, tune_n=5_000,
                            lift=1.6)
    # a 60% lift (fast): CUPED decides, and no later than the plain sequence
    assert got["cuped"] < 30_000 and got["cuped"] <= got["plain"]


def test_the_cli_takes_a_continuous_guardrail_without_a_range(tmp_path, capsys):
    from banditkit.cli import main

    path = tmp_path / "g.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "FixedAllocation",
                 "--arms", "control,b", "--seed", "0", "--reward-type", "binary",
                 "--guardrail", "latency:max_increase:20"]) == 0
    assert main(["experiment", "create", str(tmp_path / "bad.sqlite"), "--algorithm",
                 "FixedAllocation", "--arms", "a,b", "--seed", "0",
                 "--guardrail", "latency:max_increase:-1"]) == 2
    assert "guardrails[0].margin must be a number >= 0" in capsys.readouterr().err
    with Experiment.open(path) as exp:
        assert exp.guardrails[0].bounded is False
        units = exp.assign(4)["unit"].tolist()
    csv = tmp_path / "r.csv"
    csv.write_text("unit,reward,metric_latency\n"
                   + "".join(f"{u},{i % 2},{5000.0 * (i + 1)}\n" for i, u in enumerate(units)))
    assert main(["experiment", "record", str(path), str(csv)]) == 0  # no range: any latency
    with Experiment.open(path, readonly=True) as exp:
        rails = exp.status().guardrails
    assert rails["diff_low"].tolist() == [-math.inf]  # below 100 values: no bound yet


def test_the_status_page_of_a_cuped_experiment_plots_plain_means(tmp_path):
    from banditkit.service.page import render_page

    rng = stream(10, "cuped-page")
    with _experiment(tmp_path, cuped=True) as exp:
        for _ in range(2):
            got = exp.assign(400, covariates=rng.normal(0, 1, 400))
            exp.record(got["unit"], rng.normal(1, 1, 400))
        page = render_page(exp, title="cuped")
    assert page.count("<svg") >= 1 and "CUPED" in page


@pytest.mark.parametrize("verdicts", [{"cuped": True}, {"ratio": True}, {"winsorize": 0.9},
                                      {"cuped": True, "winsorize": 0.9}])
def test_continuous_options_give_the_same_status_on_both_stores(where, tmp_path, verdicts):
    # the same calls on SQLite and PostgreSQL: the same means, differences and caps
    rng = stream(11, "both-stores")
    rewards = rng.lognormal(0, 1, 600)
    x, d = rng.normal(0, 1, 600), rng.poisson(1.0, 600).astype(float)
    rail = [{"metric": "latency", "rule": "max_increase", "margin": 0}]
    kwargs = {"algorithm": "FixedAllocation", "arms": ["control", "treatment"], "seed": 0,
              "params": {"batch_size": 300}, "reward_type": "continuous",
              "verdicts": {"sequence": "asymptotic", **verdicts}, "guardrails": rail}
    states = []
    for place in (where, tmp_path / "reference.sqlite"):
        exp = (place.create(**kwargs) if place is where
               else Experiment.create(place, **kwargs))
        try:
            for start in (0, 300):
                got = exp.assign(300)
                part = slice(start, start + 300)
                exp.record(got["unit"], rewards[part], metrics={"latency": rewards[part] * 100},
                           covariates=x[part] if "cuped" in verdicts else None,
                           denominators=d[part] if "ratio" in verdicts else None)
            states.append(exp.status())
            assert exp.verify() == 600
        finally:
            exp.close()
    a, b = states
    columns = ["counted", "mean", "diff", "diff_low", "diff_high"]
    assert np.allclose(a.arms[columns].to_numpy(float), b.arms[columns].to_numpy(float),
                       equal_nan=True)
    assert a.verdicts == pytest.approx(b.verdicts)
    assert np.allclose(a.guardrails["diff_low"].to_numpy(float),
                       b.guardrails["diff_low"].to_numpy(float), equal_nan=True)
