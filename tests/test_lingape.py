"""LinGapE (Xu et al. 2018, analysed form): state kept exactly, the arm-selection program solved
exactly, δ-PAC on small instances, and sample complexity that tracks the gap."""

import itertools

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs import LinearBandit
from banditkit.identification.lingape import LinGapE, min_l1_representation


def three_arms(omega, theta=(1.0, 0.0)):
    """R²: e1, e2 and a near-copy of e1 at angle ω; θ* = e1 makes e1 best with gap 1 − cos ω."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [np.cos(omega), np.sin(omega)]])
    return LinearBandit(X, np.asarray(theta))


def lingape(env, delta=0.1, **kw):
    return LinGapE(env.X, env.Z, delta, theta_bound=float(np.linalg.norm(env.theta)), **kw)


def test_sherman_morrison_state_equals_direct_computation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 4))
    Z = rng.normal(size=(5, 4))
    env = LinearBandit(X, rng.normal(size=4), Z)
    alg = LinGapE(X, Z, 0.05, theta_bound=10.0, regularizer=0.7, refresh_every=10**9)
    simulate(alg, env, seed=1, horizon=400, engine="reference")  # the loop runs alg itself
    assert alg.t == 400 and alg.steps > 300  # many rank-one updates since the one refresh
    A = 0.7 * np.eye(4) + (X * alg.counts[:, None]).T @ X
    A_inv = np.linalg.inv(A)
    np.testing.assert_allclose(alg.A_inv, A_inv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(alg._qz, np.einsum("ij,jk,ik->i", Z, A_inv, Z), rtol=1e-9)
    np.testing.assert_allclose(alg.logdet, np.linalg.slogdet(A)[1], rtol=1e-10)
    b = X.T @ alg.reward_sums
    np.testing.assert_allclose(alg.theta_hat, A_inv @ b, rtol=1e-8, atol=1e-10)
    # The gap index from the cached forms equals the textbook formula.
    i, j, B = alg.gap_index()
    est = Z @ (A_inv @ b)
    C = np.sqrt(2 * np.log(5**2 * np.sqrt(np.linalg.det(A)) / (0.05 * 0.7**2))) + np.sqrt(0.7) * 10
    widths = np.sqrt(np.einsum("ij,jk,ik->i", Z - Z[i], A_inv, Z - Z[i]))
    ucb = est - est[i] + C * widths
    ucb[i] = -np.inf
    assert i == int(np.argmax(est)) and j == int(np.argmax(ucb))
    assert B == pytest.approx(ucb[j], rel=1e-9)


def brute_force_min_l1(X, y):
    """Minimum ℓ1 norm over the basic solutions (a linear program's optimum is at a vertex)."""
    K, d = X.shape
    best = np.inf
    for cols in itertools.combinations(range(K), d):
        B = X[list(cols)].T
        if abs(np.linalg.det(B)) < 1e-12:
            continue
        best = min(best, np.abs(np.linalg.solve(B, y)).sum())
    return best


@pytest.mark.parametrize("seed", range(5))
def test_linear_program_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(6, 3))
    y = rng.normal(size=3)
    w = min_l1_representation(X, y)
    np.testing.assert_allclose(X.T @ w, y, atol=1e-9)
    assert np.abs(w).sum() == pytest.approx(brute_force_min_l1(X, y), rel=1e-7)


