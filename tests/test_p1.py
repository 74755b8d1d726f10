"""P1-RAGE (Xiong et al., Algorithms 2–3) and P1-Peace (Algorithms 4–5)."""

from __future__ import annotations

import copy
from functools import partial

import numpy as np
import pytest

from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.identification.fixed_budget import iid_arms, ranked_by
from banditkit.identification.g_bai import gbai_lockstep
from banditkit.identification.item_designs import g_design, item_design
from banditkit.identification.p1 import (
    P1RAGE,
    P1Peace,
    epoch_length,
    peace_elimination,
    rage_elimination,
)
from banditkit.protocol import Batch
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")

X3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.5, 1.2]])
SOARE = make_instance("soare", d=10, omega=0.1)
CLASSES = [P1RAGE, P1Peace]


def _expected_estimate(factory, X, thetas):
    """E[θ̂_T] over the whole tree of pull sequences (each pull drawn from the algorithm's
    current λ_t, which depends on the earlier pulls), with noiseless rewards x_tᵀθ_t."""
    d = X.shape[1]

    def walk(algo, t, p):
        if t == thetas.shape[0]:
            assert algo.recommendation is not None
            return p * algo.theta_hat
        total = np.zeros(d)
        w = algo.sampling_weights
        for a in np.flatnonzero(w > 0):
            child = copy.deepcopy(algo)
            # the tree enumerates every arm the draw could give: tell the child that this
            # one-pull batch is the one it asked for (observe() refuses any other)
            child._pending = Batch(np.array([a]), np.array([1]))
            child.observe(child._pending, np.array([X[a] @ thetas[t]]))
            total += walk(child, t + 1, p * w[a])
        return total

    return walk(factory(), 0, 1.0)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("update", ["every", "periodic"])
def test_ips_estimate_is_exactly_unbiased_under_adaptive_sampling(cls, update):
    # λ_t adapts to θ̂_{t−1}, yet E[θ̂_T] = θ̄_T for any schedule (Algorithm 2 line 5)
    thetas = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.2], [4.0, 1.0], [0.3, 0.3]])
    expected = _expected_estimate(lambda: cls(X3, None, 5, update=update, rng=0), X3, thetas)
    np.testing.assert_allclose(expected, thetas.mean(axis=0), rtol=0, atol=1e-11)


@pytest.mark.parametrize("cls", CLASSES)
def test_every_epoch_is_drawn_from_the_current_lambda_with_xi(cls):
    algo = cls(SOARE.X, None, 3000, rng=np.random.default_rng(21))
    shadow = np.random.default_rng(21)  # replays ξ
    noise = np.random.default_rng(4)
    lam_star = g_design(SOARE.X, 0.01)[0]
    epochs = 0
    while (batch := algo.next_batch()) is not None:
        weights = algo.sampling_weights
        assert np.array_equal(batch.sequence(), iid_arms(shadow, weights, batch.n_pulls))
        # Algorithm 3 / 5 line 9: λ_t = ½ λ̄_t + ½ λ*, so every arm keeps half its λ* weight
        assert np.all(weights >= 0.5 * lam_star * (1 - 1e-12))
        assert abs(weights.sum() - 1) < 1e-12
        if epochs > 0:
            assert not np.allclose(weights, lam_star)  # the virtual designs moved it
        algo.observe(batch, SOARE.pull(batch, noise, algo.t).rewards)
        if cls is P1Peace and algo.remaining:
            # the refresh ranked the items with ξ, which reads a permutation on ties only
            ranked_by(SOARE.Z @ algo.theta_hat, shadow)
        epochs += 1
    assert algo.t == 3000 and epochs == algo.decisions.n_batches


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("T", [11, 12, 100, 2345])
def test_spends_exactly_the_budget(cls, T):
    trial = simulate(cls(SOARE.X, None, T, rng=T), SOARE, seed=1)
    assert trial.n_pulls == T == trial.counts.sum()
    assert trial.stopped and trial.recommendation in range(11)


