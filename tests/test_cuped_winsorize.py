"""CUPED on winsorised rewards (issue 23 §3: ``verdicts={"cuped": True, "winsorize": q}``):
the reward and the covariate each capped at its pooled q-quantile of the counted units, then
the CUPED adjustment on the capped values — through ``Experiment`` against the estimator on
the units table, its null level on heavy-tailed revenue (on sums, 300 runs, and through
``Experiment``, fast versions of ``benchmarks/bench_continuous.py cuped-winsor``), and the
narrower difference against winsorisation alone; plus ``status(count="recorded")`` of CUPED
and ratio experiments, which needs the covariates' sums of every recorded reward."""

from __future__ import annotations

import importlib.util
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.live.readout.adjusted import cuped, ratio
from banditkit.live.readout.statistics import compare
from banditkit.live.readout.sums import ArmSums
from banditkit.live.readout.verdict_spec import check_verdicts
from banditkit.rng import stream


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_continuous", Path(__file__).parents[1] / "benchmarks" / "bench_continuous.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _create(path, **verdicts):
    return Experiment.create(path, algorithm="FixedAllocation", arms=["control", "treatment"],
                             seed=0, params={"batch_size": 400}, reward_type="continuous",
                             verdicts={"tune_n": 1000, **verdicts})


def _rows(path):
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT id, arm, reward, covariate, denominator FROM units "
                            "ORDER BY id").fetchall()
    finally:
        conn.close()
    return [np.array([np.nan if r[i] is None else r[i] for r in rows]) for i in range(5)]


def _order_statistic(values, q):
    return np.sort(values)[math.ceil(q * values.size) - 1]


def _capped_cuped(arm, x, y, q):
    """The caps and the CUPED estimates on the capped values (module docstring), from the
    counted units' arms, covariates and rewards."""
    y_cap, x_cap = _order_statistic(y, q), _order_statistic(x, q)
    yc, xc = np.minimum(y, y_cap), np.minimum(x, x_cap)
    sums = [np.bincount(arm, w, minlength=2) for w in (np.ones_like(yc), yc, yc * yc, xc,
                                                       xc * xc, xc * yc)]
    return y_cap, x_cap, sums


def test_cuped_on_winsorised_rewards_is_the_estimator_on_the_capped_counted_units(tmp_path):
    rng = stream(21, "cuped-winsor-live")
    path = tmp_path / "e.sqlite"
    with _create(path, cuped=True, winsorize=0.9) as exp:
        # half the covariates at assign, half at record; heavy tails in both
        first = exp.assign(400, covariates=rng.lognormal(1, 1.5, 400))
        x_first = _rows(path)[3][-400:]
        exp.record(first["unit"], 2 * x_first + rng.lognormal(0, 1.5, 400)
                   + 3.0 * (first["arm"] == "treatment").to_numpy())
        second = exp.assign(400)
        x = rng.lognormal(1, 1.5, 400)
        y = 2 * x + rng.lognormal(0, 1.5, 400) + 3.0 * (second["arm"] == "treatment").to_numpy()
        exp.record(second["unit"][:300], y[:300], covariates=x[:300])
        exp.record(second["unit"][301:], y[301:], covariates=x[301:])  # index 300 waits
        # a unit with a huge covariate, expired: in no cap and no sum
        exp.expire(exp.assign(1, covariates=[1e9])["unit"].tolist())
        state = exp.status()
        recorded = exp.status(count="recorded")
        winsor_only = exp.status(verdicts={"cuped": False})
        spec = exp.verdict_spec
    ids, arm, y, x, _ = _rows(path)
    arm = arm.astype(int)
    # one cursor for all arms: every unit before the first unit of any arm still waiting
    first_waiting = ids[np.isnan(y) & (x != 1e9)].min(initial=10 ** 12)
    counted = ~np.isnan(y) & (ids < first_waiting)
    assert 0 < (~counted & ~np.isnan(y)).sum() < 400  # the prefix rule left some out
    for frame, keep in ((state, counted), (recorded, ~np.isnan(y))):
        y_cap, x_cap, sums = _capped_cuped(arm[keep], x[keep], y[keep], 0.9)
        assert frame.verdicts["winsorize_cap"] == pytest.approx(y_cap)
        assert frame.verdicts["winsorize_covariate_cap"] == pytest.approx(x_cap)
        est = cuped(*sums)
        assert frame.arms["counted"].tolist() == sums[0].astype(int).tolist()
        assert frame.arms["mean"].to_numpy() == pytest.approx(est.mean, rel=1e-9)
        n = sums[0].astype(np.int64)
        reference = compare(ArmSums(n, n, sums[1], sums[2], np.zeros(2, bool),
                                    extra=np.stack([*sums[3:], *(np.zeros(2),) * 3], -1)),
                            None, intervals="anytime", alpha=0.05, control=0, spec=spec)
        assert frame.arms.loc["treatment", "diff_low"] == pytest.approx(reference.diff_low[1])
        assert frame.arms.loc["treatment", "diff_high"] == pytest.approx(
            reference.diff_high[1])
    assert "rewards and covariates capped at their pooled 0.9 quantile" in state.interval_note
    assert state.arms.loc["treatment", "verdict"] == "better"
    width = lambda s: s.arms.loc["treatment", "diff_high"] - s.arms.loc[  # noqa: E731
        "treatment", "diff_low"]
    assert width(state) < 0.8 * width(winsor_only)


