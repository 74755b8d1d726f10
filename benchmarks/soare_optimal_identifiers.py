"""Sample complexity of the asymptotically optimal linear identifiers against RAGE on the Soare
et al. benchmark (ω = 0.01, δ = 0.05): Track-and-Stop (Jedra & Proutière 2020) and Frank-Wolfe
Sampling (Wang, Tzeng & Proutière 2021), each with the paper threshold and the heuristic
log((1 + log t)/δ) of their experiments.

Every algorithm sees the same noise in trial i (common random numbers: the environment stream
is keyed by (seed, d, trial) only). Prints, per (d, algorithm): trials, mean pulls with a 95%
interval (mean ± 1.96 s/√n), min–max, trials correct (and which trials were wrong), seconds
per trial and microseconds per pull (wall clock, an upper bound on a shared machine).

Run:  .venv/bin/python benchmarks/soare_optimal_identifiers.py [--trials 20] [--d 5,10]
          [--only RAGE,TaS-heuristic] [--seed 0] [--per-trial]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from banditkit.identification.linear_glr_run import simulate_fw_sampling, simulate_lingame
from banditkit.identification.track_and_stop_blocks import simulate_track_and_stop

from banditkit.envs.instances import make_instance
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.lingame import LinGame
from banditkit.identification.rage import RAGE
from banditkit.identification.track_and_stop import LinearTrackAndStop
from banditkit.rng import stream
from banditkit.simulate import simulate

DELTA = 0.05
ALGORITHMS = {
    "RAGE": (lambda env, rng: RAGE(env.X, env.Z, DELTA, 0.1, rng=rng), simulate),
    "TaS-paper": (lambda env, rng: LinearTrackAndStop(env.X, env.Z, DELTA),
                  simulate_track_and_stop),
    "TaS-heuristic": (lambda env, rng: LinearTrackAndStop(env.X, env.Z, DELTA,
                                                          threshold="heuristic"),
                      simulate_track_and_stop),
    "FWS-heuristic": (lambda env, rng: FrankWolfeSampling(env.X, env.Z, DELTA,
                                                          threshold="heuristic"),
                      simulate_fw_sampling),
    "FWS-paper": (lambda env, rng: FrankWolfeSampling(env.X, env.Z, DELTA),
                  simulate_fw_sampling),
    # the four choices of Wang, Tzeng & Proutière's public code (fw_sampling's docstring);
    # not the kernel's: simulate's loop
    "FWS-heuristic-code": (lambda env, rng: FrankWolfeSampling(
        env.X, env.Z, DELTA, threshold="heuristic", tracking="ratio", step="t", forced="code",
        start="uniform"), simulate_fw_sampling),
    "LinGame-heuristic": (lambda env, rng: LinGame(env.X, env.Z, DELTA, threshold="heuristic"),
                          simulate_lingame),
    "LinGame-paper": (lambda env, rng: LinGame(env.X, env.Z, DELTA), simulate_lingame),
    # the paper threshold with u = 0.1, the value in Jedra & Proutière's public LT&S code
    "TaS-paper-u0.1": (lambda env, rng: LinearTrackAndStop(env.X, env.Z, DELTA, u=0.1),
                       simulate_track_and_stop),
}
THRESHOLD = {"RAGE": "RAGE's own elimination (eps = 0.1)",
             "paper": "paper: (1+u) log(det(I + A_t/(uc))^(1/2)/delta), u = 1 (u = 0.1 where "
                      "named), c = lambda_min(A_0)",
             "heuristic": "heuristic: log((1 + log t)/delta)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--d", default="5,10")
    parser.add_argument("--only", default="")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--omega", type=float, default=0.01)
    parser.add_argument("--per-trial", action="store_true",
                        help="also print every trial (pulls, correct) to stderr as it ends")
    args = parser.parse_args()
    names = [n for n in ALGORITHMS if not args.only or n in args.only.split(",")]
    print(f"# soare(d, omega={args.omega}), delta={DELTA}, seed {args.seed}, "
          f"{args.trials} trials")
    for text in THRESHOLD.values():
        print(f"# threshold {text}")
    print(f"{'d':>3} {'algorithm':<17} {'n':>3} {'mean pulls':>11} {'95% interval':>23} "
          f"{'min':>9} {'max':>9} {'correct':>8} {'s/trial':>8} {'us/pull':>8}")
    for d in (int(v) for v in args.d.split(",")):
        env = make_instance("soare", d=d, omega=args.omega)
        for name in names:
            make, run = ALGORITHMS[name]
            pulls, correct, secs, wrong = [], 0, [], []
            for trial in range(args.trials):
                alg = make(env, stream(args.seed, "soare", d, trial, "algorithm"))
                t0 = time.perf_counter()
                tr = run(alg, env, seed=stream(args.seed, "soare", d, trial, "environment"),
                         horizon=500_000_000)
                secs.append(time.perf_counter() - t0)
                pulls.append(tr.n_pulls)
                correct += bool(tr.correct)
                if not tr.correct:
                    wrong.append(trial)
                if args.per_trial:
                    print(f"{d} {name} trial {trial}: {tr.n_pulls} pulls, correct "
                          f"{bool(tr.correct)}, {secs[-1]:.2f} s", file=sys.stderr, flush=True)
            p = np.asarray(pulls, dtype=float)
            half = 1.96 * p.std(ddof=1) / np.sqrt(p.size) if p.size > 1 else float("nan")
            print(f"{d:>3} {name:<17} {p.size:>3} {p.mean():>11.4g} "
                  f"[{p.mean() - half:>10.4g}, {p.mean() + half:>10.4g}] {p.min():>9.4g} "
                  f"{p.max():>9.4g} {correct:>5}/{p.size:<3} {np.mean(secs):>8.2f} "
                  f"{1e6 * np.sum(secs) / p.sum():>8.2f}"
                  + (f"  wrong trials: {wrong}" if wrong else ""), flush=True)


if __name__ == "__main__":
    main()
