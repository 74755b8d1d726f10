"""The compiled trial of EXP3-IX (policies/exp3_ix/kernel.py) makes the protocol loop's pulls
and regret bit for bit from the same streams, compiled and run as plain Python, for one trial
and for many; its sum is numpy's pairwise sum to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit import jit, simulate, simulate_trials
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.policies import EXP3IX
from banditkit.policies.exp3_ix import kernel as exp3_ix_kernel
from banditkit.rng import derive_seed, stream

# 3 arms (one block of numpy's plain loop) and 11 (its eight interleaved partial sums)
ENVS = {3: BernoulliBandit(np.array([0.3, 0.5, 0.45])),
        11: BernoulliBandit(np.linspace(0.2, 0.7, 11))}
# Neu's defaults and a large η, whose weights span many orders of magnitude
PARAMS = {"defaults": {}, "eta 0.4": {"eta": 0.4, "gamma": 0.02}}

needs_numba = pytest.mark.skipif(not jit.available(),
                                 reason="numba not installed or BANDITKIT_JIT=0")


@pytest.fixture
def python_kernel(monkeypatch):
    """The kernel as plain Python (numba's ``py_func``)."""
    from banditkit.policies.index import kernels as sequential_kernels

    for module, name in ((exp3_ix_kernel, "exp3_ix_trial"), (exp3_ix_kernel, "pairwise_sum"),
                         (exp3_ix_kernel, "_reward"), (sequential_kernels, "_reward")):
        fn = getattr(module, name)
        monkeypatch.setattr(module, name, getattr(fn, "py_func", fn))
    monkeypatch.setattr(jit, "available", lambda: True)


def _check(K: int, params: dict, horizon: int) -> None:
    env = ENVS[K]
    for i in range(2):
        seed = derive_seed(5, "exp3", i)
        fast = simulate(EXP3IX(K, horizon, rng=stream(5, "exp3", i), **params), env,
                        horizon=horizon, seed=seed)
        ref = simulate(EXP3IX(K, horizon, rng=stream(5, "exp3", i), **params), env,
                       horizon=horizon, seed=seed, engine="reference")
        assert fast.decisions.same_as(ref.decisions)
        np.testing.assert_array_equal(fast.counts, ref.counts)
        np.testing.assert_array_equal(fast.regret, ref.regret)


@needs_numba
@pytest.mark.parametrize("K", sorted(ENVS))
@pytest.mark.parametrize("params", list(PARAMS.values()), ids=list(PARAMS))
def test_compiled_trial_is_the_protocol_loops(K, params):
    policy = EXP3IX(K, 10, rng=stream(0, "x"))
    assert policy.engine(ENVS[K], 10).name == "compiled kernel"
    _check(K, params, 3000)


@pytest.mark.parametrize("K", sorted(ENVS))
def test_kernel_as_python_is_the_protocol_loops(K, python_kernel):
    _check(K, PARAMS["eta 0.4"], 300)


@pytest.mark.parametrize("on", [True, False], ids=["compiled", "numpy lock-step"])
def test_many_trials_are_the_protocol_loops(on, monkeypatch):
    if on and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    env = ENVS[11]

    def factory(e, rng):
        return EXP3IX(e.n_arms, 800, rng=rng, eta=0.4, gamma=0.02)

    refs = simulate_trials(factory, env, n_trials=3, seed=2, horizon=800, engine="reference")
    monkeypatch.setattr(jit, "available", lambda: on)
    for got, ref in zip(simulate_trials(factory, env, n_trials=3, seed=2, horizon=800), refs,
                        strict=True):
        assert got.decisions.batches()[0].sequence().tolist() == np.concatenate(
            [b.sequence() for b in ref.decisions.batches()]).tolist()
        np.testing.assert_array_equal(got.regret, ref.regret)


def test_more_arms_than_the_kernel_sums_keep_the_numpy_lock_step():
    env = BernoulliBandit(np.full(exp3_ix_kernel.MAX_ARMS + 1, 0.5))
    assert EXP3IX(env.n_arms, 10, rng=stream(0, "x")).engine(env, 10).name == "lock-step"


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_pairwise_sum_is_numpys_to_the_last_bit(compiled):
    if compiled and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    total = exp3_ix_kernel.pairwise_sum
    if not compiled:
        total = getattr(total, "py_func", total)
    rng = np.random.default_rng(36)
    for n in range(1, exp3_ix_kernel.MAX_ARMS + 1):
        a = np.exp(-30 * rng.random(n))  # magnitudes over 13 decades: the order shows
        assert total(a, 0, n) == float(a.sum()), n
