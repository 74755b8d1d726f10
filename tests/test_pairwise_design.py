"""pairwise_design: the XY design of an item set, and its closed form when the items are arms
of a square X (the multi-armed structure of the P1-RAGE paper's click-through instance)."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.design import Differences, design_value, pairwise_design, xy_optimal


def _pairs(W: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(W.shape[0], k=1)
    return W[i] - W[j]


@pytest.mark.parametrize("active", [[0, 1], [0, 2, 5], [1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]])
def test_square_arms_closed_form_is_certified_and_optimal(active):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 6))
    active = np.asarray(active)
    design, rho = pairwise_design(X, X, active, 0.01)
    n = active.size
    assert design.lower_bound == 2 * n
    assert 2 * n <= rho <= 2 * n * 1.01
    assert rho == pytest.approx(design_value(X, design.weights, _pairs(X[active])))
    assert np.all(design.weights > 0)  # A(λ) invertible: IPS and least squares stay defined
    # no distribution does better than 2|W|: the lower bound is the optimum
    for lam in rng.dirichlet(np.ones(6), size=200):
        assert design_value(X, lam, _pairs(X[active])) >= 2 * n - 1e-9


def test_square_arms_agree_with_the_general_solver():
    X = np.random.default_rng(4).normal(size=(5, 5))
    _, rho = pairwise_design(X, X, np.arange(5), 1e-3)
    general = xy_optimal(X, Differences(X, np.arange(5)), tol=1e-4)
    assert rho == pytest.approx(general.value, rel=2e-3)


def test_items_that_are_not_arms_take_the_general_path():
    X = np.eye(3)
    Z = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.5], [0.2, 0.0, 1.0]])
    design, rho = pairwise_design(X, Z, np.arange(3), 0.01)
    assert design.iterations > 0  # solved, not the closed form
    assert rho == pytest.approx(design_value(X, design.weights, _pairs(Z)))
