"""Seconds per trial of the P1-RAGE paper's identifiers (Xiong et al., Section 6 and
Appendix D): G-BAI (Algorithm 1), P1-RAGE (Algorithms 2–3, m = 15), P1-Peace
(Algorithms 4–5), Mixed-Peace (Algorithm 6), Peace and OD-LinBAI, at the paper's budget
T = 10⁴.

Instances: Soare et al.'s benchmark soare(d = 10, ω = 0.1) (Fig. 2a), the oscillating
multivariate testing of Fig. 3 (``oscillating-multivariate``, D = 4 as in the authors' code:
16 layouts, d = 11; s = 2, L = 900) and its stationary version (``p1-multivariate-testing``,
Fig. 5), each a fixed instance drawn once, as in the figures; with ``--per-trial`` the
multivariate instances get a new θ* per trial (no design is ever reused across trials, the
worst case).
G-BAI runs through ``simulate`` and through its lock-step driver ``gbai_lockstep`` (all
trials in one call). P1-RAGE and P1-Peace memoise the designs of virtual item sets per
process, so the first trial ("cold s", memos cleared before it) is reported apart from the
mean over the others ("s/trial", warm). For reference, the authors' code takes about 2.1 s
per P1-RAGE trial and 0.15 s per G-BAI trial.

Run:  .venv/bin/python benchmarks/bench_p1.py [--trials 50] [--budget 10000] [--only P1-RAGE]
                     [--per-trial] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.identification import item_designs
from banditkit.identification.g_bai import GBAI, gbai_lockstep
from banditkit.identification.od_linbai import ODLinBAI
from banditkit.identification.p1 import P1RAGE, P1Peace
from banditkit.identification.peace import MixedPeace, Peace
from banditkit.rng import derive_seed, stream
from banditkit.simulate import simulate

ALGORITHMS = {
    "G-BAI": lambda env, rng, T: GBAI(env.X, env.Z, T, rng=rng),
    "P1-RAGE": lambda env, rng, T: P1RAGE(env.X, env.Z, T, m=15, rng=rng),
    "P1-Peace": lambda env, rng, T: P1Peace(env.X, env.Z, T, rng=rng),
    "Mixed-Peace": lambda env, rng, T: MixedPeace(env.X, env.Z, T, rng=rng),
    "Peace": lambda env, rng, T: Peace(env.X, env.Z, T, rng=rng),
    "OD-LinBAI": lambda env, rng, T: ODLinBAI(env.X, None, T, rng=rng),
}


def instances(seed: int, per_trial: bool, T: int):
    """(label, env_for_trial) pairs: a function of the trial index."""
    soare = make_instance("soare", d=10, omega=0.1)
    yield "soare(d=10, ω=0.1)", lambda trial: soare
    for label, name, params in (
            ("osc-multivariate(D=4,s=2,L=900)", "oscillating-multivariate",
             {"D": 4, "s": 2.0, "L": 900, "T": T}),
            ("p1-multivariate(D=4)", "p1-multivariate-testing", {"D": 4})):
        fixed = make_instance(name, rng=stream(seed, "bench-p1", "instance"), **params)
        if per_trial:
            yield f"{label}, θ* per trial", (
                lambda trial, name=name, params=params: make_instance(
                    name, rng=stream(seed, "bench-p1", trial, "instance"), **params))
        else:
            yield label, (lambda trial, fixed=fixed: fixed)


def clear_memos() -> None:
    item_designs.G_DESIGNS.clear()
    item_designs.ITEM_DESIGNS.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--budget", type=int, default=10_000)
    parser.add_argument("--only", default="", help="comma-separated algorithm names")
    parser.add_argument("--per-trial", action="store_true",
                        help="a new multivariate instance per trial")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    T, n = args.budget, args.trials
    names = [a for a in ALGORITHMS if not args.only or a in args.only.split(",")]
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}"
          f", numpy {np.__version__}; T = {T}, {n} trials, seed {args.seed}")
    print(f"{'instance':<42} {'algorithm':<18} {'s/trial':>9} {'cold s':>8} {'error':>7}")
    for label, env_of in instances(args.seed, args.per_trial, T):
        for name in names:
            clear_memos()
            secs, wrong = [], 0
            for trial in range(n):
                env = env_of(trial)
                rng = stream(args.seed, label, trial, "algorithm")
                t0 = time.perf_counter()
                result = simulate(ALGORITHMS[name](env, rng, T), env,
                                  seed=derive_seed(args.seed, label, trial, 1))
                secs.append(time.perf_counter() - t0)
                wrong += not result.correct
            warm = float(np.mean(secs[1:])) if n > 1 else secs[0]
            print(f"{label:<42} {name:<18} {warm:9.4f} {secs[0]:8.4f} {wrong / n:7.3f}")
        if "G-BAI" in names:
            clear_memos()
            envs = [env_of(trial) for trial in range(n)]
            rngs = [stream(args.seed, label, trial, "algorithm") for trial in range(n)]
            seeds = [derive_seed(args.seed, label, trial, 1) for trial in range(n)]
            t0 = time.perf_counter()
            results = gbai_lockstep(envs, rngs, seeds, T, None, budget=T)
            per = (time.perf_counter() - t0) / n
            wrong = sum(not r.correct for r in results)
            print(f"{label:<42} {'G-BAI (lockstep)':<18} {per:9.4f} {'':>8} {wrong / n:7.3f}")


if __name__ == "__main__":
    # one BLAS thread, set once as the runner sets it once per task (setting it costs ~1.5 ms)
    with single_threaded_blas():
        main()
