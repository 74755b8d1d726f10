"""The compiled drivers of Track-and-Stop and Frank-Wolfe Sampling (``linear_glr_run``,
``linear_glr_kernels``): the same decisions as ``simulate`` from the same seed, the compiled
kernel the same numbers to the bit as the kernel run by Python, the kernels' arithmetic the
GLR state's, the Generator left where ``simulate`` leaves it."""

import json
import os
import subprocess
import sys
from functools import partial

import numpy as np
import pytest

from banditkit.envs import LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.linear_glr import GLRState
from banditkit.identification.linear_glr_run import simulate_fw_sampling
from banditkit.identification.track_and_stop import LinearTrackAndStop
from banditkit.identification.track_and_stop_blocks import simulate_track_and_stop
from banditkit.jit import available
from banditkit.rng import stream
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")

needs_numba = pytest.mark.skipif(not available(), reason="numba not installed (extra 'speed')")


def _run(cls, env, seed, engine, horizon=None, **kw):
    alg = cls(env.X, env.Z, 0.05, **kw)
    rng = stream(seed, "kernel-test")
    if engine == "python":
        tr = simulate(alg, env, seed=rng, horizon=horizon)
    elif cls is LinearTrackAndStop:
        tr = simulate_track_and_stop(alg, env, seed=rng, horizon=horizon, engine=engine)
    else:
        tr = simulate_fw_sampling(alg, env, seed=rng, horizon=horizon, engine=engine)
    return alg, tr, rng


@pytest.mark.parametrize("cls, kw, seeds", [
    (LinearTrackAndStop, {"threshold": "paper"}, 4),
    (LinearTrackAndStop, {"threshold": "heuristic"}, 4),
    (LinearTrackAndStop, {"threshold": "heuristic", "tracking": "D"}, 4),
    (LinearTrackAndStop, {"threshold": "paper", "tracking": "D", "refresh_every": 97}, 4),
    (FrankWolfeSampling, {"threshold": "paper"}, 2),  # its matrix games (LPs) dominate
    (FrankWolfeSampling, {"threshold": "heuristic", "refresh_every": 97}, 4),
])
def test_kernel_takes_the_decisions_of_simulate(cls, kw, seeds):
    # d = 4, ω = 0.2: hundreds to thousands of pulls with forced exploration, allocation
    # updates, FW games (~250 a run with the paper β) and forced rounds, and (refresh_every =
    # 97) many state refreshes along the way.
    env = make_instance("soare", d=4, omega=0.2)
    for seed in range(seeds):
        # (a horizon far beyond these runs' lengths, so that a kernel which never stops fails)
        a, ta, ra = _run(cls, env, seed, "python", horizon=50_000, **kw)
        b, tb, rb = _run(cls, env, seed, "kernel", horizon=50_000, **kw)
        assert ta.stopped and tb.stopped
        assert ta.n_pulls == tb.n_pulls
        assert ta.decisions.same_as(tb.decisions)
        np.testing.assert_array_equal(ta.counts, tb.counts)
        assert ta.recommendation == tb.recommendation and ta.correct == tb.correct
        assert ta.n_batches == tb.n_batches
        # the class's own state afterwards: the same sums, statistic and threshold
        np.testing.assert_array_equal(a.state.sums, b.state.sums)
        assert b.glr == pytest.approx(a.glr, rel=1e-9) and b.beta == a.beta
        assert a.info.keys() == b.info.keys()
        for key in ("allocation_updates", "forced_pulls", "forced_rounds", "games"):
            assert a.info.get(key) == b.info.get(key)
        if cls is LinearTrackAndStop:  # the tracking sums: the class's to the bit
            np.testing.assert_array_equal(a._cum, b._cum)
        else:
            np.testing.assert_array_equal(a._sumz, b._sumz)
            np.testing.assert_allclose(a._x, b._x, rtol=1e-12)
        assert ra.standard_normal() == rb.standard_normal()  # the Generator: simulate's place


@pytest.mark.parametrize("cls", [LinearTrackAndStop, FrankWolfeSampling])
def test_kernel_respects_the_horizon(cls):
    env = make_instance("soare", d=3, omega=0.01)
    _, ta, ra = _run(cls, env, 3, "python", horizon=777)
    _, tb, rb = _run(cls, env, 3, "kernel", horizon=777)
    assert ta.n_pulls == tb.n_pulls == 777 and not ta.stopped and not tb.stopped
    assert ta.decisions.same_as(tb.decisions)
    assert ra.standard_normal() == rb.standard_normal()