def test_epoch_length_rules():
    assert epoch_length(10_000, 20.0) == 2313  # ⌊10⁴ / log₂ 20⌋ = ⌊2313.8⌋ (Algorithm 4 line 2)
    assert epoch_length(10_000, 20.0, epoch_rule="code") == 2000  # ⌊10⁴ / ⌈log₂ 20⌉⌋
    assert epoch_length(10_000, 20.0, update="every") == 1
    assert epoch_length(10_000, 2.0) == 10_000  # one halving: one refresh
    assert epoch_length(10_000, 1.5, epoch_rule="code") == 10_000
    for rho in (1.0, 0.5, 0.0):  # log₂ ρ ≤ 0: nothing to halve
        assert epoch_length(100, rho) == 100
    assert epoch_length(5, 2.0 ** 40) == 1  # R ≥ 1


@pytest.mark.parametrize("update, sizes", [
    ("periodic", [1, 20, 20, 20, 20, 19]),  # refresh after pulls 1, 21, 41, 61, 81
    ("epochs", [20, 20, 20, 20, 20]),  # after pulls 20, 40, 60, 80
    ("every", [1] * 100),
])
def test_refresh_schedule(update, sizes):
    algo = P1RAGE(X3, None, 100, update=update, rng=2)
    algo.epoch_length = 20 if update != "every" else 1  # force R (ρ is tiny here)
    trial = simulate(algo, LinearBandit(X3, np.array([0.5, 0.2])), seed=0)
    assert trial.decisions.batch_sizes().tolist() == sizes
    assert len(trial.info["phases"]) == len(sizes) - 1  # no refresh after the last pull


