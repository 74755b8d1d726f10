"""ALBA with Y-ElimTil (Tao et al. 2018), batched: schedule, designs on the span of the active
items, δ-PAC on small instances, and sample complexity that tracks the gaps."""

import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.design import g_optimal, round_allocation
from banditkit.envs import LinearBandit
from banditkit.identification.alba import ALBA


def soare(d, omega=0.01):
    X = np.vstack([np.eye(d), np.r_[np.cos(omega), np.sin(omega), np.zeros(d - 2)]])
    theta = np.zeros(d)
    theta[0] = 2.0
    return LinearBandit(X, theta)


def alba(env, delta=0.05, **kw):
    return ALBA(env.X, None, delta, theta_bound=float(np.linalg.norm(env.theta)), **kw)


def test_schedule_follows_the_formulas():
    env = soare(4)
    alg = alba(env)
    assert alg.delta_round(0) == pytest.approx(6 * 0.05 / math.pi**2)
    assert alg.delta_phase(1, 2) == pytest.approx(6 * (6 * 0.05 / (math.pi**2 * 4)) /
                                                  (math.pi**2 * 4))
    # c0 = max(4 S², 3) = 16; ε_1 = 1/1.1.
    eps = 1 / 1.1
    l1 = 16 * (2 + (6 + 4 * eps) * 4) / (4 * eps**2)
    log_term = math.log(5 * 25 / (2 * alg.delta_phase(0, 1)))
    assert alg.phase_length(0, 1, 5) == math.ceil(l1 * log_term)
    # Σ_r Σ_s δ_s ≤ δ: the union bound behind δ-PAC.
    total = sum(alg.delta_phase(r, s) for r in range(200) for s in range(1, 2000))
    assert total <= 0.05


def test_first_batch_is_the_rounded_g_optimal_design():
    env = soare(4)
    alg = alba(env)
    batch = alg.next_batch()
    n = alg.phase_length(0, 1, 5)
    expected = round_allocation(g_optimal(env.X, tol=0.01).weights, n)
    np.testing.assert_array_equal(batch.allocation(5), expected)
    assert batch.n_pulls == n


def test_design_lives_on_the_arms_in_the_span_of_the_active_items():
    env = soare(5)
    alg = alba(env)
    weights, k = alg.design(np.array([0, 5]))  # e1 and x' span the (e1, e2) plane
    assert k == 2
    assert set(np.flatnonzero(weights)) <= {0, 1, 5}
    assert np.all(weights[2:5] == 0) and weights.sum() == pytest.approx(1.0)


def test_noiseless_run_never_eliminates_the_best_item():
    for d in (3, 6):
        env = LinearBandit(soare(d).X, soare(d).theta, sigma=1e-9)
        alg = ALBA(env.X, None, 0.05, theta_bound=2.0, sigma=1e-9)
        sizes = []
        while (batch := alg.next_batch()) is not None:
            alg.observe(batch, env.pull(batch, np.random.default_rng(0)).rewards)
            assert 0 in alg.active
            sizes.append(alg.active.size)
        assert alg.recommendation == 0
        assert sizes == sorted(sizes, reverse=True)  # the active set only shrinks


@pytest.mark.parametrize("d", [3, 4])
def test_delta_pac_on_soare_instances(d):
    # ω = 0.05: the near-copy of e1 has gap 2(1 − cos ω) ≈ 0.0025; rows permuted so that a
    # constant answer cannot pass.
    fails, pulls = 0, []
    for trial in range(25):
        env = soare(d, omega=0.05)
        perm = np.random.default_rng(trial).permutation(d + 1)
        env = LinearBandit(env.X[perm], env.theta)
        tr = simulate(alba(env, delta=0.1), env, seed=trial)
        assert tr.stopped
        fails += not tr.correct
        pulls.append(tr.n_pulls)
    assert fails <= 2  # ≤ δ · 25; in practice 0


def test_sample_complexity_decreases_as_the_gap_grows():
    means = [np.mean([simulate(alba(soare(4, omega)), soare(4, omega), seed=s).n_pulls
                      for s in range(4)]) for omega in (0.1, 0.4)]
    assert means[0] > 4 * means[1]


def test_one_item_stops_at_once():
    X = np.array([[1.0]])
    env = LinearBandit(X, np.array([1.0]))
    tr = simulate(ALBA(X, X, 0.05, theta_bound=1.0), env, seed=0)
    assert tr.stopped and tr.n_pulls == 0 and tr.recommendation == 0


def test_budget_cap_returns_the_empirical_best_and_eliminates_nothing_on_a_cut_phase():
    env = soare(4)
    alg = alba(env)
    tr = simulate(alg, env, seed=0, horizon=500)
    assert not tr.stopped and alg.active.size == 5
    assert tr.recommendation in range(5)
    assert tr.info["phases"] == 1


@pytest.mark.parametrize("kwargs, match", [
    (dict(X=np.array([[1.0, 0.0], [2.0, 0.0]])), "span"),
    (dict(delta=1.5), "delta"),
    (dict(X=np.array([[np.inf, 0.0], [0.0, 1.0]])), "finite"),
    (dict(Z=np.eye(3)), "columns"),
    (dict(Z=np.array([[1.0, 0.0], [0.5, 0.5]])), "Z must be None or equal to X"),
    (dict(epsilon_decay=1.0), "epsilon_decay"),
    (dict(sigma=-1.0), "sigma"),
])
def test_bad_input_is_refused(kwargs, match):
    args = dict(X=np.eye(2), Z=None, delta=0.05, theta_bound=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ALBA(args.pop("X"), args.pop("Z"), args.pop("delta"), **args)
