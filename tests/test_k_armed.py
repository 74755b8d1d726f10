"""The K-armed fixed-confidence identifiers against their papers: Garivier & Kaufmann's (2016)
optimal proportions (their μ₁ and μ₂ to the third decimal, the lower bound's max-min), D- and
C-tracking's guarantees, LUCB1's and KL-LUCB's confidence bounds and constants, EB-TCε₀'s leader,
challenger and tracking, δ-correctness over 500 trials at a large δ, and the registry/audit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.identification import EBTC, KLLUCB, LUCB, KArmedTrackAndStop
from banditkit.identification.k_armed.oracle import (
    characteristic_time,
    divergence,
    kl_bounds,
    lower_bound,
)
from banditkit.identification.k_armed.track_and_stop import project_floor
from banditkit.registry import get_policy, make_policy
from banditkit.rng import as_generator, derive_seed

MU1 = np.array([0.5, 0.45, 0.43, 0.4])
MU2 = np.array([0.3, 0.21, 0.2, 0.19, 0.18])


# ------------------------------------------------------------------------------------------
# the oracle (GK16, Section 2)

def test_optimal_weights_are_garivier_kaufmanns_section_6_values():
    _, w1 = characteristic_time(MU1)
    _, w2 = characteristic_time(MU2)
    np.testing.assert_allclose(w1, [0.417, 0.390, 0.136, 0.057], atol=6e-4)
    np.testing.assert_allclose(w2, [0.336, 0.251, 0.177, 0.132, 0.104], atol=6e-4)
    # the order of the arms does not matter
    perm = np.array([2, 0, 3, 1])
    np.testing.assert_allclose(characteristic_time(MU1[perm])[1], w1[perm], rtol=1e-9)


def _value(w: np.ndarray, mu: np.ndarray, gaussian: bool = False) -> float:
    """min_{a ≠ 1} (w₁ + w_a) I_{w₁/(w₁ + w_a)}(μ₁, μ_a): the lower bound's objective."""
    best = int(np.argmax(mu))
    out = math.inf
    for a in range(mu.size):
        if a == best:
            continue
        m = (w[best] * mu[best] + w[a] * mu[a]) / (w[best] + w[a])
        v = (w[best] * divergence(mu[best], m, gaussian, 1.0)
             + w[a] * divergence(mu[a], m, gaussian, 1.0))
        out = min(out, v)
    return out


@pytest.mark.parametrize("mu,gaussian", [(MU1, False), (MU2, False),
                                         (np.array([1.0, 0.2, 0.5, -0.3]), True)])
def test_optimal_weights_maximise_the_lower_bounds_objective(mu, gaussian):
    t_star, w = characteristic_time(mu, "gaussian" if gaussian else "bernoulli")
    assert _value(w, mu, gaussian) == pytest.approx(1 / t_star, rel=1e-9)
    rng = as_generator(0)
    for _ in range(300):  # no allocation does better, near w* or anywhere
        v = np.abs(w + 0.05 * rng.standard_normal(mu.size)) if _ % 2 else rng.dirichlet(
            np.ones(mu.size))
        assert _value(v / v.sum(), mu, gaussian) <= 1 / t_star * (1 + 1e-9)


def test_two_gaussian_arms_need_8_sigma2_over_gap2():
    t_star, w = characteristic_time(np.array([1.0, 0.5]), "gaussian", sigma=2.0)
    assert t_star == pytest.approx(8 * 4 / 0.25, rel=1e-9)
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=1e-9)
    assert lower_bound(np.array([1.0, 0.5]), 0.1, "gaussian", 2.0) == pytest.approx(
        128 * (0.1 * math.log(0.1 / 0.9) + 0.9 * math.log(0.9 / 0.1)), rel=1e-9)


def test_a_tied_best_arm_gives_the_uniform_allocation():
    t_star, w = characteristic_time(np.array([0.4, 0.4, 0.1]))
    assert t_star == math.inf
    np.testing.assert_allclose(w, [1 / 3] * 3)


@pytest.mark.parametrize("w,eps", [
    ([0.7, 0.2, 0.1, 0.0], 0.05), ([0.97, 0.01, 0.01, 0.01], 0.1), ([0.25] * 4, 0.1),
    ([0.5, 0.5, 0.0], 0.3)])
