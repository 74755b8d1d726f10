"""The composable K-armed identifier (issue 36 §2): the registered identifiers are combinations
of its rules, bit for bit on seeds; new combinations are δ-correct and take sample counts above
the lower bound T*(μ) kl(δ, 1 − δ) on small-gap instances; the lazy variants (Track-and-Stop's
w* on a geometric grid, top-two Thompson sampling's bounded redraws) are δ-correct and solve or
draw far less; and every combination keeps the conformance kit's promises."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.identification.k_armed import (
    EBTC,
    ComposedIdentifier,
    KArmedTrackAndStop,
    TopTwo,
    Tracking,
    Uniform,
    lower_bound,
)
from banditkit.identification.top_two import TopTwoThompson
from banditkit.rng import as_generator
from banditkit.simulate import simulate, simulate_trials
from banditkit.testing import check_algorithm

BERN = BernoulliBandit(np.array([0.6, 0.45, 0.4, 0.35]))
GAUSS = GaussianBandit(np.array([0.5, 0.2, 0.1, 0.0, -0.1]), sigma=1.5)


def _same(a, b) -> None:
    assert a.decisions.same_as(b.decisions)
    assert (a.n_pulls, a.recommendation, a.stopped) == (b.n_pulls, b.recommendation, b.stopped)


# (name, registered(seed), composed(seed), env): both built from ξ = as_generator(seed)
PAIRS = [
    ("TaS-D", lambda s: KArmedTrackAndStop(4, 0.1),
     lambda s: ComposedIdentifier(4, 0.1, sampling=Tracking("D")), BERN),
    ("TaS-C-heuristic", lambda s: KArmedTrackAndStop(4, 0.1, tracking="C", threshold="heuristic"),
     lambda s: ComposedIdentifier(4, 0.1, sampling=Tracking("C"), threshold="heuristic"), BERN),
    ("TaS-D-lazy-gauss",
     lambda s: KArmedTrackAndStop(5, 0.02, model="gaussian", sigma=1.5, lazy_ratio=1.3),
     lambda s: ComposedIdentifier(5, 0.02, sampling=Tracking("D", lazy_ratio=1.3),
                                  model="gaussian", sigma=1.5), GAUSS),
    ("EB-TC", lambda s: EBTC(5, 0.05, epsilon0=0.2, beta=0.6, sigma=1.5),
     lambda s: ComposedIdentifier(5, 0.05, sampling=TopTwo("EB", "TC", epsilon0=0.2, beta=0.6),
                                  model="gaussian", sigma=1.5), GAUSS),
    ("TTTS-beta", lambda s: TopTwoThompson(4, as_generator(s), delta=0.1, beta=0.6),
     lambda s: ComposedIdentifier(4, 0.1, sampling=TopTwo("TS", "TS", selection="coin",
                                                          beta=0.6), rng=as_generator(s),
                                  each_arm_first=False), BERN),
    ("TTTS-gauss-lazy",
     lambda s: TopTwoThompson(5, as_generator(s), delta=0.1, posterior="gaussian", sigma=1.5,
                              max_redraws=8),
     lambda s: ComposedIdentifier(5, 0.1, sampling=TopTwo("TS", "TS", selection="coin",
                                                          max_redraws=8),
                                  model="gaussian", sigma=1.5, rng=as_generator(s),
                                  each_arm_first=False), GAUSS),
]


@pytest.mark.parametrize("name, registered, composed, env", PAIRS, ids=[p[0] for p in PAIRS])
def test_the_registered_identifiers_are_compositions_bit_for_bit(name, registered, composed,
                                                                 env):
    for seed in (1, 2):
        a = simulate(registered(seed), env, seed=10 + seed, engine="reference",
                     horizon=2_500)
        b = simulate(composed(seed), env, seed=10 + seed, horizon=2_500)
        _same(a, b)


# New combinations, each with the proved threshold: δ-correct on a small-gap Gaussian instance
NEW = {
    "EB-TCI": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=TopTwo("EB", "TCI"), model="gaussian", sigma=1.0),
    "TS-TC": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=TopTwo("TS", "TC", selection="coin"), model="gaussian", sigma=1.0,
        rng=rng),
    "TTTS-lazy": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=TopTwo("TS", "TS", selection="coin", max_redraws=4),
        model="gaussian", sigma=1.0, rng=rng),
    "TaS-C-lazy-most-played": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=Tracking("C", lazy_ratio=2.0), recommendation="most-played",
        model="gaussian", sigma=1.0),
    "uniform": lambda rng: ComposedIdentifier(
        3, 0.2, sampling=Uniform(), model="gaussian", sigma=1.0),
}
SMALL = GaussianBandit(np.array([0.4, 0.0, -0.05]), sigma=1.0)


@pytest.mark.parametrize("name", list(NEW))
def test_new_combinations_are_delta_correct_above_the_lower_bound(name):
    trials = simulate_trials(lambda env, rng: NEW[name](rng), SMALL, n_trials=20, seed=36,
                             horizon=200_000)
    pulls = np.array([t.n_pulls for t in trials])
    errors = sum(t.recommendation != 0 for t in trials)
    assert all(t.stopped for t in trials)
    # δ = 0.2 allows 4 errors in 20 on average; the proved threshold makes far fewer (0 in
    # 500 at δ = 0.2 in docs/k-armed.md), so 3 or more here means a broken rule
    assert errors <= 2, errors
    bound = lower_bound(SMALL.means, 0.2, "gaussian", 1.0)
    assert bound < pulls.mean() < 40 * bound, (pulls.mean(), bound)


def test_lazy_track_and_stop_solves_w_star_rarely_and_stays_delta_correct():
    env = BernoulliBandit(np.array([0.5, 0.4, 0.35]))
    trials = simulate_trials(lambda e, rng: KArmedTrackAndStop(3, 0.2, lazy_ratio=1.5), env,
                             n_trials=40, seed=36)
    assert all(t.stopped for t in trials)
    assert sum(t.recommendation != 0 for t in trials) <= 3
    # a geometric grid, plus a solve when the empirical best changes: few solves in all
    solves, pulls = sum(t.info["solves"] for t in trials), sum(t.n_pulls for t in trials)
    assert solves < 0.02 * pulls, (solves, pulls)
    paper = simulate(KArmedTrackAndStop(3, 0.2), env, seed=3)
    assert paper.info["solves"] == paper.n_pulls - 3  # the paper: every round but the first


@pytest.mark.parametrize("sampling", [
    lambda: Tracking("C", lazy_ratio=1.5), lambda: TopTwo("EB", "TCI", beta=0.7),
    lambda: TopTwo("TS", "TS", selection="coin", max_redraws=4)], ids=["C-lazy", "EB-TCI", "TTTS"])
def test_compositions_keep_the_conformance_kits_promises(sampling):
    env = BernoulliBandit(np.array([0.8, 0.3, 0.2]))
    check_algorithm(lambda rng: ComposedIdentifier(3, 0.1, sampling=sampling(), rng=rng), env,
                    horizon=150, processes=0, stop_within=5_000)


def test_impossible_compositions_are_refused_before_any_work():
    for build, match in [
        (lambda: ComposedIdentifier(3, 0.1, sampling="D"), "sampling must be a SamplingRule"),
        (lambda: ComposedIdentifier(3, 0.1, sampling=TopTwo("TS", "TS")), "rng must be"),
        (lambda: ComposedIdentifier(3, 0.1, sampling=Uniform(), recommendation="x"),
         "recommendation must be"),
        (lambda: ComposedIdentifier(3, 0.1, sampling=Uniform(), each_arm_first=False),
         "each_arm_first=False needs"),
        (lambda: TopTwo("XX"), "leader must be"), (lambda: TopTwo(challenger="BC"),
                                                   "challenger must be"),
        (lambda: TopTwo(beta=1.0), "beta must be"), (lambda: Tracking("E"), "tracking must be"),
        (lambda: Tracking(lazy_ratio=1.0), "lazy_ratio must be"),
        (lambda: KArmedTrackAndStop(3, lazy_ratio=0.5), "lazy_ratio must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            build()


def test_lazy_track_and_stops_kernel_is_its_class_bit_for_bit():
    env = BernoulliBandit(np.array([0.5, 0.45, 0.4, 0.3]))
    for tracking in ("D", "C"):
        fast = simulate(KArmedTrackAndStop(4, 0.1, tracking=tracking, lazy_ratio=1.3), env,
                        seed=4, horizon=5_000)
        slow = simulate(KArmedTrackAndStop(4, 0.1, tracking=tracking, lazy_ratio=1.3), env,
                        seed=4, horizon=5_000, engine="reference")
        _same(fast, slow)
        assert fast.info["solves"] == slow.info["solves"]


def test_the_tci_challenger_and_the_most_played_recommendation_are_their_definitions():
    """TCI (Jourdan et al. 2022): argmin_{j ≠ B} W_{B,j} + log N_j, W the pair's Chernoff GLR;
    most-played: argmax N. Checked at every round of a run."""
    env = GaussianBandit(np.array([0.5, 0.3, 0.25, 0.0]), sigma=2.0)
    alg = ComposedIdentifier(4, 0.1, sampling=TopTwo("EB", "TCI", beta=0.6), model="gaussian",
                             sigma=2.0, recommendation="most-played")
    rng = np.random.default_rng(2)
    challengers = 0
    while alg.t < 3_000:
        n, mu = alg.pulls.astype(float), alg.means()
        batch = alg.next_batch()
        if batch is None:
            break
        if alg.t > 0:
            b = int(np.argmax(mu))
            w = np.where(mu < mu[b], (mu[b] - mu) ** 2 / (2 * 4.0 * (1 / n[b] + 1 / n)), 0.0)
            cost = w + np.log(n)
            cost[b] = np.inf
            arm = int(batch.arms[0])
            if arm != b:
                assert arm == int(np.argmin(cost)), alg.t
                challengers += 1
        alg.observe(batch, env.pull(batch, rng, alg.t).rewards)
        assert alg.recommendation == int(np.argmax(alg.pulls))
    assert challengers > 500
    # where the most played arm is not the empirical best
    alg.pulls[:] = [5, 1, 9, 2]
    alg.sums[:] = [5.0, 0.9, 0.0, 0.0]
    assert alg.recommendation == 2
    alg.recommendation_rule = "empirical-best"
    assert alg.recommendation == 0
