"""LinGame (Degenne, Ménard, Shang & Valko 2020): AdaHedge, the best response, the optimistic
gains, δ-correctness, its compiled driver's decisions against simulate, registry and live use."""

import math
from functools import partial

import numpy as np
import pytest

from banditkit.envs import LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.identification.linear_glr_run import simulate_lingame
from banditkit.identification.lingame import AdaHedge, LinGame, best_response, optimistic_gains
from banditkit.registry import make_policy, policy_names
from banditkit.rng import stream
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")


def test_adahedge_is_exponential_weights_with_the_mixability_gap_rate():
    h = AdaHedge(3)
    np.testing.assert_array_equal(h.weights(), [1 / 3, 1 / 3, 1 / 3])
    h.incur(np.array([1.0, 0.0, 2.0]))
    # Δ = 0 first: uniform on the leaders; the Hedge loss 1 minus the mix loss min ℓ = 0.
    assert h.gap == pytest.approx(1.0)
    np.testing.assert_allclose(h.weights(), np.exp(-math.log(3) * np.array([1.0, 0.0, 2.0]))
                               / np.exp(-math.log(3) * np.array([1.0, 0.0, 2.0])).sum())
    w = h.weights()
    loss = np.array([0.5, 1.0, 0.0])
    eta = math.log(3) / h.gap
    mix = -math.log(w @ np.exp(-eta * loss)) / eta
    gap = h.gap + (w @ loss - mix)
    h.incur(loss)
    assert h.gap == pytest.approx(gap, rel=1e-12)
    # the leader (smallest cumulative loss) gets the largest weight
    assert int(h.weights().argmax()) == int(h.losses.argmin())


def test_best_response_is_the_closest_alternative_projection():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 3))
    Z = rng.standard_normal((6, 3))
    theta = rng.standard_normal(3)
    w = rng.dirichlet(np.ones(5))
    est = Z @ theta
    best = int(est.argmax())
    j, proj = best_response(X, Z, est, best, w)
    A = (X.T * w) @ X
    values = {k: ((Z[best] - Z[k]) @ theta) ** 2 / ((Z[best] - Z[k]) @ np.linalg.solve(
        A, Z[best] - Z[k])) for k in range(6) if k != best}
    assert j == min(values, key=values.get)
    # λ = θ − Δ A⁻¹y/‖y‖²_{A⁻¹}: on the boundary (z_best − z_j)ᵀλ = 0, and proj = X(θ − λ).
    y = Z[best] - Z[j]
    lam = theta - (y @ theta) * np.linalg.solve(A, y) / (y @ np.linalg.solve(A, y))
    assert y @ lam == pytest.approx(0.0, abs=1e-10)
    np.testing.assert_allclose(proj, X @ (theta - lam), rtol=1e-9, atol=1e-12)


def test_optimistic_gains_are_clipped_and_grow_with_uncertainty():
    proj = np.array([0.1, -0.1, 0.0, 5.0])
    forms = np.array([0.01, 0.01, 1.0, 0.01])
    g = optimistic_gains(proj, forms, t=100)
    c = math.log(100)
    assert g[0] == g[1] == pytest.approx(0.5 * (0.1 + math.sqrt(2 * c * 0.01)) ** 2)
    assert g[2] == pytest.approx(min(0.5 * 2 * c, c))  # an unexplored direction: clipped at c
    assert g[3] == c


@pytest.mark.parametrize("threshold", ["paper", "heuristic"])
def test_delta_correct_over_500_trials(threshold):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [math.cos(0.8), math.sin(0.8)]])
    env = LinearBandit(X, np.array([2.0, 0.0]))
    delta, trials = 0.2, 500
    errors = 0
    for i in range(trials):
        tr = simulate_lingame(LinGame(env.X, env.Z, delta, threshold=threshold), env,
                              seed=stream(5, "delta", i))
        assert tr.stopped
        errors += not tr.correct
    assert errors <= delta * trials


@pytest.mark.parametrize("threshold", ["paper", "heuristic"])
def test_kernel_takes_the_decisions_of_simulate(threshold):
    env = make_instance("soare", d=4, omega=0.2)
    for seed in range(4):
        a = LinGame(env.X, env.Z, 0.05, threshold=threshold, refresh_every=97)
        b = LinGame(env.X, env.Z, 0.05, threshold=threshold, refresh_every=97)
        ra, rb = stream(seed, "lingame"), stream(seed, "lingame")
        ta = simulate(a, env, seed=ra, horizon=100_000)
        tb = simulate_lingame(b, env, seed=rb, horizon=100_000, engine="kernel")
        assert ta.stopped and tb.stopped and ta.n_pulls == tb.n_pulls
        assert ta.decisions.same_as(tb.decisions)
        assert ta.recommendation == tb.recommendation
        assert a.learners.keys() == b.learners.keys()
        for k in a.learners:
            np.testing.assert_allclose(a.learners[k].losses, b.learners[k].losses, rtol=1e-9)
        np.testing.assert_allclose(a._sumw, b._sumw, rtol=1e-12)
        assert ra.standard_normal() == rb.standard_normal()


def test_registered_and_runs_live(tmp_path):
    from banditkit import Experiment
    from live_support import drive, reward_table

    assert "LinGame" in policy_names()
    env = make_instance("soare", d=3, omega=0.3)
    algo = make_policy("LinGame", env, np.random.default_rng(0), delta=0.1,
                       threshold="heuristic")
    assert algo.kind == "identification" and simulate(algo, env, seed=0).correct
    with pytest.raises(ValueError, match="threshold"):
        make_policy("LinGame", env, np.random.default_rng(0), threshold="loose")
    path = tmp_path / "e.sqlite"
    Experiment.create(path, algorithm="LinGame", arms=np.eye(2), seed=0,
                      params={"delta": 0.1, "threshold": "heuristic"}).close()
    drive(str(path), reward_table([0.1, 0.9]), 1, 10**5)
    with Experiment.open(path) as exp:
        assert exp.status().finished
        assert exp._algorithm.recommendation == 1