def test_the_floor_projection_is_an_l_infinity_projection(w, eps):
    w = np.array(w)
    v = project_floor(w, eps)
    assert v.sum() == pytest.approx(1.0) and v.min() >= eps - 1e-15
    # the least L∞ distance: r with Σ max(w − r, ε) = 1 (bisection), and r ≥ ε − min w
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.maximum(w - mid, eps).sum() > 1 else (lo, mid)
    least = max(hi, float(np.max(eps - w)))
    assert np.abs(v - w).max() == pytest.approx(least, abs=1e-12)


# ------------------------------------------------------------------------------------------
# Track-and-Stop (GK16, Section 3)

def test_d_tracking_explores_every_arm_at_least_sqrt_t():
    env = BernoulliBandit(np.array([0.9, 0.5, 0.45, 0.1]))
    alg = KArmedTrackAndStop(4, 1e-300, tracking="D")
    trial = simulate(alg, env, seed=3, horizon=3000)
    counts = np.zeros(4)
    for t, a in enumerate(trial.decisions.runs()[0][4:], start=4):
        # GK16 Lemma 7: N_a(t) ≥ (√t − K/2)_+ − 1 for every arm, every t
        assert counts.min() + 1 >= math.sqrt(t) - 2 - 1 or t < 4
        counts[a] += 1
    assert alg.forced > 0
    _, w = characteristic_time(env.means)
    np.testing.assert_allclose(trial.counts / trial.n_pulls, w, atol=0.03)


def test_c_tracking_follows_the_cumulated_projections():
    env = BernoulliBandit(np.array([0.9, 0.5, 0.45, 0.1]))
    alg = KArmedTrackAndStop(4, 1e-300, tracking="C")
    trial = simulate(alg, env, seed=3, horizon=4000)
    t = trial.n_pulls
    # GK16 Lemma 7: N_a(t) ≥ √(t + K²) − 2K, and the counts stay within K − 1 of Σ w^ε
    assert trial.counts.min() >= math.sqrt(t + 16) - 8
    assert np.abs(trial.counts - alg._cum).max() <= 4
    _, w = characteristic_time(env.means)
    np.testing.assert_allclose(trial.counts / t, w, atol=0.03)


# ------------------------------------------------------------------------------------------
# LUCB1 and KL-LUCB

def test_lucb1_bounds_are_the_papers():
    alg = LUCB(3, 0.05)
    alg.pulls[:] = [10, 40, 90]
    alg.sums[:] = [5.0, 30.0, 9.0]
    alg.rounds = 7
    lower, upper = alg.bounds()
    width = np.sqrt(np.log(5 / 4 * 3 * 7 ** 4 / 0.05) / (2 * alg.pulls))
    np.testing.assert_allclose(upper, alg.sums / alg.pulls + width, rtol=1e-12)
    np.testing.assert_allclose(lower, alg.sums / alg.pulls - width, rtol=1e-12)


ROUNDS = [1, 2, 7, 9741, 9742, 55_108, 55_109, 123_457, 10**6 + 3, 94_906_265]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_lucb1s_kernel_level_is_the_classs_to_the_last_bit(compiled):
    """log(k₁ K t⁴/δ) with t⁴ an exact Python integer (the class) against float(t²)² (the
    kernel): t⁴ leaves the doubles' exact integers at t = 9,742 and int64 at t = 55,109."""
    from banditkit.identification.k_armed.lucb_kernel import lucb1_level

    level = lucb1_level if compiled else lucb1_level.py_func
    rng = as_generator(4)
    rounds = ROUNDS + [int(r) for r in rng.integers(9_742, 94_906_266, 2000)]
    for k1, K, delta in ((5 / 4, 4, 0.1), (5 / 4, 7, 1e-5), (1.3, 3, 0.37)):
        for t in rounds:
            alg = LUCB(K, delta, k1=k1)
            alg.rounds = t
            assert level(k1, K, t, delta) == math.log(alg.k1 * alg.n_arms * alg.rounds ** 4
                                                      / alg.delta), (t, K)


def test_lucb1s_kernel_is_the_class_past_the_exact_doubles_and_refuses_what_it_cannot_run():
    """About 15,000 rounds (t⁴ > 2⁵³: rounded in the level) through the kernel and the loop."""
    from banditkit import jit
    from banditkit.identification.k_armed.lucb_kernel import LUCB1_MAX_PULLS

    env = BernoulliBandit(MU1)
    fast, slow = LUCB(4, 0.1), LUCB(4, 0.1)
    if jit.available():
        assert fast.engine(env, 30_001).name == "compiled kernel"
        assert LUCB(4, 0.1).engine(env, None) is None  # no cap: the loop (t² may pass 2⁵³)
        assert LUCB(4, 0.1).engine(env, LUCB1_MAX_PULLS + 1) is None
        assert LUCB(4, 0.1).engine(GaussianBandit(MU1), 1000) is None  # rewards in [0, 1]
    a = simulate(fast, env, horizon=30_001, seed=12)
    b = simulate(slow, env, horizon=30_001, seed=12, engine="reference")
    assert a.n_pulls == b.n_pulls and a.stopped == b.stopped
    assert a.decisions.runs()[0].tolist() == b.decisions.runs()[0].tolist()
    assert a.info == b.info and fast.info["rounds"] > 9_742  # past t⁴ = 2⁵³
    assert fast.pulls.tolist() == slow.pulls.tolist() and fast.sums.tolist() == slow.sums.tolist()


