"""Issue 37 §2: quantile metrics — an anytime-valid confidence sequence for a p-quantile and for
the difference of two arms' p-quantiles (live/readout/quantiles.py), checked for coverage at
every look under an allocation that follows the values seen."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import lognorm

from banditkit.live.errors import ExperimentError
from banditkit.live.readout.quantiles import _accepted, quantile_difference, quantile_sequence


def test_the_bisection_finds_the_counts_the_mixture_accepts():
    """Every count k with M_n(k) < 1/α, computed directly from the Beta mixture's closed form."""
    from scipy.special import betaln

    for n, p, alpha in [(1, 0.9, 0.05), (7, 0.5, 0.001), (100, 0.9, 0.025), (999, 0.99, 0.05),
                        (5000, 0.9, 0.05), (40, 0.1, 0.2)]:
        a, b = p * 10, (1 - p) * 10
        k = np.arange(n + 1.0)
        log_m = betaln(a + k, b + n - k) - betaln(a, b) - k * math.log(p) \
            - (n - k) * math.log1p(-p)
        ok = np.flatnonzero(log_m < math.log(1 / alpha))
        assert _accepted(n, p, alpha, 10.0) == (ok[0], ok[-1])


def test_the_sequence_brackets_the_order_statistics_the_mixture_accepts():
    rng = np.random.default_rng(1)
    x = rng.exponential(1.0, 500)
    est, low, high = quantile_sequence(x, 0.9, 0.05)
    s = np.sort(x)
    assert est == pytest.approx(np.quantile(x, 0.9))
    # the ends are order statistics around the 450th, and a tighter alpha widens them
    assert low in s and high in s and low < est < high
    # q is in the sequence exactly when its count #{x <= q} is accepted: [x_(k-), x_(k+ + 1))
    k_lo, k_hi = _accepted(500, 0.9, 0.05, 10.0)
    assert (low, high) == (s[k_lo - 1], s[k_hi])
    _, low2, high2 = quantile_sequence(x, 0.9, 0.001)
    assert low2 <= low and high2 >= high
    # few values cannot bound a high quantile from above
    assert quantile_sequence(x[:5], 0.9, 0.05)[2] == math.inf
    assert math.isnan(quantile_sequence([], 0.5)[0])


def test_bad_arguments_are_refused_by_name():
    for kw, rule in (({"p": 1.0}, "p must be a number in"), ({"alpha": 0}, "alpha must be"),
                     ({"strength": -1}, "strength must be")):
        args = {"p": 0.9, "alpha": 0.05, **kw}
        with pytest.raises(ExperimentError, match=rule):
            quantile_sequence([1.0, 2.0], args["p"], args["alpha"],
                              strength=kw.get("strength", 10.0))


@pytest.mark.parametrize("lift", [1.0, 1.3])
def test_the_difference_covers_at_every_look_under_value_dependent_allocation(lift):
    """100 runs of 20 looks (100 units a look), lognormal latency, the treatment's scale times
    ``lift``: before each look the share of the arm with the lower observed p90 is raised to
    0.8 (an allocation that follows the values). A run errs when the difference's interval
    excludes the true p90 difference at any look: at most α (checked at α + 2 s.e.)."""
    p, sigma, runs = 0.9, 1.0, 100
    truth = (lift - 1.0) * lognorm.ppf(p, sigma)
    rng = np.random.default_rng([37, int(lift * 10)])
    errs, widths = 0, []
    for _ in range(runs):
        arms: list[list[float]] = [[], []]
        share, missed = 0.5, False
        for _ in range(20):
            to_arm = rng.random(100) < share
            draws = rng.lognormal(0.0, sigma, 100)
            arms[1] += (draws[to_arm] * lift).tolist()
            arms[0] += draws[~to_arm].tolist()
            _, low, high = quantile_difference(np.array(arms[1]), np.array(arms[0]), p, 0.05)
            missed |= not low <= truth <= high
            if len(arms[0]) > 20 and len(arms[1]) > 20:
                share = 0.8 if np.quantile(arms[1], p) < np.quantile(arms[0], p) else 0.2
        errs += missed
        widths.append(high - low)
    assert errs / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    assert np.isfinite(np.median(widths))  # not vacuous: bounded after 2,000 units


def test_an_experiments_quantiles_count_its_resolved_prefix(tmp_path):
    """Through Experiment: latencies where the fast ones are recorded at once and the slow ones
    late (value-dependent reporting). The readout counts each arm's resolved prefix, so in null
    experiments no look's p90 difference excludes 0; with the treatment 60% slower it is called
    (diff_low > 0) by the end."""
    from banditkit import Experiment

    false, called = 0, []
    for r, slower in itertools.product(range(4), (1.0, 1.6)):
        rng = np.random.default_rng([37, r, int(slower * 10)])
        with Experiment.create(tmp_path / f"q{r}_{slower}.sqlite", algorithm="FixedAllocation",
                               arms=["control", "new"], seed=r, reward_type="continuous",
                               params={"batch_size": 600}) as exp:
            for _ in range(4):
                got = exp.assign(600)
                y = rng.lognormal(3.0, 0.8, 600) * np.where(got["arm"] == "new", slower, 1.0)
                fast = y < np.median(y)
                for part in (fast, ~fast):  # the fast ones first, the slow ones late
                    exp.record(got["unit"][part], y[part])
                    q = exp.quantiles(0.9)
                    if slower == 1.0:
                        false += bool(q.loc["new", "diff_low"] > 0
                                      or q.loc["new", "diff_high"] < 0)
            called.append(q.loc["new", "diff_low"] > 0 if slower > 1 else None)
            assert q["counted"].sum() == 2400 and q.attrs["p"] == 0.9
            assert q.loc["control", "low"] < q.loc["control", "quantile"] < q.loc[
                "control", "high"]
    assert false == 0
    assert all(c for c in called if c is not None)
    # the readout stops at the first unit still waiting: nothing counted past it
    with Experiment.create(tmp_path / "gap.sqlite", algorithm="FixedAllocation",
                           arms=["control", "new"], seed=0, reward_type="continuous",
                           params={"batch_size": 100}) as exp:
        got = exp.assign(100)
        exp.record(got["unit"][1:], np.arange(1.0, 100.0))
        assert exp.quantiles(0.5)["counted"].sum() == 0
