"""Replicable linear bandits (Esfandiari et al. 2023, Algorithms 3 and 4), their non-replicable
baseline, and the linear instances they run on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit import Batch, simulate
from banditkit.envs import LinearBandit, make_instance
from banditkit.envs.instances import grid_net
from banditkit.experiments.replicability import audit
from banditkit.policies.linear.elimination import LinearElimination, linear_elimination
from banditkit.policies.linear.replicable import (
    ReplicableLinearElimination,
    ReplicableLinearLSE,
    replicable_linear_elimination,
    replicable_linear_lse,
)


def _random_unit(seed: int = 0):
    return make_instance("linear-random-unit", rng=np.random.default_rng(seed))


# ---- instances --------------------------------------------------------------------------------

def test_rademacher_rewards_have_the_linear_mean_and_values_pm1():
    env = LinearBandit(np.eye(2), [0.5, -0.2], noise="rademacher")
    n = 200_000
    sums = env.pull(Batch(np.array([0, 1]), np.array([n, n])), np.random.default_rng(0)).rewards
    np.testing.assert_allclose(sums / n, [0.5, -0.2], atol=4 / math.sqrt(n))
    one = env.pull(Batch(np.array([0]), np.array([1])), np.random.default_rng(1)).rewards
    assert one[0] in (-1.0, 1.0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        LinearBandit(np.eye(2), [1.5, 0.0], noise="rademacher")


def test_grid_net_is_a_net_of_the_ball_inside_the_ball():
    h, d = 0.1, 2
    X = grid_net(h, d)
    assert np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12)
    rng = np.random.default_rng(0)
    p = rng.standard_normal((2000, d))
    p *= (rng.random((2000, 1)) ** (1 / d)) / np.linalg.norm(p, axis=1, keepdims=True)
    dist = np.min(np.linalg.norm(p[:, None, :] - X[None], axis=2), axis=1)
    assert dist.max() <= h * math.sqrt(d)
    assert len(grid_net(0.5, 3, "box")) == 5**3
    with pytest.raises(ValueError, match="d must"):
        grid_net(0.1, 4)


def test_random_unit_instance_is_normalised():
    env = _random_unit(3)
    np.testing.assert_allclose(np.linalg.norm(env.X, axis=1), 1.0)
    assert np.linalg.norm(env.theta) == pytest.approx(1.0)
    assert env.X.shape == (20, 5)


# ---- Lemma 5 multiset -------------------------------------------------------------------------

def test_lemma5_multiset_is_deterministic_and_meets_the_g_optimal_bound():
    env = _random_unit(0)
    T = 10**8
    batches = []
    for seed in (0, 1, 2):
        alg = ReplicableLinearElimination(env.X, T, 0.3, rng=np.random.default_rng(seed))
        batches.append(alg.next_batch())
    for b in batches[1:]:  # the same multiset for any ξ
        np.testing.assert_array_equal(b.arms, batches[0].arms)
        np.testing.assert_array_equal(b.counts, batches[0].counts)
    b = batches[0]
    n, d = b.n_pulls, env.X.shape[1]
    counts = b.allocation(env.n_arms)
    assert n == math.ceil(alg.size_constant * alg.beta * alg.q)  # n_1 = 10 β q
    V = (env.X * counts[:, None]).T @ env.X
    g = np.einsum("ij,jk,ik->i", env.X, np.linalg.inv(V), env.X).max()
    p = np.count_nonzero(counts)
    # G-optimal design within tol = 0.01, rounding loses at most (1 + 2p/n) (Pukelsheim).
    assert g <= d * 1.01 * (1 + 2 * p / n) / n
    # Hence the LSE confidence width sqrt(2 ‖a‖²_{V^-1} ln(2/δ)) of 1-sub-Gaussian noise is
    # within Lemma 5's ε = ε̃_1 for δ = 1/(KT²), as Algorithm 3 needs.
    assert math.sqrt(2 * g * math.log(2 / alg.delta)) <= alg.epsilon_tilde(1)


def test_thresholds_come_from_xi():
    env = _random_unit(0)
    a = ReplicableLinearElimination(env.X, 10**6, 0.3, rng=np.random.default_rng(5))
    b = ReplicableLinearElimination(env.X, 10**6, 0.3, rng=np.random.default_rng(5))
    c = ReplicableLinearElimination(env.X, 10**6, 0.3, rng=np.random.default_rng(6))
    th = [[x.threshold(i) for i in range(1, 5)] for x in (a, b, c)]
    assert th[0] == th[1] and th[0] != th[2]
    for i in range(1, 5):  # ε̄_i ∈ [ε_i/2, ε_i]
        assert a.epsilon(i) / 2 <= a.threshold(i) <= a.epsilon(i)


# ---- replicability, regret, elimination --------------------------------------------------------

def test_algorithm3_is_replicable_and_the_baseline_is_not():
    env = _random_unit(0)
    T, rho, pairs = 10**8, 0.3, 30
    rep = audit(replicable_linear_elimination, env, pairs=pairs, horizon=T,
                params={"rho": rho, "horizon": T}, seed=1)
    base = audit(linear_elimination, env, pairs=pairs, horizon=T, params={"horizon": T}, seed=1)
    # Not significantly above ρ: the lower end of the Clopper–Pearson interval is ≤ ρ.
    assert rep.interval[0] <= rho
    assert rep.non_replication <= rho
    assert base.non_replication >= rep.non_replication + 0.3


def test_printed_commit_rule_is_available():
    env = _random_unit(0)
    a = ReplicableLinearElimination(env.X, 10**8, 0.3, rng=0, commit="argmax")
    tr = simulate(a, env, horizon=10**8, seed=0)
    est = a.last_estimates[a.active]
    assert a.final_arm == a.active[int(np.argmax(est))]
    b = ReplicableLinearElimination(env.X, 10**8, 0.3, rng=0)
    simulate(b, env, horizon=10**8, seed=0)
    assert b.final_arm == b.active[0]
    assert tr.n_pulls == 10**8


def _easy_instance():
    # Well separated arms: the best is e_1, gaps ≥ 0.5.
    X = np.vstack([np.eye(4), -np.eye(4), np.full((1, 4), 0.5)])
    return LinearBandit(X, np.array([0.9, 0.2, -0.1, 0.0]), noise="rademacher")


@pytest.mark.parametrize("make", [
    lambda X, T, s: LinearElimination(X, T),
    lambda X, T, s: ReplicableLinearElimination(X, T, 0.3, rng=s),
    lambda X, T, s: ReplicableLinearElimination(X, T, 0.3, rng=s, beta=50, size_constant=1),
])
def test_finite_policies_never_eliminate_the_best_arm(make):
    env = _easy_instance()
    best = env.best_arm
    for s in range(10):
        alg = make(env.X, 10**7, s)
        tr = simulate(alg, env, horizon=10**7, seed=100 + s)
        assert alg.eliminated_at[best] == -1
        assert best in alg.active
        assert alg.phase >= 2
        assert tr.n_pulls == 10**7
    assert alg.active.size < env.n_arms  # it does eliminate


def test_algorithm4_never_eliminates_the_best_arm_and_learns():
    env = make_instance("linear-grid", rng=np.random.default_rng(0), resolution=0.2)
    best = env.best_arm
    practical = dict(confidence="computed", lse_rho=0.3, delta=0.01, blowup=100)
    for s in range(5):
        alg = ReplicableLinearLSE(env.X, 10**8, 0.3, rng=s, **practical)
        simulate(alg, env, horizon=10**8, seed=s)
        assert alg.eliminated_at[best] == -1
        assert alg.active.size <= 5


def _mean_regret_rate(make, env, T, n=6):
    return np.mean([simulate(make(s, T), env, horizon=T, seed=50 + s).final_regret / T
                     for s in range(n)])


def test_regret_is_sublinear():
    env = _random_unit(0)
    le = lambda s, T: LinearElimination(env.X, T)  # noqa: E731
    rle = lambda s, T: ReplicableLinearElimination(env.X, T, 0.3, rng=s)  # noqa: E731
    assert _mean_regret_rate(le, env, 10**8) < _mean_regret_rate(le, env, 10**6) / 10
    assert _mean_regret_rate(rle, env, 10**9) < _mean_regret_rate(rle, env, 10**7) / 2
    grid = make_instance("linear-grid", rng=np.random.default_rng(0), resolution=0.2)
    lse = lambda s, T: ReplicableLinearLSE(  # noqa: E731
        grid.X, T, 0.3, rng=s, confidence="computed", lse_rho=0.3, delta=0.01, blowup=100)
    assert _mean_regret_rate(lse, grid, 10**8) < _mean_regret_rate(lse, grid, 10**6) / 5


def test_algorithm4_pulls_the_core_set_uniformly_and_is_deterministic_in_its_batches():
    env = make_instance("linear-grid", rng=np.random.default_rng(0), resolution=0.1)
    a = ReplicableLinearLSE(env.X, 10**6, 0.3, rng=0)
    b = ReplicableLinearLSE(env.X, 10**6, 0.3, rng=1)
    ba, bb = a.next_batch(), b.next_batch()
    np.testing.assert_array_equal(ba.arms, bb.arms)
    np.testing.assert_array_equal(ba.counts, bb.counts)
    assert np.all(ba.counts == ba.counts[0])  # line 11: N_i pulls of every core arm
    assert ba.n_runs == a.core().size
    assert ba.n_pulls >= math.ceil(a.blowup * a.q)


def test_algorithm4_audit_on_the_disc():
    env = make_instance("linear-grid", rng=np.random.default_rng(0), resolution=0.2)
    res = audit(replicable_linear_lse, env, pairs=20, horizon=10**7, seed=2,
                params={"rho": 0.3, "horizon": 10**7, "confidence": "computed", "lse_rho": 0.3,
                        "delta": 0.01, "blowup": 100.0})
    assert res.non_replication <= 0.3


# ---- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [ReplicableLinearElimination, ReplicableLinearLSE])
@pytest.mark.parametrize("rho", [0.0, -0.1, 1.5, float("nan")])
def test_bad_rho_refused(cls, rho):
    with pytest.raises(ValueError, match="rho"):
        cls(np.eye(3), 1000, rho, rng=0)


@pytest.mark.parametrize("cls", [ReplicableLinearElimination, ReplicableLinearLSE])
def test_bad_arms_and_horizon_refused(cls):
    with pytest.raises(ValueError, match="span"):
        cls(np.array([[1.0, 0.0], [2.0, 0.0]]), 1000, 0.3, rng=0)
    with pytest.raises(ValueError, match="NaN"):
        cls(np.array([[1.0, np.nan], [0.0, 1.0]]), 1000, 0.3, rng=0)
    with pytest.raises(ValueError, match="horizon"):
        cls(np.eye(3), 2, 0.3, rng=0)
    with pytest.raises(TypeError, match="horizon"):
        cls(np.eye(3), 10.5, 0.3, rng=0)


def test_bad_constants_refused():
    X = np.eye(3)
    with pytest.raises(ValueError, match="beta"):
        ReplicableLinearElimination(X, 1000, 0.3, rng=0, beta=-1)
    with pytest.raises(ValueError, match="commit"):
        ReplicableLinearElimination(X, 1000, 0.3, rng=0, commit="best")
    with pytest.raises(ValueError, match="confidence"):
        ReplicableLinearLSE(X, 1000, 0.3, rng=0, confidence="tight")
    with pytest.raises(ValueError, match="lse_rho must exceed delta"):
        ReplicableLinearLSE(X, 1000, 0.3, rng=0, lse_rho=0.01, delta=0.05)
    with pytest.raises(ValueError, match="reward_range"):
        ReplicableLinearLSE(X, 1000, 0.3, rng=0, reward_range=(1.0, -1.0))
    with pytest.raises(ValueError, match="linear environment"):
        replicable_linear_lse(make_instance("bernoulli"), np.random.default_rng(0),
                              horizon=1000)


@pytest.mark.parametrize("make", [
    lambda **kw: ReplicableLinearElimination(np.eye(3), 10**5, 0.3, rng=0, **kw),
    lambda **kw: LinearElimination(np.eye(3), 10**5, **kw),
    lambda **kw: ReplicableLinearLSE(np.eye(3), 10**5, 0.3, rng=0, **kw),
])
@pytest.mark.parametrize("kwargs, match", [
    (dict(q=0.5), "q must be a finite number > 1"), (dict(q=1.0), "q must be"),
    (dict(q="2"), "q must be a number"), (dict(n_batches=1), "n_batches must be >= 2"),
])
def test_linear_policies_refuse_what_the_k_armed_ones_refuse(make, kwargs, match):
    """As for Algorithms 1 and 2: B ≥ 2 (batches 1..B−1 explore) and a given q > 1."""
    with pytest.raises((TypeError, ValueError), match=match):
        make(**kwargs)


def test_algorithm3_refuses_a_blow_up_below_1():
    """β < 1 makes ε̃_i > ε_i (fewer pulls than ε_i asks for); Algorithm 2 refuses β < 1 too."""
    X = np.eye(3)
    for beta in (0.5, 0.999):
        with pytest.raises(ValueError, match=r"^beta must be >= 1"):
            ReplicableLinearElimination(X, 1000, 0.3, rng=0, beta=beta)
    assert ReplicableLinearElimination(X, 1000, 0.3, rng=0, beta=1).beta == 1.0
    # the default q is below 1 when T < 10β (no batch fits): still accepted, one arm plays
    alg = ReplicableLinearElimination(X, 1000, 0.3, rng=0)
    assert alg.q < 1
    assert simulate(alg, LinearBandit(X, np.array([0.1, 0.2, 0.3]), noise="rademacher"),
                    horizon=1000, seed=0).counts.tolist() == [1000, 0, 0]


@pytest.mark.parametrize("bad", [5, None, (0.0, 1.0, 2.0), ("-1", "1"), (True, 2), "ab",
                                 (1.0, float("nan"))])
def test_reward_range_must_be_a_pair_of_numbers(bad):
    with pytest.raises(ValueError, match=r"^reward_range must be"):
        ReplicableLinearLSE(np.eye(3), 1000, 0.3, rng=0, reward_range=bad)


def test_algorithm4_short_horizon_refusal_names_horizon_and_rho():
    with pytest.raises(ValueError, match=r"^horizon T=3 is too short for rho=0\.001: .*"
                                         r"lse_rho = rho/\(dB\)"):
        ReplicableLinearLSE(np.eye(3), 3, 0.001, rng=0)
