"""ReplicableGBAI (issue 25 §2): G-BAI's pulls, a replicable recommendation."""

import itertools
import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.identification.g_bai import GBAI
from banditkit.identification.replicable_g_bai import ReplicableGBAI
from banditkit.registry import get_policy, make_policy

ENV = make_instance("soare", d=3, omega=0.3)


def test_pulls_and_estimate_are_g_bai_s():
    rep = simulate(ReplicableGBAI(ENV.X, ENV.Z, 500, rng=4), ENV, horizon=500, seed=1)
    plain = simulate(GBAI(ENV.X, ENV.Z, 500, rng=4), ENV, horizon=500, seed=1)
    assert rep.decisions.same_as(plain.decisions)
    assert rep.info["near_best"]


def test_radius_is_the_conditional_deviation_of_every_gap_and_width_its_union():
    algo = ReplicableGBAI(ENV.X, ENV.Z, 300, rho=0.3, sigma=0.5, rng=2)
    simulate(algo, ENV, horizon=300, seed=3)
    # brute force: each pull's contribution to (z' − z)ᵀθ̂ = (1/T) Σ_t (z'−z)ᵀA⁻¹x_t η_t
    Ainv = np.linalg.inv(algo._information)
    n = algo._pulls
    worst = max(sum(n[a] * ((zp - z) @ Ainv @ ENV.X[a]) ** 2 for a in range(ENV.n_arms))
                for zp, z in itertools.combinations(ENV.Z, 2))
    r = 0.5 / 300 * math.sqrt(worst) * math.sqrt(2 * math.log(16 / 0.075))
    assert algo.radius == pytest.approx(r)
    assert algo.width == pytest.approx(2 * 4 * r / (0.3 - 0.15))  # a union over all 4 items


@pytest.mark.parametrize("seed", [8, 9, 10])
def test_recommendation_is_the_first_near_best_item_in_xi_order(seed):
    algo = ReplicableGBAI(ENV.X, ENV.Z, 200, rng=np.random.default_rng(seed))
    simulate(algo, ENV, horizon=200, seed=0)
    xi = np.random.default_rng(seed)
    from banditkit.identification.fixed_budget import iid_arms

    iid_arms(xi, algo.sampling_weights, 200)  # ξ after the pulls
    u, order = xi.random(), xi.permutation(4)
    assert algo.threshold == pytest.approx(algo.width * (1 - u))
    gaps = (ENV.Z @ algo.theta_hat).max() - ENV.Z @ algo.theta_hat
    near = np.flatnonzero(gaps < algo.width * (1 - u))
    assert algo.near_best.tolist() == near.tolist()
    assert algo.recommendation == next(z for z in order if z in near)


def test_pairs_sharing_xi_recommend_the_same_item_where_g_bai_does_not():
    # T = 20: G-BAI's argmax differs between executions in a third of the pairs
    plain = audit(get_policy("GBAI").factory, ENV, pairs=30, seed=0, horizon=20)
    rep = audit(get_policy("ReplicableGBAI").factory, ENV, pairs=30, seed=0, horizon=20,
                params={"rho": 0.3})
    assert plain.n_identical <= 24
    assert rep.n_identical >= 28


@pytest.mark.parametrize("kwargs, match", [
    ({"rho": 0.0}, "rho"), ({"sigma": 0.0}, "sigma"), ({"rho": 0.2, "delta_r": 0.1},
                                                        "delta_r must be < rho/2")])
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
