"""OFUL (Abbasi-Yadkori et al. 2011) and linear Thompson sampling (Agrawal & Goyal 2013): the
rank-one state against direct linear algebra, the paper's radius and scale, regret growth, the
lock-step driver against simulate bit for bit, and refusals."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError, jit, simulate_trials
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.policies.linear.index import LinearState
from banditkit.policies.linear.lockstep import (
    _kernel_arms,
    _numpy_arms,
    lints_lockstep,
    oful_lockstep,
)
from banditkit.policies.linear.oful import OFUL
from banditkit.policies.linear.thompson import LinearThompson, paper_scale
from banditkit.protocol import Batch
from banditkit.registry import make_policy
from banditkit.rng import as_generator, derive_seed
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")

#: A small instance: 4 arms in R², means 0.8, −0.8, 0.1, 0.54 (gaps 0.26 to 1.6), ±1 rewards.
SMALL = LinearBandit(np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.6, 0.6]]),
                     np.array([0.8, 0.1]), noise="rademacher")
#: An instance built as ``replicable-bandits:linear``'s: 20 unit arms in R⁵, θ* on the unit
#: sphere, ±1 rewards.
UNIT = make_instance("linear-random-unit", rng=np.random.default_rng(1), K=20, d=5)


def _gram(policy, counts: np.ndarray) -> np.ndarray:
    return policy.lam * np.eye(policy.d) + (policy.X.T * counts) @ policy.X


# -- the rank-one state -----------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: OFUL(UNIT.X, lam=0.7),
                                  lambda: LinearThompson(UNIT.X, np.random.default_rng(0),
                                                         lam=0.7, v=1.0)])
def test_rank_one_state_equals_direct_linear_algebra(make):
    """After 3000 pulls, G = X V⁻¹, q = ‖x‖²_{V⁻¹}, m = X θ̂ (θ̂ = V⁻¹ Σ r x), log det V/λ^d
    and the Cholesky factor are those computed from scratch."""
    policy = make()
    rng = np.random.default_rng(5)
    arms, rewards = [], []
    for _ in range(3000):
        batch = policy.next_batch()
        r = UNIT.means[batch.arms] + 0.3 * rng.standard_normal(1)
        policy.observe(batch, np.clip(r, -1, 1))
        arms.append(int(batch.arms[0]))
        rewards.append(float(np.clip(r, -1, 1)[0]))
    arms_a = np.array(arms)
    assert np.unique(arms_a).size > 3  # several arms, so V is far from λI
    V = _gram(policy, np.bincount(arms_a, minlength=UNIT.n_arms))
    Vi = np.linalg.inv(V)
    theta = Vi @ (policy.X[arms_a].T @ np.array(rewards))
    st = policy.state
    np.testing.assert_allclose(st.G[0], policy.X @ Vi, atol=1e-12)
    np.testing.assert_allclose(st.q[0], np.einsum("kd,de,ke->k", policy.X, Vi, policy.X),
                               atol=1e-12)
    np.testing.assert_allclose(st.m[0], policy.X @ theta, atol=1e-10)
    logdet = np.linalg.slogdet(V)[1] - policy.d * math.log(policy.lam)
    assert st.logdet[0] == pytest.approx(logdet, abs=1e-9)
    if st.chol is not None:
        np.testing.assert_allclose(st.chol[0], np.linalg.cholesky(V), atol=1e-10)


def _counts(policy) -> np.ndarray:
    arms, counts = policy.decisions.runs()
    return np.bincount(arms, counts, minlength=policy.n_arms)


def test_oful_radius_is_theorem_2s():
    """√β_t = R √(2 log(det(V)^{1/2} det(λI)^{−1/2} / δ)) + √λ S, read off the determinant."""
    policy = OFUL(UNIT.X, lam=2.0, delta=0.05, R=1.5, S=0.8)
    simulate(policy, UNIT, horizon=500, seed=2)
    V = _gram(policy, _counts(policy))
    det_ratio_sqrt = math.sqrt(np.linalg.det(V) / np.linalg.det(2.0 * np.eye(5)))
    expect = 1.5 * math.sqrt(2 * math.log(det_ratio_sqrt / 0.05)) + math.sqrt(2.0) * 0.8
    assert policy.confidence_radius(policy.state, policy.t)[0] == pytest.approx(expect,
                                                                                 rel=1e-10)
    free = OFUL(UNIT.X, lam=2.0, delta=0.05, R=1.5, S=0.8, L=1.0, radius="determinant-free")
    t = 500
    want = 1.5 * math.sqrt(5 * math.log((1 + t * 1.0 / 2.0) / 0.05)) + math.sqrt(2.0) * 0.8
    assert free.confidence_radius(free.state, t)[0] == pytest.approx(want, rel=1e-12)
    scaled = OFUL(UNIT.X, radius_scale=0.25)
    assert scaled.confidence_radius(scaled.state, 0)[0] == pytest.approx(
        0.25 * (math.sqrt(2 * math.log(100)) + 1.0), rel=1e-12)
    const = OFUL(UNIT.X, radius="constant", alpha=0.3)
    assert const.confidence_radius(const.state, 10)[0] == 0.3


def test_oful_scores_are_the_optimistic_values():
    """The score of arm k is max_{θ ∈ C} x_kᵀθ = x_kᵀθ̂ + √β ‖x_k‖_{V⁻¹}."""
    policy = OFUL(SMALL.X)
    simulate(policy, SMALL, horizon=200, seed=1)
    st = policy.state
    rad = policy.confidence_radius(st, policy.t)[0]
    np.testing.assert_allclose(policy.scores(st, policy.t, None)[0],
                               st.m[0] + rad * np.sqrt(st.q[0]), rtol=1e-15)


def test_lints_draw_has_covariance_v2_vinv():
    """x_kᵀ(θ̃ − θ̂) = v x_kᵀ C⁻ᵀ z: over the basis vectors z = e_j the outer products sum to
    v² X V⁻¹ Xᵀ exactly (the covariance of a N(θ̂, v² V⁻¹) draw)."""
    policy = LinearThompson(UNIT.X, np.random.default_rng(0), horizon=10**5)
    assert policy.v == pytest.approx(math.sqrt(24 * math.log(10**5) * 5 * math.log(100)))
    simulate(policy, UNIT, horizon=400, seed=3)
    st = policy.state
    Y = np.stack([policy.scores(st, policy.t, np.eye(5)[j][None])[0] - st.m[0]
                  for j in range(5)])
    Vi = np.linalg.inv(_gram(policy, _counts(policy)))
    np.testing.assert_allclose(Y.T @ Y, policy.v**2 * UNIT.X @ Vi @ UNIT.X.T, rtol=1e-8,
                               atol=1e-8)


def test_paper_scale_and_epsilon_default():
    assert paper_scale(2.0, 3, 0.5, 0.1) == pytest.approx(2 * math.sqrt(48 * 3 * math.log(10)))
    ts = LinearThompson(SMALL.X, np.random.default_rng(0), horizon=1000)
    assert ts.epsilon == pytest.approx(1 / math.log(1000))  # the paper's ε = 1/ln T
    assert ts.v == pytest.approx(paper_scale(1.0, 2, 1 / math.log(1000), 0.01))
    assert LinearThompson(SMALL.X, np.random.default_rng(0), v=0.5).v == 0.5


# -- regret -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("run", "params", "bound", "share"), [
    (oful_lockstep, {}, 2.0, 0.05),                        # Theorem 2's radius
    (oful_lockstep, {"radius": "constant"}, 2.0, 0.05),    # LinUCB, α = 1
    (lints_lockstep, {"v": 1.0}, 2.0, 0.05),               # practical v = R
    (lints_lockstep, {}, 3.5, 0.7),                        # the paper's v (≈ 35 here)
])
def test_regret_grows_far_slower_than_the_horizon(run, params, bound, share):
    """Mean regret at T = 8000 over regret at T/4 = 2000, 20 seeds: about 4 for a policy that
    does not learn; 1.1–1.6 measured for OFUL, LinUCB and LinTS with v = R (logarithmic
    growth) and 2.8 for LinTS with the paper's v, which explores at rate v/√n for longer
    (its theorem is a √T-type bound), whose regret at T is still 0.59 of uniform play's
    (0.01–0.02 for the others)."""
    n, T = 20, 8000
    trials = run([SMALL] * n, [np.random.default_rng(i) for i in range(n)],
                 [derive_seed(4, i) for i in range(n)], T, np.array([T // 4, T]), **params)
    regret = np.array([t.regret for t in trials]).mean(axis=0)
    assert regret[1] / regret[0] < bound
    assert regret[1] < share * T * SMALL.gaps.mean()  # below uniform play


# -- lock-step == simulate --------------------------------------------------------------------
@pytest.mark.parametrize(("name", "params", "T"), [
    ("OFUL", {}, 4200), ("OFUL", {"radius": "determinant-free", "radius_scale": 0.5}, 1500),
    ("OFUL", {"radius": "constant", "alpha": 0.5}, 1500), ("LinearThompson", {}, 4200),
    ("LinearThompson", {"v": 1.0}, 1500),
])
def test_lockstep_equals_simulate_per_trial(name, params, T):
    """simulate_trials's engine (compiled kernel when numba is there, numpy otherwise:
    both are compared below) plays what simulate plays, trial by trial; 4200 pulls pass one
    block (4096) of noise and ξ."""
    seeds = [derive_seed(9, "lin", i) for i in range(2)]
    checkpoints = np.unique(np.array([1, 10, min(4096, T), min(4097, T), T]))
    lock = simulate_trials(
        lambda env, rng: make_policy(name, env, rng, horizon=T, **params), UNIT,
        rngs=[np.random.default_rng(50 + i) for i in range(2)], seeds=seeds, horizon=T,
        checkpoints=checkpoints)
    for i, (trial, seed) in enumerate(zip(lock, seeds, strict=True)):
        algo = make_policy(name, UNIT, np.random.default_rng(50 + i), horizon=T, **params)
        ref = simulate(algo, UNIT, horizon=T, seed=seed, checkpoints=checkpoints)
        assert trial.decisions.same_as(ref.decisions)
        assert np.array_equal(trial.counts, ref.counts)
        assert np.array_equal(trial.regret, ref.regret)


_NOISES = [
    LinearBandit(UNIT.X, 0.5 * UNIT.theta, noise="rademacher"),
    LinearBandit(UNIT.X, 0.3 * UNIT.theta, noise="bernoulli", clip=True),
    LinearBandit(UNIT.X, 0.5 * UNIT.theta, noise="gaussian", sigma=0.5),
]
_POLICIES = [
    lambda rr: OFUL(UNIT.X, reward_range=rr),
    lambda rr: OFUL(UNIT.X, radius="determinant-free", radius_scale=0.3, reward_range=rr),
    lambda rr: OFUL(UNIT.X, radius="constant", alpha=0.7, reward_range=rr),
    lambda rr: LinearThompson(UNIT.X, np.random.default_rng(0), horizon=3000, reward_range=rr),
    lambda rr: LinearThompson(UNIT.X, np.random.default_rng(0), v=1.0, reward_range=rr),
]


@pytest.mark.skipif(not jit.available(), reason="numba is not installed (or BANDITKIT_JIT=0)")
@pytest.mark.parametrize("env", _NOISES, ids=[e.noise for e in _NOISES])
def test_compiled_kernel_plays_what_the_numpy_lockstep_plays(env):
    """Every policy form on every noise: the numba kernel and the vectorised numpy rounds give
    the same arms (4200 pulls on the ±1 instance, past a 4096-round block; 1000 on the others),
    each trial with its own streams."""
    rr = None if env.noise == "gaussian" else (-1.0, 1.0)
    T = 4200 if env.noise == "rademacher" else 1000
    seeds = [derive_seed(5, "kernel", i) for i in range(2)]
    for make in _POLICIES:
        policy = make(rr)
        a = _numpy_arms(policy, env, [np.random.default_rng(10 + i) for i in range(2)], seeds,
                        T)
        b = _kernel_arms(policy, env, [np.random.default_rng(10 + i) for i in range(2)], seeds,
                         T)
        assert np.array_equal(a, b)
        assert np.unique(a).size > 1


@pytest.mark.parametrize("env", [
    LinearBandit(SMALL.X, np.array([0.3, 0.2]), noise="bernoulli", clip=True),
    LinearBandit(SMALL.X, np.array([0.3, 0.2]), noise="gaussian", sigma=0.5),
    LinearBandit(SMALL.X, np.array([1.0, 0.0]), noise="rademacher"),  # mean −1: no draw
])
def test_lockstep_equals_simulate_on_other_noises(env):
    """Bernoulli and Gaussian noise run vectorised; a Rademacher arm of mean −1 (probability
    0, numpy draws nothing) falls back to simulate: the same numbers either way."""
    rr = None if env.noise == "gaussian" else (-1.0, 1.0)
    seeds = [derive_seed(2, i) for i in range(2)]
    for run, make in [(oful_lockstep, lambda g: OFUL(env.X, reward_range=rr)),
                      (lints_lockstep, lambda g: LinearThompson(env.X, g, v=1.0, horizon=600,
                                                                reward_range=rr))]:
        extra = {"v": 1.0} if run is lints_lockstep else {}
        lock = run([env] * 2, [np.random.default_rng(i) for i in range(2)], seeds, 600, None,
                   reward_range=rr, **extra)
        for i, trial in enumerate(lock):
            ref = simulate(make(np.random.default_rng(i)), env, horizon=600, seed=seeds[i])
            assert trial.decisions.same_as(ref.decisions)
            assert np.array_equal(trial.regret, ref.regret)


def test_lockstep_does_not_depend_on_grouping_and_streams_are_each_trials_own():
    seeds = [derive_seed(3, i) for i in range(3)]
    together = lints_lockstep([UNIT] * 3, [np.random.default_rng(i) for i in range(3)], seeds,
                              700, None, v=1.0)
    alone = [lints_lockstep([UNIT], [np.random.default_rng(i)], [s], 700, None, v=1.0)[0]
             for i, s in enumerate(seeds)]
    for a, b in zip(together, alone, strict=True):
        assert a.decisions.same_as(b.decisions)
    # another ξ with the same noise, or another noise with the same ξ, changes the run
    other_xi = lints_lockstep([UNIT], [np.random.default_rng(9)], seeds[:1], 700, None,
                              v=1.0)[0]
    other_noise = lints_lockstep([UNIT], [np.random.default_rng(0)], seeds[1:2], 700, None,
                                 v=1.0)[0]
    assert not other_xi.decisions.same_as(together[0].decisions)
    assert not other_noise.decisions.same_as(together[0].decisions)


@pytest.mark.parametrize("name", ["OFUL", "LinearThompson"])
def test_a_live_experiment_asks_what_the_class_asks(tmp_path, name):
    """Fed the same rewards, a live experiment on the arms' features assigns the arms the
    class plays with ξ = the experiment's seed (the same numbers on the live path), built with
    the parameters in force (a live LinTS takes v = R)."""
    from banditkit.live.journal.defaults import params_in_force

    policy = make_policy(name, UNIT, as_generator(11), horizon=80,
                         **params_in_force(name, {})[0])
    played = []
    with Experiment.create(tmp_path / "e.sqlite", algorithm=name, arms=UNIT.X, seed=11,
                           horizon=80) as exp:
        for t in range(80):
            units = exp.assign(1)
            batch = policy.next_batch()
            reward = 1.0 if (7 * t + int(batch.arms[0])) % 3 else -1.0
            policy.observe(batch, np.array([reward]))
            exp.record(units["unit"], [reward])
            played.append((int(units["arm_index"].iloc[0]), int(batch.arms[0])))
    assert all(a == b for a, b in played)
    assert len({a for a, _ in played}) > 2


# -- refusals ---------------------------------------------------------------------------------
def test_rewards_outside_the_range_are_refused_before_any_state_changes():
    for policy in (OFUL(SMALL.X), LinearThompson(SMALL.X, np.random.default_rng(0), v=1.0)):
        batch = policy.next_batch()
        before = LinearState(**{k: (None if v is None else v.copy())
                                for k, v in vars(policy.state).items()})
        with pytest.raises(ValueError, match=r"rewards.*\[-1, 1\]"):
            policy.observe(batch, np.array([1.5]))
        for k, v in vars(policy.state).items():
            assert v is None or np.array_equal(v, getattr(before, k))
        policy.observe(batch, np.array([-1.0]))  # still pending: a valid answer is taken
    unbounded = OFUL(SMALL.X, reward_range=None)
    unbounded.observe(unbounded.next_batch(), np.array([7.0]))  # sub-Gaussian, unbounded
    with pytest.raises(ValueError, match="R must be at least"):
        OFUL(SMALL.X, R=1.0, reward_range=(0.0, 10.0))  # [0, 10] is only 5-sub-Gaussian


def test_live_experiment_refuses_a_reward_outside_the_range(tmp_path):
    with Experiment.create(tmp_path / "o.sqlite", algorithm="OFUL", arms=SMALL.X, seed=0,
                           horizon=100) as exp:
        units = exp.assign(1)
        with pytest.raises((ValueError, ExperimentError), match=r"\[-1, 1\]"):
            exp.record(units["unit"], [2.0])


@pytest.mark.parametrize(("make", "match"), [
    (lambda: OFUL(SMALL.X, lam=0), "lam"),
    (lambda: OFUL(SMALL.X, delta=1.0), "delta"),
    (lambda: OFUL(SMALL.X, R=-1), "R"),
    (lambda: OFUL(SMALL.X, S=0), "S"),
    (lambda: OFUL(SMALL.X, L=0.5), "L must bound"),
    (lambda: OFUL(SMALL.X, radius="tight"), "radius"),
    (lambda: OFUL(SMALL.X, radius_scale=0), "radius_scale"),
    (lambda: OFUL(SMALL.X, alpha=-1), "alpha"),
    (lambda: OFUL(np.ones(3)), "X"),
    (lambda: OFUL(SMALL.X, reward_range=(1, 0)), "reward_range"),
    (lambda: OFUL(SMALL.X, horizon=0), "horizon"),
    (lambda: LinearThompson(SMALL.X, np.random.default_rng(0), epsilon=0, horizon=9), "epsilon"),
    (lambda: LinearThompson(SMALL.X, np.random.default_rng(0), epsilon=2, horizon=9), "epsilon"),
    (lambda: LinearThompson(SMALL.X, np.random.default_rng(0)), "epsilon must be given"),
    (lambda: LinearThompson(SMALL.X, np.random.default_rng(0), v=0), "v must"),
    (lambda: LinearThompson(SMALL.X, None, v=1.0), "rng"),
    (lambda: LinearThompson(SMALL.X, np.random.default_rng(0), v=1, delta=0), "delta"),
    (lambda: make_policy("OFUL", SMALL, np.random.default_rng(0), beta=2), "beta"),
    (lambda: make_policy("LinearThompson", make_instance("bernoulli"), np.random.default_rng(0),
                         horizon=10), "linear environment"),
])
def test_parameter_refusals_name_the_parameter(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_a_batch_not_asked_for_is_refused():
    policy = OFUL(SMALL.X)
    policy.next_batch()
    with pytest.raises(ValueError, match="batch must be"):
        policy.observe(Batch.single(3), np.array([0.0]))


# -- the figure -------------------------------------------------------------------------------
def test_the_regret_figure_runs_on_the_linear_figures_instance():
    """``replicable-bandits:linear-regret`` draws ``replicable-bandits:linear``'s instance for
    the same root seed (quick and full), and its text quotes its own horizon."""
    from banditkit.experiments.figures.replicable_linear import LINEAR, LINEAR_REGRET
    from banditkit.experiments.tasks import Task, _environment

    for spec in (LINEAR_REGRET, LINEAR_REGRET.quick_version()):
        for seed in (0, 3):
            mine = _environment(spec, Task(0, 0, (0,), seed, f"{spec.name}{seed}"), 0)
            theirs = _environment(LINEAR, Task(0, 0, (0,), seed, f"lin{seed}"), 0)
            assert np.array_equal(mine.X, theirs.X)
            assert np.array_equal(mine.theta, theirs.theta)
    other = _environment(LINEAR_REGRET, Task(0, 0, (0,), 1, "x1"), 0)
    assert not np.array_equal(other.X, theirs.X)  # the seed keys it


def test_the_quick_figure_runs_what_it_says_and_draws_every_curve(tmp_path, capsys):
    """``--quick`` runs 8 trials of T = 10⁴ (as its title says), each sequential trial equal to
    the lock-step runner's on the same streams, every algorithm in a legend with its own
    style, and no band below 0."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    from banditkit.cli import main
    from banditkit.experiments import plots
    from banditkit.experiments.figures.replicable_linear import LINEAR_REGRET
    from banditkit.experiments.runner import load_run
    from banditkit.experiments.tasks import algorithm_rng, noise_seed

    out = tmp_path / "run"
    assert main(["run", LINEAR_REGRET.name, "--quick", "--backend", "serial", "--json",
                 "--no-progress", "--out", str(out)]) == 0
    capsys.readouterr()
    result = load_run(out)
    assert result.config["horizons"] == [10_000] and "T = 10⁴" in result.config["title"]
    trials = result.trials
    assert set(trials["n_pulls"]) == {10_000}
    assert trials.groupby("algorithm").size().to_dict() == {
        a.name: 8 for a in LINEAR_REGRET.algorithms}
    quick = LINEAR_REGRET.quick_version()
    env = _environment_of(quick)
    rngs = [algorithm_rng(0, quick.name, 0, i) for i in range(8)]
    seeds = [noise_seed(0, quick.name, 0, i) for i in range(8)]
    for name, again in [
            ("OFUL (Theorem 2 radius)", oful_lockstep([env] * 8, rngs, seeds, 10_000, None)),
            ("LinTS (v = R = 1)", lints_lockstep([env] * 8, rngs, seeds, 10_000, None, v=1.0))]:
        mine = trials[trials["algorithm"] == name].sort_values("trial")
        np.testing.assert_array_equal(mine["final_regret"].to_numpy(),
                                      [t.regret[-1] for t in again])
    plt = matplotlib.pyplot
    fig = plots._curve_figure(plt, result, result.config["plot"])
    try:
        named = set()
        for ax in (a for a in fig.axes if a.get_visible()):
            lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
            styles = {(matplotlib.colors.to_hex(ln.get_color()), str(ln.get_linestyle()),
                       ln.get_marker()) for ln in lines}
            assert len(styles) == len(lines)
            for ln in lines:
                named |= set(ln.get_label().removesuffix(" (identical curves)").split(" ≡ "))
            for band in ax.collections:
                assert np.all(band.get_paths()[0].vertices[:, 1] > 0)  # log axis, clipped
        assert named == {a.name for a in LINEAR_REGRET.algorithms}
    finally:
        plt.close(fig)
    notes = json.loads(json.dumps(result.config))["notes"]
    assert "T = 10⁴, not 10^8" in notes and "over the 8 trials" in notes and "{" not in notes


def _environment_of(spec):
    from banditkit.experiments.tasks import Task, _environment

    return _environment(spec, Task(0, 0, (0,), 0, "env-of-" + spec.name), 0)
