"""Which commit rule a live experiment should default to: share of the horizon on the best arm
under each rule of ReplicableElimination (Esfandiari et al. 2023, Algorithm 2), on the
README's A/B/n instance and four others (banditkit.live.journal.defaults).

    python benchmarks/live_defaults.py [--seeds 20] [--rho 0.2]

Arms are listed worst first, as a team lists its control first: the paper's lowest-index
commit then plays the worst arm. For each (instance, configuration): the mean share of the
horizon on the best arm, the share of seeds whose most-pulled arm is the best, and the mean
share on the first-listed (worst) arm. Seeds s = 0..n−1: ξ = s, noise = s + 1000.
"""

from __future__ import annotations

import argparse

import numpy as np

from banditkit import simulate
from banditkit.envs import BernoulliBandit
from banditkit.registry import make_policy
from banditkit.rng import as_generator

INSTANCES = [((0.10, 0.12, 0.15), 30_000), ((0.10, 0.11, 0.12, 0.15), 40_000),
             ((0.05, 0.06), 20_000), ((0.10, 0.12, 0.15, 0.13), 40_000),
             ((0.30, 0.35, 0.40), 30_000)]
CONFIGS = [{}, {"commit": "argmax"}, {"commit": "replicable-argmax"},
           {"commit": "round-robin"}, {"beta_floor": False, "commit": "argmax"},
           {"beta_floor": False, "commit": "replicable-argmax"}]


def shares(means: tuple[float, ...], horizon: int, params: dict, seeds: int
           ) -> tuple[float, float, float]:
    best = int(np.argmax(means))
    on_best, picked, on_first = [], [], []
    for s in range(seeds):
        env = BernoulliBandit(np.asarray(means))
        algo = make_policy("ReplicableElimination", env, as_generator(s), horizon=horizon,
                           **params)
        trial = simulate(algo, env, horizon=horizon, seed=s + 1000)
        on_best.append(trial.counts[best] / horizon)
        on_first.append(trial.counts[0] / horizon)
        picked.append(int(np.argmax(trial.counts)) == best)
    return float(np.mean(on_best)), float(np.mean(picked)), float(np.mean(on_first))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rho", type=float, default=0.2)
    args = parser.parse_args()
    print(f"ReplicableElimination, rho = {args.rho}, {args.seeds} seeds per row")
    print(f"{'means':28s} {'T':>6s} {'parameters':45s} {'on best':>8s} {'best wins':>9s} "
          f"{'on first':>8s}")
    for means, horizon in INSTANCES:
        for config in CONFIGS:
            b, w, f = shares(means, horizon, {"rho": args.rho, **config}, args.seeds)
            print(f"{means!s:28s} {horizon:6d} {config or 'paper defaults'!s:45s} "
                  f"{b:8.3f} {w:9.2f} {f:8.3f}")


if __name__ == "__main__":
    main()
