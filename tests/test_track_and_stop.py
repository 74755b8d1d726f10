"""Track-and-Stop (Jedra & Proutière 2020) and Frank-Wolfe Sampling (Wang, Tzeng & Proutière
2021) for linear bandits: the GLR state and statistic, the thresholds, the tracking rule, the
allocation, δ-correctness, the block driver, refusals, seeds, registry, audit and live use."""

import math
from functools import partial

import numpy as np
import pytest

from banditkit.envs import LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.identification.fw_sampling import FrankWolfeSampling, fw_vertex
from banditkit.identification.linear_glr import GLRState, heuristic_threshold, paper_threshold
from banditkit.identification.track_and_stop import LinearTrackAndStop, plug_in_allocation
from banditkit.identification.track_and_stop_blocks import simulate_track_and_stop
from banditkit.identification.xy import XYOracle
from banditkit.registry import get_policy, make_policy, policy_names
from banditkit.rng import stream
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")


def _brute_glr(X, Z, counts, sums):
    """Z(t) and the minimising alternative from scratch: least squares and a loop over items."""
    A = (X.T * counts) @ X
    Ainv = np.linalg.inv(A)
    theta = Ainv @ (X.T @ sums)
    est = Z @ theta
    best = int(np.argmax(est))
    values = {}
    for j in range(Z.shape[0]):
        if j != best:
            y = Z[best] - Z[j]
            values[j] = (y @ theta) ** 2 / (2.0 * y @ Ainv @ y)
    j = min(values, key=values.get)
    return values[j], j, best, Ainv, theta


def test_glr_state_matches_a_fresh_least_squares_fit_after_rank_one_updates():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((7, 4))
    Z = rng.standard_normal((9, 4))
    st = GLRState(X, Z, refresh_every=10**9)  # no refresh: every pull is a rank-one update
    st.add_counts(np.ones(7, dtype=np.int64), rng.standard_normal(7))
    for _ in range(300):
        a = int(rng.integers(7))
        st.update(a, float(X[a] @ [1.0, -0.5, 0.2, 0.0] + rng.standard_normal()))
    stat, j, best, Ainv, theta = _brute_glr(X, Z, st.counts, st.sums)
    np.testing.assert_allclose(st.Ainv, Ainv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(st.theta, theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(st.est, Z @ theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(st.q, np.einsum("ij,jk,ik->i", Z, Ainv, Z), rtol=1e-9)
    got_best, got_stat, got_j = st.glr(1.0)
    assert (got_best, got_j) == (best, j)
    assert got_stat == pytest.approx(stat, rel=1e-9)
    # σ scales the statistic by 1/σ² (the Gaussian log-likelihood ratio).
    assert st.glr(2.0)[1] == pytest.approx(stat / 4.0, rel=1e-9)


def test_glr_minimises_over_the_alternatives_not_the_first_or_largest():
    # Items whose closest alternative is the last one: an argmax or a fixed index fails.
    X = np.eye(2)
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.9, 0.1]])
    st = GLRState(X, Z, refresh_every=10**9)
    st.add_counts(np.array([10, 10]), np.array([10.0, 2.0]))  # θ̂ = (1, 0.2)
    best, stat, j = st.glr(1.0)
    assert (best, j) == (0, 3)
    y = Z[0] - Z[3]
    assert stat == pytest.approx((y @ [1.0, 0.2]) ** 2 / (2 * (y @ y) / 10))


def test_thresholds_are_the_papers_formulas():
    d, n, u, c, delta = 3, 40.0, 0.5, 2.0, 0.01
    A = n * np.eye(d)
    expected = (1 + u) * (0.5 * d * math.log(1 + n / (u * c)) - math.log(delta))
    assert paper_threshold(A, delta, u, c) == pytest.approx(expected, rel=1e-12)
    assert heuristic_threshold(1000, 0.05) == pytest.approx(math.log((1 + math.log(1000))
                                                                      / 0.05))


def test_the_paper_threshold_is_what_the_identifier_stops_on():
    env = make_instance("soare", d=3, omega=0.3)
    alg = LinearTrackAndStop(env.X, env.Z, 0.1)
    tr = simulate(alg, env, seed=stream(2, "t"))
    assert tr.stopped and alg.glr > alg.beta
    assert alg.beta == pytest.approx(paper_threshold(alg.state.A, 0.1, 1.0, alg.c), rel=1e-12)
    assert alg.c == 1.0  # λ_min of the spanning set e_1, e_2, e_3
    assert alg.glr == pytest.approx(_brute_glr(env.X, env.Z, alg.state.counts,
                                               alg.state.sums)[0], rel=1e-9)


