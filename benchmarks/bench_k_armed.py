"""δ-correctness of the K-armed fixed-confidence identifiers at a large δ (issue 28 §3: "the
K-armed identifiers δ-correct, ≥ 500 trials at a large δ"), with their sample complexity beside
the lower bound T*(μ) kl(δ, 1 − δ) of Garivier & Kaufmann (2016, Theorem 1).

The identifiers are those of the figure ``garivier-kaufmann:bai``, with its factories
(:mod:`banditkit.experiments.figures.k_armed_bai`) and each paper's constants: Track-and-Stop
D- and C-tracking and top-two Thompson sampling (Russo 2016) and EB-TCε₀ (Jourdan, Degenne &
Kaufmann 2023; σ = ½) with the Chernoff rule at log(2t(K − 1)/δ) (GK16, Theorem 10); KL-LUCB
(Kaufmann & Kalyanakrishnan 2013; k₁ = 405.5, α = 1.1); LUCB1 (Kalyanakrishnan et al. 2012;
k₁ = 5/4); and TaS-D-heur and KL-LUCB-heur, with GK16's experimental threshold
log((log t + 1)/δ), which is not proved δ-correct. The last two are what GK16's Table 1 ran
(δ = 0.1, 3000 runs on μ₁ and μ₂):

    python benchmarks/bench_k_armed.py --trials 3000 --delta 0.1 --instances mu1 mu2 \
        --only TaS-D-heur KL-LUCB-heur

Trial i of algorithm A on instance I has ξ = stream(SEED, I, A, i, "algorithm") and noise seed
derive_seed(SEED, I, A, i, 1), and runs through ``simulate`` (each identifier's compiled kernel
when numba is there, bit for bit the protocol loop) in a process pool. "errors" counts wrong
recommendations among the runs that stopped; its 95% Wilson upper bound is what δ-correctness
is judged by (a rate ≤ δ is consistent with the 500 runs when the bound's interval contains a
value ≤ δ, i.e. its lower end is ≤ δ). CPU seconds are per process (``time.process_time``).

    python benchmarks/bench_k_armed.py --trials 500 --delta 0.2 --workers 2 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import stats

from banditkit import simulate
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.experiments.figures.k_armed_bai import (
    INSTANCES,
    make_ebtc,
    make_kl_lucb,
    make_tas,
    make_ttts,
)
from banditkit.identification import (
    KLLUCB,
    LUCB,
    ChernoffRacing,
    ComposedIdentifier,
    KArmedTrackAndStop,
    KLRacing,
)
from banditkit.identification.k_armed import (
    EBTC,
    BestChallengerSampling,
    FrankWolfe,
    LUCBSampling,
    TopTwo,
    Uniform,
)
from banditkit.identification.k_armed.oracle import lower_bound
from banditkit.identification.k_armed.rules import SamplingRule
from banditkit.identification.top_two import TopTwoThompson
from banditkit.intervals import wilson_interval
from banditkit.protocol import Algorithm
from banditkit.rng import derive_seed, stream

SEED = 28


def _lucb1(env: BernoulliBandit, rng: np.random.Generator, *, delta: float) -> LUCB:
    return LUCB(env.n_arms, delta)


def _composed(sampling: Callable[[], SamplingRule], threshold: str = "theory",
              first: bool = True) -> Callable[..., Algorithm]:
    def build(env: BernoulliBandit, rng: np.random.Generator, *, delta: float) -> Algorithm:
        return ComposedIdentifier(env.n_arms, delta, sampling=sampling(), threshold=threshold,
                                  rng=rng, each_arm_first=first)
    return build


#: name → factory(env, ξ, delta=δ); the figure's names
ALGORITHMS: dict[str, Callable[..., Algorithm]] = {
    "TaS-D": make_tas,
    "TaS-C": lambda env, rng, *, delta: make_tas(env, rng, delta=delta, tracking="C"),
    "TaS-D-heur": lambda env, rng, *, delta: make_tas(env, rng, delta=delta,
                                                      threshold="heuristic"),
    "TTTS": make_ttts,
    "EB-TC": make_ebtc,
    "KL-LUCB": make_kl_lucb,
    "KL-LUCB-heur": lambda env, rng, *, delta: KLLUCB(env.n_arms, delta, threshold="heuristic"),
    "LUCB1": _lucb1,
    # issue 36 §2: GK16 Table 1's other baselines, the lazy variants, new combinations
    "TaS-BC": _composed(BestChallengerSampling),
    "TaS-BC-heur": _composed(BestChallengerSampling, "heuristic"),
    "Chernoff-Racing": lambda env, rng, *, delta: ChernoffRacing(env.n_arms, delta),
    "Chernoff-Racing-heur": lambda env, rng, *, delta: ChernoffRacing(env.n_arms, delta,
                                                                      threshold="heuristic"),
    "KL-Racing": lambda env, rng, *, delta: KLRacing(env.n_arms, delta),
    "KL-Racing-heur": lambda env, rng, *, delta: KLRacing(env.n_arms, delta,
                                                          threshold="heuristic"),
    "TaS-D-lazy": lambda env, rng, *, delta: KArmedTrackAndStop(env.n_arms, delta,
                                                                lazy_ratio=1.5),
    "TTTS-lazy": lambda env, rng, *, delta: TopTwoThompson(env.n_arms, rng, delta=delta,
                                                           max_redraws=10),
    "EB-TCI": _composed(lambda: TopTwo("EB", "TCI")),
    "TS-TC": _composed(lambda: TopTwo("TS", "TC", selection="coin")),
    "uniform": _composed(Uniform),
    # issue 36 §2, the rest of the parts: KKT challenger, IDS β, Frank-Wolfe, LUCB's sampling
    # with the Chernoff stop, EB-TCε₀ on its paper's Gaussian threshold (σ = ½)
    "EB-KKT-IDS": _composed(lambda: TopTwo("EB", "KKT", beta="ids")),
    "EB-TC-IDS": _composed(lambda: TopTwo("EB", "TC", beta="ids")),
    "TTTS-IDS": _composed(lambda: TopTwo("TS", "TS", beta="ids", selection="coin"),
                          first=False),
    "FW": _composed(FrankWolfe),
    "LUCB-Chernoff": _composed(LUCBSampling),
    "EB-TC-gauss": lambda env, rng, *, delta: EBTC(env.n_arms, delta, sigma=0.5,
                                                   threshold="gaussian"),
}


def _one(args: tuple[str, str, int, float, int]) -> tuple[int, bool, bool, float, str]:
    instance, name, i, delta, horizon = args
    env = BernoulliBandit(np.array(INSTANCES[instance]))
    alg = ALGORITHMS[name](env, stream(SEED, instance, name, i, "algorithm"), delta=delta)
    engine = alg.engine(env, horizon)
    start = time.process_time()
    trial = simulate(alg, env, horizon=horizon, seed=derive_seed(SEED, instance, name, i, 1))
    return (trial.n_pulls, trial.stopped, bool(trial.correct), time.process_time() - start,
            "protocol loop" if engine is None else engine.name)


def summary(rows: list[tuple[int, bool, bool, float, str]], means: tuple[float, ...],
            delta: float) -> dict:
    """The row of one (instance, algorithm): stopped runs, errors among them with their 95%
    Wilson interval, mean pulls with its 95% Student-t interval, the lower bound."""
    pulls = np.array([r[0] for r in rows], dtype=float)
    stopped = [r for r in rows if r[1]]
    errors = sum(not r[2] for r in stopped)
    lo, hi = wilson_interval(errors, max(len(stopped), 1))
    half = stats.t.ppf(0.975, pulls.size - 1) * pulls.std(ddof=1) / np.sqrt(pulls.size)
    return {"trials": len(rows), "delta": delta, "stopped": len(stopped), "errors": errors,
            "error_rate": errors / max(len(stopped), 1), "error_95": [float(lo), float(hi)],
            "mean": float(pulls.mean()), "mean_95": [float(pulls.mean() - half),
                                                     float(pulls.mean() + half)],
            "median": float(np.median(pulls)), "max": int(pulls.max()),
            "lower_bound": lower_bound(np.array(means), delta, "bernoulli", 1.0),
            "cpu_s_per_trial": float(np.mean([r[3] for r in rows])),
            "engine": sorted({r[4] for r in rows}),
            # per trial, to pool runs of disjoint trial ranges (--first)
            "pulls": [r[0] for r in rows], "stopped_runs": [bool(r[1]) for r in rows],
            "correct_runs": [bool(r[2]) for r in rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--first", type=int, default=0,
                        help="index of the first trial (disjoint ranges pool into one sample)")
    parser.add_argument("--delta", type=float, default=0.2)
    parser.add_argument("--horizon", type=int, default=10_000_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--instances", nargs="*", default=["mu2"], choices=list(INSTANCES))
    parser.add_argument("--only", nargs="*", default=list(ALGORITHMS), choices=list(ALGORITHMS))
    parser.add_argument("--json")
    args = parser.parse_args()
    out: dict[str, dict] = {}
    with ProcessPoolExecutor(args.workers) as pool:
        for instance in args.instances:
            for name in args.only:
                start = time.perf_counter()
                jobs = [(instance, name, i, args.delta, args.horizon)
                        for i in range(args.first, args.first + args.trials)]
                row = summary(list(pool.map(_one, jobs, chunksize=8)), INSTANCES[instance],
                              args.delta)
                row["wall_s"] = time.perf_counter() - start
                out[f"{instance} {name}"] = row
                print(instance, name, json.dumps({k: v for k, v in row.items()
                                                  if not k.endswith(("runs", "pulls"))}),
                      flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"seed": SEED, "args": vars(args), "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
