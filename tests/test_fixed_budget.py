"""The frame every fixed-budget identifier shares: what it refuses, before any work."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.identification import GBAI, P1RAGE, MixedPeace, ODLinBAI, P1Peace, Peace
from banditkit.identification.fixed_budget import check_budget_problem

X = np.vstack([np.eye(3), [[0.6, 0.8, 0.0]]])


@pytest.mark.parametrize("cls", [GBAI, P1RAGE, P1Peace, MixedPeace, Peace, ODLinBAI])
@pytest.mark.parametrize(("X_", "Z", "budget", "error", "match"), [
    (X, None, 3, ValueError, r"budget must be at least the number of arms \(4\)"),
    (X, None, 10.5, TypeError, "budget must be an integer"),
    (X, None, 0, ValueError, "budget"),
    (X[:, :2] @ np.ones((2, 3)), None, 100, ValueError, "X must span R"),
    (X, np.vstack([X[:2], X[:1]]), 100, ValueError, "Z must have distinct rows"),
    (X, np.ones((2, 2)), 100, ValueError, "Z must have d = 3 columns"),
    (np.where(X > 0.5, np.nan, X), None, 100, ValueError, "X must contain only finite"),
])
def test_bad_problems_are_refused_naming_the_parameter(cls, X_, Z, budget, error, match):
    with pytest.raises(error, match=match):
        cls(X_, Z, budget)


def test_arrays_are_private_read_only_copies():
    user = X.copy()
    Xc, Zc, budget = check_budget_problem(user, None, 4)
    assert Zc is Xc and budget == 4
    assert not Xc.flags.writeable and Xc.flags.owndata
    user[0, 0] = 5.0  # the caller's array changes; the problem does not
    assert Xc[0, 0] == 1.0