def test_kl_lucb_bounds_solve_n_kl_equal_beta():
    alg = KLLUCB(3, 0.05)
    alg.pulls[:] = [10, 40, 90]
    alg.sums[:] = [5.0, 30.0, 0.0]
    alg.rounds = 7
    level = math.log(405.5 * 3 * 7 ** 1.1 / 0.05)
    assert alg.level() == pytest.approx(level, rel=1e-12)
    lower, upper = alg.bounds()
    for a in range(3):
        mu = alg.sums[a] / alg.pulls[a]
        for q in (lower[a], upper[a]):
            if 0 < q < 1 and q != mu:
                assert alg.pulls[a] * divergence(mu, q, False, 1) == pytest.approx(level,
                                                                                  rel=1e-6)
        assert lower[a] <= mu <= upper[a]
    assert lower[2] == pytest.approx(0.0, abs=1e-12)  # μ̂ = 0: the lower bound is 0
    lo, hi = kl_bounds(0.3, 50, 2.0, True, 0.5)
    assert (hi - 0.3) == pytest.approx(0.5 * math.sqrt(2 * 2.0 / 50))
    assert lo == pytest.approx(0.3 - (hi - 0.3))


def test_lucb_pulls_the_leader_and_the_highest_upper_bound_of_the_others():
    alg = KLLUCB(4, 0.05)
    alg.pulls[:] = [30, 30, 5, 30]
    alg.sums[:] = [20.0, 15.0, 2.0, 3.0]
    alg.t = int(alg.pulls.sum())
    batch = alg._choose()
    _, upper = alg.bounds()
    assert sorted(batch.arms.tolist()) == [0, 2]  # h = 0; arm 2 has the largest U (few pulls)
    assert upper[2] == max(upper[1:])


# ------------------------------------------------------------------------------------------
# EB-TCε₀

def test_eb_tc_challenger_is_the_smallest_transportation_cost():
    alg = EBTC(4, 0.05, epsilon0=0.1)
    alg.pulls[:] = [50, 10, 40, 5]
    alg.sums[:] = [30.0, 5.0, 22.0, 1.0]
    mu = alg.sums / alg.pulls
    cost = [(mu[0] - mu[j] + 0.1) / math.sqrt(1 / 50 + 1 / alg.pulls[j]) for j in (1, 2, 3)]
    assert alg.challenger(0) == 1 + int(np.argmin(cost))


def test_eb_tc_tracking_gives_the_leader_beta_of_its_rounds():
    env = GaussianBandit(np.array([1.0, 0.0, -0.5]))
    alg = EBTC(3, 1e-300, beta=0.3)
    trial = simulate(alg, env, seed=2, horizon=2000)
    # the leader is arm 0 in almost every round: its pulls are β of its leader rounds (± 1)
    assert abs(alg.leader_pulls[0] - 0.3 * alg.leader_rounds[0]) <= 1
    assert trial.counts[0] / trial.n_pulls == pytest.approx(0.3, abs=0.03)


# ------------------------------------------------------------------------------------------
# δ-correctness and the registry

