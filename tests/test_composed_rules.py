"""The composed identifier's newer parts (issue 36 §2): LUCB's sampling and stopping rules (with
them it is KL-LUCB or LUCB1, bit for bit), the KKT challenger and the information-directed β
of top-two rules, Frank-Wolfe sampling, and the Gaussian threshold of Jourdan et al. that
EB-TCε₀ stops on. Checked against what the papers prove: the allocation a rule converges to is
w*(μ) (GK16's optimal proportions) where the paper proves it optimal, and not where it is not;
IDS's shares sum to one exactly at w*(μ) (the KKT condition); each combination is δ-correct and
above the lower bound on a small-gap instance."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.special import zeta

from banditkit.envs.instances import make_instance
from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.identification import (
    FrankWolfeSampling,
    LinearComposedIdentifier,
    LinearSampling,
    LinearTrackAndStop,
)
from banditkit.identification.k_armed import (
    EBTC,
    KLLUCB,
    LUCB,
    ChernoffStopping,
    ComposedIdentifier,
    FrankWolfe,
    LUCBSampling,
    LUCBStopping,
    TopTwo,
    characteristic_time,
    lower_bound,
)
from banditkit.identification.k_armed.rules import ids_share
from banditkit.identification.k_armed.thresholds import c_g, gaussian_threshold
from banditkit.rng import as_generator
from banditkit.simulate import simulate, simulate_trials
from banditkit.testing import check_algorithm

BERN = BernoulliBandit(np.array([0.7, 0.5, 0.45, 0.3]))


def _same(a, b) -> None:
    assert a.decisions.same_as(b.decisions)
    assert (a.n_pulls, a.recommendation, a.stopped) == (b.n_pulls, b.recommendation, b.stopped)


LUCB_PAIRS = [  # (name, registered(horizon), composed(horizon))
    ("KL-LUCB", lambda h: KLLUCB(4, 0.1, horizon=h),
     lambda h: ComposedIdentifier(4, 0.1, sampling=LUCBSampling(), stopping=LUCBStopping(),
                                  horizon=h)),
    ("KL-LUCB-heuristic-eps", lambda h: KLLUCB(4, 0.05, threshold="heuristic", epsilon=0.02,
                                               horizon=h),
     lambda h: ComposedIdentifier(4, 0.05, sampling=LUCBSampling(threshold="heuristic"),
                                  stopping=LUCBStopping(threshold="heuristic", epsilon=0.02),
                                  horizon=h)),
    ("LUCB1", lambda h: LUCB(4, 0.2, horizon=h),
     lambda h: ComposedIdentifier(4, 0.2, sampling=LUCBSampling("hoeffding"),
                                  stopping=LUCBStopping("hoeffding"), horizon=h)),
]


@pytest.mark.parametrize("name, registered, composed", LUCB_PAIRS,
                         ids=[p[0] for p in LUCB_PAIRS])
def test_lucb_is_its_sampling_and_stopping_rules_bit_for_bit(name, registered, composed):
    # the identifier's own budget of 301 pulls cuts the last pair: LUCB's class then pulls
    # h_t alone, and so must the composition
    for seed, horizon in ((1, 301), (2, None)):
        a = simulate(registered(horizon), BERN, seed=seed, engine="reference")
        b = simulate(composed(horizon), BERN, seed=seed)
        _same(a, b)
        assert b.info["stopped_by_rule"] == (horizon is None)
        assert b.n_pulls == horizon or horizon is None


def test_ebtc_stops_on_its_papers_gaussian_threshold_in_class_kernel_and_composition():
    env = GaussianBandit(np.array([0.5, 0.3, 0.1, 0.0]), sigma=1.0)
    for seed in (7, 8, 9):
        fast = simulate(EBTC(4, 0.05, threshold="gaussian"), env, seed=seed)
        slow = simulate(EBTC(4, 0.05, threshold="gaussian"), env, seed=seed,
                        engine="reference")
        _same(fast, slow)
        assert fast.stopped
    parts = simulate(ComposedIdentifier(4, 0.05, sampling=TopTwo("EB", "TC", epsilon0=0.1),
                                        stopping=ChernoffStopping("gaussian"),
                                        model="gaussian"), env, seed=9)
    _same(slow, parts)
    # it stops once Z crosses c(t, δ), not log(2t(K − 1)/δ): a different pull than "theory"
    theory = simulate(EBTC(4, 0.05), env, seed=7)
    assert theory.n_pulls != fast.n_pulls


def _c_g_by_grid(x: float) -> float:
    """Kaufmann & Koolen's C_G, typed again from their definition and minimised on a grid."""
    lam = np.linspace(0.5 + 1e-6, 1 - 1e-6, 400_001)
    g = 2 * lam - 2 * lam * np.log(4 * lam) + np.log(zeta(2 * lam)) - 0.5 * np.log(1 - lam)
    return float(np.min((g + x) / lam))


