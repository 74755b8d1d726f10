"""Issue 37 §2: regression adjustment on several covariates (live/readout/regression.py): one
covariate is CUPED exactly, the difference is OLS's treatment coefficient with common slopes,
and its sequence covers at every look under an allocation that follows the values, narrower
than CUPED on one covariate when the others explain more."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.readout.adjusted import cuped
from banditkit.live.readout.regression import (
    CovariateSums,
    adjusted_difference,
    regression_adjusted,
    sums_of,
)


def _data(rng, n, effect=0.0):
    X = rng.normal(0, 1, (n, 3)) * [1.0, 2.0, 0.5] + [5.0, 0.0, 1.0]
    arm = rng.integers(0, 2, n)
    y = X @ [0.8, 0.5, 1.5] + rng.normal(0, 1, n) + effect * arm
    return y, X, arm


def test_one_covariate_is_cuped_and_several_are_ols():
    rng = np.random.default_rng(0)
    y, X, arm = _data(rng, 3000, effect=0.2)
    one = sums_of(y, X[:, 0], arm, 2)
    got = regression_adjusted(one)
    want = cuped(one.n, one.y, one.yy, one.x[:, 0], one.xx[:, 0, 0], one.xy[:, 0])
    np.testing.assert_allclose(got.mean, want.mean, rtol=1e-10)
    np.testing.assert_allclose(got.variance, want.variance, rtol=1e-9)
    s = sums_of(y, X, arm, 2)
    diff, low, high = adjusted_difference(s, 0)
    design = np.column_stack([np.ones(y.size), arm, X])
    tau = np.linalg.lstsq(design, y, rcond=None)[0][1]
    assert diff[1] == pytest.approx(tau, rel=1e-9)
    assert low[1] < 0.2 < high[1] and np.isnan(diff[0])
    with pytest.raises(ExperimentError, match="one row per unit"):
        sums_of(y[:-1], X, arm, 2)
    with pytest.raises(ExperimentError, match="must be finite"):
        sums_of(np.full(3, np.nan), np.ones((3, 1)), np.zeros(3, int), 2)


def test_the_sequence_covers_under_a_value_following_allocation_and_narrows():
    """120 null runs, 10 looks of 300 units: before each look the arm with the higher adjusted
    mean gets 70% of the units. Runs whose interval misses 0 at any look: at most α (+2 s.e.);
    the interval at the last look is narrower than CUPED's on the first covariate alone by about
    √((1 − R²₃)/(1 − ρ²₁))."""
    rng = np.random.default_rng(37)
    runs, looks, step = 120, 10, 300
    missed, ratios = 0, []
    for _ in range(runs):
        total = first = None
        share = 0.5
        miss = False
        for _ in range(looks):
            y, X, _ = _data(rng, step)
            arm = (rng.random(step) < share).astype(int)
            # the sums are additive: each look adds its units' sums
            parts = (sums_of(y, X, arm, 2), sums_of(y, X[:, 0], arm, 2))
            total, first = ((p if t is None else CovariateSums(
                *(getattr(t, f) + getattr(p, f) for f in ("n", "y", "yy", "x", "xx", "xy"))))
                for t, p in zip((total, first), parts, strict=True))
            diff, low, high = adjusted_difference(total, 0, n_tune=1500)
            miss |= not low[1] <= 0 <= high[1]
            share = 0.7 if diff[1] > 0 else 0.3
        missed += miss
        _, l1, h1 = adjusted_difference(first, 0, n_tune=1500)
        ratios.append((high[1] - low[1]) / (h1[1] - l1[1]))
    assert missed / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    # within-arm: var(y) = 0.64 + 1 + 0.5625 + 1 = 3.2025; residual 1 with all three, 2.5625
    # with the first alone
    assert np.median(ratios) == pytest.approx(math.sqrt(1 / 2.5625), rel=0.05)
