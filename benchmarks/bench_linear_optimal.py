"""Microseconds per pull of Track-and-Stop (Jedra & Proutière 2020) and Frank-Wolfe Sampling
(Wang, Tzeng & Proutière 2021) on the Soare benchmark (ω = 0.01, δ = 0.05), by engine:

* ``kernel``: the compiled drivers (``linear_glr_run``; numba), the default when numba is there;
* ``blocks``: Track-and-Stop's block driver (the previous default);
* ``python``: ``simulate``, one protocol step per pull (Frank-Wolfe Sampling's previous path).

LinGame (Degenne et al. 2020) is measured the same way (kernel and ``simulate``).

Each row runs the same trials (seeds ``stream(seed, "soare", d, trial, "environment")``, as
``soare_optimal_identifiers.py``), to stopping, or to ``--cap`` pulls for the slow engines;
the compile happens before timing. Wall-clock and CPU (process) time per pull are printed: on a
shared machine the wall clock is an upper bound, CPU time the closer figure.

Run:  PYTHONPATH=src .venv/bin/python benchmarks/bench_linear_optimal.py [--d 5,10]
          [--trials 3] [--threshold heuristic] [--cap 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

from banditkit.identification.linear_glr_run import simulate_fw_sampling, simulate_lingame
from banditkit.identification.track_and_stop_blocks import simulate_track_and_stop

from banditkit.envs.instances import make_instance
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.lingame import LinGame
from banditkit.identification.track_and_stop import LinearTrackAndStop
from banditkit.rng import stream

DELTA = 0.05
ROWS = (("TaS", "kernel"), ("TaS", "blocks"), ("TaS", "python"), ("FWS", "kernel"),
        ("FWS", "python"), ("LinGame", "kernel"), ("LinGame", "python"))
SLOW = {"python"}  # capped at --cap pulls


def _trial(name: str, engine: str, env, threshold: str, seed, horizon):
    if name == "TaS":
        alg = LinearTrackAndStop(env.X, env.Z, DELTA, threshold=threshold)
        return simulate_track_and_stop(alg, env, seed=seed, horizon=horizon, engine=engine)
    if name == "LinGame":
        game = LinGame(env.X, env.Z, DELTA, threshold=threshold)
        return simulate_lingame(game, env, seed=seed, horizon=horizon, engine=engine)
    alg = FrankWolfeSampling(env.X, env.Z, DELTA, threshold=threshold)
    return simulate_fw_sampling(alg, env, seed=seed, horizon=horizon, engine=engine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", default="5,10")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--threshold", default="heuristic", choices=("heuristic", "paper"))
    parser.add_argument("--cap", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="e.g. TaS:kernel,FWS:kernel")
    args = parser.parse_args()
    rows = [r for r in ROWS if not args.only or f"{r[0]}:{r[1]}" in args.only.split(",")]
    print(f"# soare(d, omega=0.01), delta={DELTA}, threshold {args.threshold}, seed {args.seed}, "
          f"{args.trials} trials; slow engines capped at {args.cap} pulls")
    print(f"{'d':>3} {'algorithm':<7} {'engine':<7} {'pulls':>9} {'stopped':>8} "
          f"{'wall us/pull':>13} {'cpu us/pull':>12}")
    for d in (int(v) for v in args.d.split(",")):
        env = make_instance("soare", d=d, omega=0.01)
        for name, engine in rows:
            _trial(name, engine, env, args.threshold, 1, 2 * d + 50)  # compile / warm up
            pulls = stopped = 0
            wall = cpu = 0.0
            for trial in range(args.trials):
                seed = stream(args.seed, "soare", d, trial, "environment")
                horizon = args.cap if engine in SLOW else None
                w0, c0 = time.perf_counter(), time.process_time()
                tr = _trial(name, engine, env, args.threshold, seed, horizon)
                wall += time.perf_counter() - w0
                cpu += time.process_time() - c0
                pulls += tr.n_pulls
                stopped += bool(tr.stopped)
            print(f"{d:>3} {name:<7} {engine:<7} {pulls:>9} {stopped:>4}/{args.trials:<3} "
                  f"{1e6 * wall / pulls:>13.2f} {1e6 * cpu / pulls:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