@pytest.mark.parametrize("tracking", ["C", "D"])
def test_tracking_follows_the_allocation(tracking):
    # Without forced exploration (c0 tiny) and with one allocation for good (lazy_ratio huge),
    # the counts after n pulls are within K of n w: the argmin of the deficit, not its argmax.
    env = make_instance("soare", d=4, omega=0.2)
    alg = LinearTrackAndStop(env.X, env.Z, 1e-300, tracking=tracking, lazy_ratio=1e12,
                             forced_scale=1e-12)
    simulate(alg, env, seed=1, horizon=3000)
    w = alg.weights
    n_after = alg.state.counts - np.bincount(alg.basis, minlength=env.n_arms)
    assert np.all(np.abs(n_after - (alg.state.t - alg.d) * w) <= env.n_arms)
    assert alg.updates == 1


def test_forced_exploration_keeps_lambda_min_above_c0_sqrt_t():
    env = make_instance("soare", d=4, omega=0.2)
    # c0 = 2: tracking alone gives e_3, e_4 about 1% of the pulls, far below 2√t.
    alg = LinearTrackAndStop(env.X, env.Z, 1e-300, forced_scale=2.0)
    simulate(alg, env, seed=1, horizon=5000)
    lam = np.linalg.eigvalsh(alg.state.A)[0]
    assert lam >= 2.0 * math.sqrt(alg.state.t) - 1.0
    assert alg.forced > 0


def test_the_allocation_at_theta_star_is_the_oracle_design():
    env = make_instance("soare", d=5, omega=0.05)
    w = plug_in_allocation(env.X, env.Z, env.Z @ env.theta, 1e-3)
    oracle = XYOracle(env.X, env.Z, 0.05, env.theta, design_tol=1e-3)
    best = 0
    D = env.Z[best] - env.Z[1:]
    y = D / (D @ env.theta)[:, None]
    value = max(yy @ np.linalg.inv((env.X.T * w) @ env.X) @ yy for yy in y)
    assert value == pytest.approx(oracle.psi_star, rel=2e-3)


def test_fw_vertex_solves_the_matrix_game():
    G = np.array([[1.0, 0.0], [0.0, 1.0], [0.4, 0.4]])
    x = np.array([0.2, 0.3, 0.5])
    p = fw_vertex(G, x)
    # max_p min(p_0 + .4 p_2 − ⟨x, G_0⟩, p_1 + .4 p_2 − ⟨x, G_1⟩) with ⟨x, G⟩ = (.4, .5):
    # p_0 − .4 = p_1 − .5 on p_2 = 0 (arm 2 is dominated), so p = (.45, .55, 0).
    np.testing.assert_allclose(p, [0.45, 0.55, 0.0], atol=1e-9)
    assert fw_vertex(G[:, :1], x).tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("cls", [LinearTrackAndStop, FrankWolfeSampling])
@pytest.mark.parametrize("threshold", ["paper", "heuristic"])
def test_delta_correct_over_500_trials(cls, threshold):
    # δ = 0.2 on a two-dimensional instance with gap 2(1 − cos 0.8) = 0.61: errors must be at
    # most δ over 500 trials (the fast version of the Soare benchmark's δ-correctness).
    X = np.array([[1.0, 0.0], [0.0, 1.0], [math.cos(0.8), math.sin(0.8)]])
    env = LinearBandit(X, np.array([2.0, 0.0]))
    delta, trials = 0.2, 500
    errors = 0
    run = simulate_track_and_stop if cls is LinearTrackAndStop else simulate
    # Track-and-Stop with allocation updates at t = 4^k·d (the lazy schedule the paper allows)
    # so that the 500 trials take seconds: the design solves dominate such short runs.
    kw = {"lazy_ratio": 4.0} if cls is LinearTrackAndStop else {}
    for i in range(trials):
        alg = cls(env.X, env.Z, delta, threshold=threshold, **kw)
        tr = run(alg, env, seed=stream(5, "delta", i))
        assert tr.stopped
        errors += not tr.correct
    assert errors <= delta * trials


@pytest.mark.parametrize("engine", ["blocks", "kernel"])
@pytest.mark.parametrize("threshold", ["paper", "heuristic"])
@pytest.mark.parametrize("tracking", ["C", "D"])
def test_block_driver_takes_the_decisions_of_simulate(threshold, tracking, engine):
    env = make_instance("soare", d=3, omega=0.2)
    for i in range(3):
        a = LinearTrackAndStop(env.X, env.Z, 0.05, threshold=threshold, tracking=tracking)
        b = LinearTrackAndStop(env.X, env.Z, 0.05, threshold=threshold, tracking=tracking)
        rng_a, rng_b = stream(9, "noise", i), stream(9, "noise", i)
        ta = simulate(a, env, seed=rng_a)
        tb = simulate_track_and_stop(b, env, seed=rng_b, block=64, engine=engine)
        assert ta.decisions.same_as(tb.decisions)
        assert ta.n_pulls == tb.n_pulls and ta.stopped and tb.stopped
        assert ta.recommendation == tb.recommendation
        np.testing.assert_array_equal(ta.counts, tb.counts)
        assert tb.n_batches == ta.n_batches
        # the tracking state is the class's to the bit (sums added in the same order)
        np.testing.assert_array_equal(a._cum, b._cum)
        assert (a.forced, a.updates) == (b.forced, b.updates)
        # the Generator stands where simulate leaves it
        assert rng_a.standard_normal() == rng_b.standard_normal()


