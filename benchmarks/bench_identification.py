"""Seconds per trial of the RAGE paper's identifiers (Fiez et al., NeurIPS 2019, Section 5).

Algorithms: RAGE, XY-static, XY-oracle, XY-adaptive, LinGapE, ALBA, each at δ = 0.05 with the
paper's constants (the factories of ``banditkit.experiments.figures.rage``), on the Soare et al.
benchmark soare(d) for d = 5, 10, 35 and on multivariate_testing(D = 6). Each trial is one
``simulate`` call, except LinGapE's, which goes through the block driver
``simulate_lingape`` as in the figures (same decisions; ``--lingape-sequential`` times the
sequential class through ``simulate`` instead). RAGE and the XY
allocations memoise designs, and XY-adaptive its greedy phases, per process, so the first trial
on an instance ("cold s") is reported apart from the mean over the following ones ("s/trial",
warm; with --trials 1 both are the one trial).

XY-static and XY-oracle run through their phase-chunk driver ``simulate_static_allocation``
(same decisions; ``--xy-sequential`` times them through ``simulate``). Track-and-Stop (paper
and heuristic thresholds) runs through its block driver ``simulate_track_and_stop``, Frank-Wolfe
Sampling through ``simulate``; "us/pull" is the warm seconds per trial over the mean pulls.

Run:  .venv/bin/python benchmarks/bench_identification.py [--trials 3] [--quick]
                     [--only RAGE,XY-static] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from banditkit.envs.instances import make_instance
from banditkit.experiments.figures import rage as fig
from banditkit.identification import rage, xy
from banditkit.identification.fw_sampling import make_fw_sampling
from banditkit.identification.lingape import make_lingape
from banditkit.identification.lingape_blocks import simulate_lingape
from banditkit.identification.track_and_stop import make_track_and_stop
from banditkit.identification.track_and_stop_blocks import simulate_track_and_stop
from banditkit.identification.xy_blocks import simulate_static_allocation
from banditkit.rng import stream
from banditkit.simulate import simulate

FACTORIES = {
    "RAGE": fig.make_rage,
    "XY-static": fig.make_xy_static,
    "XY-oracle": fig.make_xy_oracle,
    "XY-adaptive": fig.make_xy_adaptive,
    "LinGapE": make_lingape,
    "ALBA": fig.make_alba,
    # asymptotically optimal identifiers (GLR stopping; issue 18)
    "TaS": make_track_and_stop,
    "TaS-heur": lambda env, rng, *, delta: make_track_and_stop(env, rng, delta=delta,
                                                              threshold="heuristic"),
    "FWS-heur": lambda env, rng, *, delta: make_fw_sampling(env, rng, delta=delta,
                                                           threshold="heuristic"),
}
HORIZON = 500_000_000


def instances(quick: bool, seed: int):
    for d in (5, 10) if quick else (5, 10, 35):
        yield f"soare(d={d})", make_instance("soare", d=d)
    D = 4 if quick else 6
    yield f"multivariate_testing({D})", make_instance(
        "multivariate-testing", D=D, rng=stream(seed, "bench", "instance"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller instances")
    parser.add_argument("--only", default="", help="comma-separated algorithm names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lingape-sequential", action="store_true",
                        help="run LinGapE through simulate instead of its block driver")
    parser.add_argument("--xy-sequential", action="store_true",
                        help="run XY-static/XY-oracle through simulate instead of their driver")
    args = parser.parse_args()
    runners = {} if args.lingape_sequential else {"LinGapE": simulate_lingape}
    if not args.xy_sequential:
        runners.update({"XY-static": simulate_static_allocation,
                        "XY-oracle": simulate_static_allocation})
    runners.update({"TaS": simulate_track_and_stop, "TaS-heur": simulate_track_and_stop})
    names = [n for n in FACTORIES if not args.only or n in args.only.split(",")]
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}"
          f", numpy {np.__version__}; {args.trials} trials, seed {args.seed}")
    print(f"{'instance':<26} {'algorithm':<12} {'s/trial':>9} {'cold s':>8} {'pulls':>11} "
          f"{'pulls/s':>10} {'correct':>8} {'us/pull':>8}")
    for label, env in instances(args.quick, args.seed):
        for name in names:
            for memo in (xy.PATH_MEMO, xy.DESIGN_MEMO, rage.DESIGN_MEMO):
                memo.clear()  # every algorithm starts cold on every instance
            secs, pulls, correct = [], [], 0
            for trial in range(args.trials):
                alg = FACTORIES[name](env, stream(args.seed, label, trial, "algorithm"),
                                      delta=0.05)
                t0 = time.perf_counter()
                run = runners.get(name, simulate)
                tr = run(alg, env, seed=stream(args.seed, label, trial, "environment"),
                         horizon=HORIZON)
                secs.append(time.perf_counter() - t0)
                pulls.append(tr.n_pulls)
                correct += bool(tr.correct)
            warm = secs[1:] if len(secs) > 1 else secs
            print(f"{label:<26} {name:<12} {np.mean(warm):>9.3f} {secs[0]:>8.2f} "
                  f"{np.mean(pulls):>11.4g} {np.sum(pulls) / np.sum(secs):>10.3g} "
                  f"{correct:>5}/{args.trials} "
                  f"{1e6 * np.mean(warm) / np.mean(pulls[-len(warm):]):>8.3g}", flush=True)


if __name__ == "__main__":
    main()
