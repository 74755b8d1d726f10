"""The compiled trials of UCB1, KL-UCB, MOSS, Bayes-UCB and Thompson sampling
(policies/index/kernels.py)
make the pulls, rewards and regret of simulate and of the numpy lock-step path, bit for bit,
from the same seeds: compiled by numba, run as plain Python, and with BANDITKIT_JIT=0; the
figures' lock-step groups take them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from functools import partial

import numpy as np
import pytest
from scipy import special

from banditkit import jit
from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.policies import KLUCB, MOSS, UCB1, BayesUCB, ThompsonSampling
from banditkit.policies.index import kernels as sequential_kernels
from banditkit.policies.index.lockstep import _bernoulli_rule, index_lockstep
from banditkit.policies.index.ucb_lockstep import ucb1_lockstep
from banditkit.policies.named import klucb_lockstep, thompson_lockstep
from banditkit.rng import as_generator, derive_seed, stream
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")

# means on both sides of 1/2 (numpy inverts the complement above 1/2) and near the edges
BERN = BernoulliBandit(np.array([0.44, 0.47, 0.5, 0.53, 0.56, 0.59, 0.97, 0.02]))
GAUSS = GaussianBandit(np.array([0.1, 0.3, 0.2, 0.25]), sigma=0.5)
# 11 arms: two blocks of the kernels' 8 lanes, the second padded
WIDE = BernoulliBandit(np.linspace(0.3, 0.6, 11))


def _index_runner(build):
    """A lock-step runner (``index_lockstep``) for the policies ``build(K, xi)``."""
    def run(envs, rngs, seeds, horizon, checkpoints):
        return index_lockstep(build, envs, rngs, seeds, horizon, checkpoints)
    return run


def _moss(K, r):
    return MOSS(K, 2000)


def _bayes(K, r):
    return BayesUCB(K)


def _bayes5(K, r):
    return BayesUCB(K, c=5.0, horizon=2000)

#: (name, lock-step runner, its params, class builder, env): every policy and posterior
CASES = [
    ("ucb1", ucb1_lockstep, {}, lambda K, r: UCB1(K), BERN),
    ("ucb1 c=0.5", ucb1_lockstep, {"exploration": 0.5}, lambda K, r: UCB1(K, exploration=0.5),
     BERN),
    ("ucb1 gaussian", ucb1_lockstep, {"reward_range": None},
     lambda K, r: UCB1(K, reward_range=None), GAUSS),
    ("ucb1 11 arms", ucb1_lockstep, {}, lambda K, r: UCB1(K), WIDE),
    ("klucb", klucb_lockstep, {}, lambda K, r: KLUCB(K), BERN),
    ("klucb c=3", klucb_lockstep, {"c": 3.0}, lambda K, r: KLUCB(K, c=3.0), BERN),
    ("klucb gaussian", klucb_lockstep, {"divergence": "gaussian", "sigma": 0.5},
     lambda K, r: KLUCB(K, divergence="gaussian", sigma=0.5), GAUSS),
    ("moss", _index_runner(_moss), {}, _moss, BERN),
    ("moss 11 arms", _index_runner(_moss), {}, _moss, WIDE),
    ("bayes-ucb", _index_runner(_bayes), {}, _bayes, BERN),
    ("bayes-ucb c=5", _index_runner(_bayes5), {}, _bayes5, BERN),
    ("ts beta", thompson_lockstep, {}, lambda K, r: ThompsonSampling(K, r), BERN),
    ("ts beta prior", thompson_lockstep, {"prior": (2.0, 3.5)},
     lambda K, r: ThompsonSampling(K, r, prior=(2.0, 3.5)), BERN),
    ("ts gaussian", thompson_lockstep, {"posterior": "gaussian"},
     lambda K, r: ThompsonSampling(K, r, posterior="gaussian"), BERN),
    # σ the smallest double: σ·ξ rounds to a few multiples of it, so θs tie (first index wins)
    ("ts gaussian ties", thompson_lockstep, {"posterior": "gaussian", "sigma": 5e-324},
     lambda K, r: ThompsonSampling(K, r, posterior="gaussian", sigma=5e-324), BERN),
    ("ts gaussian env", thompson_lockstep, {"posterior": "gaussian", "sigma": 0.5},
     lambda K, r: ThompsonSampling(K, r, posterior="gaussian", sigma=0.5), GAUSS),
]
IDS = [c[0] for c in CASES]

needs_numba = pytest.mark.skipif(not jit.available(),
                                 reason="numba not installed or BANDITKIT_JIT=0")


def _xis(n: int) -> list[np.random.Generator]:
    return [stream(11, "kernels", i, "algorithm") for i in range(n)]


def _seeds(n: int) -> list[np.random.SeedSequence]:
    return [derive_seed(11, "kernels", i, 1) for i in range(n)]


@pytest.fixture
def python_kernels(monkeypatch):
    """The kernels as plain Python (numba's ``py_func``), and the driver told to use them."""
    for name in ("_reward", "_klucb_index", "index_trial", "_gamma_attempt", "thompson_trial",
                 "bayes_ucb_scores", "bayes_ucb_trial"):
        fn = getattr(sequential_kernels, name)
        monkeypatch.setattr(sequential_kernels, name, getattr(fn, "py_func", fn))
    monkeypatch.setattr(jit, "available", lambda: True)


@pytest.fixture
def numpy_lockstep(monkeypatch):
    """The numpy lock-step path, the one BANDITKIT_JIT=0 takes."""
    monkeypatch.setattr(jit, "available", lambda: False)


def _run_kernel(build, env, xi, seed, horizon):
    """The kernel of ``build(K, xi)`` called directly: (arms, pulls, sums)."""
    policy = build(env.n_arms, xi)
    kernel = sequential_kernels.kernel_for(policy)
    assert kernel is not None
    K = env.n_arms
    thresholds, below = np.zeros(K), np.zeros(K, dtype=np.bool_)
    gaussian = isinstance(env, GaussianBandit)
    if not gaussian:
        for k, mu in enumerate(env.means):
            thresholds[k], above = _bernoulli_rule(float(mu))
            below[k] = not above
    arms, pulls, sums = np.empty(horizon, dtype=np.int64), np.zeros(K), np.zeros(K)
    kernel(as_generator(seed), xi, gaussian, env.means, thresholds, below,
           getattr(env, "sigma", 1.0), horizon, arms, pulls, sums)
    return arms, pulls, sums


def _check_kernel_equals_simulate(case, horizon):
    _, _, _, build, env = CASES[case]
    for xi, xi_again, seed in zip(_xis(2), _xis(2), _seeds(2), strict=True):
        arms, pulls, sums = _run_kernel(build, env, xi, seed, horizon)
        policy = build(env.n_arms, xi_again)
        ref = simulate(policy, env, horizon=horizon, seed=seed)
        # same pulls, in the same order
        np.testing.assert_array_equal(arms, ref.decisions.batches()[0].sequence()
                                      if ref.decisions.n_batches == 1 else
                                      np.concatenate([b.sequence()
                                                      for b in ref.decisions.batches()]))
        np.testing.assert_array_equal(pulls, policy.pulls)
        # same rewards: the reward sums agree to the last bit
        np.testing.assert_array_equal(sums, policy.sums)


@needs_numba
@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_compiled_kernel_makes_the_pulls_and_rewards_of_simulate(case):
    _check_kernel_equals_simulate(case, 2000)


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_kernel_as_python_makes_the_pulls_and_rewards_of_simulate(case, python_kernels):
    _check_kernel_equals_simulate(case, 400)


def _lockstep(case, horizon, n=3, checkpoints=None):
    _, runner, params, _, env = CASES[case]
    return runner([env] * n, _xis(n), _seeds(n), horizon, checkpoints, **params)


def _assert_same_trials(a, b):
    for x, y in zip(a, b, strict=True):
        assert x.decisions.same_as(y.decisions)
        np.testing.assert_array_equal(x.counts, y.counts)
        np.testing.assert_array_equal(x.regret, y.regret)
        assert x.n_pulls == y.n_pulls and x.n_batches == y.n_batches


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_lockstep_runners_equal_simulate_on_every_path(case, monkeypatch):
    _, _, _, build, env = CASES[case]
    T = 1500
    checkpoints = np.array([1, 7, 100, 999, T])
    refs = [simulate(build(env.n_arms, xi), env, horizon=T, seed=s, checkpoints=checkpoints)
            for xi, s in zip(_xis(3), _seeds(3), strict=True)]
    for on in (False, True) if jit.available() else (False,):  # numpy path, compiled
        monkeypatch.setattr(jit, "available", lambda on=on: on)
        _assert_same_trials(_lockstep(case, T, checkpoints=checkpoints), refs)


@needs_numba
@pytest.mark.parametrize("case", [IDS.index(i) for i in ("ucb1", "ts beta", "ts gaussian")],
                         ids=["ucb1", "ts beta", "ts gaussian"])
def test_compiled_equals_numpy_lockstep_at_the_figures_horizon(case, monkeypatch):
    """Appendix H's instance and T = 45,000 (Beta sampling falls back to the inverse CDF a
    few hundred times per trial there)."""
    from banditkit.envs.instances import make_instance

    _, runner, params, _, _ = CASES[case]
    env = make_instance("bernoulli")
    T = 45_000

    def run():
        return runner([env] * 2, _xis(2), _seeds(2), T, None, **params)

    compiled = run()
    monkeypatch.setattr(jit, "available", lambda: False)
    _assert_same_trials(compiled, run())


def _numpy_is_the_c_library(x: np.ndarray) -> bool:
    """numpy's log, log1p and exp on ``x`` are the C library's (numba's): false on numpy
    builds whose AVX-512 loops round differently (decisions still agree, see the module)."""
    import math

    return (np.log(x).tolist() == [math.log(v) for v in x]
            and np.log1p(-x).tolist() == [math.log1p(-v) for v in x]
            and np.exp(-x).tolist() == [math.exp(-v) for v in x])


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_gamma_attempts_value_is_numpys_to_the_last_bit_on_every_machine(compiled):
    """The Marsaglia–Tsang value d·(1 + c·x)³ takes the cube as two IEEE products in numpy and in
    the kernel, so it is the same bits on every machine (``** 3``/``pow`` is numpy's SIMD pow on
    AVX-512 builds and the C library's elsewhere: ~5% of values differed in the last bit
    between the two paths there); only the acceptance test still goes through ``log``."""
    from banditkit.estimation import beta_kernels
    from banditkit.estimation.beta_draws import gamma_attempt

    if compiled and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    gamma = beta_kernels.gamma_attempt_scalar
    if not compiled:
        gamma = getattr(gamma, "py_func", gamma)
    rng = np.random.default_rng(28)
    m = 20_000
    alpha = np.r_[1.0, 1 + 200 * rng.random(m - 1)]
    u = rng.random((2, m))
    ndtri, _ = beta_kernels.scipy_functions()
    values, _ = gamma_attempt(alpha, u[0], u[1])
    got = [gamma(a, x, y, ndtri)[0] for a, x, y in zip(alpha, u[0], u[1], strict=True)]
    assert got == values.tolist()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_index_and_gamma_attempt_are_numpys_to_the_last_bit(compiled):
    from banditkit.policies.index.kl_ucb import klucb_bernoulli_index
    from banditkit.policies.index.thompson import _gamma_attempt

    rng = np.random.default_rng(8)
    if not _numpy_is_the_c_library(rng.random(5000)):
        pytest.skip("numpy's SIMD log/exp/pow differ from the C library's on this machine")
    if compiled and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    klucb = sequential_kernels._klucb_index
    gamma = sequential_kernels._gamma_attempt
    if not compiled:
        klucb, gamma = getattr(klucb, "py_func", klucb), getattr(gamma, "py_func", gamma)
    m = 3000
    p = np.r_[0.0, 1.0, 1e-9, 1 - 1e-9, rng.random(m - 4)]
    n = rng.integers(1, 100_000, m).astype(float)
    level = 25 * rng.random(m)
    got = [klucb(a, b, c) for a, b, c in zip(p, n, level, strict=True)]
    want = [klucb_bernoulli_index(np.array([a]), np.array([b]), c)[0]
            for a, b, c in zip(p, n, level, strict=True)]
    assert got == want
    alpha = np.r_[1.0, 1 + 10_000 * rng.random(m - 1)]
    u = rng.random((2, m))
    ndtri, _ = sequential_kernels.scipy_functions()
    got_gamma = [gamma(a, x, y, ndtri) for a, x, y in zip(alpha, u[0], u[1], strict=True)]
    values, accepted = _gamma_attempt(alpha, u[0], u[1])
    assert [g[0] for g in got_gamma] == values.tolist()
    assert [g[1] for g in got_gamma] == accepted.tolist()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_bayes_ucb_quantiles_are_the_classs_to_the_last_bit(compiled):
    """The kernel's quantiles on random states (a shifted quantile order leaves most trials'
    pulls unchanged, so the index itself is compared)."""
    if compiled and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    scores = sequential_kernels.bayes_ucb_scores
    if not compiled:
        scores = getattr(scores, "py_func", scores)
    _, betaincinv = sequential_kernels.scipy_functions()
    rng = np.random.default_rng(36)
    for c in (0.0, 5.0):
        policy = BayesUCB(6, c=c, horizon=5000)
        kernel = sequential_kernels.kernel_for(policy)
        assert kernel is not None
        scale = 1.0 if c == 0 else float(np.log(5000)) ** c
        for _ in range(50):
            pulls = rng.integers(0, 800, 6).astype(float)
            sums = np.floor(pulls * rng.random(6))
            t = int(pulls.sum())
            out = np.empty(6)
            scores(pulls, sums, t, scale, betaincinv, out)
            assert out.tolist() == policy.scores(pulls, sums, t, None).tolist()


def test_beta_fallback_is_exercised_and_the_scipy_functions_are_scipys():
    ndtri, betaincinv = sequential_kernels.scipy_functions()
    u = np.r_[np.linspace(1e-300, 1e-10, 50), np.random.default_rng(0).random(2000),
              1 - np.logspace(-16, -1, 50)]
    assert [ndtri(x, 0) for x in u] == special.ndtri(u).tolist()
    a, b = 1 + 50 * np.random.default_rng(1).random(u.size), 1 + np.arange(u.size)
    assert [betaincinv(x, y, z, 0) for x, y, z in zip(a, b, u, strict=True)] == \
        special.betaincinv(a, b, u).tolist()
    # at the prior (shapes 1 and 1) a Marsaglia–Tsang pair fails about 1 time in 10, so the
    # 400-round Beta runs above reach the fallback many times
    from banditkit.policies.index.thompson import _gamma_attempt

    uu = np.random.default_rng(2).random((4, 10_000))
    ok = _gamma_attempt(np.ones(10_000), uu[0], uu[1])[1] & \
        _gamma_attempt(np.ones(10_000), uu[2], uu[3])[1]
    assert 0.05 < 1 - ok.mean() < 0.15


@needs_numba
def test_numbas_generator_draws_are_numpys():
    """The kernels read ``random()`` and ``standard_normal()`` from numba: numpy's streams."""
    draw = jit.njit(_draw_loop)
    for kind in (0, 1):
        got = draw(np.random.default_rng(3), 100_000, kind)
        g = np.random.default_rng(3)
        want = g.random(100_000) if kind == 0 else g.standard_normal(100_000)
        np.testing.assert_array_equal(got, want)


def _draw_loop(rng, n, kind):
    out = np.empty(n)
    for i in range(n):
        out[i] = rng.random() if kind == 0 else rng.standard_normal()
    return out


def test_subclasses_and_other_index_policies_keep_the_numpy_path():
    class Greedier(UCB1):
        def scores(self, pulls, sums, t, xi):
            return sums / pulls

    assert sequential_kernels.kernel_for(Greedier(3)) is None
    assert sequential_kernels.kernel_for(UCB1(3)) is not None
    # a scipy whose C functions have another signature: Thompson sampling keeps numpy's path
    from banditkit.estimation import beta_kernels

    original = beta_kernels._cython_special
    sequential_kernels.scipy_functions.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(beta_kernels, "_cython_special",
                       lambda name, signature, *types: original(name, signature + b" ", *types))
            assert sequential_kernels.kernel_for(ThompsonSampling(3, stream(0, "a"))) is None
            assert sequential_kernels.kernel_for(
                ThompsonSampling(3, stream(0, "a"), posterior="gaussian")) is None
    finally:
        sequential_kernels.scipy_functions.cache_clear()
    assert sequential_kernels.kernel_for(ThompsonSampling(3, stream(0, "a"))) is not None
    assert sequential_kernels.kernel_for(UCB1(3)) is not None
    # and the driver still runs them, as the class does
    env = BernoulliBandit(np.array([0.3, 0.6, 0.5]))
    s = derive_seed(4, 0)
    trial = index_lockstep(lambda K, r: Greedier(K), [env], [None], [s], 300, None)[0]
    ref = simulate(Greedier(3), env, horizon=300, seed=s)
    assert trial.decisions.same_as(ref.decisions)


_SUBPROCESS = """
import json, sys
import numpy as np
from banditkit import jit
sys.path.insert(0, {tests!r})
from test_sequential_kernels import CASES, _lockstep

out = {{"jit": jit.available(), "runs": [[t.counts.tolist(), t.regret.tolist(),
         t.decisions.runs()[0].tolist(), t.decisions.runs()[1].tolist()]
        for case in range(len(CASES)) for t in _lockstep(case, 400)]}}
out["numba"] = "numba" in sys.modules
print(json.dumps(out))
"""


def test_banditkit_jit_0_gives_the_same_trials_without_importing_numba():
    tests = os.path.dirname(__file__)
    runs = {}
    for value in ("0", "1"):
        env = {**os.environ, "BANDITKIT_JIT": value}
        done = subprocess.run([sys.executable, "-c", _SUBPROCESS.format(tests=tests)],
                              env=env, capture_output=True, text=True, check=True)
        runs[value] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs["0"]["jit"] is False and runs["0"]["numba"] is False
    assert runs["0"]["runs"] == runs["1"]["runs"]
    # and both are simulate's
    want = [[t.counts.tolist(), t.regret.tolist(), t.decisions.runs()[0].tolist(),
             t.decisions.runs()[1].tolist()]
            for case in range(len(CASES))
            for t in [simulate(CASES[case][3](CASES[case][4].n_arms, xi), CASES[case][4],
                               horizon=400, seed=s) for xi, s in zip(_xis(3), _seeds(3),
                                                                      strict=True)]]
    assert runs["0"]["runs"] == want


@pytest.mark.parametrize("figure, algorithm", [
    ("replicable-bandits:fig1", "UCB1 (c = 2)"),
    ("replicable-bandits:ucb-baseline", "UCB1"),
    ("replicable-bandits:regret", "KL-UCB"),
    ("replicable-bandits:regret", "KL-UCB (c = 3)"),
    ("replicable-bandits:regret", "Thompson sampling (Beta)"),
    ("replicable-bandits:regret", "Thompson sampling (Gaussian)"),
])
def test_the_figures_lockstep_groups_run_the_kernels(figure, algorithm, monkeypatch):
    """A figure's task (all its trials of one algorithm) goes through the compiled kernel."""
    from banditkit.experiments.figures import get_figure
    from banditkit.experiments.tasks import Task, execute

    spec = get_figure(figure)
    point = dict(spec.points[0])
    if "algorithm_params" in point:
        point["algorithm_params"] = {**point["algorithm_params"], "T": 300}
    spec = replace(spec, points=(point,), horizon=300 if isinstance(spec.horizon, int)
                   else spec.horizon)
    algo = [a.name for a in spec.algorithms].index(algorithm)
    used = []
    kernel_for = sequential_kernels.kernel_for

    def counting(policy):
        kernel = kernel_for(policy)
        used.append(kernel is not None)
        return kernel

    monkeypatch.setattr(sequential_kernels, "kernel_for", counting)
    monkeypatch.setattr(jit, "available", lambda: True)
    records = execute(spec, Task(0, algo, tuple(range(4)), 0, "kernels-test"))
    assert used and all(used) and len(records) == 4  # (the engine is chosen, then run)
    assert all(r.status == "ok" for r in records)
