"""Issue 37 §2: planned looks — a group-sequential test with α-spending (planned_looks.py):
its critical values spend what they should, its repeated intervals cover at the planned looks
under adaptive allocation, are narrower there than the anytime-valid sequence, and a look
beyond the plan is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.problem import LiveArms
from banditkit.live.readout.planned_looks import GroupSequential
from banditkit.live.readout.sequences import asymptotic_difference
from banditkit.registry import make_policy
from banditkit.rng import stream


def test_pocock_spending_matches_the_published_bounds():
    # Lan-DeMets Pocock-type spending, 5 equally spaced looks, two-sided alpha 0.05 (gsDesign's
    # sfLDPocock: 2.4380 2.4268 2.4101 2.3966 2.3859)
    got = GroupSequential.plan(5, spending="pocock").bounds
    assert got == pytest.approx([2.4380, 2.4268, 2.4101, 2.3966, 2.3859], abs=3e-4)
    # one look is the fixed-n z-test
    assert GroupSequential.plan(1).bounds[0] == pytest.approx(1.959964, abs=1e-4)


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
def test_the_bounds_spend_alpha_as_planned_on_brownian_paths(spending):
    design = GroupSequential.plan(4, spending=spending, fractions=(0.2, 0.5, 0.8, 1.0))
    rng = np.random.default_rng(37)
    t = np.array(design.fractions)
    steps = rng.normal(0, np.sqrt(np.diff(t, prepend=0.0)), size=(200_000, 4))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    crossed = np.abs(z) >= np.array(design.bounds)
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
    cumulative = np.array([(first >= 0) & (first <= k) for k in range(4)]).mean(axis=1)
    if spending == "pocock":
        want = 0.05 * np.log1p((math.e - 1) * t)
    else:
        from statistics import NormalDist

        N = NormalDist()
        want = np.array([2 - 2 * N.cdf(N.inv_cdf(0.975) / math.sqrt(s)) for s in t])
    se = np.sqrt(want * (1 - want) / 200_000)
    assert np.all(np.abs(cumulative - want) < 4 * se + 1e-4)


def test_a_look_beyond_the_plan_and_bad_plans_are_refused():
    design = GroupSequential.plan(3)
    for look in (1, 2, 3):  # diff ± c_look·se
        low, high = design.interval(0.01, 0.005, look)
        c = design.bounds[look - 1]
        assert (low, high) == pytest.approx((0.01 - c * 0.005, 0.01 + c * 0.005))
    with pytest.raises(ExperimentError, match="look 4 is beyond the plan of 3 looks"):
        design.interval(0.01, 0.005, 4)
    with pytest.raises(ExperimentError, match="look must be a positive integer"):
        design.interval(0.01, 0.005, 0)
    with pytest.raises(ExperimentError, match="looks must be an integer from 1 to 50"):
        GroupSequential.plan(0)
    with pytest.raises(ExperimentError, match="spending must be one of"):
        GroupSequential.plan(3, spending="haybittle")
    with pytest.raises(ExperimentError, match="fractions must be 3 increasing"):
        GroupSequential.plan(3, fractions=(0.5, 0.4, 1.0))


def test_repeated_intervals_cover_at_the_planned_looks_under_adaptive_allocation():
    """BatchedThompson with a control floor of 0.2, five batches of 400 (the planned looks at
    its batch ends), 200 runs: a run errs when any arm's repeated interval misses the truth at
    any planned look (Bonferroni over the two differences: α/2 each). And at the last look the
    interval is narrower than the asymptotic confidence sequence's."""
    means = np.array([0.30, 0.30, 0.36])
    K, runs = 3, 200
    design = GroupSequential.plan(5, alpha=0.025)
    errs, ratio = 0, []
    for r in range(runs):
        noise = stream(37, "gs", r)
        policy = make_policy("BatchedThompson", LiveArms(K, None, None),
                             stream(37, "gs-xi", r), horizon=2000, batch_size=400,
                             draws=200, control_floor=0.2, control_arm=0)
        n, S, look, missed = np.zeros(K), np.zeros(K), 0, False
        while (batch := policy.next_batch()) is not None:
            pulls = np.bincount(batch.arms, weights=batch.counts, minlength=K)
            got = noise.binomial(pulls.astype(np.int64), means).astype(float)
            policy.observe(batch, got[batch.arms])
            n, S, look = n + pulls, S + got, look + 1
            p = S / np.maximum(n, 1)
            se = np.sqrt(p * (1 - p) / np.maximum(n, 1) + p[0] * (1 - p[0]) / max(n[0], 1))
            low, high = design.interval(p - p[0], se, look)
            truth = means - means[0]
            missed |= bool(((low[1:] > truth[1:]) | (high[1:] < truth[1:])).any())
        errs += missed
        a_low, a_high = asymptotic_difference(n, S, S, 0, 0.025, n_tune=1000)
        ratio.append((high[2] - low[2]) / (a_high[2] - a_low[2]))
    assert errs / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    assert np.median(ratio) < 0.8
