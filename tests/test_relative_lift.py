"""Issue 37 §2: the relative lift (diff / control mean) and its anytime-valid interval from the
difference's and the control's sequences (live/readout/relative.py), in status, its text, the
CLI and the page."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.live.readout.relative import relative_lift
from banditkit.live.readout.statistics import ArmSums, compare
from live_support import thompson_looks


def _brute(d_lo, d_hi, c_lo, c_hi):
    """min and max of Δ/μ over a dense grid of the box (μ > 0)."""
    d = np.linspace(d_lo, d_hi, 401)
    m = np.linspace(max(c_lo, 1e-9), c_hi, 401)
    r = d[:, None] / m[None, :]
    return r.min(), r.max()


@pytest.mark.parametrize("d_lo,d_hi", [(0.01, 0.03), (-0.03, -0.01), (-0.01, 0.02),
                                       (-0.02, 0.005), (0.0, 0.01)])
@pytest.mark.parametrize("c_lo,c_hi", [(0.08, 0.12), (0.5, 0.9), (0.2, 0.2)])
def test_the_lift_interval_is_the_image_of_the_box(d_lo, d_hi, c_lo, c_hi):
    mean = np.array([(c_lo + c_hi) / 2, 0.0])
    lift, lo, hi = relative_lift(mean, np.array([c_lo, 0]), np.array([c_hi, 0]),
                                 np.array([np.nan, (d_lo + d_hi) / 2]),
                                 np.array([np.nan, d_lo]), np.array([np.nan, d_hi]), 0)
    want = _brute(d_lo, d_hi, c_lo, c_hi)
    assert (lo[1], hi[1]) == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert lift[1] == pytest.approx((d_lo + d_hi) / 2 / mean[0])
    assert np.isnan([lift[0], lo[0], hi[0]]).all()  # the control's row


def test_the_lift_is_unbounded_or_undefined_without_a_positive_control_mean():
    mean, d = np.array([0.01, 0.02]), np.array([np.nan, 0.01])
    _, lo, hi = relative_lift(mean, np.array([-0.01, 0]), np.array([0.03, 0]), d,
                              np.array([np.nan, -0.005]), np.array([np.nan, 0.02]), 0)
    assert lo[1] == -np.inf and hi[1] == np.inf
    _, lo, hi = relative_lift(mean, np.array([-0.01, 0]), np.array([0.03, 0]), d,
                              np.array([np.nan, 0.005]), np.array([np.nan, 0.02]), 0)
    assert lo[1] == pytest.approx(0.005 / 0.03) and hi[1] == np.inf
    _, lo, hi = relative_lift(np.array([-1.0, 0]), np.array([-2.0, 0]), np.array([-0.5, 0]),
                              d, np.array([np.nan, 0.005]), np.array([np.nan, 0.02]), 0)
    assert np.isnan([lo[1], hi[1]]).all()


@pytest.mark.parametrize("means", [np.array([0.10, 0.08, 0.15]), np.array([0.2, 0.2, 0.2])])
def test_the_lift_interval_covers_at_every_look_under_adaptive_allocation(means):
    """Coverage of the true lift at every look of 30 BatchedThompson runs, with each sequence
    the readout offers (the exact one on sums is the mixture): a run misses when any arm's lift
    interval excludes the truth at any look. The construction errs at most α_Δ + α/K."""
    runs = 30
    N, T, run_of = thompson_looks(means, runs, 37, "lift", horizon=2000, draws=300)
    truth = means / means[0] - 1
    for sequence in ("exact", "asymptotic"):
        from banditkit.live.readout.verdict_spec import check_verdicts

        spec = check_verdicts("binary", None, {"sequence": sequence, "tune_n": 1000}, None)
        c = compare(ArmSums(N, N, T, T, np.ones(N.shape, bool)), (0.0, 1.0),
                    intervals="anytime", alpha=0.05, control=0, spec=spec)
        _, lo, hi = relative_lift(c.mean, c.low, c.high, c.diff, c.diff_low, c.diff_high, 0)
        miss = ((lo[:, 1:] > truth[1:]) | (hi[:, 1:] < truth[1:])).any(axis=1)
        per_run = np.bincount(run_of, weights=miss, minlength=runs) > 0
        assert per_run.mean() <= 0.10, sequence
        # the lift's verdict is the difference's: the same sign at every look
        both = np.isfinite(lo[:, 1:]) & np.isfinite(c.diff_low[:, 1:])
        assert ((lo[:, 1:] > 0) == (c.diff_low[:, 1:] > 0))[both].all()
        if means[2] > means[0]:  # not vacuous: the best arm is called better in some runs
            assert (lo[:, 2] > 0).any()


def _exp(path, **kw):
    return Experiment.create(path, algorithm="FixedAllocation", arms=["control", "new"],
                             seed=0, reward_type="binary", params={"batch_size": 2000}, **kw)


def test_status_the_cli_and_the_page_show_the_lift(tmp_path, capsys):
    rng = np.random.default_rng(4)
    path = tmp_path / "lift.sqlite"
    with _exp(path) as exp:
        for _ in range(3):
            got = exp.assign(2000)
            new = (got["arm"] == "new").to_numpy()
            exp.record(got["unit"], (rng.random(2000) < np.where(new, 0.15, 0.10)) * 1.0)
        status = exp.status()
    arms = status.arms
    cols = list(arms.columns)
    assert cols[cols.index("diff_high") + 1: cols.index("diff_high") + 4] == [
        "lift", "lift_low", "lift_high"]
    row, ctrl = arms.loc["new"], arms.loc["control"]
    assert row["lift"] == pytest.approx(row["diff"] / ctrl["mean"])
    assert row["lift_low"] == pytest.approx(row["diff_low"] / ctrl["high"]
                                            if row["diff_low"] > 0
                                            else row["diff_low"] / ctrl["low"])
    assert row["lift_low"] < row["lift"] < row["lift_high"]
    assert "lift = diff / control mean" in str(status)
    from banditkit.cli import main

    capsys.readouterr()
    assert main(["experiment", "status", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    text = json.dumps(shown)
    assert "lift_low" in text and "lift_high" in text
    from banditkit.service.page import render_page

    with Experiment.open(path, readonly=True) as exp:
        html = render_page(exp, title="lift")
    assert "<th>lift_low</th>" in html and "<th>lift</th>" in html


def test_the_lift_keeps_its_level_with_conversions_reported_at_once_and_zeros_late(tmp_path):
    """Value-dependent reporting through Experiment: in null experiments every 1 is recorded
    at once and every 0 only at the end of the day (its window); status after each partial
    record reads the resolved prefix, so the lift's interval must not drift from 0's side."""
    false = 0
    for r, _ in itertools.product(range(5), [0]):
        rng = np.random.default_rng([37, r])
        with _exp(tmp_path / f"null{r}.sqlite") as exp:
            for _ in range(3):
                got = exp.assign(2000)
                y = (rng.random(2000) < 0.1) * 1.0
                ones = y == 1
                exp.record(got["unit"][ones], y[ones])   # conversions at once
                s = exp.status().arms.loc["new"]
                false += bool(s["lift_low"] > 0 or s["lift_high"] < 0)
                exp.record(got["unit"][~ones], y[~ones])  # the zeros late
                s = exp.status().arms.loc["new"]
                false += bool(s["lift_low"] > 0 or s["lift_high"] < 0)
    assert false == 0
