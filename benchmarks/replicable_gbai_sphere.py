"""ReplicableGBAI against G-BAI on issue 35's held-out instance, at budgets an audit cannot hold
in memory (an audit keeps every execution's pulls: 250 MB a pair at T = 10^7):

    .venv/bin/python benchmarks/replicable_gbai_sphere.py [--pairs 30] [--budgets 1000000 10000000]

The instance: 30 arms uniform on the unit sphere of R^6, θ* uniform on it
(``linear-random-unit``, K = 30, d = 6, ``numpy.random.default_rng(11)``; Rademacher rewards;
top gap 0.052). Pair j shares ξ = seed 100 + j; its two executions draw noise with seeds j and
10^6 + j. Prints, per budget, correct executions and identical recommendations (the pulls of a
pair are identical by construction: both draw them from ξ).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.identification import GBAI, ReplicableGBAI


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--rho", type=float, default=0.3)
    parser.add_argument("--budgets", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--policies", nargs="+", default=["GBAI", "ReplicableGBAI"])
    args = parser.parse_args()
    env = make_instance("linear-random-unit", rng=np.random.default_rng(11), K=30, d=6)
    best = env.best_item()
    print("| T | policy | correct / executions | identical recommendations | s per run |")
    print("|---|---|---|---|---|")
    for T in args.budgets:
        for name in args.policies:
            start, correct, same = time.process_time(), 0, 0
            for j in range(args.pairs):
                recs = []
                for seed in (j, 10**6 + j):
                    algo = (GBAI(env.X, env.Z, T, rng=100 + j) if name == "GBAI" else
                            ReplicableGBAI(env.X, env.Z, T, rho=args.rho, rng=100 + j))
                    recs.append(simulate(algo, env, horizon=T, seed=seed).recommendation)
                correct += sum(r == best for r in recs)
                same += recs[0] == recs[1]
            cpu = (time.process_time() - start) / (2 * args.pairs)
            print(f"| {T} | {name} | {correct}/{2 * args.pairs} | {same}/{args.pairs} "
                  f"| {cpu:.2f} |", flush=True)


if __name__ == "__main__":
    main()
