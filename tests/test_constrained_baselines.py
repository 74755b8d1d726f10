"""Tests of the non-replicable constrained baselines (banditkit.policies.constrained.baselines):
the optimistic soft-constraint algorithm and its safe variant (Bollini et al., Sections 4-5)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from banditkit.envs.constrained import ConstrainedBandit
from banditkit.policies.constrained.baselines import (
    OptimisticConstrained,
    OptimisticMixingConstrained,
    hoeffding_widths,
    mixing_coefficient,
)
from banditkit.policies.epoch_sampler import epoch_counts
from banditkit.registry import make_policy
from banditkit.simulate import simulate

# K = 5, m = 2: arm 0 is best but too costly on constraint 0; x* mixes arms 0 and 1 (0.4, 0.6).
R5 = np.array([0.9, 0.7, 0.5, 0.4, 0.2])
G5 = np.array([[0.8, 0.3, 0.4, 0.2, 0.1],
               [0.2, 0.3, 0.6, 0.1, 0.5]])
A5 = np.array([0.5, 0.6])
SAFE5 = np.array([0.0, 0.0, 0.0, 1.0, 0.0])  # arm 3: costs (0.2, 0.1), margins (0.3, 0.5)


def mixing_env() -> ConstrainedBandit:
    return ConstrainedBandit(R5, G5, A5, safe_strategy=SAFE5)


def run_manually(alg, env, seed, on_batch=None):
    """Drive ``alg`` on ``env`` by hand, calling ``on_batch(alg, batch)`` right after each ask
    (before the answer changes the algorithm's state)."""
    rng = np.random.default_rng(seed)
    while (batch := alg.next_batch()) is not None:
        if on_batch is not None:
            on_batch(alg, batch)
        out = env.pull(batch, rng)
        alg.observe(batch, out.rewards, out.costs)


def set_state(alg, counts, r_hat, g_hat):
    """Put synthetic empirical means into an algorithm (sums = mean × count)."""
    alg.pulls[:] = counts
    alg.reward_sums[:] = r_hat * counts
    alg.cost_sums[:] = g_hat * counts


# ---------------------------------------------------------------------------------------------
# Widths and estimates


def test_widths_closed_form_and_unpulled_arms():
    K, m, T, delta = 3, 2, 1000, 0.1
    alg = OptimisticConstrained(K, T, [0.5, 0.5], delta=delta, width_scale=0.7, rng=0)
    log_term = math.log(2 * (m + 1) * K * T / delta)
    assert alg.log_term == pytest.approx(log_term, rel=1e-14)
    set_state(alg, np.array([0, 1, 50]), np.array([0.0, 0.2, 0.8]),
              np.array([[0.0, 0.1, 0.3], [0.0, 0.9, 0.4]]))
    w = 0.7 * np.sqrt(log_term / (2 * np.array([1.0, 1.0, 50.0])))
    np.testing.assert_allclose(alg.widths(), w, rtol=1e-14)
    r_hat, g_hat = alg.estimates()
    np.testing.assert_allclose(r_hat, [0.5, 0.2, 0.8])  # never pulled: 1/2 (Algorithm 3 line 4)
    np.testing.assert_allclose(g_hat, [[0.5, 0.1, 0.3], [0.5, 0.9, 0.4]])
    np.testing.assert_allclose(alg.optimistic_values(), r_hat + w)
    np.testing.assert_allclose(alg.optimistic_costs(), g_hat - w)
    # with width_scale 1 an unpulled arm's interval [1/2 - w, 1/2 + w] covers [0, 1]
    assert hoeffding_widths(np.array([0]), math.log(8.0))[0] > 0.5


# ---------------------------------------------------------------------------------------------
# The optimistic safe set and the LP


def test_optimistic_safe_set_contains_true_safe_set_when_widths_valid():
    rng = np.random.default_rng(1)
    K, m, T = 4, 2, 10_000
    for _ in range(50):
        G = rng.random((m, K))
        alpha = rng.uniform(0.2, 0.8, m)
        alg = OptimisticConstrained(K, T, alpha, delta=0.05, rng=0)
        counts = rng.integers(1, 2000, K)
        w = hoeffding_widths(counts, alg.log_term)
        # estimates anywhere inside the (valid) confidence intervals, clipped to [0, 1]
        g_hat = np.clip(G + rng.uniform(-1, 1, (m, K)) * w, 0, 1)
        set_state(alg, counts, rng.random(K), g_hat)
        C = alg.optimistic_costs()
        # truly safe strategies: vertices of the simplex and random points, kept if safe
        pts = np.vstack([np.eye(K), rng.dirichlet(np.ones(K), 400)])
        safe = pts[np.all(pts @ G.T <= alpha, axis=1)]
        assert np.all(safe @ C.T <= alpha + 1e-12)
        # and so the optimistic value dominates the true optimum (optimism, Lemma D.1's step)
        if safe.size:
            x = alg.optimistic()
            assert np.all(C @ x <= alpha + 1e-8)
            r = rng.random(K)
            set_state(alg, counts, np.clip(r + rng.uniform(-1, 1, K) * w, 0, 1), g_hat)
            x = alg.optimistic()
            assert alg.optimistic_values() @ x >= np.max(safe @ r) - 1e-8


def brute_force_lp(v: np.ndarray, c: np.ndarray, alpha: float) -> float | None:
    """max v^T x over {x in Δ_3 : c^T x <= alpha} by enumerating the polytope's vertices."""
    verts = [np.eye(3)[a] for a in range(3) if c[a] <= alpha]
    for a, b in itertools.combinations(range(3), 2):
        if (c[a] - alpha) * (c[b] - alpha) < 0:  # the constraint's hyperplane crosses edge ab
            t = (alpha - c[b]) / (c[a] - c[b])
            verts.append(t * np.eye(3)[a] + (1 - t) * np.eye(3)[b])
    return max(float(v @ x) for x in verts) if verts else None


def test_strategy_is_the_lp_optimum_by_vertex_enumeration():
    rng = np.random.default_rng(2)
    T, delta, checked = 5000, 0.1, 0
    for _ in range(80):
        alpha = rng.uniform(0.1, 0.9)
        alg = OptimisticConstrained(3, T, [alpha], delta=delta, rng=0)
        counts = rng.integers(20, 5000, 3)
        r_hat, g_hat = rng.random(3), rng.random((1, 3))
        set_state(alg, counts, r_hat, g_hat)
        w = np.sqrt(math.log(2 * 2 * 3 * T / delta) / (2 * counts))  # independent widths
        best = brute_force_lp(r_hat + w, g_hat[0] - w, alpha)
        if best is None:
            continue  # empty optimistic set: the LP's documented fallback, not tested here
        x = alg.optimistic()
        assert np.all(x >= 0) and x.sum() == pytest.approx(1.0)
        assert (g_hat[0] - w) @ x <= alpha + 1e-8
        assert (r_hat + w) @ x == pytest.approx(best, abs=1e-8)
        checked += 1
    assert checked >= 40


def test_environment_instance_has_a_mixed_optimum():
    env = mixing_env()
    assert np.count_nonzero(env.optimal_strategy > 1e-9) == 2
    np.testing.assert_allclose(env.optimal_strategy, [0.4, 0.6, 0, 0, 0], atol=1e-9)


# ---------------------------------------------------------------------------------------------
# The safe variant


def test_mixing_coefficient_closed_form():
    alpha, lam = np.array([0.5, 0.6]), np.array([0.3, 0.5])
    assert mixing_coefficient(np.array([0.4, 0.6]), alpha, lam) == 0.0  # nothing at risk
    # c = (0.7, 1.4 -> capped 1): sigma = max(0.2/0.5, 0.4/0.9)
    assert mixing_coefficient(np.array([0.7, 1.4]), alpha, lam) == pytest.approx(0.4 / 0.9)


def test_safe_variant_is_pessimistically_safe_at_every_update():
    env = mixing_env()
    lam = A5 - G5 @ SAFE5
    alg = OptimisticMixingConstrained(5, 20_000, A5, SAFE5, safe_margins=lam, delta=0.05, rng=3)
    seen = []

    def check(alg, batch):
        x_tilde, sigma = alg.last_optimistic, alg.sigmas[-1]
        c = np.minimum(alg.pessimistic_costs(x_tilde), 1.0)  # state of this update
        np.testing.assert_allclose(batch.strategy, sigma * SAFE5 + (1 - sigma) * x_tilde,
                                   atol=1e-12)
        bound = sigma * (A5 - lam) + (1 - sigma) * c  # pessimistic cost of the mixture
        assert np.all(bound <= A5 + 1e-12)
        if sigma > 0:  # and sigma is the smallest such weight: some constraint is tight
            assert np.max(bound - A5) == pytest.approx(0.0, abs=1e-12)
        seen.append(sigma)

    run_manually(alg, env, seed=4, on_batch=check)
    # the first update has no data: Algorithm 4's sigma_0 = max_i (1-a_i)/(1-a_i+l_i)
    assert seen[0] == pytest.approx(np.max((1 - A5) / (1 - A5 + lam)))
    assert len(seen) == alg.n_updates > 10
    assert seen[-1] < seen[0]  # the estimates sharpen, less weight on x_safe
    assert alg.info["sigmas"] == seen


def test_safe_variant_is_truly_safe_in_nearly_all_trials():
    env = mixing_env()
    lam = A5 - G5 @ SAFE5
    safe_trials = 0
    for s in range(20):
        alg = OptimisticMixingConstrained(5, 10_000, A5, SAFE5, safe_margins=lam, delta=0.05,
                                        rng=s)
        trial = simulate(alg, env, horizon=10_000, seed=1000 + s)
        strategies = trial.decisions.strategies()
        safe_trials += bool(np.all(strategies @ G5.T <= A5 + 1e-9))
    assert safe_trials >= 19


# ---------------------------------------------------------------------------------------------
# Regret and violation


def test_soft_baseline_regret_and_violation_per_round_decrease():
    env = mixing_env()
    per_round = {}
    for T in (1_000, 100_000):
        reg, vio = [], []
        for s in range(2):
            alg = OptimisticConstrained(5, T, A5, delta=0.05, rng=s)
            trial = simulate(alg, env, horizon=T, seed=50 + s)
            reg.append(trial.regret[-1] / T)
            vio.append(trial.violation[-1] / T)
        per_round[T] = (np.mean(np.abs(reg)), np.mean(vio))
    (r_small, v_small), (r_big, v_big) = per_round[1_000], per_round[100_000]
    # optimism on the active constraint buys reward with violation: regret may be negative,
    # so its size per round is what must vanish
    assert v_big < 0.35 * v_small and v_small > 0.05
    assert r_big < 0.6 * r_small


# ---------------------------------------------------------------------------------------------
# The epoch sampler


@pytest.mark.parametrize("schedule", ["doubling", "every"])
def test_epochs_are_drawn_from_xi_with_the_doubling_rule(schedule):
    """Each batch is epoch_counts(x, max{N, 1}, T − t, ξ) (DEBORA-S's line 7; one round for
    ``"every"``), the whole epoch drawn from ξ; its law is the per-round loop's
    (tests/test_epoch_sampler.py)."""
    env = mixing_env()
    T = 3_001 if schedule == "doubling" else 60  # the last epoch is cut by the horizon
    alg = OptimisticConstrained(5, T, A5, delta=0.05, schedule=schedule, rng=7)
    trial = simulate(alg, env, horizon=T, seed=8)
    xi = np.random.default_rng(7)
    N = np.zeros(5, dtype=np.int64)
    batches = trial.decisions.batches()
    for batch in batches:
        left = 1 if schedule == "every" else T - N.sum()
        expected = epoch_counts(batch.strategy, np.maximum(N, 1), left, xi)
        np.testing.assert_array_equal(batch.allocation(5), expected)
        N += expected
    assert N.sum() == T and alg.n_updates == len(batches) == alg.info["n_updates"]
    if schedule == "every":
        assert np.all(trial.decisions.batch_sizes() == 1)
    else:
        assert batches[0].n_pulls == 1 and len(batches) <= 5 * (math.floor(math.log2(T)) + 1) + 1


# ---------------------------------------------------------------------------------------------
# Not replicable (the point of the baseline)


def test_not_replicable_same_xi_independent_rewards():
    env = mixing_env()
    differ = 0
    for pair in range(5):
        logs = []
        for execution in range(2):
            alg = OptimisticConstrained(5, 20_000, A5, delta=0.05, rng=pair)
            logs.append(simulate(alg, env, horizon=20_000,
                                 seed=1000 * pair + execution).decisions)
        differ += not logs[0].same_as(logs[1])
    assert differ >= 4
    # the same xi and the same rewards give the same decisions: the difference is the data
    a, b = (simulate(OptimisticConstrained(5, 20_000, A5, delta=0.05, rng=0), env,
                     horizon=20_000, seed=99).decisions for _ in range(2))
    assert a.same_as(b)


# ---------------------------------------------------------------------------------------------
# Registry factories and input checks


def test_registry_factories_build_from_the_environment():
    env = mixing_env()
    alg = make_policy("OptimisticMixingConstrained", env, np.random.default_rng(0), horizon=100)
    assert isinstance(alg, OptimisticMixingConstrained)
    np.testing.assert_allclose(alg.safe_margins, A5 - G5 @ SAFE5)
    alg = make_policy("OptimisticConstrained", env, np.random.default_rng(0), horizon=100,
                      schedule="every")
    assert isinstance(alg, OptimisticConstrained) and alg.schedule == "every"
    no_safe = ConstrainedBandit(R5, G5, A5)
    with pytest.raises(ValueError, match="safe strategy"):
        make_policy("OptimisticMixingConstrained", no_safe, np.random.default_rng(0), horizon=10)


@pytest.mark.parametrize("name", ["OptimisticMixingConstrained", "DEBORAH"])
def test_given_safe_strategy_and_margins_override_the_environment_within_the_truth(name):
    """x◇ and margins given as parameters (what a live experiment does) replace the
    environment's; where the cost means are known, margins above the true α − G x◇ are refused
    (they would make the mixture unsafe), smaller ones are taken as they are."""
    env = mixing_env()
    other = np.array([0.0, 0.0, 0.0, 0.0, 1.0])
    true = A5 - G5 @ other
    assert np.all(true > 0) and not np.allclose(other, SAFE5)
    alg = make_policy(name, env, np.random.default_rng(0), horizon=100, safe_strategy=other)
    np.testing.assert_allclose(alg.safe_strategy, other)
    np.testing.assert_allclose(alg.safe_margins, true)
    alg = make_policy(name, env, np.random.default_rng(0), horizon=100, safe_strategy=other,
                      safe_margins=(true / 2).tolist())
    np.testing.assert_allclose(alg.safe_margins, true / 2)
    with pytest.raises(ValueError, match="must not exceed x◇'s true margins"):
        make_policy(name, env, np.random.default_rng(0), horizon=100, safe_strategy=other,
                    safe_margins=(true + 0.01).tolist())


@pytest.mark.parametrize("name", ["OptimisticMixingConstrained", "DEBORAH"])
@pytest.mark.parametrize("params, match", [
    ({"safe_strategy": [1.0, 0.0]}, "safe_strategy must be a probability vector over the K=5"),
    ({"safe_strategy": "abc"}, "safe_strategy must be numbers"),
    ({"safe_strategy": [1.0, 0.0, 0.0, 0.0, 0.0]}, "safe_strategy must be strictly safe"),
])
def test_safe_strategy_refusals_name_what_the_user_gave(name, params, match):
    env = mixing_env()
    assert np.any(A5 - G5[:, 0] <= 0)  # arm 0 alone is not strictly safe
    with pytest.raises(ValueError, match=match):
        make_policy(name, env, np.random.default_rng(0), horizon=100, **params)


def test_environment_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="rewards must be numbers"):
        ConstrainedBandit(["0.2", "0.9"], [[0.1, 0.2]], [0.5])
    with pytest.raises(TypeError, match="concentration must be a number"):
        ConstrainedBandit([0.2, 0.9], [[0.1, 0.2]], [0.5], noise="beta", concentration="10")
    with pytest.raises(ValueError, match="safe_strategy must be a probability vector"):
        ConstrainedBandit([0.2, 0.9], [[0.1, 0.2]], [0.5], safe_strategy=[1 + 1e-7, 0.0])
    with pytest.raises(ValueError, match="K >= 2"):
        ConstrainedBandit([0.2], [[0.1]], [0.5])