def test_ratio_rule_closed_form_on_a_basis():
    # With X the standard basis, w* = y uniquely, so p*_a = |y_a| / ||y||_1 and the rule pulls
    # argmin_a T_a ||y||_1 / |y_a| over the coordinates where y is non-zero.
    X = np.eye(3)
    Z = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 1.5], [0.2, 0.2, 0.2]])
    alg = LinGapE(X, Z, 0.1, theta_bound=1.0)
    alg.counts[:] = [5, 3, 8]
    support, inv_p = alg.arm_ratios(0, 1)  # y = (1, −0.5, −1.5)
    assert support.tolist() == [0, 1, 2]
    np.testing.assert_allclose(inv_p, 3.0 / np.array([1.0, 0.5, 1.5]))
    ratios = alg.counts * 3.0 / np.array([1.0, 0.5, 1.5])  # 15, 18, 16
    assert alg._select(0, 1) == int(np.argmin(ratios)) == 0
    support, _ = alg.arm_ratios(1, 2)  # y = (−0.2, 0.3, 1.3): all coordinates
    assert alg._select(2, 1) == alg._select(1, 2)
    assert alg.arm_ratios(0, 1) is alg.arm_ratios(1, 0)  # one program per unordered pair


@pytest.mark.parametrize("selection", ["ratio", "greedy"])
def test_delta_pac_on_an_easy_instance(selection):
    # The best arm is moved around by a permutation so that "always 0" cannot pass.
    fails, pulls = 0, []
    for trial in range(30):
        perm = np.random.default_rng(trial).permutation(3)
        env = three_arms(0.6)
        env = LinearBandit(env.X[perm], env.theta)
        alg = lingape(env, delta=0.1, selection=selection)
        tr = simulate(alg, env, seed=100 + trial, horizon=10**6)
        assert tr.stopped
        fails += not tr.correct
        pulls.append(tr.n_pulls)
    assert fails <= 3  # ≤ δ · 30; in practice 0
    assert np.mean(pulls) > 3


def test_identifies_the_best_item_in_a_transductive_problem():
    X = np.eye(3)
    Z = np.array([[1.0, 0.0, 0.0], [np.cos(0.5), np.sin(0.5), 0.0], [0.0, 0.0, 1.0]])
    env = LinearBandit(X, np.array([0.0, 1.0, 0.2]), Z)  # best item: index 1
    for seed in range(5):
        tr = simulate(LinGapE(X, Z, 0.05, theta_bound=1.1), env, seed=seed, horizon=10**6)
        assert tr.stopped and tr.recommendation == 1


def test_sample_complexity_decreases_as_the_gap_grows():
    means = []
    for omega in (0.3, 0.9):
        n = [simulate(lingape(three_arms(omega)), three_arms(omega), seed=s).n_pulls
             for s in range(4)]
        means.append(np.mean(n))
    assert means[0] > 3 * means[1]


def test_one_item_stops_at_once():
    X = np.eye(2)
    alg = LinGapE(X, X[:1], 0.05, theta_bound=1.0)
    env = LinearBandit(X, np.array([1.0, 0.0]), X[:1])
    tr = simulate(alg, env, seed=0)
    assert tr.stopped and tr.n_pulls == 0 and tr.recommendation == 0 and tr.correct


def test_initialisation_pulls_every_arm_once_then_one_pull_per_batch():
    env = three_arms(0.6)
    alg = lingape(env)
    tr = simulate(alg, env, seed=0)
    sizes = tr.decisions.batch_sizes()
    assert sizes[0] == 3 and np.all(sizes[1:] == 1)
    assert tr.info["steps"] == tr.n_pulls - 3 and tr.info["B"] <= 0.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(X=np.array([[1.0, 0.0], [2.0, 0.0]])), "span"),
    (dict(delta=1.0), "delta"),
    (dict(delta=0.0), "delta"),
    (dict(X=np.array([[1.0, np.nan], [0.0, 1.0]])), "finite"),
    (dict(Z=np.ones((2, 3))), "columns"),
    (dict(epsilon=-0.1), "epsilon"),
    (dict(regularizer=0.0), "regularizer"),
    (dict(theta_bound=np.inf), "theta_bound"),
    (dict(selection="thompson"), "selection"),
])
def test_bad_input_is_refused(kwargs, match):
    args = dict(X=np.eye(2), Z=None, delta=0.05, theta_bound=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        LinGapE(args.pop("X"), args.pop("Z"), args.pop("delta"), **args)
