"""Per-pull CPU of ``simulate`` (the algorithm's own engine, chosen by the façade) against the
engine called directly and against the protocol loop (``engine="reference"``), per algorithm.

    .venv/bin/python benchmarks/bench_simulate.py [--repeats 3] [--quick] [--only UCB1,FWS]

What is timed (CPU seconds, ``time.process_time``, one BLAS thread, after a warm-up call so that
compiling or loading a kernel is not counted):

* ``simulate``: ``simulate(algorithm, env, horizon=T, seed=s)``: validation, the engine
  declaration, the engine, the Trial;
* ``engine``: ``algorithm.engine(env, T).run(algorithm, env, ...)`` (what ``simulate`` calls),
  or for a lock-step-only engine ``run_trials`` of one trial; ``-`` when the algorithm declares
  no engine for this pair (it then takes the protocol loop);
* ``loop``: ``simulate(..., engine="reference")``, the protocol loop, on a horizon capped at
  ``--loop-cap`` pulls (its per-pull cost does not depend on the horizon).

Each is µs per pull: total CPU over total pulls of ``--repeats`` trials (seeds 0, 1, ...; the
same trials for ``simulate`` and ``engine``). ``simulate / engine`` is the façade's overhead
(goal ≤ 2); ``loop / simulate`` what the engine saves. The script also checks that ``simulate``
and the loop agree on the capped trials (the first repeat). The instances: Bernoulli arms of
Appendix H (6 arms 0.44...0.59) for the K-armed regret policies, 20 Gaussian unit arms in d = 5
for OFUL and LinTS, Soare et al.'s instance (d = 5, ω = 0.01) for the linear identifiers, with
their heuristic thresholds, Bernoulli (0.5, 0.45, 0.42) at δ = 0.1 for top-two Thompson
sampling, and Garivier & Kaufmann's μ₁ = (0.5, 0.45, 0.43, 0.4) at δ = 0.1 for EB-TC, KL-LUCB,
LUCB1 and K-armed Track-and-Stop.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from banditkit import jit, simulate
from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.identification import EBTC, KLLUCB, LUCB, KArmedTrackAndStop
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.lingame import LinGame
from banditkit.identification.top_two import TopTwoThompson
from banditkit.identification.track_and_stop import LinearTrackAndStop
from banditkit.policies import KLUCB, UCB1, ThompsonSampling
from banditkit.policies.linear.oful import OFUL
from banditkit.policies.linear.thompson import LinearThompson
from banditkit.rng import derive_seed, stream

APPENDIX_H = BernoulliBandit(np.array([0.44, 0.47, 0.5, 0.53, 0.56, 0.59]))
SOARE = make_instance("soare", d=5, omega=0.01)
GK16_MU1 = BernoulliBandit(np.array([0.5, 0.45, 0.43, 0.4]))  # Garivier & Kaufmann 2016, §6
TOP_TWO = BernoulliBandit(np.array([0.5, 0.45, 0.42]))


def _linear_regret_env() -> LinearBandit:
    g = np.random.default_rng(2026)
    X = g.standard_normal((20, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    theta = g.standard_normal(5)
    return LinearBandit(X, 0.5 * theta / np.linalg.norm(theta), sigma=0.5)


LINEAR = _linear_regret_env()
Factory = Callable[[object, np.random.Generator], object]

#: name → (factory(env, ξ), env, horizon)
CASES: dict[str, tuple[Factory, object, int]] = {
    "UCB1": (lambda e, r: UCB1(e.n_arms), APPENDIX_H, 45_000),
    "KL-UCB": (lambda e, r: KLUCB(e.n_arms), APPENDIX_H, 45_000),
    "TS (Beta)": (lambda e, r: ThompsonSampling(e.n_arms, r), APPENDIX_H, 45_000),
    "TS (Gaussian)": (lambda e, r: ThompsonSampling(e.n_arms, r, posterior="gaussian"),
                      APPENDIX_H, 45_000),
    "TTTS": (lambda e, r: TopTwoThompson(e.n_arms, r, delta=0.1), TOP_TWO, 20_000),
    "EB-TC": (lambda e, r: EBTC(e.n_arms, 0.1, sigma=0.5), GK16_MU1, 1_000_000),
    "KL-LUCB": (lambda e, r: KLLUCB(e.n_arms, 0.1), GK16_MU1, 1_000_000),
    "LUCB1": (lambda e, r: LUCB(e.n_arms, 0.1), GK16_MU1, 1_000_000),
    "K-armed TaS-D": (lambda e, r: KArmedTrackAndStop(e.n_arms, 0.1), GK16_MU1, 1_000_000),
    "OFUL": (lambda e, r: OFUL(e.X, reward_range=None), LINEAR, 20_000),
    "LinTS": (lambda e, r: LinearThompson(e.X, r, v=0.5, horizon=20_000, reward_range=None),
              LINEAR, 20_000),
    "Track-and-Stop": (lambda e, r: LinearTrackAndStop(e.X, e.Z, 0.05, threshold="heuristic"),
                       SOARE, 1_000_000),
    "FWS": (lambda e, r: FrankWolfeSampling(e.X, e.Z, 0.05, threshold="heuristic"), SOARE,
            1_000_000),
    "LinGame": (lambda e, r: LinGame(e.X, e.Z, 0.05, threshold="heuristic"), SOARE,
                1_000_000),
}


def measure(name: str, repeats: int, loop_cap: int, quick: bool) -> dict:
    factory, env, horizon = CASES[name]
    if quick:
        horizon = min(horizon, 5_000)
        loop_cap = min(loop_cap, 1_000)

    def build(i: int):
        return factory(env, stream(0, name, i, "algorithm"))

    def seed(i: int):
        return derive_seed(0, name, i, "environment")

    probe = build(0)
    engine = probe.engine(env, horizon)  # type: ignore[attr-defined]
    # warm-up: compile or load the kernels, fill per-process memos
    simulate(build(0), env, horizon=min(horizon, 2_000), seed=seed(0))  # type: ignore[arg-type]
    out: dict = {"kind": None if engine is None else engine.name}
    totals = {"simulate": [0.0, 0], "engine": [0.0, 0], "loop": [0.0, 0]}
    runs = {
        "simulate": lambda a, s: simulate(a, env, horizon=horizon, seed=s),
        "engine": None if engine is None else (lambda a, s: _direct(engine, a, env, horizon, s)),
        "loop": lambda a, s: simulate(a, env, horizon=loop_cap, seed=s, engine="reference"),
    }
    for i in range(repeats):
        for key, run in runs.items():
            if run is None:
                continue
            algorithm, noise = build(i), seed(i)  # built outside the timing
            t0 = time.process_time()
            trial = run(algorithm, noise)
            totals[key][0] += time.process_time() - t0
            totals[key][1] += trial.n_pulls
    for key, (cpu, pulls) in totals.items():
        out[key] = 1e6 * cpu / pulls if pulls else None
    capped = [simulate(build(0), env, horizon=loop_cap, seed=seed(0), engine=e)
              for e in ("auto", "reference")]
    out["same"] = capped[0].decisions.same_as(capped[1].decisions) and (
        capped[0].recommendation == capped[1].recommendation)
    out["pulls"] = totals["simulate"][1] / repeats
    return out


def _direct(engine, algorithm, env, horizon: int, seed):
    if engine.run is not None:
        return engine.run(algorithm, env, horizon=horizon, seed=seed, checkpoints=None)
    return engine.run_trials([algorithm], [env], [seed], horizon, None)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--loop-cap", type=int, default=20_000,
                        help="pulls of each protocol-loop trial (default 20,000)")
    parser.add_argument("--quick", action="store_true", help="short horizons (a smoke test)")
    parser.add_argument("--only", default="", help="comma-separated names of CASES")
    args = parser.parse_args()
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    print(f"# numba kernels {'on' if jit.available() else 'off'}; {args.repeats} trial(s) "
          f"per row, seeds 0..{args.repeats - 1}; CPU µs per pull, one BLAS thread")
    print(f"{'algorithm':<16} {'engine':<16} {'pulls':>9} {'simulate':>9} {'engine':>9} "
          f"{'loop':>9} {'sim/eng':>8} {'loop/sim':>9} {'same':>5}")
    with single_threaded_blas():
        for name in names:
            r = measure(name, args.repeats, args.loop_cap, args.quick)
            ratio = "-" if not r["engine"] else f"{r['simulate'] / r['engine']:.2f}"
            eng = "-" if r["engine"] is None else f"{r['engine']:.2f}"
            print(f"{name:<16} {r['kind'] or 'protocol loop':<16} {r['pulls']:>9.0f} "
                  f"{r['simulate']:>9.2f} {eng:>9} {r['loop']:>9.2f} {ratio:>8} "
                  f"{r['loop'] / r['simulate']:>9.1f} {r['same']!s:>5}")


if __name__ == "__main__":
    main()
