"""Peace (Katz-Samuels et al. 2020, fixed budget) and Mixed-Peace (Xiong et al., Algorithm 6)."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.design import g_optimal, round_allocation
from banditkit.envs import LinearBandit, NonStationaryLinearBandit
from banditkit.envs.instances import make_instance
from banditkit.estimation.least_squares import LeastSquares
from banditkit.identification.item_designs import item_design
from banditkit.identification.peace import MixedPeace, Peace, peace_epochs
from banditkit.simulate import simulate

TOL = 0.01


def soare(d: int = 5, omega: float = 0.5):
    return make_instance("soare", d=d, omega=omega)


def exact_sums(X: np.ndarray, batch, theta: np.ndarray) -> np.ndarray:
    """Noise-free reward sums per run under a fixed θ."""
    return batch.counts * (X[batch.arms] @ theta)


def malicious(T: int, d: int = 10, omega: float = 0.5) -> NonStationaryLinearBandit:
    """Xiong et al., Appendix D.1: θ_t = (0, 1, ..., 1) for t ≤ T/3, then (2, 0, ..., 0)."""
    X = soare(d, omega).X
    schedule = np.zeros((T, d))
    schedule[: T // 3, 1:] = 1.0
    schedule[T // 3:, 0] = 2.0
    return NonStationaryLinearBandit(X, schedule)


# ----------------------------------------------------------------------------- epochs, budget

def test_epoch_count_closed_form():
    assert peace_epochs(20.0, 10_000) == 5  # ⌈log2 20⌉
    assert peace_epochs(16.0, 10_000) == 4
    assert peace_epochs(16.5, 10_000) == 5
    assert peace_epochs(2.01, 10_000) == 2
    for rho in (0.0, 0.5, 1.0, 2.0):  # ρ ≤ 2: one epoch (log2 ≤ 1, possibly negative)
        assert peace_epochs(rho, 10_000) == 1
    assert peace_epochs(20.0, 3) == 3  # never more epochs than pulls


@pytest.mark.parametrize("cls", [Peace, MixedPeace])
@pytest.mark.parametrize("T", [6, 7, 11, 97, 1000, 2003])
def test_exactly_budget_pulls_and_epoch_sizes(cls, T):
    env = soare(5, 0.5)  # K = 6, ρ = 10 -> R = 4
    algo = cls(env.X, None, T, rng=T)
    trial = simulate(algo, env, seed=1)
    assert trial.n_pulls == T and trial.stopped and trial.recommendation is not None
    R = algo.n_epochs
    assert R == 4
    N = T // R
    sizes = list(trial.decisions.batch_sizes())
    if cls is MixedPeace:
        # r = 0..R: R epochs of N pulls, then the remainder (none when R divides T).
        assert sizes == [N] * R + ([T - R * N] if T - R * N else [])
    else:
        # epochs of N pulls; the last (or the leftover once one item survives) takes the rest.
        assert all(s == N for s in sizes[:-1]) and sizes[-1] == T - N * (len(sizes) - 1)
        assert len(sizes) <= R


@pytest.mark.parametrize("cls", [Peace, MixedPeace])
def test_one_epoch_when_rho_at_most_two(cls):
    X, Z = 2.0 * np.eye(2), np.eye(2)  # ρ(Z) = ||e1 - e2||² at λ uniform = 1
    algo = cls(X, Z, 50, rng=0)
    assert algo.n_epochs == 1
    trial = simulate(algo, NonStationaryLinearBandit(X, np.tile([0.0, 1.0], (50, 1)), Z=Z),
                     seed=0)
    assert list(trial.decisions.batch_sizes()) == [50]
    assert trial.recommendation == 1


@pytest.mark.parametrize("cls", [Peace, MixedPeace])
def test_single_item_spends_budget(cls):
    X = np.eye(3)
    algo = cls(X, X[:1], 30, rng=0)
    trial = simulate(algo, NonStationaryLinearBandit(X, np.ones((30, 3)), Z=X[:1]), seed=0)
    assert trial.n_pulls == 30 and trial.recommendation == 0


@pytest.mark.parametrize("cls", [Peace, MixedPeace])
def test_last_epoch_with_several_survivors_takes_the_rest(cls):
    """A tight cluster of items keeps two survivors into the last epoch (R = ⌈log2 4.08⌉ = 3),
    which takes all the pulls left (Peace: T − 2N; Mixed-Peace: epochs r = 0..R, the last
    the remainder T − 3N)."""
    X = np.eye(2)
    Z = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 0.01], [2.0, 0.02]])
    theta = np.array([1.0, 0.5])
    algo = cls(X, Z, 100, rng=0)
    assert algo.n_epochs == 3
    sizes = []
    while (batch := algo.next_batch()) is not None:
        algo.observe(batch, exact_sums(X, batch, theta))
        sizes.append(batch.n_pulls)
    assert algo.info["survivors"][:3] == [4, 3, 2]
    assert sizes == ([33, 33, 34] if cls is Peace else [33, 33, 33, 1])
    assert algo.recommendation == 3


def test_recommendation_none_before_budget_spent():
    env = soare()
    for cls in (Peace, MixedPeace):
        algo = cls(env.X, None, 100, rng=0)
        batch = algo.next_batch()
        assert algo.recommendation is None
        algo.observe(batch, exact_sums(env.X, batch, env.theta))
        assert algo.recommendation is None


# ----------------------------------------------------------------------------- Peace

def test_peace_epoch_pulls_are_a_shuffled_rounded_design():
    env = soare(5, 0.5)
    T = 1000
    design, _ = item_design(env.X, env.X, np.arange(6), TOL)
    expected = round_allocation(design.weights, T // 4)
    seqs = []
    for seed in (3, 3, 4):
        batch = Peace(env.X, None, T, rng=seed).next_batch()
        np.testing.assert_array_equal(batch.allocation(6), expected)
        seqs.append(batch.sequence())
    np.testing.assert_array_equal(seqs[0], seqs[1])  # same ξ, same order
    assert not np.array_equal(seqs[0], seqs[2])  # another ξ, another order
    # A random order, not arm blocks: a sorted batch would have one run per arm.
    assert Peace(env.X, None, T, rng=3).next_batch().n_runs > 100
    # The order is ξ's permutation of the rounded multiset.
    rng = np.random.default_rng(3)
    np.testing.assert_array_equal(seqs[0], rng.permutation(np.repeat(np.arange(6), expected)))


def test_peace_estimates_from_the_epoch_only_and_halves():
    """θ̂_r is least squares on epoch r's pulls alone; each elimination keeps the largest
    ranked prefix with ρ ≤ ρ_r / 2."""
    env = soare(6, 0.3)
    X, Z = env.X, env.X
    algo = Peace(X, None, 4000, rng=1)
    rng = np.random.default_rng(7)
    thetas = [np.array([0.0, 2.0, 1.0, 0.5, 0.2, 0.1]), env.theta, env.theta, env.theta,
              env.theta]
    epoch = 0
    while (batch := algo.next_batch()) is not None:
        before = algo.active.copy()
        rho_before = item_design(X, Z, before, TOL)[1]
        sums = exact_sums(X, batch, thetas[epoch]) + rng.normal(size=batch.n_runs)
        algo.observe(batch, sums)
        if before.size == 1:
            break
        fit = LeastSquares.from_batch(X, batch, sums)
        np.testing.assert_allclose(algo.theta_hat, fit.theta, atol=1e-9)
        after = algo.active
        assert set(after) <= set(before)
        if algo.epoch < algo.n_epochs:
            values = Z @ fit.theta
            dropped = np.setdiff1d(before, after)
            if dropped.size:
                assert values[after].min() >= values[dropped].max()  # a ranked prefix
                assert item_design(X, Z, after, TOL)[1] <= rho_before / 2
                ranked = before[np.argsort(-values[before], kind="stable")]
                longer = ranked[: after.size + 1]  # one more item breaks the halving
                assert item_design(X, Z, longer, TOL)[1] > rho_before / 2
            assert after.size < before.size
        epoch += 1
    # Epoch 1 saw θ with e1 worst: e1 must be gone (elimination used epoch 1's data), and the
    # later epochs (θ*, e1 best) cannot bring it back.
    assert 0 not in algo.active
    assert algo.recommendation in algo.active


def test_peace_recommendation_is_the_best_survivor_under_the_last_estimate():
    env = soare(5, 0.5)
    algo = Peace(env.X, None, 600, rng=2)
    simulate(algo, env, seed=5)
    values = env.X @ algo.theta_hat
    assert algo.recommendation == algo.active[np.argmax(values[algo.active])]
    info = algo.info
    assert info["epochs"] == 4 and info["survivors"][0] == 6
    assert all(a > b for a, b in zip(info["survivors"][:-1], info["survivors"][1:], strict=False))


@pytest.mark.parametrize("cls", [Peace, MixedPeace])
def test_transductive_recommends_the_best_item(cls):
    X = np.eye(3)
    Z = np.array([[1.0, 0, 0], [0, 1, 0], [0.5, 0.5, 0.5], [0, 0, 1]])
    env = LinearBandit(X, np.array([1.0, 0.2, 0.0]), Z=Z)  # item values 1, .2, .6, 0
    trials = [simulate(cls(X, Z, 300, rng=s), env, seed=s) for s in range(10)]
    assert all(t.n_pulls == 300 for t in trials)
    assert sum(t.correct for t in trials) >= 9


# ----------------------------------------------------------------------------- Mixed-Peace

def test_mixed_peace_distribution_mixes_with_g_optimal():
    env = soare(6, 0.3)
    algo = MixedPeace(env.X, None, 3000, rng=0)
    g = g_optimal(env.X, tol=TOL).weights
    rng = np.random.default_rng(1)
    while (batch := algo.next_batch()) is not None:
        lam = algo.distribution
        assert np.all(lam >= g / 2 - 1e-15)  # every arm keeps half of λ*
        assert abs(lam.sum() - 1) < 1e-12
        if algo.active.size > 1:
            design, _ = item_design(env.X, env.X, algo.active, TOL)
            np.testing.assert_allclose(lam, (design.weights + g) / 2, atol=1e-15)
        else:
            np.testing.assert_allclose(lam, (1 / env.n_arms + g) / 2, atol=1e-15)
        algo.observe(batch, exact_sums(env.X, batch, env.theta) + rng.normal(size=batch.n_runs))


def test_mixed_peace_pulls_iid_from_xi():
    env = soare(5, 0.5)
    T = 40_000
    b1 = MixedPeace(env.X, None, T, rng=9).next_batch()
    b2 = MixedPeace(env.X, None, T, rng=9).next_batch()
    b3 = MixedPeace(env.X, None, T, rng=10).next_batch()
    np.testing.assert_array_equal(b1.sequence(), b2.sequence())
    assert not np.array_equal(b1.sequence(), b3.sequence())
    algo = MixedPeace(env.X, None, T, rng=9)
    algo.next_batch()
    lam = algo.distribution
    n = b1.n_pulls
    freq = b1.allocation(6) / n
    assert np.all(np.abs(freq - lam) <= 5 * np.sqrt(lam * (1 - lam) / n) + 1e-12)
    # Exactly ξ's draws from λ_0.
    np.testing.assert_array_equal(
        b1.sequence(), np.random.default_rng(9).choice(6, size=n, p=lam))


def test_mixed_peace_ips_accumulates_over_all_epochs():
    """θ̂_t = (1/t) Σ_s A(λ_{r(s)})⁻¹ x_s r_s over every pull so far (Algorithm 6 line 8),
    and each elimination ranks by that running estimate."""
    env = soare(5, 0.5)
    X = env.X
    algo = MixedPeace(X, None, 2001, rng=4)
    thetas = [np.array([0.0, 1.0, 1.0, 1.0, 1.0]), np.array([2.0, 0, 0, 0, 0])]
    total, t, epoch = np.zeros(5), 0, 0
    while (batch := algo.next_batch()) is not None:
        lam = algo.distribution.copy()
        before = algo.active.copy()
        sums = exact_sums(X, batch, thetas[min(epoch, 1)])
        algo.observe(batch, sums)
        A = (X * lam[:, None]).T @ X
        total += np.linalg.solve(A, X.T @ batch.arm_sums(sums, 6))
        t += batch.n_pulls
        np.testing.assert_allclose(algo.theta_hat, total / t, rtol=1e-10, atol=1e-12)
        if before.size > 1 and algo.remaining > 0:
            values = X @ (total / t)
            dropped = np.setdiff1d(before, algo.active)
            assert dropped.size  # halving always drops an item: ρ(Z_r) > ρ(Z_r) / 2
            assert values[algo.active].min() >= values[dropped].max()
        epoch += 1
    assert algo.recommendation == int(np.argmax(X @ (total / t)))


# ----------------------------------------------------------------------------- behaviour

@pytest.mark.parametrize("cls", [Peace, MixedPeace])
def test_low_error_on_a_stationary_instance(cls):
    env = soare(5, 0.5)  # gap 2(1 − cos .5) ≈ 0.245
    errors = sum(not simulate(cls(env.X, None, 300, rng=s), env, seed=100 + s).correct
                 for s in range(60))
    assert errors <= 3


def test_peace_fails_on_the_malicious_schedule():
    """Xiong et al., Appendix D.1, Fig. 4: e1 is best on average, but looks worst during
    Peace's first epoch, which eliminates it."""
    T = 3000
    env = malicious(T)
    assert env.best_item() == 0
    errors = sum(not simulate(Peace(env.X, None, T, rng=s), env, seed=s).correct
                 for s in range(20))
    assert errors >= 18


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("cls", [Peace, MixedPeace])
def test_bad_input_refused(cls):
    X = soare().X
    with pytest.raises(ValueError, match="budget"):
        cls(X, None, X.shape[0] - 1)
    with pytest.raises(TypeError, match="budget"):
        cls(X, None, 100.0)
    with pytest.raises(ValueError, match="design_tol"):
        cls(X, None, 100, design_tol=0.0)
    with pytest.raises(ValueError, match="span"):
        cls(X[:, :1] @ np.ones((1, 5)), None, 100)
    with pytest.raises(ValueError, match="Z"):
        cls(X, np.ones((3, 4)), 100)
