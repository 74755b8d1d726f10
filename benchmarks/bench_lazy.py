"""The lazy variants of issue 36 §1/§2 against the papers' versions, in one run: Track-and-Stop
with w* solved on a geometric grid (ratio 1.5) and when the empirical best changes, against the
solve at every round (Garivier & Kaufmann 2016); top-two Thompson sampling with at most 10
posterior redraws before the fallback J ∝ P(θ_j > θ_I), against 1,000 (Russo 2016). Both pairs run
through their compiled kernels (``simulate``'s engine) on the same seeds: trial i has
ξ = stream(SEED, instance, i, "algorithm") and noise derive_seed(SEED, instance, i, 1).

CPU is ``time.process_time`` per trial, one process (robust to other load on the machine: a
ratio of CPU times measured in the same run). Errors count wrong recommendations.

    python benchmarks/bench_lazy.py --trials 20 --delta 0.1 --instance mu1
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from banditkit import simulate
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.experiments.figures.k_armed_bai import INSTANCES
from banditkit.identification.k_armed import KArmedTrackAndStop, lower_bound
from banditkit.identification.top_two import TopTwoThompson
from banditkit.rng import derive_seed, stream

SEED = 36

PAIRS = {
    "TaS-D": (lambda K, rng, d: KArmedTrackAndStop(K, d),
              lambda K, rng, d: KArmedTrackAndStop(K, d, lazy_ratio=1.5)),
    "TTTS": (lambda K, rng, d: TopTwoThompson(K, rng, delta=d),
             lambda K, rng, d: TopTwoThompson(K, rng, delta=d, max_redraws=10)),
}


def run(name: str, lazy: bool, env: BernoulliBandit, instance: str, trials: int,
        delta: float) -> dict:
    build = PAIRS[name][lazy]
    pulls, errors, cpu = [], 0, 0.0
    # a warm-up trial compiles the kernel outside the measurement
    simulate(build(env.n_arms, stream(SEED, "warm"), delta), env, seed=0, horizon=2_000)
    for i in range(trials):
        alg = build(env.n_arms, stream(SEED, instance, i, "algorithm"), delta)
        start = time.process_time()
        trial = simulate(alg, env, seed=derive_seed(SEED, instance, i, 1))
        cpu += time.process_time() - start
        pulls.append(trial.n_pulls)
        errors += trial.recommendation != int(np.argmax(env.means))
    p = np.array(pulls, dtype=float)
    return {"algorithm": name, "lazy": lazy, "trials": trials, "errors": errors,
            "mean_pulls": float(p.mean()), "se": float(p.std(ddof=1) / np.sqrt(p.size)),
            "cpu_s_per_trial": cpu / trials, "us_per_pull": 1e6 * cpu / p.sum()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--instance", default="mu1", choices=list(INSTANCES))
    parser.add_argument("--only", nargs="*", default=list(PAIRS), choices=list(PAIRS))
    args = parser.parse_args()
    env = BernoulliBandit(np.array(INSTANCES[args.instance]))
    print("lower bound", lower_bound(env.means, args.delta))
    for name in args.only:
        paper = run(name, False, env, args.instance, args.trials, args.delta)
        lazy = run(name, True, env, args.instance, args.trials, args.delta)
        for row in (paper, lazy):
            print(json.dumps(row), flush=True)
        print(f"{name}: lazy is {paper['us_per_pull'] / lazy['us_per_pull']:.1f}x faster per "
              f"pull, {paper['cpu_s_per_trial'] / lazy['cpu_s_per_trial']:.1f}x per trial",
              flush=True)


if __name__ == "__main__":
    main()
