"""OPLB, multi-armed (Pacchiano, Ghavamzadeh, Bartlett & Jiang 2021), against the rule of the
authors' code (github.com/pacchiano/constrainedBandits, utilities.py, ConstrainedBandit):
U_r = min(r̂ + α_r β, 1), U_c = min(ĉ + α_c β, 1) with the known arm's cost fixed, β =
sqrt(2 log(1/δ)/max(N, 1)), δ = 1/T², α_r = 1 + 1/τ, α_c = 1, unpulled arms at r̂ = 0, ĉ = 1;
π = argmax U_rᵀπ s.t. U_c π ≤ τ over the simplex."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
from scipy.optimize import linprog

from banditkit.envs import ConstrainedBandit, make_instance
from banditkit.experiments.figures.replicable_constrained import unsafe_rounds
from banditkit.policies.constrained.oplb import OPLB
from banditkit.registry import make_policy
from banditkit.simulate import simulate as simulate_auto

simulate = partial(simulate_auto, engine="reference")  # the algorithm's state is read after


def _authors_rule(pulls, reward_sums, cost_sums, tau, T, safe_arm, c0):
    """U_r, U_c of the authors' ConstrainedBandit, written out from its code."""
    K = pulls.size
    delta = 1.0 / T**2
    alpha_r, alpha_c = 1.0 / np.min(tau) + 1.0, 1.0
    beta = np.array([math.sqrt(2 * math.log(1 / delta) / max(n, 1)) for n in pulls])
    r = np.array([reward_sums[a] / pulls[a] if pulls[a] else 0.0 for a in range(K)])
    c = np.array([[cost_sums[i, a] / pulls[a] if pulls[a] else 1.0 for a in range(K)]
                  for i in range(tau.size)])
    u_r = np.minimum(r + alpha_r * beta, 1.0)
    u_c = np.minimum(c + alpha_c * beta, 1.0)
    u_c[:, safe_arm] = c0
    return u_r, u_c


def _lp_value(u_r, u_c, tau):
    K = u_r.size
    res = linprog(-u_r, A_ub=u_c, b_ub=tau, A_eq=np.ones((1, K)), b_eq=[1.0],
                  bounds=[(0, None)] * K, method="highs")
    assert res.status == 0
    return -res.fun


HARD = make_instance("constrained-hard", lambda_min=0.1)


@pytest.mark.parametrize("rounds", [3, 40, 400])
def test_the_strategy_solves_the_authors_lp(rounds):
    T = 1000
    alg = make_policy("OPLB", HARD, np.random.default_rng(3), horizon=T)
    simulate(alg, HARD, horizon=rounds, seed=4)
    assert alg.pulls.sum() == rounds and alg.schedule == "every"
    arm = 4
    u_r, u_c = _authors_rule(alg.pulls, alg.reward_sums, alg.cost_sums, HARD.alpha, T, arm,
                             HARD.G[:, arm])
    np.testing.assert_allclose(alg.optimistic_values(), u_r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(alg.pessimistic_costs(), u_c, rtol=0, atol=1e-12)
    x = alg.optimistic()
    assert np.all(u_c @ x <= HARD.alpha + 1e-8)  # inside the pessimistic safe set
    assert u_r @ x == pytest.approx(_lp_value(u_r, u_c, HARD.alpha), abs=1e-8)
    if rounds == 3:  # arms never pulled: r̂ = 0, ĉ = 1 — they can only be mixed with a₀
        assert (alg.pulls == 0).any()
        assert (alg.pessimistic_costs()[:, alg.pulls == 0] == 1.0).all()


def test_defaults_are_the_authors_constants():
    alg = OPLB(3, 500, np.array([0.4]), safe_arm=2, safe_costs=np.array([0.1]), rng=0)
    assert alg.alpha_r == pytest.approx(1 + 1 / 0.4) and alg.alpha_c == 1.0
    assert alg.delta == pytest.approx(1 / 500**2)
    alg.pulls[:] = [0, 5, 1]
    np.testing.assert_allclose(alg.radius(), np.sqrt(2 * math.log(500**2) / np.array([1, 5,
                                                                                       1])))
    # an arm never pulled starts at r̂ = 0, ĉ = 1 (the code's initial means): with a small α_c
    # its pessimistic cost stays 1 (ĉ = 1/2 would give 0.5 + α_c β)
    small = OPLB(3, 500, np.array([0.4]), safe_arm=2, safe_costs=np.array([0.1]),
                 alpha_c=0.01, alpha_r=0.01, rng=0)
    r_hat, c_hat = small.estimates()
    assert r_hat.tolist() == [0.0, 0.0, 0.0] and c_hat.tolist() == [[1.0, 1.0, 1.0]]
    assert small.pessimistic_costs().tolist() == [[1.0, 1.0, 0.1]]
    np.testing.assert_allclose(small.optimistic_values(), 0.01 * small.radius())
    m = OPLB(3, 500, np.array([0.4, 0.3]), safe_arm=0, safe_costs=np.array([0.1, 0.2]), rng=0)
    assert m.alpha_r == pytest.approx(1 + 1 / 0.3)  # m constraints: the smallest threshold


def test_every_strategy_played_on_the_hard_instance_is_safe():
    for i in range(3):
        alg = make_policy("OPLB", HARD, np.random.default_rng(i), horizon=20_000,
                          schedule="doubling")
        trial = simulate_auto(alg, HARD, horizon=20_000, seed=10 + i)
        assert unsafe_rounds(trial, HARD)["unsafe_rounds"] == 0
    # optimistic costs instead of pessimistic ones would play unsafe strategies here
    naive = make_policy("OptimisticConstrained", HARD, np.random.default_rng(0),
                        horizon=20_000)
    assert unsafe_rounds(simulate_auto(naive, HARD, horizon=20_000, seed=10),
                         HARD)["unsafe_rounds"] > 0


def test_it_leaves_the_safe_arm_once_the_better_arm_is_known_safe():
    # a₀ = arm 0 (reward 0.1, cost 0); arm 1 (reward 0.9, cost 0.1) is safe alone at τ = 0.5:
    # once β(1) < 0.4 (N(1) ≳ 25 log T) the pessimistic cost admits π = e_1
    env = ConstrainedBandit(np.array([0.1, 0.9]), np.array([[0.0, 0.1]]), np.array([0.5]),
                            safe_strategy=np.array([1.0, 0.0]))
    alg = make_policy("OPLB", env, np.random.default_rng(0), horizon=5000, schedule="doubling")
    trial = simulate_auto(alg, env, horizon=5000, seed=1)
    assert np.allclose(alg.strategy, [0.0, 1.0])
    assert trial.counts[1] > 0.8 * 5000
    assert unsafe_rounds(trial, env)["unsafe_rounds"] == 0


def test_refusals_name_the_parameter():
    env = make_instance("constrained-hard", lambda_min=0.1)
    for kwargs, word in (({"safe_arm": 7}, "safe_arm"), ({"safe_costs": [0.5, 0.1]},
                                                         "safe_costs"),
                         ({"schedule": "weekly"}, "schedule"), ({"alpha_r": -1.0}, "alpha_r"),
                         ({"delta": 1.5}, "delta")):
        with pytest.raises(ValueError, match=word):
            make_policy("OPLB", env, np.random.default_rng(0), horizon=100, **kwargs)
    mixed = make_instance("constrained-hard", lambda_min=0.1)
    mixed.safe_strategy = np.array([0.5, 0.0, 0.0, 0.0, 0.5])
    with pytest.raises(ValueError, match="known safe arm"):
        make_policy("OPLB", mixed, np.random.default_rng(0), horizon=100)