def test_the_gaussian_threshold_is_its_formula():
    for x in (0.3, 1.0, 2.5, 10.0):
        assert c_g(x) == pytest.approx(_c_g_by_grid(x), abs=1e-8)
    assert c_g(1.0) == pytest.approx(2.50709, abs=1e-5)
    # C_G(x) ≈ x + log x (Kaufmann & Koolen): above x, within x + log x + 1 here
    for x in (5.0, 10.0, 50.0):
        assert x < c_g(x) < x + math.log(x) + 1.0
    for t, delta, K in ((10, 0.1, 4), (10_000, 0.01, 2), (3, 0.5, 7)):
        expected = 2 * _c_g_by_grid(0.5 * math.log((K - 1) / delta)) + 4 * math.log(
            4 + math.log(t / 2))
        assert gaussian_threshold(t, delta, K) == pytest.approx(expected, abs=1e-7)


def test_ids_shares_sum_to_one_exactly_at_the_optimal_allocation():
    """The KKT "overall balance" (You et al. 2023) is GK16's F(y*) = 1 (Theorem 5): with h_j
    the leader's IDS share against j at w*(μ), Σ_j h_j/(1 − h_j) = 1; off w*, it is not."""
    for means, gaussian in (([0.7, 0.5, 0.45, 0.3], False), ([1.0, 0.6, 0.5, 0.2, 0.1], True)):
        mu = np.array(means)
        _, w = characteristic_time(mu, "gaussian" if gaussian else "bernoulli", 1.0)
        ratios = [h / (1 - h) for h in (ids_share(mu, w, 0, j, gaussian, 1.0)
                                        for j in range(1, mu.size))]
        assert sum(ratios) == pytest.approx(1.0, rel=1e-6)
        uniform = np.full(mu.size, 1.0 / mu.size)
        off = sum(h / (1 - h) for h in (ids_share(mu, uniform, 0, j, gaussian, 1.0)
                                        for j in range(1, mu.size)))
        assert abs(off - 1.0) > 0.5
    # known small cases: Gaussian N_C²/(N_B² + N_C²); Bernoulli d(μ_B, m)/(d(μ_B, m) + d(μ_C, m))
    assert ids_share(np.array([0.9, 0.1]), np.array([3, 1]), 0, 1, True, 2.0) == 0.1
    m = (30 * 0.6 + 10 * 0.4) / 40
    kl = lambda p, q: p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))  # noqa: E731
    assert ids_share(np.array([0.6, 0.4]), np.array([30, 10]), 0, 1, False, 1.0) == (
        pytest.approx(kl(0.6, m) / (kl(0.6, m) + kl(0.4, m)), rel=1e-12))
    assert ids_share(np.array([0.5, 0.5]), np.array([30, 10]), 0, 1, False, 1.0) == 0.1


def _proportions(sampling, env, seed, horizon=6_000, rng=None):
    alg = ComposedIdentifier(env.n_arms, 1e-300, sampling=sampling, horizon=horizon, rng=rng,
                             model="gaussian" if isinstance(env, GaussianBandit) else
                             "bernoulli")
    simulate(alg, env, seed=seed)
    assert alg.t == horizon  # δ = 1e-300: it samples without stopping
    return alg.pulls / horizon


@pytest.mark.parametrize("name, sampling, rng", [
    ("FW", FrankWolfe, None), ("EB-KKT-IDS", lambda: TopTwo("EB", "KKT", beta="ids"), None),
    ("EB-TC-IDS-coin", lambda: TopTwo("EB", "TC", beta="ids", selection="coin"), 4)])
def test_optimal_rules_sample_near_the_optimal_proportions(name, sampling, rng):
    """Frank-Wolfe sampling (Wang et al. 2021) and top-two with IDS (You et al. 2023; Jourdan
    et al.'s tracking) are asymptotically optimal: their proportions tend to w*(μ). A fixed
    β = ½ cannot (w*_1 = 0.41 here), which the same check refuses."""
    _, w = characteristic_time(BERN.means)
    xi = None if rng is None else as_generator(rng)
    p = _proportions(sampling(), BERN, seed=1, rng=xi)
    assert np.abs(p - w).max() < 0.05, (p, w)
    half = _fixed_half()
    assert np.abs(half - w).max() > 0.07 and half[0] == pytest.approx(0.5, abs=0.01)


