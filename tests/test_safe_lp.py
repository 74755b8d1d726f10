"""The canonical LP of DEBORA-S/H (banditkit.policies.constrained.safe_lp): optimal,
deterministic to the
bit, canonical on ties (lexicographic maximum), insensitive to input noise below 2^-40, and a
documented fallback (least largest violation) when the constraints admit no strategy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from banditkit.policies.constrained.safe_lp import OUTPUT_GRID, optimistic_strategy, snap_strategy


def _vertices(c: np.ndarray, b: float) -> list[np.ndarray]:
    """Vertices of {x ∈ Δ_3 : c·x ≤ b}: feasible corners, and the points where c·x = b crosses
    an edge of the simplex (brute force, independent of any LP solver)."""
    K = c.size
    eye = np.eye(K)
    out = [eye[k] for k in range(K) if c[k] <= b + 1e-12]
    for i, j in itertools.combinations(range(K), 2):
        if c[i] != c[j]:
            t = (b - c[j]) / (c[i] - c[j])  # x = t e_i + (1 − t) e_j
            if 0 < t < 1:
                out.append(t * eye[i] + (1 - t) * eye[j])
    return out


def _random_problem(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    v = rng.random(3)
    c = rng.random(3) * 2 - 0.5  # optimistic costs may be negative
    b = float(rng.uniform(c.min(), c.max()))  # some strategy is always feasible
    return v, c, b


def test_optimum_matches_vertex_enumeration() -> None:
    rng = np.random.default_rng(0)
    for _ in range(60):
        v, c, b = _random_problem(rng)
        x = optimistic_strategy(v, c[None, :], np.array([b]))
        verts = _vertices(c, b)
        best = max(float(v @ p) for p in verts)
        assert x @ c <= b + 1e-8
        assert v @ x == pytest.approx(best, abs=1e-9)
        winners = [p for p in verts if v @ p >= best - 1e-12]
        if len(winners) == 1:  # unique optimum: the very vertex
            np.testing.assert_allclose(x, winners[0], atol=1e-9)


def test_same_input_gives_identical_bits() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        v, C, b = rng.random(5) * 100, rng.random((2, 5)) - 0.3, rng.random(2)
        x1 = optimistic_strategy(v, C, b)
        x2 = optimistic_strategy(v.copy(), C.copy(), b.copy())
        assert x1.tobytes() == x2.tobytes()


def test_output_on_grid_and_sums_to_one_exactly() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        x = optimistic_strategy(rng.random(4), rng.random((3, 4)), rng.random(3))
        assert x.sum() == 1.0
        assert np.all(x >= 0)
        np.testing.assert_array_equal(np.round(x / OUTPUT_GRID) * OUTPUT_GRID, x)


@pytest.mark.parametrize(("values", "costs", "thresholds", "expected"), [
    # no constraint, tie between arms 0 and 1: all mass on the lowest index
    ((1.0, 1.0, 0.0), np.zeros((0, 3)), np.zeros(0), (1.0, 0.0, 0.0)),
    # all tied, x_0 ≤ 0.3: lexicographic maximum (0.3, 0.7, 0)
    ((1.0, 1.0, 1.0), [[1.0, 0.0, 0.0]], [0.3], (0.3, 0.7, 0.0)),
    # all tied on a face cut by 0.9 x_0 + 0.1 x_1 + 0.1 x_2 ≤ 0.5: x_0 = 0.5, then x_1 = 0.5
    ((0.5, 0.5, 0.5), [[0.9, 0.1, 0.1]], [0.5], (0.5, 0.5, 0.0)),
    # tie between arms 1 and 2 only, arm 0 worse: (0, 1, 0)
    ((0.2, 0.7, 0.7), [[0.0, 0.0, 0.0]], [1.0], (0.0, 1.0, 0.0)),
    # x_2 = 0.4 (its cap) is forced; the rest is tied between arms 0 and 1: all on arm 0
    ((1.0, 1.0, 2.0), [[0.0, 0.0, 1.0]], [0.4], (0.6, 0.0, 0.4)),
])
def test_ties_go_to_the_lexicographic_maximum(values, costs, thresholds, expected) -> None:
    x = optimistic_strategy(np.array(values), np.array(costs, dtype=float),
                            np.array(thresholds, dtype=float))
    np.testing.assert_allclose(x, expected, atol=1e-12)


def test_ties_are_canonical_under_permuted_solver_paths() -> None:
    """A tied optimum must not depend on how the problem is written: duplicating a constraint
    row or scaling a row changes the solver's path, not the answer."""
    v = np.array([0.7, 0.7, 0.7, 0.1])
    C = np.array([[0.8, 0.2, 0.5, 0.0]])
    b = np.array([0.4])
    x = optimistic_strategy(v, C, b)
    np.testing.assert_array_equal(x, optimistic_strategy(v, np.vstack([C, C]), np.r_[b, b]))
    np.testing.assert_array_equal(x, optimistic_strategy(v, 4 * C, 4 * b))
    # lexicographic maximum by hand: x_0 as large as possible (0.8 x_0 + 0.2 (1 − x_0) ≤ 0.4
    # gives x_0 = 1/3), then x_1 = 2/3
    np.testing.assert_allclose(x, [1 / 3, 2 / 3, 0, 0], atol=1e-9)


