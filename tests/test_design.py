"""G-optimal and XY-optimal designs: Kiefer–Wolfowitz, agreement with an exact convex solver,
lazy differences, certificates, and input refusals."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from banditkit.design import (
    Design,
    DesignConvergenceWarning,
    Differences,
    design_value,
    g_optimal,
    xy_optimal,
)


def _value(X: np.ndarray, w: np.ndarray, Y: np.ndarray) -> float:
    """Objective computed independently of the library (plain inverse, explicit Y)."""
    A = (X.T * w) @ X
    return float(np.max(np.einsum("ij,jk,ik->i", Y, np.linalg.inv(A), Y)))


def _sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _all_differences(Z: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(len(Z), 1)
    return np.vstack([Z[i] - Z[j], Z[j] - Z[i]])


def _cvxpy_optimum(X: np.ndarray, Y: np.ndarray) -> float:
    cp = pytest.importorskip("cvxpy")
    lam = cp.Variable(X.shape[0], nonneg=True)
    A = sum(lam[i] * np.outer(X[i], X[i]) for i in range(X.shape[0]))
    t = cp.Variable()
    cons = [cp.sum(lam) == 1] + [cp.matrix_frac(y, A) <= t for y in Y]
    prob = cp.Problem(cp.Minimize(t), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    return float(prob.value)


@pytest.mark.parametrize(("n", "d", "seed"), [(5, 3, 0), (40, 4, 1), (300, 9, 2), (2000, 15, 3),
                                               (60, 6, 4)])
def test_g_optimal_kiefer_wolfowitz(n: int, d: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))
    D = g_optimal(X, tol=0.01)
    assert isinstance(D, Design)
    assert D.weights.shape == (n,) and np.all(D.weights >= 0)
    assert D.weights.sum() == pytest.approx(1.0, abs=1e-12)
    # Kiefer–Wolfowitz: optimum is d; certified gap within tol; value checked independently.
    assert D.lower_bound == d
    assert d <= D.value <= d * 1.01 + 1e-12
    assert _value(X, D.weights, X) == pytest.approx(D.value, rel=1e-9)
    assert D.relative_gap == pytest.approx((D.value - d) / d)
    assert D.converged
    np.testing.assert_array_equal(D.support, np.flatnonzero(D.weights > 0))
    # Tighter tolerances are honoured too.
    assert g_optimal(X, tol=1e-4).value <= d * (1 + 1e-4) + 1e-12


def test_g_optimal_uniform_on_symmetric_set() -> None:
    # ±e_i: the G-optimal design is uniform and the value is exactly d.
    d = 5
    X = np.vstack([np.eye(d), -np.eye(d)])
    D = g_optimal(X, tol=1e-6)
    assert D.value == pytest.approx(d, rel=1e-6)
    pairs = D.weights[:d] + D.weights[d:]
    np.testing.assert_allclose(pairs, 1.0 / d, rtol=1e-5)


def test_g_optimal_max_iter_warns_and_reports_true_gap() -> None:
    X = np.random.default_rng(5).normal(size=(500, 12))
    with pytest.warns(DesignConvergenceWarning):
        D = g_optimal(X, tol=1e-9, max_iter=3)
    assert not D.converged
    assert D.value == pytest.approx(_value(X, D.weights, X), rel=1e-9)
    assert D.relative_gap > 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_xy_optimal_matches_convex_solver_array_y(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n, d = [(6, 2), (8, 3), (10, 4), (10, 3)][seed]
    X = rng.normal(size=(n, d))
    Y = rng.normal(size=(7, d))
    opt = _cvxpy_optimum(X, Y)
    D = xy_optimal(X, Y, tol=0.01)
    assert D.lower_bound <= opt * (1 + 1e-5)
    assert opt <= D.value * (1 + 1e-6)
    assert D.value / opt - 1 <= 0.01 + 1e-6
    assert _value(X, D.weights, Y) == pytest.approx(D.value, rel=1e-8)
    assert D.relative_gap <= 0.01


@pytest.mark.parametrize("seed", range(3))
def test_xy_optimal_matches_convex_solver_differences(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n, d = [(7, 3), (9, 4), (10, 2)][seed]
    X = _sphere(rng, n, d)
    Z = rng.normal(size=(6, d))
    Y = _all_differences(Z)
    opt = _cvxpy_optimum(X, Y[: len(Y) // 2])  # z - z' and z' - z give the same constraint
    D = xy_optimal(X, Differences(Z), tol=0.01)
    assert D.lower_bound <= opt * (1 + 1e-5)
    assert opt <= D.value * (1 + 1e-6)
    assert D.value / opt - 1 <= 0.01 + 1e-6
    assert _value(X, D.weights, Y) == pytest.approx(D.value, rel=1e-8)


def test_differences_same_design_as_explicit_array() -> None:
    rng = np.random.default_rng(7)
    X = _sphere(rng, 25, 4)
    Z = rng.normal(size=(12, 4))
    lazy = xy_optimal(X, Differences(Z), tol=0.005)
    explicit = xy_optimal(X, _all_differences(Z), tol=0.005)
    # Both certified within tol of the same optimum; each design evaluated both ways agrees.
    for D in (lazy, explicit):
        assert design_value(X, D.weights, Differences(Z)) == pytest.approx(
            _value(X, D.weights, _all_differences(Z)), rel=1e-9)
    lo = max(lazy.lower_bound, explicit.lower_bound)
    assert lazy.value <= lo * 1.005 + 1e-9 and explicit.value <= lo * 1.005 + 1e-9


def test_differences_object() -> None:
    Z = np.arange(12, dtype=float).reshape(4, 3) ** 1.5
    diffs = Differences(Z)
    assert len(diffs) == 12 and diffs.dim == 3
    M = diffs.materialize()
    assert M.shape == (12, 3)
    expected = {tuple(Z[i] - Z[j]) for i in range(4) for j in range(4) if i != j}
    assert {tuple(r) for r in M} == expected
    sub = diffs.restrict([0, 2, 3])
    assert len(sub) == 6
    vals, idx = sub.scan(np.eye(3), 6)
    # Each unordered pair is visited once: 3 values for 3 items.
    np.testing.assert_allclose(vals, np.sort(np.sum(sub.materialize() ** 2, axis=1))[::-2])
    # The scan's maximiser is the largest squared norm over the restricted pairs.
    brute = max(np.sum((Z[i] - Z[j]) ** 2) for i in (0, 2, 3) for j in (0, 2, 3))
    assert vals[0] == pytest.approx(brute)
    i, j = sub.pairs(idx[:1])
    assert np.sum((Z[i[0]] - Z[j[0]]) ** 2) == pytest.approx(brute)
    np.testing.assert_allclose(sub.rows(idx[:1])[0], Z[i[0]] - Z[j[0]])


def test_xy_certificate_on_rage_multivariate_arms() -> None:
    # RAGE paper multivariate testing (D = 5): by symmetry the uniform design is optimal and the
    # worst difference flips 3 of 5 factors: ||z - z'||² = 4|S|(1 + D - |S|) = 36.
    D_ = 5
    W = np.array(list(itertools.product([-1.0, 1.0], repeat=D_)))
    cols = [np.ones(len(W))] + [W[:, k] for k in range(D_)]
    cols += [W[:, k] * W[:, l] for k in range(D_) for l in range(k + 1, D_)]
    X = np.column_stack(cols)
    design = xy_optimal(X, Differences(X), tol=0.01)
    assert design.lower_bound <= 36 * (1 + 1e-9) <= design.value * (1 + 1e-9)
    assert design.relative_gap <= 0.01


def test_xy_large_differences_certified() -> None:
    # |Z| = 1500 in d = 8: 2.2 million differences, never materialised.
    rng = np.random.default_rng(11)
    X = _sphere(rng, 1500, 8)
    D = xy_optimal(X, Differences(X), tol=0.01)
    assert D.converged and D.relative_gap <= 0.01
    assert D.lower_bound <= D.value
    # Spot check the value against an explicit evaluation on the worst pair plus random pairs.
    Ainv = np.linalg.inv((X.T * D.weights) @ X)
    _, idx = Differences(X).scan(Ainv, 1)
    i, j = Differences(X).pairs(idx)
    y = X[i[0]] - X[j[0]]
    assert y @ Ainv @ y == pytest.approx(D.value, rel=1e-9)
    a, b = rng.integers(0, 1500, size=(2, 20000))
    Yr = X[a] - X[b]
    assert np.max(np.einsum("ij,jk,ik->i", Yr, Ainv, Yr)) <= D.value * (1 + 1e-9)


def test_design_is_frozen() -> None:
    D = g_optimal(np.eye(3))
    with pytest.raises(AttributeError):
        D.value = 0.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        D.weights[0] = 0.5


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: g_optimal(np.array([[1.0, np.nan], [0.0, 1.0]])), "finite"),
        (lambda: g_optimal(np.array([[1.0, 0.0], [2.0, 0.0]])), "span"),
        (lambda: g_optimal(np.eye(2), tol=0.0), "tol"),
        (lambda: g_optimal(np.eye(2), tol=-1.0), "tol"),
        (lambda: xy_optimal(np.eye(2), np.ones((3, 3))), "Y must"),
        (lambda: xy_optimal(np.eye(2), np.empty((0, 2))), "Y must not be empty"),
        (lambda: xy_optimal(np.eye(2), Differences(np.ones((1, 2)))), "Y must not be empty"),
        (lambda: xy_optimal(np.eye(2), Differences(np.ones((3, 3)))), "dimension"),
        (lambda: xy_optimal(np.eye(2), np.array([[np.inf, 0.0]])), "finite"),
        (lambda: xy_optimal(np.array([[1.0, 1.0], [2.0, 2.0]]), np.eye(2)), "span"),
        (lambda: xy_optimal(np.eye(2), np.eye(2), tol=float("nan")), "tol"),
        (lambda: Differences(np.eye(3), subset=[0, 5]), "subset"),
    ],
)
def test_refusals(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_no_warning_when_converged() -> None:
    X = np.random.default_rng(3).normal(size=(30, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xy_optimal(X, X[:5], tol=0.01)
        g_optimal(X, tol=0.01)


@pytest.mark.parametrize(("n", "d", "seed"), [(300, 9, 2), (200, 5, 7), (100, 8, 8)])
def test_g_optimal_away_steps_converge_within_iteration_budget(n: int, d: int, seed: int) -> None:
    # Away steps make the Fedorov–Wynn iteration converge linearly; plain Frank–Wolfe (toward
    # steps only) still converges, but sublinearly. Measured at tol = 1e-4 on these instances:
    # 297, 63 and 146 iterations with away steps, 59,167, 28,547 and 3,222 without. The budget
    # of 2,000 leaves room for harmless changes of the path while catching the slow one.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DesignConvergenceWarning)
        D = g_optimal(X, tol=1e-4, max_iter=2_000)
    assert D.converged and D.iterations <= 2_000
    assert _value(X, D.weights, X) <= d * (1 + 1e-4) + 1e-12