def test_kernel_buffer_flushes_keep_every_pull(monkeypatch):
    # A 64-arm buffer: the run is flushed many times and the log is still simulate's.
    from banditkit.identification import linear_glr_run

    monkeypatch.setattr(linear_glr_run, "_CHUNK", 64)
    env = make_instance("soare", d=3, omega=0.2)
    _, ta, _ = _run(LinearTrackAndStop, env, 1, "python", threshold="paper")
    _, tb, _ = _run(LinearTrackAndStop, env, 1, "kernel", threshold="paper")
    assert tb.n_pulls > 640 and ta.decisions.same_as(tb.decisions)


def test_kernel_arithmetic_is_the_glr_states():
    from banditkit.identification.linear_glr_kernels import glr_scan, sm_update

    rng = np.random.default_rng(4)
    X = rng.standard_normal((7, 4))
    Z = rng.standard_normal((9, 4))
    ref = GLRState(X, Z, refresh_every=10**9)
    ref.add_counts(np.ones(7, dtype=np.int64), rng.standard_normal(7))
    Ainv, theta, est, q = ref.Ainv.copy(), ref.theta.copy(), ref.est.copy(), ref.q.copy()
    for _ in range(200):
        a = int(rng.integers(7))
        r = float(X[a] @ [1.0, -0.5, 0.2, 0.0] + rng.standard_normal())
        ref.update(a, r)
        sm_update(X, Z, Ainv, theta, est, q, a, r)
    for mine, theirs in ((Ainv, ref.Ainv), (theta, ref.theta), (est, ref.est), (q, ref.q)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-13)
    best, stat, j = glr_scan(Z, Ainv, est, q, 1.5)
    ref_best, ref_stat, ref_j = ref.glr(1.5)
    assert (best, j) == (ref_best, ref_j)
    assert stat == pytest.approx(ref_stat, rel=1e-10)


_PROBE = """
import json, numpy as np
from banditkit.envs.instances import make_instance
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.lingame import LinGame
from banditkit.identification.linear_glr_run import run_kernel
from banditkit.identification.track_and_stop import LinearTrackAndStop
from banditkit.jit import available
from banditkit.rng import stream
env = make_instance("soare", d=3, omega=0.2)
out = {"compiled": available()}
for cls in (LinearTrackAndStop, FrankWolfeSampling, LinGame):
    for threshold in ("paper", "heuristic"):
        alg = cls(env.X, env.Z, 0.05, threshold=threshold, refresh_every=301)
        tr = run_kernel(alg, env, seed=stream(8, "bits"), horizon=None, checkpoints=None)
        st = alg.state
        out[cls.__name__ + threshold] = {
            "pulls": tr.n_pulls, "arms": tr.decisions.runs()[0].tolist(),
            "glr": alg.glr.hex(), "beta": alg.beta.hex(),
            "state": [float(v).hex() for v in np.concatenate([st.Ainv.ravel(), st.theta,
                                                              st.est, st.q])]}
print(json.dumps(out))
"""


def _probe(jit: str) -> dict:
    env = dict(os.environ, BANDITKIT_JIT=jit)
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_numba
def test_compiled_kernel_gives_the_same_bits_as_the_kernel_run_by_python():
    compiled, python = _probe("1"), _probe("0")
    assert compiled.pop("compiled") is True and python.pop("compiled") is False
    assert compiled.keys() == python.keys()
    for key in compiled:
        assert compiled[key] == python[key], key  # every float of the state, to the bit


def test_engine_refusals():
    env = make_instance("soare", d=3, omega=0.3)
    with pytest.raises(ValueError, match="engine"):
        simulate_fw_sampling(FrankWolfeSampling(env.X, env.Z, 0.1), env, engine="gpu")
    with pytest.raises(ValueError, match="engine"):
        simulate_track_and_stop(LinearTrackAndStop(env.X, env.Z, 0.1), env, engine="numba")


def test_kernel_driver_falls_back_for_other_environments():
    # Bernoulli noise is not the kernel's draw: the drivers hand the run to simulate.
    X = np.eye(2)
    env = LinearBandit(X, np.array([0.8, 0.2]), noise="bernoulli")
    a = FrankWolfeSampling(X, None, 0.1, threshold="heuristic")
    b = FrankWolfeSampling(X, None, 0.1, threshold="heuristic")
    ta = simulate(a, env, seed=2)
    tb = simulate_fw_sampling(b, env, seed=2, engine="kernel")
    assert ta.decisions.same_as(tb.decisions) and ta.n_pulls == tb.n_pulls