BASE = {"n_arms": 5, "horizon": 100, "thresholds": A5, "delta": 0.1}


@pytest.mark.parametrize("change, name", [
    ({"thresholds": [0.5, 1.2]}, "thresholds"),
    ({"thresholds": [-0.1, 0.5]}, "thresholds"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"schedule": "sometimes"}, "schedule"),
    ({"width_scale": 0.0}, "width_scale"),
    ({"width_scale": -1.0}, "width_scale"),
    ({"horizon": 0}, "horizon"),
    ({"n_arms": 1}, "n_arms"),
])
def test_bad_input_refused(change, name):
    with pytest.raises(ValueError, match=name):
        OptimisticConstrained(**{**BASE, **change})


@pytest.mark.parametrize("change, name", [
    ({"safe_strategy": [0.5, 0.5, 0.5, 0, 0]}, "safe_strategy"),
    ({"safe_strategy": [1.2, -0.2, 0, 0, 0]}, "safe_strategy"),
    ({"safe_strategy": [1.0, 0, 0, 0]}, "safe_strategy"),
    ({"safe_margins": [0.3, 0.0]}, "safe_margins"),
    ({"safe_margins": [0.3, -0.1]}, "safe_margins"),
    ({"safe_margins": [0.3]}, "safe_margins"),
    ({"safe_margins": [0.3, 0.7]}, "safe_margins"),  # a margin above alpha_i is impossible
])
def test_bad_safe_input_refused(change, name):
    kw = {**BASE, "safe_strategy": SAFE5, "safe_margins": [0.3, 0.5], **change}
    with pytest.raises(ValueError, match=name):
        OptimisticMixingConstrained(**kw)


def test_observe_refuses_bad_costs_and_impossible_sums():
    alg = OptimisticConstrained(**BASE, rng=0)
    batch = alg.next_batch()
    r = np.zeros(batch.n_runs)
    with pytest.raises(ValueError, match="costs"):
        alg.observe(batch, r)  # no costs
    with pytest.raises(ValueError, match="costs"):
        alg.observe(batch, r, np.zeros((batch.n_runs, 3)))  # m = 3, expected 2
    with pytest.raises(ValueError, match="costs"):
        alg.observe(batch, r, np.full((batch.n_runs, 2), 2.0 * batch.counts.max()))
    with pytest.raises(ValueError, match="rewards"):
        alg.observe(batch, r - 1.0, np.zeros((batch.n_runs, 2)))
    alg.observe(batch, r, np.zeros((batch.n_runs, 2)))  # a valid answer is still taken
    assert alg.t == batch.n_pulls