@functools.lru_cache(maxsize=1)
def _fixed_half() -> np.ndarray:
    """The proportions of a fixed β = ½ (run once for the three rules compared with it)."""
    return _proportions(TopTwo("EB", "KKT"), BERN, seed=1)


def test_frank_wolfe_steps_and_tracks_as_stated():
    """x(t + 1) = x(t) + (z(t) − x(t))/(t + 1), so t·x(t) is the sum of the vertices played,
    and the pulls track that sum (C-tracking: never more than K − 1 behind or ahead)."""
    rule = FrankWolfe()
    alg = ComposedIdentifier(4, 1e-300, sampling=rule, horizon=800)
    simulate(alg, BERN, seed=5)
    assert np.allclose(rule.x * alg.t, rule.sumz, rtol=0, atol=1e-9)
    assert rule.x.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.abs(alg.pulls - rule.sumz).max() <= 3
    assert rule.games > 0 and rule.forced >= math.isqrt(800 // 4) - 1


def test_ids_moves_the_gaussian_leaders_share_to_w_star():
    env = GaussianBandit(np.array([1.0, 0.6, 0.5, 0.4, 0.3, 0.2]), sigma=1.0)
    _, w = characteristic_time(env.means, "gaussian", 1.0)  # w*_1 = 0.354
    p = _proportions(TopTwo("EB", "TC", beta="ids"), env, seed=2, horizon=8_000)
    assert abs(p[0] - w[0]) < 0.04, (p[0], w[0])


def _kl(p, q):
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 log 0 = 0
        return (np.where(p > 0, p * np.log(p / q), 0.0)
                + np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0))


def test_the_kkt_challenger_and_ids_tracking_are_their_definitions_every_round():
    """KKT: argmin_{j ≠ B} W_{B,j}, the pair's GLR; IDS tracking: pull B iff N^B_B ≤ Σ h over
    the rounds B led, h = d(μ̂_B, m)/(d(μ̂_B, m) + d(μ̂_C, m)). Both recomputed here."""
    env = BernoulliBandit(np.array([0.6, 0.5, 0.45, 0.2]))
    alg = ComposedIdentifier(4, 0.1, sampling=TopTwo("EB", "KKT", beta="ids"))
    rng = np.random.default_rng(3)
    shares, leader_pulls, challengers = np.zeros(4), np.zeros(4), 0
    while alg.t < 2_000:
        n, mu = alg.pulls.astype(float), alg.means()
        batch = alg.next_batch()
        if batch is None:
            break
        if alg.t > 0:
            b = int(np.argmax(mu))
            m = (n[b] * mu[b] + n * mu) / (n[b] + n)
            glr = np.where(mu < mu[b], n[b] * _kl(mu[b], m) + n * _kl(mu, m), 0.0)
            glr[b] = np.inf
            c = int(np.argmin(glr))
            d_b, d_c = float(_kl(mu[b], m[c])), float(_kl(mu[c], m[c]))
            shares[b] += (d_b / (d_b + d_c) if d_b + d_c > 0
                          else n[c] ** 2 / (n[b] ** 2 + n[c] ** 2))
            expected = b if leader_pulls[b] <= shares[b] else c
            leader_pulls[b] += expected == b
            assert int(batch.arms[0]) == expected, alg.t
            challengers += expected == c
        alg.observe(batch, env.pull(batch, rng, alg.t).rewards)
    assert challengers > 400


SMALL = GaussianBandit(np.array([0.4, 0.0, -0.05]), sigma=1.0)
NEW = {
    "EB-KKT-IDS": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=TopTwo("EB", "KKT", beta="ids"), model="gaussian"),
    "TS-TC-IDS-coin": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=TopTwo("TS", "TC", beta="ids", selection="coin"), model="gaussian",
        rng=rng),
    "FW": lambda rng: ComposedIdentifier(3, 0.2, sampling=FrankWolfe(), model="gaussian"),
    "LUCB-sampling-Chernoff": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=LUCBSampling(), model="gaussian"),
    "EB-TC-gaussian-threshold": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=TopTwo("EB", "TC", epsilon0=0.1), threshold="gaussian",
        model="gaussian"),
}


