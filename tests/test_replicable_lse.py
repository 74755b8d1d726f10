"""Replicable least squares (Esfandiari et al. 2023, Lemma 9 / Algorithm 4) and the core set of
Lemmas 7-8: determinism, the G-design guarantee, replicability and accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.design import design_value
from banditkit.envs.instances import grid_net
from banditkit.estimation import core_set, replicable_lse


@pytest.mark.parametrize("d,h", [(2, 0.1), (3, 0.25)])
def test_core_set_is_deterministic_and_keeps_the_g_guarantee(d, h):
    X = grid_net(h, d)
    a, b = core_set(X), core_set(X.copy())
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.weights, b.weights)  # bit-identical: both runs pull alike
    assert a.weights.sum() == pytest.approx(1.0)
    # Lemma 7: the design is a (1 + tol)-approximation; Lemma 8: the fix at most doubles g.
    assert a.design_value <= d * 1.01 + 1e-9
    assert a.value <= 2 * a.design_value + 1e-9
    assert a.value <= 4 * d  # what Lemma 9 needs
    full = np.zeros(len(X))
    full[a.indices] = a.weights
    assert design_value(X, full) == pytest.approx(a.value)  # value is what it claims
    # Every core arm has mass at least x (1 - x)^m after the fix (Appendix F.1).
    assert a.weights.min() >= a.min_mass * (1 - a.min_mass) ** a.n_mixed - 1e-12


def test_core_set_fix_lifts_small_masses():
    X = grid_net(0.1, 2)
    cs = core_set(X, min_mass=0.2)
    assert cs.weights.min() >= 0.2 * 0.8**cs.n_mixed - 1e-12


def _pair_sums(rng, mu, counts):
    """Independent Rademacher reward sums for two executions."""
    return [2.0 * rng.binomial(counts, (1 + mu) / 2) - counts for _ in range(2)]


def test_replicable_lse_replicates_and_is_accurate():
    # Core set of the disc grid, Rademacher rewards, fixed counts: Lemma 9's fixed design.
    X = grid_net(0.1, 2)
    cs = core_set(X)
    C = X[cs.indices]
    theta = np.array([0.6, -0.5])
    mu = C @ theta
    counts = np.full(len(C), 4000)
    rho, delta = 0.2, 0.05
    rng = np.random.default_rng(7)
    pairs, identical, misses = 400, 0, 0
    for j in range(pairs):
        xi = np.random.default_rng([11, j]).random(len(C))  # shared ξ of the pair
        s1, s2 = _pair_sums(rng, mu, counts)
        r1 = replicable_lse(C, counts, s1, rho=rho, delta=delta, xi=xi, bounds=(-1, 1))
        r2 = replicable_lse(C, counts, s2, rho=rho, delta=delta, xi=xi, bounds=(-1, 1))
        same = np.array_equal(r1.theta, r2.theta)
        identical += same
        if np.array_equal(r1.values, r2.values):
            assert same  # equal query answers give a bit-identical estimate
        err = np.abs(X @ (r1.theta - theta))
        misses += bool(np.any(err > r1.error_bound(X)))
    # ρ-replicable: identical with probability ≥ 1 − ρ (3-sigma margin on 400 pairs).
    assert identical / pairs >= 1 - rho - 3 * np.sqrt(rho * (1 - rho) / pairs)
    # Accurate within the certified bound with probability ≥ 1 − δ (3-sigma margin).
    assert misses / pairs <= delta + 3 * np.sqrt(delta * (1 - delta) / pairs)


def test_replicable_lse_needs_the_shared_offsets():
    # With independent offsets the answers disagree far more often than with a shared ξ: the
    # replicability comes from ξ, not from the data.
    X = grid_net(0.2, 2)
    C = X[core_set(X).indices]
    counts = np.full(len(C), 2000)
    mu = C @ np.array([0.3, 0.4])
    rng = np.random.default_rng(3)
    shared = independent = 0
    for _ in range(200):
        s1, s2 = _pair_sums(rng, mu, counts)
        xi = rng.random(len(C))
        kw = dict(rho=0.3, delta=0.05, bounds=(-1, 1))
        shared += np.array_equal(replicable_lse(C, counts, s1, xi=xi, **kw).theta,
                                 replicable_lse(C, counts, s2, xi=xi, **kw).theta)
        independent += np.array_equal(
            replicable_lse(C, counts, s1, xi=rng.random(len(C)), **kw).theta,
            replicable_lse(C, counts, s2, xi=rng.random(len(C)), **kw).theta)
    assert shared >= 180
    assert independent <= 120


def test_replicable_lse_precision_is_respected():
    X = np.eye(2)
    counts = np.array([10**6, 10**6])
    sums = np.array([0.3e6, -0.2e6])
    r = replicable_lse(X, counts, sums, rho=0.5, delta=0.01, xi=np.array([0.5, 0.5]),
                       bounds=(-1, 1), precision=0.1)
    # Cell of width 2τ/(1 + ρ' − 2δ') around each mean: the rounding moves it by at most half.
    assert np.all(np.abs(r.values - sums / counts) <= 0.1 + 1e-12)
    with pytest.raises(ValueError, match="too few samples"):
        replicable_lse(X, np.array([10, 10]), np.array([1.0, 1.0]), rho=0.5, delta=0.01,
                       xi=np.array([0.5, 0.5]), bounds=(-1, 1), precision=0.01)


@pytest.mark.parametrize("kwargs,match", [
    (dict(rho=0.0, delta=0.01), "rho"),
    (dict(rho=1.5, delta=0.01), "rho"),
    (dict(rho=float("nan"), delta=0.01), "rho"),
    (dict(rho=0.01, delta=0.02), "exceed delta"),
    (dict(rho=0.3, delta=0.01, bounds=(1, 0)), "bounds"),
])
def test_replicable_lse_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        replicable_lse(np.eye(2), [100, 100], [10.0, 20.0], xi=np.array([0.1, 0.2]), **kwargs)


def test_replicable_lse_refuses_rewards_outside_range():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        replicable_lse(np.eye(2), [100, 100], [150.0, 20.0], rho=0.3, delta=0.01,
                       xi=np.array([0.1, 0.2]), bounds=(-1, 1))