def test_cuped_on_winsorised_revenue_keeps_its_level_under_the_null_on_sums():
    # 300 null experiments × 10 looks of 500 visitors per arm on the heavy-tailed revenue
    # model, the caps as status computes them (the order statistic ⌈qN⌉ of the counted
    # values, re-estimated at each look), status's own compare: asymptotic and mSPRT
    bench = _bench()
    rng = stream(22, "cuped-winsor-null")
    runs, looks, step, q = 300, 10, 500, 0.99
    visitor_q, w, x = bench.visitors(rng, runs * looks * step * 2)
    y = bench.revenue(rng, visitor_q, w, np.ones(visitor_q.size))
    x, y = x.reshape(runs, looks * step, 2), y.reshape(runs, looks * step, 2)
    specs = [check_verdicts("continuous", None, {"cuped": True, "winsorize": q,
                                                 "tune_n": 5000, **extra}, None)
             for extra in ({}, {"sequence": "msprt", "tau": 0.3})]
    false = np.zeros((len(specs), runs), dtype=bool)
    for t in range(1, looks + 1):
        seen_y, seen_x = y[:, : t * step], x[:, : t * step]
        rank = math.ceil(q * 2 * t * step) - 1
        y_cap = np.partition(seen_y.reshape(runs, -1), rank, axis=1)[:, rank, None, None]
        x_cap = np.partition(seen_x.reshape(runs, -1), rank, axis=1)[:, rank, None, None]
        yc, xc = np.minimum(seen_y, y_cap), np.minimum(seen_x, x_cap)
        n = np.full((runs, 2), t * step)
        zero = np.zeros((runs, 2))
        sums = ArmSums(n, n, yc.sum(1), (yc ** 2).sum(1), np.zeros((runs, 2), bool),
                       extra=np.stack([xc.sum(1), (xc ** 2).sum(1), (xc * yc).sum(1),
                                       zero, zero, zero], axis=-1))
        for i, spec in enumerate(specs):
            c = compare(sums, None, intervals="anytime", alpha=0.05, control=0, spec=spec)
            false[i] |= c.verdict[:, 1] != "undecided"
    assert (false.mean(axis=1) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)).all(), \
        false.mean(axis=1)


def test_through_experiment_null_runs_keep_their_level_and_cuped_narrows_the_capped_width(
        tmp_path):
    # fast version of `bench_continuous.py cuped-winsor --null`: 10 null experiments × 6
    # looks of 500 visitors per arm, through Experiment (a fresh file each)
    bench = _bench()
    runs = [bench.cuped_winsor_run(tmp_path / f"{r}.sqlite", 23, r, step=500, looks=6,
                                   tune_n=5000) for r in range(10)]
    for name in ("cuped+winsor", "cuped+winsor msprt"):
        false = np.mean([math.isfinite(r[f"first {name}"]) for r in runs])
        assert false <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / len(runs)), (name, false)
    # the width against winsorisation alone: about √(1 − ρ²), ρ the correlation of the
    # capped reward and the capped covariate (0.47 on this model)
    rho = bench.capped_correlation(23, n=400_000)["capped_both"]
    for sequence in ("", " msprt"):
        ratio_ = np.median([r[f"width cuped+winsor{sequence}"] / r[f"width winsor{sequence}"]
                            for r in runs])
        assert ratio_ == pytest.approx(math.sqrt(1 - rho ** 2), abs=0.04), sequence


def test_capping_the_covariate_too_keeps_more_of_its_correlation():
    # why the covariate is capped as well (banditkit.live.readout.winsorize): on the revenue model
    # the capped reward correlates more with the capped covariate than with the raw one
    got = _bench().capped_correlation(24, n=400_000)
    assert got["capped_both"] > got["capped_reward_raw_covariate"] + 0.03


@pytest.mark.parametrize("verdicts", [{"cuped": True}, {"ratio": True}])
def test_status_counting_every_recorded_reward_takes_the_covariates_and_denominators(
        tmp_path, verdicts):
    # before: status(count="recorded") of a CUPED or ratio experiment raised a ValueError
    rng = stream(25, "recorded-sums")
    path = tmp_path / "r.sqlite"
    with _create(path, sequence="asymptotic", **verdicts) as exp:
        got = exp.assign(400)
        y, x = rng.normal(5, 2, 400), rng.normal(0, 1, 400)
        d = rng.poisson(2.0, 400).astype(float) + 1
        kwargs = ({"covariates": x} if "cuped" in verdicts else {"denominators": d})
        keep = np.arange(400) != 10  # unit 10 waits: the prefix stops there, recorded does not
        exp.record(got["unit"][keep], y[keep],
                   **{k: v[keep] for k, v in kwargs.items()})
        # overflow units (beyond the batch's slots): counted by the sequences, not by fixed-n
        extra = exp.assign(20)
        assert extra.attrs["overflow_units"] == extra["unit"].tolist()
        exp.record(extra["unit"], rng.normal(50, 2, 20),
                   **{k: v[:20] + 100 for k, v in kwargs.items()})
        state = exp.status(count="recorded")
        fixed = exp.status(count="recorded", intervals="fixed")
        resolved = exp.status()
    _, arm, y, x, d = _rows(path)
    done = ~np.isnan(y)
    for frame, units in ((state, done), (fixed, done & (np.arange(y.size) < 400))):
        a, v = arm[units].astype(int), y[units]
        other = x[units] if "cuped" in verdicts else d[units]
        est = (cuped if "cuped" in verdicts else ratio)(*(np.bincount(a, w) for w in (
            np.ones_like(v), v, v * v, other, other * other, other * v)))
        assert frame.arms["counted"].sum() == units.sum()
        assert frame.arms["mean"].to_numpy() == pytest.approx(est.mean, rel=1e-9)
    assert fixed.arms["counted"].sum() == 399 and state.arms["counted"].sum() == 419
    assert resolved.arms["counted"].sum() < 399