def test_soare_epochs_follow_algorithm_4():
    trial = simulate(P1Peace(SOARE.X, None, 10_000, rng=1), SOARE, seed=1)
    R = trial.info["epoch_length"]
    rho = item_design(SOARE.X, SOARE.X, np.arange(11), 0.01)[1]
    assert R == int(10_000 // np.log2(rho))
    assert trial.decisions.batch_sizes().tolist() == [1, R, R, R, R, 10_000 - 1 - 4 * R]


# Items with dyadic values under θ̂ = e_1, so the estimated gaps are exact: the best item
# (index 2) and an exact tie with it, then gaps 0.125, 0.5, 0.75, 1, 1.5, 3. The tie is never
# eliminated, so the loop runs until its cap m.
GAPS = np.array([0.5, 0.125, 0.0, 3.0, 1.0, 0.0, 0.75, 1.5])
Z_AXIS = np.column_stack([2.0 - GAPS, np.zeros(8), np.zeros(8)])
Z_AXIS[5, 1] = 1.0  # the tie is another item (same estimated value)
X_AXIS = np.eye(3)
THETA_AXIS = np.array([1.0, 0.0, 0.0])


def _sizes(virtual):
    return [s.size for s in virtual.sets]


@pytest.mark.parametrize("phases, m, sizes", [
    # Algorithm 3: X^(i+1) keeps Δ̂ ≤ 2^-i while i ≤ m: m + 1 designs
    ("paper", 15, [8, 6, 4, 3, 3] + [2] * 11),
    ("paper", 2, [8, 6, 4]),
    ("paper", 1, [8, 6]),
    # the authors' code: Δ̂ ≤ 2^-(i+1), at most m designs
    ("code", 15, [8, 4, 3, 3] + [2] * 11),
    ("code", 2, [8, 4]),
    ("code", 1, [8]),
])
def test_rage_elimination_sets(phases, m, sizes):
    virtual = rage_elimination(X_AXIS, Z_AXIS, THETA_AXIS, m, phases=phases)
    assert _sizes(virtual) == sizes
    for outer, inner in zip(virtual.sets[:-1], virtual.sets[1:], strict=True):
        assert set(inner) <= set(outer)  # nested
    for s in virtual.sets:
        assert {2, 5} <= set(s.tolist())  # x̂* (index 2) and its exact tie survive
    # the thresholds themselves: the sets are exactly {Δ̂ ≤ threshold}
    shift = 0 if phases == "paper" else 1
    for i in range(1, len(virtual.sets)):
        assert set(virtual.sets[i].tolist()) == set(
            np.flatnonzero(GAPS <= 2.0 ** -(i - 1 + shift)).tolist())
    mean = np.mean([item_design(X_AXIS, Z_AXIS, s, 0.01)[0].weights for s in virtual.sets],
                   axis=0)
    np.testing.assert_allclose(virtual.weights, mean, rtol=0, atol=1e-15)


def test_rage_elimination_with_one_item_runs_no_phase():
    virtual = rage_elimination(X3, X3[:1], np.ones(2), 15)
    assert virtual.weights is None and virtual.sets == []
    algo = P1RAGE(X3, X3[:1], 30, rng=0)
    simulate(algo, LinearBandit(X3, np.ones(2), Z=X3[:1]), seed=0)
    assert algo.recommendation == 0 and set(algo.info["phases"]) == {0}


@pytest.mark.parametrize("theta", [SOARE.theta, np.array([0.3, 1.0, -0.2, 0.5, 0.1, 0.0, 0.7,
                                                           -0.4, 0.2, 0.05])])
def test_peace_elimination_halves_rho(theta):
    X = SOARE.X
    virtual = peace_elimination(X, X, theta)
    ranked = np.argsort(-(X @ theta), kind="stable")
    assert virtual.sets[0].size == X.shape[0]
    rhos = []
    for s in virtual.sets:
        assert np.array_equal(s, ranked[:s.size])  # prefixes of the ranking
        rhos.append(item_design(X, X, s, 0.01)[1])
    for i in range(1, len(virtual.sets)):
        k = virtual.sets[i].size
        assert rhos[i] <= rhos[i - 1] / 2  # Algorithm 5 line 6
        # the largest such prefix: one more item breaks the halving
        assert item_design(X, X, ranked[:k + 1], 0.01)[1] > rhos[i - 1] / 2
    # the last phase halves down to the single best item
    assert item_design(X, X, ranked[:2], 0.01)[1] > rhos[-1] / 2
    mean = np.mean([item_design(X, X, s, 0.01)[0].weights for s in virtual.sets], axis=0)
    np.testing.assert_allclose(virtual.weights, mean, rtol=0, atol=1e-15)


def test_stationary_error_rate_below_g_bai():
    # Soare et al.'s benchmark (d = 10, ω = 0.1; Xiong et al., Fig. 2a): both P1 algorithms
    # err far less than G-BAI at a moderate budget. Measured at these seeds: G-BAI 0.16 (1000
    # trials), P1-RAGE about 0.05, P1-Peace about 0.07 (300 trials each).
    T, n = 1000, 300
    g = gbai_lockstep([SOARE] * 1000, [np.random.default_rng(s) for s in range(1000)],
                      list(range(1000)), None, None, budget=T)
    g_err = 1 - np.mean([t.correct for t in g])
    g_low = g_err - 2.58 * np.sqrt(g_err * (1 - g_err) / 1000)
    for cls in CLASSES:
        err = 1 - np.mean([simulate(cls(SOARE.X, None, T, rng=s), SOARE, seed=10**6 + s).correct
                           for s in range(n)])
        high = err + 2.58 * np.sqrt(max(err, 1 / n) * (1 - err) / n)
        assert err < 0.1 and high < g_low, (cls.__name__, err, g_err)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"m": 0}, ValueError, "m"),
    ({"m": 1.5}, TypeError, "m"),
    ({"m": "3"}, TypeError, "m"),
    ({"m": True}, TypeError, "m"),
    ({"phases": "text"}, ValueError, "phases"),
    ({"update": "daily"}, ValueError, "update"),
    ({"epoch_rule": "ceil"}, ValueError, "epoch_rule"),
    ({"design_tol": 0.0}, ValueError, "design_tol"),
    ({"budget": 10}, ValueError, "budget"),
])
def test_bad_input_is_refused(kwargs, error, match):
    kwargs = {"budget": 100, **kwargs}
    budget = kwargs.pop("budget")
    with pytest.raises(error, match=match):
        P1RAGE(SOARE.X, None, budget, **kwargs)
    if not {"m", "phases"} & kwargs.keys():
        with pytest.raises(error, match=match):
            P1Peace(SOARE.X, None, budget, **kwargs)
