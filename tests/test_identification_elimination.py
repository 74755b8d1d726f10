"""The shared elimination rule of the identifiers (RAGE, XY-adaptive) against its definition."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.estimation.least_squares import LeastSquares
from banditkit.identification.elimination import dominated
from banditkit.rng import stream


def _brute(Z, active, fit, width, strict):
    W = Z[active]
    out = np.zeros(len(active), dtype=bool)
    for a in range(len(active)):
        for b in range(len(active)):
            if a == b:
                continue
            y = W[b] - W[a]
            wid = width * np.sqrt(max(y @ fit.A_inv @ y, 0.0))
            gain = y @ fit.theta
            out[a] |= (wid < gain) if strict else (wid <= gain)
    return out


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("case", range(12))
def test_dominated_equals_its_definition(case, strict):
    # More items than the leaders tested first (16), with integer items so that some
    # comparisons are exact ties (where strict and non-strict differ).
    rng = stream(0, "test-dominated", case)
    d = int(rng.integers(2, 5))
    m = int(rng.integers(5, 60))
    Z = rng.integers(-2, 3, size=(m, d)).astype(float)
    X = np.vstack([np.eye(d), rng.standard_normal((3, d))])
    counts = rng.integers(1, 50, size=X.shape[0])
    sums = counts * (X @ rng.standard_normal(d)) + rng.standard_normal(X.shape[0])
    fit = LeastSquares.from_sums(X, counts, sums)
    active = np.sort(rng.choice(m, size=int(rng.integers(2, m + 1)), replace=False))
    width = float(rng.choice([0.0, 0.5, 2.0]))
    np.testing.assert_array_equal(dominated(Z, active, fit, width, strict=strict),
                                  _brute(Z, active, fit, width, strict))