@pytest.mark.parametrize("name", list(NEW))
def test_new_combinations_are_delta_correct_above_the_lower_bound(name):
    trials = simulate_trials(lambda env, rng: NEW[name](rng), SMALL, n_trials=20, seed=37,
                             horizon=200_000)
    pulls = np.array([t.n_pulls for t in trials])
    assert all(t.stopped for t in trials)
    # δ = 0.2 allows 4 errors in 20 on average; the proved thresholds make far fewer
    assert sum(t.recommendation != 0 for t in trials) <= 2
    bound = lower_bound(SMALL.means, 0.2, "gaussian", 1.0)
    assert bound < pulls.mean() < 40 * bound, (pulls.mean(), bound)


@pytest.mark.parametrize("build", [
    lambda rng: ComposedIdentifier(3, 0.1, sampling=LUCBSampling("hoeffding"),
                                   stopping=LUCBStopping("hoeffding")),
    lambda rng: ComposedIdentifier(3, 0.1, sampling=FrankWolfe()),
    lambda rng: ComposedIdentifier(3, 0.1, sampling=TopTwo("TS", "TS", beta="ids",
                                                           selection="coin"), rng=rng,
                                   each_arm_first=False)],
    ids=["LUCB1", "FW", "TTTS-IDS-from-the-prior"])
def test_new_compositions_keep_the_conformance_kits_promises(build):
    check_algorithm(build, BernoulliBandit(np.array([0.8, 0.3, 0.2])), horizon=150,
                    processes=0, stop_within=5_000)


def test_impossible_parts_are_refused_before_any_work():
    for build, match in [
        (lambda: ComposedIdentifier(3, 0.1, sampling=FrankWolfe(), stopping="lucb"),
         "stopping must be a StoppingRule"),
        (lambda: ComposedIdentifier(3, 0.1, sampling=FrankWolfe(), threshold="heuristic",
                                    stopping=LUCBStopping()), "give it to the stopping rule"),
        (lambda: ComposedIdentifier(3, 0.1, sampling=FrankWolfe(), threshold="gaussian"),
         "needs model in"),
        (lambda: EBTC(3, threshold="paper"), "threshold must be one of"),
        (lambda: LUCBStopping("bernstein"), "bounds must be one of"),
        (lambda: LUCBStopping(epsilon=-0.1), "epsilon must be"),
        (lambda: LUCBStopping(k1=0), "k1 must be"), (lambda: LUCBSampling(alpha=1.0),
                                                     "alpha must be"),
        (lambda: LUCBSampling("hoeffding", threshold="heuristic"), "give bounds='kl'"),
        (lambda: ChernoffStopping("paper"), "threshold must be one of"),
        (lambda: TopTwo(beta="IDS"), "beta must be"),
        (lambda: FrankWolfe(r_exponent=0.0), "r_exponent"),
    ]:
        with pytest.raises(ValueError, match=match):
            build()


def test_the_linear_identifier_is_its_parts_and_uniform_sampling_stops_correctly():
    """Linear Track-and-Stop and Frank-Wolfe Sampling are their sampling rules with the GLR
    stop, bit for bit; round robin with the GLR's proved threshold is δ-correct."""
    env = make_instance("soare", d=2, omega=0.3)
    X, Z = env.X, env.Z
    for registered, composed in [
        (lambda: LinearTrackAndStop(X, Z, 0.1, tracking="D", lazy_ratio=1.5),
         lambda: LinearComposedIdentifier(X, Z, 0.1, sampling=LinearSampling(
             "track-and-stop", tracking="D", lazy_ratio=1.5))),
        (lambda: FrankWolfeSampling(X, Z, 0.1),
         lambda: LinearComposedIdentifier(X, Z, 0.1, sampling=LinearSampling("frank-wolfe")))]:
        a = simulate(registered(), env, seed=3, engine="reference")
        b = simulate(composed(), env, seed=3)
        _same(a, b)
        assert a.stopped and a.n_pulls > 100
    trials = simulate_trials(lambda e, rng: LinearComposedIdentifier(
        X, Z, 0.2, sampling=LinearSampling("uniform")), env, n_trials=10, seed=36,
        horizon=10_000)
    assert all(t.stopped and t.recommendation == 0 for t in trials)
    counts = sum(t.counts for t in trials)
    assert counts.max() - counts.min() <= 10  # round robin: within one pull a trial
    with pytest.raises(ValueError, match="rule must be one of"):
        LinearSampling("lucb")
    with pytest.raises(ValueError, match="lazy_ratio"):
        LinearComposedIdentifier(X, Z, 0.1, sampling=LinearSampling("track-and-stop",
                                                                    lazy_ratio=0.5))
