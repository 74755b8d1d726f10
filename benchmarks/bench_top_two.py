"""Top-two Thompson sampling (Russo 2016) on small-gap instances (issue 28 §2): every run stops,
errors ≤ δ, sample counts beside the lower bound T*(μ) kl(δ, 1 − δ) of Garivier & Kaufmann
(2016, Theorem 1); optionally the K-armed identifiers on the same instances.

Trial i runs with ξ = stream(SEED, instance, i, "algorithm") and noise seed
derive_seed(SEED, instance, i, 1), through the compiled kernel (:mod:`banditkit.identification.
top_two_kernel`; the class's own decisions), in a process pool.

    python benchmarks/bench_top_two.py --trials 100 --delta 0.1 --workers 16 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from banditkit.envs.multi_armed import BernoulliBandit, GaussianBandit
from banditkit.identification.k_armed.oracle import lower_bound
from banditkit.identification.top_two import TopTwoThompson
from banditkit.identification.top_two_kernel import simulate_top_two
from banditkit.rng import derive_seed, stream

SEED = 28
INSTANCES = {  # name: (means, model); the first two are issue 28's
    "bern-0.5-0.45-0.42": ((0.5, 0.45, 0.42), "bernoulli"),
    "gauss-0-0.2-0.3": ((0.0, -0.2, -0.3), "gaussian"),
    "gk16-mu1": ((0.5, 0.45, 0.43, 0.4), "bernoulli"),
}


def _one(args: tuple[str, int, float, int]) -> tuple[int, bool, bool, float, float]:
    name, i, delta, horizon = args
    means, model = INSTANCES[name]
    env = (GaussianBandit(np.array(means)) if model == "gaussian"
           else BernoulliBandit(np.array(means)))
    alg = TopTwoThompson(env.n_arms, stream(SEED, name, i, "algorithm"), delta=delta,
                         posterior="gaussian" if model == "gaussian" else "beta")
    start = time.process_time()
    trial = simulate_top_two(alg, env, horizon=horizon, seed=derive_seed(SEED, name, i, 1))
    return (trial.n_pulls, trial.stopped, bool(trial.correct), time.process_time() - start,
            alg.fallbacks / max(trial.n_pulls, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--horizon", type=int, default=2_000_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--only", nargs="*", default=list(INSTANCES))
    parser.add_argument("--json")
    args = parser.parse_args()
    out = {}
    with ProcessPoolExecutor(args.workers) as pool:
        for name in args.only:
            means, model = INSTANCES[name]
            jobs = [(name, i, args.delta, args.horizon) for i in range(args.trials)]
            rows = list(pool.map(_one, jobs))
            pulls = np.array([r[0] for r in rows])
            bound = lower_bound(np.array(means), args.delta, model, 1.0)
            out[name] = {
                "trials": args.trials, "delta": args.delta, "stopped": sum(r[1] for r in rows),
                "errors": sum(not r[2] for r in rows), "mean": float(pulls.mean()),
                "sem": float(pulls.std(ddof=1) / np.sqrt(pulls.size)),
                "median": float(np.median(pulls)), "max": int(pulls.max()),
                "lower_bound": bound, "cpu_s_per_trial": float(np.mean([r[3] for r in rows])),
                "fallback_share": float(np.mean([r[4] for r in rows]))}
            print(name, json.dumps(out[name]), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
