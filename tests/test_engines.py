"""Every engine an algorithm declares (banditkit.engines) gives the protocol loop's trial bit for
bit: ``simulate`` (its default engine), ``simulate_trials`` (lock-step engines across trials)
and ``audit`` against ``engine="reference"``, with the compiled kernels and, in a subprocess,
with ``BANDITKIT_JIT=0`` (the numpy and block paths)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from banditkit import jit, simulate, simulate_trials
from banditkit.engines import Engine
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.identification import EBTC, KLLUCB, LUCB, KArmedTrackAndStop
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.g_bai import GBAI
from banditkit.identification.lingame import LinGame
from banditkit.identification.lingape import LinGapE
from banditkit.identification.top_two import TopTwoThompson
from banditkit.identification.track_and_stop import LinearTrackAndStop
from banditkit.identification.xy import XYOracle, XYStatic
from banditkit.policies.index.kl_ucb import KLUCB
from banditkit.policies.index.thompson import ThompsonSampling
from banditkit.policies.index.ucb import UCB1
from banditkit.policies.linear.oful import OFUL
from banditkit.policies.linear.thompson import LinearThompson
from banditkit.protocol import Algorithm, Batch
from banditkit.rng import derive_seed, stream

BERN = BernoulliBandit(np.array([0.5, 0.45, 0.3, 0.62]))
GAUSS = GaussianBandit(np.array([0.1, 0.3, 0.2]), sigma=0.5)
SOARE = make_instance("soare", d=3, omega=0.2)
_X = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.2, 0.4]])
LIN_BERN = LinearBandit(_X, np.array([0.55, 0.35]), noise="bernoulli")


def _fws(env, rng):
    return FrankWolfeSampling(env.X, env.Z, 0.1, threshold="heuristic")


#: name → (factory(env, rng), env, horizon, the engine expected with numba / without)
CASES = {
    "UCB1": (lambda e, r: UCB1(e.n_arms), BERN, 1500, ("compiled kernel", "lock-step")),
    "KLUCB": (lambda e, r: KLUCB(e.n_arms, c=3.0), BERN, 1500,
              ("compiled kernel", "lock-step")),
    "KLUCB-gaussian": (lambda e, r: KLUCB(e.n_arms, divergence="gaussian", sigma=0.5,
                                          reward_range=None), GAUSS, 1200,
                       ("compiled kernel", "lock-step")),
    "TS-beta": (lambda e, r: ThompsonSampling(e.n_arms, r), BERN, 1500,
                ("compiled kernel", "lock-step")),
    "TS-gaussian": (lambda e, r: ThompsonSampling(e.n_arms, r, posterior="gaussian",
                                                  sigma=0.5, reward_range=None), GAUSS, 1200,
                    ("compiled kernel", "lock-step")),
    "OFUL": (lambda e, r: OFUL(e.X, reward_range=(0.0, 1.0)), LIN_BERN, 800,
             ("compiled kernel", "lock-step")),
    "LinTS": (lambda e, r: LinearThompson(e.X, r, v=1.0, horizon=800,
                                          reward_range=(0.0, 1.0)), LIN_BERN, 800,
              ("compiled kernel", "lock-step")),
    "TrackAndStop": (lambda e, r: LinearTrackAndStop(e.X, e.Z, 0.1, threshold="heuristic"),
                     SOARE, 20_000, ("compiled kernel", "blocks")),
    "TrackAndStop-D-paper": (lambda e, r: LinearTrackAndStop(e.X, e.Z, 0.1, tracking="D"),
                             SOARE, 20_000, ("compiled kernel", "blocks")),
    "FWS": (_fws, SOARE, 20_000, ("compiled kernel", None)),
    "LinGame": (lambda e, r: LinGame(e.X, e.Z, 0.1, threshold="heuristic"), SOARE, 20_000,
                ("compiled kernel", None)),
    "LinGapE": (lambda e, r: LinGapE(e.X, e.Z, 0.1, theta_bound=2.0), SOARE, 20_000,
                ("blocks", "blocks")),
    "XYStatic": (lambda e, r: XYStatic(e.X, e.Z, 0.1, rng=r), SOARE, 60_000,
                 ("blocks", "blocks")),
    "XYOracle": (lambda e, r: XYOracle(e.X, e.Z, 0.1, e.theta, rng=r), SOARE, 60_000,
                 ("blocks", "blocks")),
    "GBAI": (lambda e, r: GBAI(e.X, e.Z, 600, rng=r), SOARE, 600, ("lock-step", "lock-step")),
    "TTTS-beta": (lambda e, r: TopTwoThompson(e.n_arms, r, delta=0.1), BERN, 4000,
                  ("compiled kernel", None)),
    "TTTS-gaussian": (lambda e, r: TopTwoThompson(e.n_arms, r, delta=0.1, posterior="gaussian",
                                                  sigma=0.5), GAUSS, 4000,
                      ("compiled kernel", None)),
    "KLLUCB-bernoulli": (lambda e, r: KLLUCB(e.n_arms, 0.1), BERN, 6000,
                         ("compiled kernel", None)),
    "KLLUCB-gaussian-heuristic": (lambda e, r: KLLUCB(e.n_arms, 0.1, threshold="heuristic",
                                                      model="gaussian", sigma=0.5), GAUSS,
                                  6001, ("compiled kernel", None)),
    "LUCB1": (lambda e, r: LUCB(e.n_arms, 0.1), BERN, 6001, ("compiled kernel", None)),
    "KArmedTaS-D": (lambda e, r: KArmedTrackAndStop(e.n_arms, 0.1), BERN, 6000,
                    ("compiled kernel", None)),
    "KArmedTaS-D-heuristic": (lambda e, r: KArmedTrackAndStop(e.n_arms, 0.1,
                                                              threshold="heuristic"), BERN,
                              6000, ("compiled kernel", None)),
    "KArmedTaS-C-gaussian": (lambda e, r: KArmedTrackAndStop(e.n_arms, 0.1, tracking="C",
                                                             model="gaussian", sigma=0.5),
                             GAUSS, 6000, ("compiled kernel", None)),
    "EBTC-bernoulli": (lambda e, r: EBTC(e.n_arms, 0.1, sigma=0.5), BERN, 6000,
                       ("compiled kernel", None)),
    "EBTC-gaussian-heuristic": (lambda e, r: EBTC(e.n_arms, 0.1, sigma=0.5, epsilon0=0.0,
                                                  threshold="heuristic"), GAUSS, 6000,
                                ("compiled kernel", None)),
}


def _facts(trial) -> list:
    """What must agree bit for bit (not ``seconds``, nor how the log groups pulls into
    batches: a lock-step engine records the sequence as one batch)."""
    arms, counts = trial.decisions.runs()
    return [trial.n_pulls, trial.counts.tolist(), arms.tolist(), counts.tolist(),
            None if trial.regret is None else trial.regret.tolist(),
            None if trial.violation is None else trial.violation.tolist(),
            trial.recommendation, trial.correct, trial.stopped]


def engine_of(name: str) -> str | None:
    """The name of the engine ``simulate`` picks for case ``name`` (None: the protocol loop)."""
    factory, env, horizon, _ = CASES[name]
    engine = factory(env, stream(7, name, "algorithm")).engine(env, horizon)
    return None if engine is None else engine.name


def compare(name: str, n_trials: int = 3) -> dict:
    """The engine each call took and whether it matched the protocol loop (for the
    subprocess as well as the tests)."""
    factory, env, horizon, _ = CASES[name]
    xi = stream(7, name, "algorithm")
    probe = factory(env, xi)
    engine = probe.engine(env, horizon)
    out = {"engine": None if engine is None else engine.name, "single": True, "trials": True}
    for k in range(2):
        seed = derive_seed(11, k)
        a = factory(env, stream(7, name, k, "algorithm"))
        b = factory(env, stream(7, name, k, "algorithm"))
        fast = simulate(a, env, horizon=horizon, seed=seed)
        slow = simulate(b, env, horizon=horizon, seed=seed, engine="reference")
        out["single"] &= _facts(fast) == _facts(slow)
    fast_all = simulate_trials(factory, env, n_trials=n_trials, seed=5, horizon=horizon)
    slow_all = simulate_trials(factory, env, n_trials=n_trials, seed=5, horizon=horizon,
                               engine="reference")
    out["trials"] = [_facts(t) for t in fast_all] == [_facts(t) for t in slow_all]
    out["distinct"] = len({json.dumps(_facts(t)) for t in slow_all}) > 1 or name.startswith(
        ("XY", "LinGapE", "TrackAndStop", "FWS", "LinGame"))
    return out


@pytest.mark.parametrize("horizon", [100, 101])
def test_kl_lucbs_kernel_cuts_its_last_batch_at_the_horizon_as_simulate_does(horizon):
    """K = 4 and two pulls a round: T = 101 cuts the last batch to h_t, T = 100 does not."""
    alg = KLLUCB(4, 0.1)
    if jit.available():
        assert alg.engine(BERN, horizon).name == "compiled kernel"
    fast = simulate(alg, BERN, horizon=horizon, seed=4)
    slow = simulate(KLLUCB(4, 0.1), BERN, horizon=horizon, seed=4, engine="reference")
    assert _facts(fast) == _facts(slow) and fast.n_pulls == horizon and not fast.stopped
    assert fast.decisions.n_batches == slow.decisions.n_batches
    assert fast.info == slow.info  # rounds and the last gap


@pytest.mark.parametrize("tracking", ["D", "C"])
def test_k_armed_track_and_stops_kernel_keeps_the_class_state(tracking):
    """Forced pulls, the last statistic, w* and C-tracking's running sum: the kernel leaves the
    algorithm as the protocol loop does (GK16's μ₁, Bernoulli)."""
    env = BernoulliBandit(np.array([0.5, 0.45, 0.43, 0.4]))
    fast_alg, slow_alg = (KArmedTrackAndStop(4, 0.2, tracking=tracking) for _ in range(2))
    if jit.available():
        assert fast_alg.engine(env, 50_000).name == "compiled kernel"
    fast = simulate(fast_alg, env, horizon=50_000, seed=8)
    slow = simulate(slow_alg, env, horizon=50_000, seed=8, engine="reference")
    assert _facts(fast) == _facts(slow) and fast.stopped
    assert fast.info == slow.info and (tracking == "C" or fast.info["forced"] > 0)
    assert fast_alg.weights.tolist() == slow_alg.weights.tolist()
    assert fast_alg._cum.tolist() == slow_alg._cum.tolist()


def test_ebtcs_kernel_stops_on_the_first_batch_as_the_loop_does():
    """A gap so wide that the Chernoff rule fires once every arm has been pulled once: the
    kernel checks the rule after the first batch, as the class does after every batch."""
    env = GaussianBandit(np.array([0.0, 10.0]), sigma=1.0)
    alg = EBTC(2, 0.5)
    if jit.available():
        assert alg.engine(env, 100).name == "compiled kernel"
    fast = simulate(alg, env, horizon=100, seed=3)
    slow = simulate(EBTC(2, 0.5), env, horizon=100, seed=3, engine="reference")
    assert _facts(fast) == _facts(slow)
    assert fast.n_pulls == 2 and fast.stopped and fast.recommendation == 1


#: The K-armed identifiers' kernels, each with its own budget ``horizon=own`` (δ so small that
#: the rule never stops within ~100 pulls: only the budget or the simulation's horizon ends a run)
BUDGETED = {
    "TTTS": lambda own: TopTwoThompson(3, stream(9, "budget", "algorithm"), delta=1e-9,
                                       horizon=own),
    "EBTC": lambda own: EBTC(3, 1e-9, sigma=0.5, horizon=own),
    "KLLUCB": lambda own: KLLUCB(3, 1e-9, horizon=own),
    "LUCB1": lambda own: LUCB(3, 1e-9, horizon=own),
    "KArmedTrackAndStop-D": lambda own: KArmedTrackAndStop(3, 1e-9, horizon=own),
    "KArmedTrackAndStop-C": lambda own: KArmedTrackAndStop(3, 1e-9, tracking="C", horizon=own),
}


@pytest.mark.parametrize("name", sorted(BUDGETED))
@pytest.mark.parametrize("own,cap", [(60, 60), (61, 61), (60, 80), (61, 80), (60, None),
                                     (80, 61), (None, 61)])
def test_the_k_armed_kernels_end_a_budget_as_the_protocol_loop_does(name, own, cap):
    """A run the algorithm's own budget ends has stopped, one the simulation's horizon ends has
    not: at own = cap (the comparison's boundary) the horizon ended it. K = 3 and (KL-)LUCB's
    rounds of two pulls make t odd, so an even budget cuts its last pair to h_t."""
    env = BernoulliBandit(np.array([0.5, 0.45, 0.43]))
    build = BUDGETED[name]
    if jit.available() and not (name == "LUCB1" and cap is None):  # LUCB1: finite caps only
        assert build(own).engine(env, cap).name == "compiled kernel"
    fast = simulate(build(own), env, horizon=cap, seed=6)
    slow = simulate(build(own), env, horizon=cap, seed=6, engine="reference")
    assert _facts(fast) == _facts(slow) and fast.info == slow.info
    caps = [c for c in (own, cap) if c is not None]
    assert fast.n_pulls == min(caps)  # never past the budget, even mid-round
    assert fast.stopped == (own is not None and (cap is None or own < cap))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_default_engine_gives_the_protocol_loops_trial(name):
    result = compare(name)
    expected = CASES[name][3][0 if jit.available() else 1]
    assert result["engine"] == expected
    assert result["single"], f"{name}: simulate's engine differs from the protocol loop"
    assert result["trials"], f"{name}: simulate_trials differs from the protocol loop"
    assert result["distinct"]  # the trials differ from each other: streams are per trial


_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
from banditkit import jit
from test_engines import CASES, compare, engine_of
# the trials are compared where numba's absence changes the engine (a kernel's numpy twin);
# where it leaves the engine (blocks) or takes the protocol loop (None), the parametrised
# test above compares the same code already: only the engine chosen is checked
print(json.dumps({{"jit": jit.available(), "numba": "numba" in sys.modules,
                  "cases": {{n: compare(n, 2) if CASES[n][3][1] not in (None, CASES[n][3][0])
                            else {{"engine": engine_of(n), "single": True, "trials": True}}
                            for n in CASES}}}}))
"""


def test_without_numba_the_engines_still_give_the_protocol_loops_trial():
    env = {**os.environ, "BANDITKIT_JIT": "0"}
    run = subprocess.run([sys.executable, "-c", _SCRIPT.format(tests=str(Path(__file__).parent))],
                         env=env, capture_output=True, text=True, timeout=600, check=True)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["jit"] is False and out["numba"] is False
    for name, result in out["cases"].items():
        assert result["engine"] == CASES[name][3][1], name
        assert result["single"] and result["trials"], name


def test_a_used_algorithm_and_reference_take_the_protocol_loop():
    calls = []

    class Counting(UCB1):
        def engine(self, env, horizon):
            calls.append(1)
            return super().engine(env, horizon)

    a = Counting(BERN.n_arms)
    simulate(a, BERN, horizon=50, seed=0, engine="reference")
    assert calls == [] and a.t == 50  # the loop ran the object itself
    b = Counting(BERN.n_arms)
    b.observe(b.next_batch(), np.array([1.0]))  # not fresh any more
    simulate(b, BERN, horizon=50, seed=0)
    assert calls == []
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate(UCB1(4), BERN, horizon=10, engine="kernel")


def test_an_engine_is_what_the_algorithm_declares():
    seen = []

    def run(algorithm, env, *, horizon, seed, checkpoints):
        seen.append((type(algorithm).__name__, horizon))
        return simulate(algorithm, env, horizon=horizon, seed=seed, checkpoints=checkpoints,
                        engine="reference")

    class Declared(UCB1):
        def engine(self, env, horizon):
            return Engine("mine", run=run)

    simulate(Declared(4), BERN, horizon=30, seed=1)
    assert seen == [("Declared", 30)]
    # a subclass of an index policy keeps the lock-step runner, never a class's kernel
    assert Declared.engines == UCB1.engines
    with pytest.raises(ValueError, match="needs run or run_trials"):
        Engine("nothing")


class _OneArm(Algorithm):
    """Pulls arm 0 for ever: no engine declared."""

    def _next_batch(self):
        return Batch.single(0)

    def _observe(self, batch, rewards, costs):
        pass


def test_an_algorithm_without_engines_runs_the_loop_and_trials_are_refused_before_work():
    assert _OneArm(2).engine(BERN, 10) is None
    trials = simulate_trials(lambda e, r: _OneArm(e.n_arms), BERN, n_trials=2, horizon=20)
    assert [t.counts.tolist() for t in trials] == [[20, 0, 0, 0]] * 2
    with pytest.raises(ValueError, match="seeds must hold one entry per trial"):
        simulate_trials(lambda e, r: UCB1(e.n_arms), BERN, n_trials=3, horizon=20,
                        seeds=[1, 2])
    with pytest.raises(ValueError, match="simulate needs a horizon"):
        simulate_trials(lambda e, r: UCB1(e.n_arms), BERN, n_trials=2)


def test_simulate_trials_streams_are_the_documented_ones():
    factory = partial(lambda e, r: ThompsonSampling(e.n_arms, r))
    trials = simulate_trials(factory, BERN, n_trials=2, seed=3, horizon=300)
    ref = simulate(ThompsonSampling(4, stream(3, "trials", 1, "algorithm")), BERN, horizon=300,
                   seed=derive_seed(3, "trials", 1, 1), engine="reference")
    assert _facts(trials[1]) == _facts(ref)


def test_without_a_compiled_kernel_one_trial_takes_the_lockstep_unless_seeded_by_a_generator(
        monkeypatch):
    monkeypatch.setattr(jit, "available", lambda: False)
    engine = UCB1(4).engine(BERN, 500)
    assert engine.name == "lock-step" and engine.run is None
    calls = []
    original = engine.run_trials

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(UCB1, "engine", lambda self, env, horizon: Engine(
        "lock-step", run_trials=counting))
    seeded = simulate(UCB1(4), BERN, horizon=500, seed=4)
    assert calls == [1]
    assert _facts(seeded) == _facts(simulate(UCB1(4), BERN, horizon=500, seed=4,
                                             engine="reference"))
    # a Generator the caller keeps must end where the loop leaves it: the loop runs
    mine, theirs = np.random.default_rng(9), np.random.default_rng(9)
    simulate(UCB1(4), BERN, horizon=500, seed=mine)
    simulate(UCB1(4), BERN, horizon=500, seed=theirs, engine="reference")
    assert calls == [1] and mine.random() == theirs.random()