BUILDERS = {
    "KArmedTrackAndStop-D": lambda: KArmedTrackAndStop(2, 0.4),
    "KArmedTrackAndStop-C": lambda: KArmedTrackAndStop(2, 0.4, tracking="C"),
    "EBTC": lambda: EBTC(2, 0.4, sigma=0.5),
    "KLLUCB": lambda: KLLUCB(2, 0.4),
    "LUCB": lambda: LUCB(2, 0.4),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_delta_correct_over_500_trials_at_a_large_delta(name):
    # a small instance (about 50-150 pulls a trial) at δ = 0.4, for the suite's time; the
    # figure garivier-kaufmann:bai and benchmarks/bench_k_armed.py run GK16's instances
    env = BernoulliBandit(np.array([0.9, 0.3]))
    n = 500
    trials = [simulate(BUILDERS[name](), env, seed=derive_seed(28, name, i),
                       horizon=100_000) for i in range(n)]
    assert all(t.stopped for t in trials)
    errors = sum(not t.correct for t in trials)
    assert errors <= 0.4 * n
    mean = np.mean([t.n_pulls for t in trials])
    assert mean >= lower_bound(env.means, 0.4)  # no δ-correct rule beats GK16's bound


@pytest.mark.parametrize("build,model", [
    (lambda: KArmedTrackAndStop(3, 0.05), "bernoulli"),
    (lambda: KArmedTrackAndStop(3, 0.05, threshold="heuristic", tracking="C"), "bernoulli"),
    (lambda: EBTC(3, 0.05, sigma=0.5), "gaussian")])
def test_the_chernoff_rule_stops_at_the_first_crossing_of_gk16s_threshold(build, model):
    from banditkit.identification.top_two import chernoff_statistic, stopping_threshold

    env = BernoulliBandit(np.array([0.7, 0.5, 0.3]))
    alg = build()
    rng = as_generator(5)
    while True:
        batch = alg.next_batch()
        if batch is None:
            break
        alg.observe(batch, env.pull(batch, rng).rewards)
        z = chernoff_statistic(alg.pulls, alg.sums, model, alg.sigma)[1]
        assert alg.statistic == pytest.approx(z, rel=1e-12)
        beta = stopping_threshold(alg.t, 0.05, 3, alg.threshold)
        assert alg.stopped == (z > beta)


@pytest.mark.parametrize("name", ["KArmedTrackAndStop", "EBTC", "LUCB", "KLLUCB"])
def test_registered_and_audited(name):
    from banditkit.experiments.replicability import audit

    env = BernoulliBandit(np.array([0.8, 0.4, 0.3]))
    trial = simulate(make_policy(name, env, as_generator(0), delta=0.1), env, seed=1)
    assert trial.stopped and trial.correct
    report = audit(get_policy(name).factory, env, pairs=2, params={"delta": 0.1})
    assert report is not None
    with pytest.raises(ValueError, match="delta"):
        make_policy(name, env, as_generator(0), delta=1.5)


@pytest.mark.parametrize("build,match", [
    (lambda: KArmedTrackAndStop(3, 0.1, tracking="X"), "tracking must be"),
    (lambda: KArmedTrackAndStop(3, 0.1, model="poisson"), "model must be"),
    (lambda: KArmedTrackAndStop(3, 0.1, threshold="x"), "threshold must be"),
    (lambda: KArmedTrackAndStop(1, 0.1), "at least 2"),
    (lambda: EBTC(3, 0.1, epsilon0=-1), "epsilon0"),
    (lambda: EBTC(3, 0.1, beta=1.0), "beta"),
    (lambda: LUCB(3, 0.1, epsilon=-0.1), "epsilon"),
    (lambda: KLLUCB(3, 0.1, alpha=1.0), "alpha"),
    (lambda: KLLUCB(3, 0.1, threshold="theory"), "threshold must be"),
])
def test_bad_parameters_are_refused_by_name(build, match):
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize("module, build", [
    ("tas_kernel", lambda: KArmedTrackAndStop(5, 0.1, tracking="D")),
    ("eb_tc_kernel", lambda: EBTC(5, 0.1)),
    ("lucb_kernel", lambda: KLLUCB(5, 0.1)),
], ids=["tas", "eb-tc", "kl-lucb"])
def test_the_kernels_buffer_flushes_keep_every_pull(module, build, monkeypatch):
    """A 64-pull buffer: the kernel returns full many times, and the run is still the loop's
    bit for bit (decisions, stop, recommendation)."""
    import importlib

    from banditkit import jit

    if not jit.available():
        pytest.skip("numba is not installed: no compiled kernel to buffer")
    monkeypatch.setattr(importlib.import_module(
        f"banditkit.identification.k_armed.{module}"), "CHUNK", 64)
    env = BernoulliBandit(MU2)
    fast, slow = build(), build()
    assert fast.engine(env, 20_000).name == "compiled kernel"
    a = simulate(fast, env, horizon=20_000, seed=5)
    b = simulate(slow, env, horizon=20_000, seed=5, engine="reference")
    assert a.n_pulls > 64 * 20 and a.decisions.same_as(b.decisions)
    assert (a.stopped, a.recommendation, a.n_pulls) == (b.stopped, b.recommendation, b.n_pulls)
