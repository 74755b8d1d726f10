"""The planner with CUPED (issue 23 §4, ``plan(..., cuped_rho=ρ)``): the variance factor
1 − ρ², its refusals, and its prediction against experiments run through ``Experiment`` with
``verdicts={"cuped": True}`` (a fast version of ``benchmarks/bench_continuous.py
plan-cuped``)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from banditkit import ExperimentError
from banditkit.live.readout.plan import plan

BASE = {"mean": 5.0, "variance": 4.0, "mde": 0.2, "daily_units": 500, "look_every": 250,
        "tune_n": 5000, "runs": 200, "seed": 3}


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_continuous", Path(__file__).parents[1] / "benchmarks" / "bench_continuous.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("rho", [-0.1, 1.0, 1.5, float("nan"), "0.5", True, None])
def test_plan_refuses_a_correlation_outside_0_1(rho):
    if rho is None:  # None is "no CUPED": the plain plan
        assert plan(**BASE, cuped_rho=rho).cuped_rho is None
        return
    with pytest.raises(ExperimentError, match=r"cuped_rho must be a number in \[0, 1\)"):
        plan(**BASE, cuped_rho=rho)


def test_plan_refuses_cuped_with_the_exact_sequence():
    with pytest.raises(ExperimentError, match=r"cuped_rho needs a normal sequence"):
        plan(base_rate=0.1, mde=0.02, daily_units=2000, sequence="exact", cuped_rho=0.5)
    # a binary metric with CUPED takes the asymptotic sequence by default
    got = plan(base_rate=0.1, mde=0.02, daily_units=2000, runs=50, cuped_rho=0.5)
    assert got.sequence == "asymptotic" and got.cuped_rho == 0.5


def test_cuped_plans_the_plain_metric_with_1_minus_rho_squared_the_variance():
    for sequence in ("asymptotic", "msprt"):
        plain = plan(**BASE, sequence=sequence)
        same = plan(**BASE, sequence=sequence, cuped_rho=0.0)
        assert same.expected_units == plain.expected_units
        with_cuped = plan(**BASE, sequence=sequence, cuped_rho=0.6)
        shrunk = plan(**{**BASE, "variance": BASE["variance"] * (1 - 0.36)}, sequence=sequence)
        assert with_cuped.expected_units == shrunk.expected_units
        assert with_cuped.p90_units == shrunk.p90_units
        assert with_cuped.fixed_n_units == pytest.approx(plain.fixed_n_units * (1 - 0.36))
        assert with_cuped.expected_units < 0.8 * plain.expected_units
    # 0/1 rewards: the adjusted values' variance is p(1 − p)(1 − ρ²), on both arms
    binary = plan(base_rate=0.1, mde=0.02, daily_units=2000, runs=50, cuped_rho=0.5)
    assert binary.fixed_n_units == pytest.approx(
        (1.959964 + 0.841621) ** 2 * (0.09 + 0.12 * 0.88) * 0.75 / 0.02 ** 2, rel=1e-5)
    assert "with CUPED at rho = 0.6 (variance x 0.64)" in str(with_cuped)
    # and simulates them with that variance: about 0.75 times the plain asymptotic units
    kwargs = {"base_rate": 0.1, "mde": 0.02, "daily_units": 2000, "runs": 300, "seed": 1}
    ratio = (plan(**kwargs, cuped_rho=0.5).expected_units
             / plan(**kwargs, sequence="asymptotic").expected_units)
    assert 0.65 < ratio < 0.85, ratio


def test_the_cuped_planner_predicts_the_units_experiment_takes(tmp_path):
    # 30 CUPED experiments through Experiment (ρ = 0.7, a skewed covariate), a look every 250
    # units per arm, against the planner's 1,000 runs: within 20% here (15% in the benchmark)
    bench = _bench()
    units = np.array([bench.plan_cuped_run(tmp_path / f"{r}.sqlite", 4, r, step=250,
                                           cap=10_000, mde=0.25, tune_n=5_000)
                      for r in range(30)])
    assert np.isfinite(units).all()
    predicted = plan(mean=bench.PLAN_MEAN, variance=bench.PLAN_VARIANCE, mde=0.25,
                     daily_units=500, look_every=250, tune_n=5_000, runs=1000, seed=4,
                     max_units=10_000, cuped_rho=bench.PLAN_RHO)
    assert predicted.expected_units == pytest.approx(units.mean(), rel=0.2)
    plain = plan(mean=bench.PLAN_MEAN, variance=bench.PLAN_VARIANCE, mde=0.25,
                 daily_units=500, look_every=250, tune_n=5_000, runs=1000, seed=4,
                 max_units=10_000)
    assert plain.expected_units > 1.4 * units.mean()  # without CUPED it would be far off


def test_the_cli_plans_with_cuped_and_refuses_a_bad_rho(capsys):
    from banditkit.cli import main

    argv = ["experiment", "plan", "--mean", "5", "--variance", "4", "--mde", "0.2",
            "--daily-units", "500", "--runs", "50", "--json"]
    assert main([*argv, "--cuped-rho", "0.6"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["cuped_rho"] == 0.6 and got["sequence"] == "asymptotic"
    assert main([*argv, "--cuped-rho", "1"]) == 2
    err = capsys.readouterr().err
    assert "cuped_rho must be a number in [0, 1)" in err and "Traceback" not in err
    assert math.isfinite(got["expected_units"])
