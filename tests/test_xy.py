"""The XY baselines (Fiez et al. 2019, Section 2 and Appendix F; Soare et al. 2014)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from banditkit.design import Differences, xy_optimal
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.identification.xy import (
    GreedyPath,
    XYAdaptive,
    XYOracle,
    XYStatic,
    greedy_phase,
)
from banditkit.simulate import simulate


def _run(alg, env, seed=0):
    return simulate(alg, env, seed=seed, horizon=10**9)


@pytest.mark.parametrize("make", [
    lambda env: XYStatic(env.X, env.Z, 0.1),
    lambda env: XYOracle(env.X, env.Z, 0.1, env.theta),
    lambda env: XYAdaptive(env.X, env.Z, 0.1),
])
def test_delta_pac_small_instances(make):
    env = make_instance("multivariate-testing", D=3, rng=np.random.default_rng(2))
    results = [_run(make(env), env, seed=s) for s in range(25)]
    assert all(r.stopped for r in results)
    assert sum(not r.correct for r in results) == 0


def test_static_pulls_follow_design_and_stop_rule():
    env = make_instance("transductive", d=6)
    alg = XYStatic(env.X, env.Z, 0.05)
    tr = _run(alg, env)
    assert tr.correct and tr.stopped
    lam = xy_optimal(env.X, Differences(env.Z)).weights
    # The cumulative allocation is the rounding of λ: proportions match λ closely.
    np.testing.assert_allclose(tr.counts / tr.n_pulls, lam, atol=0.02)
    # Phase t brings the cumulative budget to Σ_{s≤t} ⌈γ^s⌉ (never less: pulls are not taken
    # back, so rounding can overshoot a little and catch up later).
    sizes = tr.decisions.batch_sizes()
    target = np.cumsum(np.ceil(1.35 ** np.arange(1, sizes.size + 1)))
    assert np.all(np.cumsum(sizes) >= target)
    assert np.all(np.cumsum(sizes) <= target + env.n_arms)


def test_oracle_design_is_gap_normalised_and_beats_static():
    env = make_instance("soare", d=4)
    oracle = XYOracle(env.X, env.Z, 0.05, env.theta)
    gaps = env.gaps
    others = np.flatnonzero(gaps > 0)
    Y = (env.Z[env.best_item()] - env.Z[others]) / gaps[others, None]
    assert oracle.psi_star == pytest.approx(xy_optimal(env.X, Y).value, rel=0.02)
    n_oracle = np.mean([_run(XYOracle(env.X, env.Z, 0.05, env.theta), env, s).n_pulls
                        for s in range(5)])
    n_static = np.mean([_run(XYStatic(env.X, env.Z, 0.05), env, s).n_pulls for s in range(5)])
    assert n_oracle < n_static


def test_greedy_phase_matches_brute_force():
    # Sherman–Morrison updates give the same choices as recomputing (A + x xᵀ)⁻¹ for every x.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 3))
    Z = rng.standard_normal((4, 3))
    i, j = np.triu_indices(4, k=1)
    Y = Z[i] - Z[j]
    batch, rho, n = greedy_phase(X, Y, threshold=0.05, reg=1.0, refresh=7)
    A = np.eye(3)
    for k in batch.sequence():
        worst = [max(y @ np.linalg.solve(A + np.outer(x, x), y) for y in Y) for x in X]
        best = min(worst)
        assert worst[k] <= best * (1 + 1e-9)
        A += np.outer(X[k], X[k])
    assert n == 3 + batch.n_pulls
    assert rho / n < 0.05


def test_greedy_path_prefixes_are_the_phases_computed_afresh():
    # Phases with the same directions share one lazily extended path; asked in any order
    # (short, long, then in between) each equals a phase computed from scratch.
    rng = np.random.default_rng(np.random.SeedSequence(11))
    X = rng.standard_normal((7, 3))
    Z = rng.standard_normal((5, 3))
    i, j = np.triu_indices(5, k=1)
    Y = Z[i] - Z[j]
    path = GreedyPath(X, Y, reg=1.0, refresh=5)
    lengths = []
    for threshold in (0.05, 0.002, 0.01, 0.002):
        batch, rho, n = path.phase(threshold)
        fresh = greedy_phase(X, Y, threshold, reg=1.0, refresh=5)
        np.testing.assert_array_equal(batch.sequence(), fresh[0].sequence())
        assert (rho, n) == fresh[1:]
        lengths.append(batch.n_pulls)
    assert lengths[0] < lengths[2] < lengths[1] == lengths[3]
    assert path.steps == lengths[1]  # never extended beyond the longest phase asked for


def test_adaptive_discards_for_good_and_caches_identically():
    env = make_instance("soare", d=4, omega=0.3)
    a1 = XYAdaptive(env.X, env.Z, 0.05)
    t1 = _run(a1, env, seed=3)
    sizes = t1.info["active_sizes"]
    assert all(b <= a for a, b in itertools.pairwise(sizes))
    assert t1.correct
    # Same inputs: the cached phases give exactly the decisions of a fresh computation.
    t2 = _run(XYAdaptive(env.X, env.Z, 0.05), env, seed=3)
    assert t1.decisions.same_as(t2.decisions)
    t3 = _run(XYAdaptive(env.X, env.Z, 0.05, tie_break="random",
                         rng=np.random.default_rng(0)), env, seed=3)
    assert t3.correct


def test_noiseless_adaptive_keeps_best():
    base = make_instance("soare", d=5, omega=0.3)
    env = LinearBandit(base.X, base.theta, sigma=1e-9)
    alg = XYAdaptive(env.X, env.Z, 0.05)
    while (batch := alg.next_batch()) is not None:
        alg.observe(batch, env.pull(batch, np.random.default_rng(0)).rewards)
        assert env.best_item() in alg.active
    assert alg.recommendation == env.best_item()


@pytest.mark.parametrize("cls", [XYStatic, XYAdaptive])
def test_single_item_and_bad_input(cls):
    X = np.eye(3)
    alg = cls(X, X[:1], 0.05)
    assert alg.next_batch() is None and alg.recommendation == 0
    with pytest.raises(ValueError, match="span"):
        cls(X[:2], X, 0.05)
    with pytest.raises(ValueError, match="delta"):
        cls(X, X, 1.5)
    with pytest.raises(ValueError, match="columns"):
        cls(X, np.eye(4), 0.05)


def test_oracle_refuses_ties_and_single_item():
    X = np.eye(3)
    with pytest.raises(ValueError, match="unique best"):
        XYOracle(X, X, 0.05, np.array([1.0, 1.0, 0.0]))
    alg = XYOracle(X, X[:1], 0.05, np.array([1.0, 0.0, 0.0]))
    assert alg.next_batch() is None and alg.recommendation == 0
    with pytest.raises(ValueError, match="theta"):
        XYOracle(X, X, 0.05, np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="gamma"):
        XYStatic(X, X, 0.05, gamma=1.0)


def test_greedy_path_lookup_is_the_scan_of_the_path():
    # The binary search over the running minimum of ρ/n equals the first step of a scan, for a
    # path extended in stages (ρ not monotone) and thresholds equal to a step's own ρ/n.
    rng = np.random.default_rng(5)
    path = GreedyPath(np.eye(3), np.eye(3), reg=1.0, refresh=5)
    rho = rng.random(900) * np.linspace(3.0, 1.0, 900)
    path._rho = rho
    ratio = rho / (3 + np.arange(1, 901, dtype=float))
    for steps in (1, 250, 251, 600, 900):
        path.steps = steps
        for threshold in (*rng.random(20) * ratio[:steps].max(), *ratio[:steps][::7]):
            hit = np.flatnonzero(ratio[:steps] < threshold)
            assert path._first_below(threshold) == (int(hit[0]) + 1 if hit.size else 0)
