"""The K-armed identifiers with the parameters their papers vary (issue 36 §4): β ≠ ½, σ ≠ 1,
K > 4, δ ≠ 0.1, each checked against the paper's definition, computed here independently of the
library's helpers, through the class and through the compiled kernel:

* top-two Thompson sampling and EB-TC: the best arm's share of the pulls tends to β (Russo 2016,
  Theorem 1's β-optimality; Jourdan et al. 2022's tracking), so β flipped to 1 − β fails;
* every Chernoff-stopped identifier stops at the first t with
  Z(t) = min_j (μ̂_î − μ̂_j)²/(2σ²(1/N_î + 1/N_j)) > log(2t(K − 1)/δ) (GK16, Theorem 10), so a σ
  or a K − 1 or a δ misplaced fails;
* LUCB1 and KL-LUCB pull (h_t, l_t) with l_t the highest upper bound among the others, and stop
  when U_{l_t} − L_{h_t} < ε, with the papers' bounds at K and δ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.identification.k_armed import EBTC, KLLUCB, LUCB, KArmedTrackAndStop
from banditkit.identification.top_two import TopTwoThompson
from banditkit.rng import as_generator
from banditkit.simulate import simulate

GAUSS6 = np.array([1.0, 0.4, 0.2, 0.0, -0.2, -0.4])  # K = 6 > 4
SIGMA = 2.0


def _glr(pulls: np.ndarray, sums: np.ndarray, sigma: float) -> float:
    """min_{j ≠ î} (μ̂_î − μ̂_j)²/(2σ²(1/N_î + 1/N_j)), 0 unless î is the unique best."""
    mu = sums / pulls
    best = int(np.argmax(mu))
    z = math.inf
    for j in range(mu.size):
        if j != best:
            if not mu[j] < mu[best]:
                return 0.0
            z = min(z, (mu[best] - mu[j]) ** 2
                    / (2 * sigma ** 2 * (1 / pulls[best] + 1 / pulls[j])))
    return z


def _drive(alg, env, seed: int, cap: int, each) -> None:
    """The protocol loop, calling ``each(alg)`` after every observation."""
    rng = np.random.default_rng(seed)
    while alg.t < cap:
        batch = alg.next_batch()
        if batch is None:
            return
        alg.observe(batch, env.pull(batch, rng, alg.t).rewards)
        each(alg)


def _gaussian_identifiers(delta: float):
    yield "TTTS", lambda: TopTwoThompson(6, as_generator(3), delta=delta, beta=0.7,
                                         posterior="gaussian", sigma=SIGMA)
    yield "TaS-D", lambda: KArmedTrackAndStop(6, delta, model="gaussian", sigma=SIGMA)
    yield "TaS-C", lambda: KArmedTrackAndStop(6, delta, tracking="C", model="gaussian",
                                              sigma=SIGMA)
    yield "EB-TC", lambda: EBTC(6, delta, beta=0.7, sigma=SIGMA)


@pytest.mark.parametrize("name, build", list(_gaussian_identifiers(0.03)),
                         ids=[n for n, _ in _gaussian_identifiers(0.03)])
def test_chernoff_stopping_at_sigma_2_k_6_delta_003_is_the_papers_rule(name, build):
    env = GaussianBandit(GAUSS6, sigma=SIGMA)
    seen = []

    def each(alg):
        if np.all(alg.pulls > 0):
            z = _glr(alg.pulls, alg.sums, SIGMA)
            rule = z > math.log(2 * alg.t * (6 - 1) / 0.03)
            assert alg.stopped == rule, (name, alg.t, z)
            assert alg.info["statistic"] == pytest.approx(z, rel=1e-9, abs=1e-12)
            seen.append(rule)

    alg = build()
    _drive(alg, env, 5, 30_000, each)
    assert alg.stopped and seen[-1] and not any(seen[:-1])
    # the compiled kernel (simulate's default engine) stops at the same pull, on the same arm
    fast = simulate(build(), env, seed=11)
    slow = simulate(build(), env, seed=11, engine="reference")
    assert (fast.n_pulls, fast.recommendation) == (slow.n_pulls, slow.recommendation)
    assert np.array_equal(fast.counts, slow.counts)


@pytest.mark.parametrize("beta", [0.75, 0.3])
def test_top_two_thompsons_best_arm_share_tends_to_beta(beta):
    """Russo (2016): TTTS's allocation to the best arm converges to β. On an instance where
    the posterior leader is almost always the best arm, its share of the pulls is β ± noise;
    the class and the kernel (bit for bit) both."""
    env = GaussianBandit(np.array([1.0, 0.0, -0.2, -0.4, -0.6]), sigma=SIGMA)
    for engine in ("auto", "reference"):
        alg = TopTwoThompson(5, as_generator(7), delta=1e-12, beta=beta, posterior="gaussian",
                             sigma=SIGMA, horizon=4_000)
        trial = simulate(alg, env, seed=8, engine=engine)
        share = trial.counts[0] / trial.n_pulls
        assert abs(share - beta) < 0.05, (engine, share)


@pytest.mark.parametrize("beta", [0.7, 0.35])
def test_eb_tcs_best_arm_share_is_beta(beta):
    """EB-TC's tracking (Jourdan et al. 2022): the leader's pulls among the rounds it leads
    are ⌈β T⌉-tracked, so once the empirical best settles its share is β to O(1/t)."""
    env = GaussianBandit(np.array([1.0, 0.0, -0.2, -0.4, -0.6, -0.8]), sigma=SIGMA)
    for engine in ("auto", "reference"):
        trial = simulate(EBTC(6, 1e-12, beta=beta, sigma=SIGMA, horizon=4_000), env, seed=9,
                         engine=engine)
        share = trial.counts[0] / trial.n_pulls
        assert abs(share - beta) < 0.02, (engine, share)


def _lucb_width(alg, level_of, sigma: float | None):
    """(L, U) of the paper: Hoeffding √(log(k₁Kt⁴/δ)/(2N)) (LUCB1) or, Gaussian KL-LUCB, the
    closed form μ̂ ± σ√(2β/N)."""
    mu = alg.sums / alg.pulls
    if sigma is None:
        w = np.sqrt(math.log(1.25 * alg.n_arms * alg.rounds ** 4 / alg.delta) / (2 * alg.pulls))
    else:
        w = sigma * np.sqrt(2 * level_of(alg.rounds) / alg.pulls)
    return mu - w, mu + w


@pytest.mark.parametrize("kind", ["LUCB1", "KL-LUCB-gauss"])
def test_lucb_pulls_and_stops_by_the_papers_bounds_at_k_6_delta_003(kind):
    delta, K = 0.03, 6
    if kind == "LUCB1":
        env = BernoulliBandit(np.array([0.9, 0.5, 0.45, 0.4, 0.35, 0.3]))
        alg, sigma = LUCB(K, delta), None
    else:
        env = GaussianBandit(GAUSS6, sigma=SIGMA)
        alg, sigma = KLLUCB(K, delta, model="gaussian", sigma=SIGMA), SIGMA

    def level(t):
        return math.log(405.5 * K * t ** 1.1 / delta)

    rng = np.random.default_rng(4)
    batch = alg.next_batch()
    alg.observe(batch, env.pull(batch, rng, 0).rewards)
    while alg.t < 200_000:
        lower, upper = _lucb_width(alg, level, sigma)
        h = int(np.argmax(alg.sums / alg.pulls))
        masked = upper.copy()
        masked[h] = -np.inf
        l_arm = int(np.argmax(masked))
        batch = alg.next_batch()
        if upper[l_arm] - lower[h] < 0:
            assert batch is None
            break
        assert batch is not None and batch.arms.tolist() == [h, l_arm]
        alg.observe(batch, env.pull(batch, rng, alg.t).rewards)
    assert alg.stopped and alg.recommendation == 0
