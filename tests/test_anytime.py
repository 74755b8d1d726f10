"""Anytime-valid status: the confidence sequence's mathematics, the split of α over arms, the
differences to the control and their verdict, the missing-outcome warning, and — by simulating
a user who looks after every record call — that the intervals hold at every look while fixed-n
ones do not."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from banditkit import Experiment, ExperimentError
from banditkit.live.readout.anytime import PRIOR, confidence_sequence, log_mixture
from banditkit.live.readout.sequences import bernstein_sequence, difference_sequence
from banditkit.live.readout.statistics import arm_table, missing_outcome_warnings
from banditkit.live.readout.sums import ArmSums

ROOT = Path(__file__).parent.parent
_spec = importlib.util.spec_from_file_location("bench_anytime",
                                               ROOT / "benchmarks" / "bench_anytime.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

ELIMINATION = {"rho": 0.2, "beta_floor": False, "commit": "argmax"}


def _sums(n, totals, binary=True):
    n = np.asarray(n)
    totals = np.asarray(totals, dtype=float)
    return ArmSums(n, n, totals, totals if binary else totals ** 2 / np.maximum(n, 1),
                   np.full(n.shape, binary))


# -- the mathematics ---------------------------------------------------------------------------
@pytest.mark.parametrize("S, n, mu", [(3, 10, 0.5), (0, 7, 0.2), (41.5, 120, 0.31),
                                      (200, 200, 0.9)])
def test_the_mixture_is_the_integral_of_the_likelihood_ratio_over_the_jeffreys_prior(S, n, mu):
    """log M_n(μ) = log ∫ (p/μ)^S ((1−p)/(1−μ))^(n−S) Beta(p; 1/2, 1/2) dp, by quadrature."""
    assert PRIOR == (0.5, 0.5)

    def integrand(p):
        return np.exp(S * np.log(p / mu) + (n - S) * np.log((1 - p) / (1 - mu))) * \
            stats.beta.pdf(p, 0.5, 0.5)

    value, _ = integrate.quad(integrand, 0, 1, points=[S / n], limit=200, epsabs=0,
                              epsrel=1e-10)
    assert log_mixture(S, n, mu) == pytest.approx(np.log(value), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("S, n, alpha", [(3, 10, 0.05), (0, 50, 0.01), (480, 500, 0.2),
                                         (37.25, 400, 0.05 / 3)])
def test_the_ends_lie_where_the_mixture_reaches_one_over_alpha(S, n, alpha):
    low, high = confidence_sequence(S, n, alpha)
    assert 0 <= low <= S / n <= high <= 1
    for end in (low, high):
        if 0 < end < 1:
            assert log_mixture(S, n, end) == pytest.approx(np.log(1 / alpha), abs=1e-9)
    # inside kept, just outside excluded
    assert log_mixture(S, n, S / n) < np.log(1 / alpha)
    if low > 0:
        assert log_mixture(S, n, low * 0.999) > np.log(1 / alpha)
    assert tuple(map(float, confidence_sequence(0, 0, alpha))) == (0.0, 1.0)


def test_a_sequence_covers_iid_means_at_every_n_simultaneously():
    """Bernoulli(0.3) at every n up to 1,000, 300 paths: P(some n excludes 0.3) ≤ α."""
    rng = np.random.default_rng(5)
    alpha, mu = 0.1, 0.3
    x = rng.random((300, 1000)) < mu
    S, n = np.cumsum(x, axis=1), np.arange(1, 1001)
    low, high = confidence_sequence(S, np.broadcast_to(n, S.shape), alpha)
    missed = ((low > mu) | (high < mu)).any(axis=1).mean()
    assert missed <= alpha
    # the fixed-n Wilson interval at the same level, read at every n, misses far more often
    from banditkit.intervals import wilson_interval
    wl, wh = wilson_interval(S, np.broadcast_to(n, S.shape), 1 - alpha)
    assert ((wl > mu) | (wh < mu)).any(axis=1).mean() > 3 * alpha


# -- the table status shows ---------------------------------------------------------------------
def test_each_arm_gets_alpha_over_k_and_differences_get_their_own_sequences():
    # arms' intervals: the beta-binomial sequence at alpha/K (0/1 rewards); differences: the
    # direct sequence (banditkit.live.readout.sequences) at alpha(1 - s)/(K - 1), with the control's
    # own sequence at alpha*s bounding the nuisance (s = control_share = 0.05)
    sums = _sums([100, 80, 120], [30, 40, 20])
    frame = arm_table(["a", "b", "c"], sums, (0.0, 1.0), intervals="anytime", alpha=0.05,
                      control=0)
    low, high = confidence_sequence(np.array([30, 40, 20]), np.array([100, 80, 120]),
                                    0.05 / 3)
    np.testing.assert_allclose(frame["low"], low)
    np.testing.assert_allclose(frame["high"], high)
    cl, ch = confidence_sequence(30, 100, 0.05 * 0.05)
    dl, dh = difference_sequence(np.array([100, 80, 120]), np.array([30.0, 40, 20]),
                                 np.array([30.0, 40, 20]), 0, cl, ch, 0.05 * 0.95 / 2)
    np.testing.assert_allclose(frame["diff_low"][1:], dl[1:])
    np.testing.assert_allclose(frame["diff_high"][1:], dh[1:])
    np.testing.assert_allclose(frame["diff"][1:], [0.5 - 0.3, 20 / 120 - 0.3])
    assert np.isnan(frame.loc["a", "diff"]) and frame.loc["a", "verdict"] == "control"


def test_rewards_are_rescaled_from_the_reward_range():
    # rewards in [-1, 1]: 10 rewards summing to 4 are 10 rescaled ones summing to (4 + 10)/2;
    # not 0/1, so the arms get the empirical-Bernstein sequence
    sums = _sums([10, 10], [4.0, -2.0], binary=False)
    frame = arm_table(["a", "b"], sums, (-1.0, 1.0), intervals="anytime", alpha=0.05,
                      control=0)
    n = np.array([10.0, 10.0])
    scaled = np.array([7.0, 4.0])
    scaled_sq = (sums.total_sq + 2 * sums.total + n) / 4
    low, high = bernstein_sequence(n, scaled, scaled_sq, 0.025)
    np.testing.assert_allclose(frame["low"], -1 + 2 * low)
    np.testing.assert_allclose(frame["high"], -1 + 2 * high)


@pytest.mark.parametrize("intervals", ["anytime", "fixed"])
def test_the_verdict_says_better_when_the_arm_beats_the_control(intervals):
    sums = _sums([5000, 5000, 5000, 5000], [1000, 1500, 500, 1020])
    frame = arm_table(["ctl", "up", "down", "same"], sums, (0.0, 1.0), intervals=intervals,
                      alpha=0.05, control=0)
    assert frame["verdict"].tolist() == ["control", "better", "worse", "undecided"]
    assert frame.loc["up", "diff_low"] > 0 and frame.loc["down", "diff_high"] < 0
    assert frame.loc["same", "diff_low"] < 0 < frame.loc["same", "diff_high"]


def test_fixed_intervals_are_wilson_and_newcombe_at_level_one_minus_alpha():
    sums = _sums([60, 50], [12, 20])
    frame = arm_table(["a", "b"], sums, (0.0, 1.0), intervals="fixed", alpha=0.1, control=0)
    from banditkit.intervals import wilson_interval
    la, ua = wilson_interval(12, 60, 0.9)
    lb, ub = wilson_interval(20, 50, 0.9)
    assert (frame.loc["b", "low"], frame.loc["b", "high"]) == pytest.approx((lb, ub))
    # Newcombe (1998) method 10, from the two Wilson intervals
    assert frame.loc["b", "diff_low"] == pytest.approx(0.2 - np.hypot(0.4 - lb, ua - 0.2))
    assert frame.loc["b", "diff_high"] == pytest.approx(0.2 + np.hypot(ub - 0.4, 0.2 - la))


def test_fixed_differences_of_other_rewards_are_welch_normal_intervals():
    # arm a: 40 rewards, mean 0.5, sd 0.2; arm b: 30 rewards, mean 0.6, sd 0.3 (ddof 1)
    n = np.array([40, 30])
    mean, sd = np.array([0.5, 0.6]), np.array([0.2, 0.3])
    total_sq = sd ** 2 * (n - 1) + n * mean ** 2
    sums = ArmSums(n, n, mean * n, total_sq, np.array([False, False]))
    frame = arm_table(["a", "b"], sums, (0.0, 1.0), intervals="fixed", alpha=0.05, control=0)
    half = stats.norm.ppf(0.975) * np.sqrt(0.04 / 40 + 0.09 / 30)
    assert (frame.loc["b", "diff_low"], frame.loc["b", "diff_high"]) == \
        pytest.approx((0.1 - half, 0.1 + half))


def test_the_missing_outcome_warning_needs_the_answer_rates_apart_at_alpha_over_k():
    names = ["a", "b", "c"]
    # answer rates 0.9 and 0.8 on 700 units: apart at level 1 − 0.05, not at 1 − 0.05/3 ...
    resolved, answered = np.array([700, 700, 700]), np.array([630, 630, 560])
    l1, h1 = confidence_sequence(answered, resolved, 0.05)
    assert h1[2] < l1[0]
    assert missing_outcome_warnings(names, resolved, answered, 0.05) == []
    # ... and on 1,750 units at both: the warning names the arm that loses outcomes
    resolved, answered = resolved * 5 // 2, answered * 5 // 2
    (warning,) = missing_outcome_warnings(names, resolved, answered, 0.05)
    assert "'c'" in warning.split(" lose ")[0] and "'a'" not in warning.split(" lose ")[0]


# -- a user who looks after every record call ---------------------------------------------------
@pytest.mark.parametrize("policy", ["ReplicableElimination", "BatchedElimination"])
def test_anytime_intervals_hold_at_every_look_and_fixed_ones_do_not(policy):
    runs, alpha = 300, 0.05
    looks = bench.simulate_looks(policy, bench.MEANS, 6000, 300, runs, seed=11)
    slack = 3 * np.sqrt(alpha * (1 - alpha) / runs)
    anytime = bench.errs(looks, bench.MEANS, "anytime", alpha)
    fixed = bench.errs(looks, bench.MEANS, "fixed", alpha)
    assert anytime["any"].mean() <= alpha + slack
    assert fixed["any"].mean() >= 0.4  # measured 67% and 98% over 100 runs
    assert fixed["arms"].mean() > 5 * max(anytime["arms"].mean(), 0.01)
    # every look of a run is there: one per record call of each batch, up to the horizon
    assert looks.n[looks.last].sum(axis=1).max() == 6000


def test_missing_outcomes_warn_on_a_planted_bug_and_rarely_on_clean_runs():
    runs, alpha = 200, 0.05
    common = dict(K=3, units=6000, call_size=100, loss=0.1, extra_loss=0.2, delay=5,
                  expire_after=10, seed=3, alpha=alpha)
    clean, _ = bench.missing_outcome_looks(runs, bad_arm=None, **common)
    assert clean.mean() <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / runs)
    planted, first = bench.missing_outcome_looks(runs, bad_arm=1, **common)
    assert planted.mean() >= 0.95 and np.nanmedian(first) <= 2500  # measured: 1,700


# -- through Experiment ---------------------------------------------------------------------------
def _elimination(path, **kw):
    kw.setdefault("overflow", "off")  # _drive stops when assign hands out nothing
    return Experiment.create(path, algorithm="ReplicableElimination", arms=["a", "b", "c"],
                             seed=1, horizon=30_000, params=ELIMINATION, **kw)


def _drive(exp, rng, keep, units=6000, step=150):
    """Assign ``step`` units a call; each answers 0/1 (rate 0.3) with probability keep[arm],
    the rest are expired (a daily job), until ``units`` units; the warnings after each call."""
    seen = []
    for _ in range(units // step):
        got = exp.assign(step)
        if got.empty:
            break
        answers = rng.random(len(got)) < np.asarray(keep)[got["arm_index"]]
        if answers.any():
            exp.record(got["unit"][answers], (rng.random(answers.sum()) < 0.3).astype(float))
        if (~answers).any():
            exp.expire(got["unit"][~answers].tolist())
        seen.append(exp.status().warnings)
    return seen


def test_an_arm_that_loses_outcomes_is_named_and_printed_first(tmp_path):
    with _elimination(tmp_path / "e.sqlite") as exp:
        seen = _drive(exp, np.random.default_rng(2), keep=[0.9, 0.9 * 0.8, 0.9])
        state = exp.status()
    assert state.warnings and "'b'" in state.warnings[0].split(" lose ")[0]
    assert "'a'" not in state.warnings[0].split(" lose ")[0]
    assert str(state).startswith("WARNING: missing outcomes")
    assert sum(1 for w in seen if not w) >= 1  # it took some units to see it


def test_a_clean_experiment_with_answers_still_coming_does_not_warn(tmp_path):
    with _elimination(tmp_path / "e.sqlite", order="batch") as exp:
        assert _drive(exp, np.random.default_rng(4), keep=[0.9, 0.9, 0.9], units=3000) \
            and not any(_drive(exp, np.random.default_rng(5), keep=[0.9] * 3, units=1500))
    with _elimination(tmp_path / "f.sqlite", order="batch") as exp:
        units = exp.assign(1350)  # the first batch: 450 per arm, arm c's last
        answered = units[units["arm"] != "c"]
        exp.record(answered["unit"], np.ones(len(answered)))
        state = exp.status()  # c's 450 units have not answered *yet*: no missing outcomes
    # only the outcome window's note that the batch waits
    (waiting,) = state.warnings
    assert "the algorithm's batch is all assigned and waits for 450 unit(s)" in waiting
    assert state.arms.loc["c", "recorded"] == 0


def test_status_shows_the_control_and_the_kind_of_interval_and_reopens_with_them(tmp_path):
    path = tmp_path / "e.sqlite"
    with _elimination(path, control="b", order="batch") as exp:
        units = exp.assign(1350)
        exp.record(units["unit"], (units["arm_index"].to_numpy() == 1).astype(float))
    with Experiment.open(path) as exp:
        state = exp.status()
        fixed = exp.status(intervals="fixed", alpha=0.1)
    assert state.control == "b" and state.intervals == "anytime" and state.alpha == 0.05
    assert state.arms["verdict"].tolist() == ["worse", "control", "worse"]
    assert "anytime-valid 95%" in str(state) and "control arm: b" in str(state)
    assert fixed.intervals == "fixed" and "ONE look" in str(fixed) and "90%" in str(fixed)
    # the fixed-n interval is narrower than the anytime one on the same data
    assert (fixed.arms["high"] - fixed.arms["low"] < state.arms["high"] - state.arms["low"]).all()


def test_the_cli_prints_and_exports_the_kind_of_interval(tmp_path):
    path = tmp_path / "e.sqlite"
    _elimination(path).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run([sys.executable, "-m", "banditkit", "experiment", "status", str(path),
                          "--json"], capture_output=True, text=True, env=env, check=True)
    summary = json.loads(run.stdout)
    assert (summary["intervals"], summary["alpha"], summary["control"], summary["warnings"]) \
        == ("anytime", 0.05, "a", [])
    assert {"diff_low", "diff_high", "verdict"} <= set(summary["arms"][0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(control="z"), "control must be one of the arm names"),
    (dict(control=0), "control must be one of the arm names"),
])
def test_an_unknown_control_is_refused_and_writes_no_file(tmp_path, kwargs, match):
    path = tmp_path / "e.sqlite"
    with pytest.raises(ExperimentError, match=match):
        _elimination(path, **kwargs)
    assert not path.exists()


@pytest.mark.parametrize("kwargs, match", [
    (dict(alpha=0), r"alpha must be a number in \(0, 1\)"),
    (dict(alpha=1.0), r"alpha must be a number in \(0, 1\)"),
    (dict(alpha=float("nan")), r"alpha must be a number in \(0, 1\)"),
    (dict(alpha=True), r"alpha must be a number in \(0, 1\)"),
    (dict(alpha="0.05"), r"alpha must be a number in \(0, 1\)"),
    (dict(intervals="bayes"), "intervals must be 'anytime' or 'fixed'"),
    (dict(intervals=None), "intervals must be 'anytime' or 'fixed'"),
])
def test_bad_status_options_are_refused_and_change_nothing(tmp_path, kwargs, match):
    with _elimination(tmp_path / "e.sqlite") as exp:
        units = exp.assign(30)
        exp.record(units["unit"][:10], np.ones(10))
        before = exp.units()
        with pytest.raises(ExperimentError, match=match):
            exp.status(**kwargs)
        assert exp.units().equals(before)


def test_only_units_before_an_arms_oldest_waiting_unit_count(tmp_path):
    with _elimination(tmp_path / "e.sqlite", order="batch") as exp:
        units = exp.assign(1350)  # 450 per arm: a's, then b's, then c's
        ab = units[units["arm"] != "c"]
        exp.record(ab["unit"], np.ones(len(ab)))
        c = units.loc[units["arm"] == "c", "unit"].to_numpy()
        lost, answered = c[1:181], c[181:]  # 40% of c's later units lost, c[0] still waiting
        exp.expire(lost.tolist())
        exp.record(answered, np.ones(answered.size))
        assert exp.status().warnings == []  # c's oldest unit may yet answer: nothing to judge
        exp.expire([int(c[0])])
        (warning,) = exp.status().warnings
    assert "arm(s) 'c' lose" in warning and "answered 269 of 450" in warning


def test_a_file_from_before_control_existed_compares_with_the_first_arm(tmp_path):
    import sqlite3

    path = tmp_path / "e.sqlite"
    _elimination(path, control="c").close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'control'")
    conn.close()
    with Experiment.open(path) as exp:
        assert exp.status().control == "a"


def test_an_algorithm_without_a_reward_range_gets_the_asymptotic_sequence(tmp_path):
    # UCB1 assumes [0, 1] by default; reward_range=None runs it on unbounded rewards: the
    # rewards are continuous, the asymptotic sequence applies, infinite below 100 rewards
    with Experiment.create(tmp_path / "u.sqlite", algorithm="UCB1", arms=["a", "b"], seed=0,
                           horizon=500, params={"reward_range": None}) as exp:
        for _ in range(4):
            got = exp.assign(1)
            exp.record(got["unit"], [1.0])
        state = exp.status()
        fixed = exp.status(intervals="fixed")
        assert np.isneginf(state.arms["low"]).all() and "continuous" in str(state)
        assert set(state.arms["verdict"]) == {"control", "undecided"}
        assert fixed.arms["low"].notna().all()
        for i in range(300):
            got = exp.assign(1)
            exp.record(got["unit"], [5.0 + (i % 3) + (got["arm"][0] == "b")])
        state = exp.status()
    many = state.arms["recorded"] >= 100
    assert many.any() and state.verdicts["sequence"] == "asymptotic"
    assert np.isfinite(state.arms["low"][many]).all()
    assert np.isneginf(state.arms["low"][~many]).all()