def test_inputs_equal_below_the_grid_give_the_same_answer() -> None:
    # 0.1 + 0.2 exceeds 0.3 by one ulp: without snapping the tie breaks by the rounding error
    a = optimistic_strategy(np.array([0.3, 0.1 + 0.2]), np.zeros((1, 2)), np.ones(1))
    b = optimistic_strategy(np.array([0.1 + 0.2, 0.3]), np.zeros((1, 2)), np.ones(1))
    np.testing.assert_array_equal(a, [1.0, 0.0])
    np.testing.assert_array_equal(b, [1.0, 0.0])
    # constraint data perturbed below the grid: identical bits
    rng = np.random.default_rng(3)
    v, C, t = rng.random(4), rng.random((2, 4)), np.array([0.4, 0.5])
    x = optimistic_strategy(v, C, t)
    y = optimistic_strategy(v * (1 + 1e-15), C + 1e-14, t - 1e-14)
    assert x.tobytes() == y.tobytes()


def test_input_grid_keeps_outputs_at_output_grid_midpoints_identical() -> None:
    """x_0 = b lands half-way between two output grid points; one ulp more would round the
    other way, unless the inputs are first rounded to the (finer) input grid."""
    b = 0.5 + OUTPUT_GRID / 2
    b_next = np.nextafter(b, 1.0)
    v, C = np.array([1.0, 0.0]), np.array([[1.0, 0.0]])
    x = optimistic_strategy(v, C, np.array([b]))
    y = optimistic_strategy(v, C, np.array([b_next]))
    assert x.tobytes() == y.tobytes()
    assert abs(x[0] - b) <= OUTPUT_GRID


def test_infeasible_falls_back_to_least_largest_violation() -> None:
    # every strategy has x_0 + x_2/2 + x_1 + x_2/2 = 1, so max violation ≥ 0.3, reached
    # exactly when x_0 = x_1: the fallback set is {x_0 = x_1}
    C = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])
    b = np.array([0.2, 0.2])
    np.testing.assert_allclose(optimistic_strategy(np.array([0.0, 0.0, 1.0]), C, b),
                               [0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(optimistic_strategy(np.array([1.0, 0.0, 0.0]), C, b),
                               [0.5, 0.5, 0], atol=1e-9)
    # one constraint that nothing satisfies: the least costly arm
    np.testing.assert_allclose(
        optimistic_strategy(np.array([1.0, 0.0, 0.5]), np.array([[0.9, 0.6, 0.8]]), [0.3]),
        [0, 1, 0], atol=1e-9)


def test_snap_strategy() -> None:
    x = snap_strategy(np.array([1 / 3, 1 / 3, 1 / 3 + 1e-13, -1e-15]))
    assert x.sum() == 1.0 and x[3] == 0.0
    np.testing.assert_allclose(x, [1 / 3, 1 / 3, 1 / 3, 0], atol=1e-9)


@pytest.mark.parametrize(("values", "costs", "thresholds", "match"), [
    (np.ones((2, 2)), np.zeros((1, 2)), np.ones(1), "values"),
    (np.ones(3), np.zeros((1, 2)), np.ones(1), "costs"),
    (np.ones(3), np.zeros((2, 3)), np.ones(1), "thresholds"),
    (np.array([1.0, np.nan]), np.zeros((1, 2)), np.ones(1), "values must be finite"),
    (np.ones(2), np.array([[np.inf, 0.0]]), np.ones(1), "costs must be finite"),
])
def test_bad_input(values, costs, thresholds, match) -> None:
    with pytest.raises(ValueError, match=match):
        optimistic_strategy(values, costs, thresholds)
