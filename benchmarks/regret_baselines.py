"""Regret of the K-armed regret baselines (MOSS, Bayes-UCB, EXP3-IX) beside UCB1, KL-UCB and
Thompson sampling on the Appendix H instance of Esfandiari et al. (2023): Bernoulli arms
0.44, 0.47, 0.50, 0.53, 0.56, 0.59, T = 45,000, 20 trials (their setup).

Trial i of every algorithm has ξ = stream(seed, "trials", i, "algorithm") and the noise of
``simulate_trials(..., seed=seed)``; the trials run through each algorithm's engine (lock-step
or compiled), which gives the protocol loop's numbers.

    PYTHONPATH=src python benchmarks/regret_baselines.py [--horizon 45000] [--trials 20]
        [--seed 0] [NAMES ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate_trials
from banditkit.envs.instances.multi_armed import bernoulli
from banditkit.registry import make_policy

DEFAULT = ["MOSS", "BayesUCB", "EXP3IX", "UCB1", "KLUCB", "ThompsonSampling"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", default=DEFAULT)
    parser.add_argument("--horizon", type=int, default=45_000)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    T, n = args.horizon, args.trials
    env = bernoulli()
    checkpoints = np.array([T // 8, T // 4, T // 2, T])
    print(f"Appendix H instance, T = {T}, {n} trials, seed {args.seed}: mean regret ± s.e. at "
          f"t = {', '.join(map(str, checkpoints))}")
    for name in args.names:
        start = time.process_time()
        trials = simulate_trials(
            lambda e, rng, name=name: make_policy(name, e, rng, horizon=T), env, n_trials=n,
            seed=args.seed, horizon=T, checkpoints=checkpoints)
        regret = np.array([t.regret for t in trials])
        mean, se = regret.mean(axis=0), regret.std(axis=0, ddof=1) / np.sqrt(n)
        cells = "  ".join(f"{m:7.1f} ± {s:4.1f}" for m, s in zip(mean, se, strict=True))
        print(f"{name:18s} {cells}   ({time.process_time() - start:.1f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
