"""ReplicableGBAI (issue 25 §2): G-BAI's pulls, a replicable recommendation."""

import itertools
import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.identification.g_bai import GBAI
from banditkit.identification.replicable_g_bai import ReplicableGBAI, budget_factor
from banditkit.registry import get_policy, make_policy

ENV = make_instance("soare", d=3, omega=0.3)


def test_pulls_and_estimate_are_g_bai_s():
    rep = simulate(ReplicableGBAI(ENV.X, ENV.Z, 500, rng=4), ENV, horizon=500, seed=1)
    plain = simulate(GBAI(ENV.X, ENV.Z, 500, rng=4), ENV, horizon=500, seed=1)
    assert rep.decisions.same_as(plain.decisions)
    assert rep.info["inverse_temperature"] > 0


def test_pair_sd_is_the_conditional_deviation_of_every_difference_and_beta_its_log_union():
    algo = ReplicableGBAI(ENV.X, ENV.Z, 300, rho=0.3, sigma=0.5, rng=2)
    simulate(algo, ENV, horizon=300, seed=3)
    # brute force: each pull's contribution to (z' − z)ᵀθ̂ = (1/T) Σ_t (z'−z)ᵀA⁻¹x_t η_t
    Ainv = np.linalg.inv(algo._information)
    n = algo._pulls
    worst = max(sum(n[a] * ((zp - z) @ Ainv @ ENV.X[a]) ** 2 for a in range(ENV.n_arms))
                for zp, z in itertools.combinations(ENV.Z, 2))
    s = 0.5 / 300 * math.sqrt(worst)
    assert algo.gap_sd == pytest.approx(s)
    # P[differ] <= beta E[max pair |D - D'|] <= beta sqrt(2) s sqrt(2 log(4*3)) = rho
    assert algo.beta == pytest.approx(0.3 / (2 * s * math.sqrt(math.log(12))))


@pytest.mark.parametrize("seed", [8, 9, 10])
def test_recommendation_is_the_gumbel_max_of_the_tempered_values_in_xi(seed):
    algo = ReplicableGBAI(ENV.X, ENV.Z, 200, rng=np.random.default_rng(seed))
    simulate(algo, ENV, horizon=200, seed=0)
    xi = np.random.default_rng(seed)
    from banditkit.identification.fixed_budget import iid_arms

    iid_arms(xi, algo.sampling_weights, 200)  # ξ after the pulls
    g = xi.gumbel(size=4)
    np.testing.assert_array_equal(algo.gumbels, g)
    assert algo.recommendation == int(np.argmax(algo.beta * ENV.Z @ algo.theta_hat + g))


def test_identifies_on_a_held_out_random_sphere_instance_within_the_stated_factor():
    # issue 35 §4: 30 arms on the unit sphere of R^6 (seed 11, top gap 0.052). G-BAI is right
    # in 40/50 runs at T = 10^3; the replaced near-best-set rule was right in 2/50 at every
    # T <= 10^5 (a uniform pick among ~all 30 items; it still is at 10^6).
    env = make_instance("linear-random-unit", rng=np.random.default_rng(11), K=30, d=6)
    T = 10**6
    assert T / 10**3 <= budget_factor(30, 0.3, 0.05)
    recs = [[simulate(ReplicableGBAI(env.X, env.Z, T, rho=0.3, rng=100 + j), env, horizon=T,
                      seed=1000 * e + j).recommendation for e in (0, 1)] for j in range(10)]
    best = env.best_item()
    # right in 31/60 and 48/60 executions on two other seed sets; the old rule, 2/20 here
    assert sum(r == best for pair in recs for r in pair) >= 8
    assert sum(a == b for a, b in recs) >= 8


def test_pairs_sharing_xi_recommend_the_same_item_where_g_bai_does_not():
    # T = 20: G-BAI's argmax differs between executions in a third of the pairs
    plain = audit(get_policy("GBAI").factory, ENV, pairs=30, seed=0, horizon=20)
    rep = audit(get_policy("ReplicableGBAI").factory, ENV, pairs=30, seed=0, horizon=20,
                params={"rho": 0.3})
    assert plain.n_identical <= 24
    assert rep.n_identical >= 28


@pytest.mark.parametrize("kwargs, match", [({"rho": 0.0}, "rho"), ({"sigma": 0.0}, "sigma")])
def test_refusals(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_policy("ReplicableGBAI", ENV, np.random.default_rng(0), horizon=100, **kwargs)


def test_audit_counts_each_execution_s_correctness():
    from banditkit.rng import STREAMS, derive_seed, stream

    factory = get_policy("GBAI").factory
    result = audit(factory, ENV, pairs=6, seed=1, horizon=20)
    expected = [[simulate(factory(ENV, stream(1, "audit", j, "algorithm"), horizon=20), ENV,
                          horizon=20, seed=derive_seed(1, "audit", j, e, STREAMS["environment"])
                          ).correct for e in (0, 1)] for j in range(6)]
    assert result.correct.tolist() == expected
    assert 0 < result.correct.sum() < 12  # some executions wrong at T = 20: the count matters
    assert result.summary()["correct_executions"] == sum(map(sum, expected))