def test_block_driver_respects_the_horizon():
    env = make_instance("soare", d=3, omega=0.01)
    a = LinearTrackAndStop(env.X, env.Z, 0.05)
    b = LinearTrackAndStop(env.X, env.Z, 0.05)
    ta = simulate(a, env, seed=3, horizon=777)
    tb = simulate_track_and_stop(b, env, seed=3, horizon=777, block=100, engine="blocks")
    assert ta.n_pulls == tb.n_pulls == 777 and not ta.stopped and not tb.stopped
    assert ta.decisions.same_as(tb.decisions)


@pytest.mark.parametrize("cls", [LinearTrackAndStop, FrankWolfeSampling])
def test_same_seed_same_numbers_and_other_seeds_differ(cls):
    env = make_instance("soare", d=3, omega=0.3)
    runs = [simulate(cls(env.X, env.Z, 0.1), env, seed=s) for s in (1, 1, 2)]
    assert runs[0].decisions.same_as(runs[1].decisions)
    assert runs[0].n_pulls == runs[1].n_pulls
    assert not runs[0].decisions.same_as(runs[2].decisions)


@pytest.mark.parametrize("cls, kw, name", [
    (LinearTrackAndStop, {"threshold": "exact"}, "threshold"),
    (LinearTrackAndStop, {"tracking": "E"}, "tracking"),
    (LinearTrackAndStop, {"lazy_ratio": 1.0}, "lazy_ratio"),
    (LinearTrackAndStop, {"forced_scale": -1.0}, "forced_scale"),
    (LinearTrackAndStop, {"u": 0.0}, "u"),
    (LinearTrackAndStop, {"c": "big"}, "c"),
    (LinearTrackAndStop, {"design_tol": 0}, "design_tol"),
    (FrankWolfeSampling, {"r_exponent": 0.0}, "r_exponent"),
    (FrankWolfeSampling, {"r_scale": -2.0}, "r_scale"),
    (FrankWolfeSampling, {"sigma": 0.0}, "sigma"),
    (FrankWolfeSampling, {"threshold": None}, "threshold"),
    (FrankWolfeSampling, {"refresh_every": 0}, "refresh_every"),
])
def test_refusals_name_the_parameter(cls, kw, name):
    env = make_instance("soare", d=3, omega=0.3)
    with pytest.raises((ValueError, TypeError)) as err:
        cls(env.X, env.Z, 0.1, **kw)
    assert name in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("cls", [LinearTrackAndStop, FrankWolfeSampling])
def test_refusals_of_the_problem(cls):
    with pytest.raises(ValueError, match="delta"):
        cls(np.eye(2), None, 1.5)
    with pytest.raises(ValueError, match="X"):
        cls(np.array([[1.0, 0.0], [2.0, 0.0]]), None, 0.1)  # does not span R^2


@pytest.mark.parametrize("name", ["LinearTrackAndStop", "FrankWolfeSampling"])
def test_registered_audited_and_simulated(name):
    assert name in policy_names()
    env = make_instance("soare", d=3, omega=0.3)
    algo = make_policy(name, env, np.random.default_rng(0), delta=0.1, threshold="heuristic")
    assert algo.kind == "identification"
    assert simulate(algo, env, seed=0).correct
    result = audit(get_policy(name).factory, env, pairs=3,
                   params={"delta": 0.1, "threshold": "heuristic"})
    assert result.pairs == 3
    with pytest.raises(ValueError, match="threshold"):
        make_policy(name, env, np.random.default_rng(0), threshold="loose")


@pytest.mark.parametrize("name", ["LinearTrackAndStop", "FrankWolfeSampling"])
def test_runs_live_to_the_best_arm(name, tmp_path):
    from banditkit import Experiment
    from live_support import drive, reward_table

    table = reward_table([0.1, 0.9])
    path = tmp_path / "e.sqlite"
    Experiment.create(path, algorithm=name, arms=np.eye(2), seed=0,
                      params={"delta": 0.1, "threshold": "heuristic"}).close()
    drive(str(path), table, 1, 10**5)
    with Experiment.open(path) as exp:
        status = exp.status()
        assert status.finished
        assert exp._algorithm.recommendation == 1


@pytest.mark.parametrize("cls", [LinearTrackAndStop, FrankWolfeSampling])
def test_pull_proportions_approach_the_optimal_allocation(cls):
    # Soare d = 3, ω = 0.1: the optimal allocation puts most pulls on e_2 (the direction that
    # separates e_1 from its close competitor); both sampling rules get near it.
    env = make_instance("soare", d=3, omega=0.1)
    w_star = plug_in_allocation(env.X, env.Z, env.Z @ env.theta, 1e-3)
    tr = simulate(cls(env.X, env.Z, 1e-300, threshold="heuristic"), env, seed=4, horizon=6000)
    share = tr.counts / tr.n_pulls
    assert w_star[1] > 0.6
    assert np.abs(share - w_star).sum() < 0.15
