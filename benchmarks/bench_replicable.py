"""Speed of the replicable K-armed policies: seconds per trial at T = 45000 and T = 10^6, and
the wall time of each full replicable-bandits figure.

    .venv/bin/python benchmarks/bench_replicable.py [--skip-figures] [--trials N]

Trials run on the 6-armed Bernoulli instance of Appendix H. Batched policies run one trial at a
time through simulate (every batch answered from sufficient statistics); UCB1 runs its trials in
lock-step (ucb1_lockstep, 20 trials together, as the figure does) and, for comparison, one
trial through the sequential simulate path at T = 45000.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.policies import (
    UCB1,
    BatchedElimination,
    ReplicableBatchedElimination,
    ReplicableElimination,
    ucb1_lockstep,
)
from banditkit.rng import derive_seed, stream

POLICIES = {
    "ReplicableElimination (Alg. 2)": lambda K, T, rng: ReplicableElimination(K, T, 0.3, rng),
    "ReplicableBatchedElimination (Alg. 1)":
        lambda K, T, rng: ReplicableBatchedElimination(K, T, 0.3, rng),
    "Alg. 1, literal batches": lambda K, T, rng: ReplicableBatchedElimination(
        K, T, 0.3, rng, sample_rule="literal"),
    "BatchedElimination": lambda K, T, rng: BatchedElimination(K, T),
}


def per_trial(trials: int, T: int) -> list[tuple[str, float]]:
    env = make_instance("bernoulli")
    out = []
    for name, make in POLICIES.items():
        start = time.perf_counter()
        for i in range(trials):
            simulate(make(env.n_arms, T, stream(0, i, "algorithm")), env, horizon=T,
                     seed=derive_seed(0, i, 1))
        out.append((name, (time.perf_counter() - start) / trials))
    n = 20
    start = time.perf_counter()
    ucb1_lockstep([env] * n, [None] * n, [derive_seed(0, i, 1) for i in range(n)], T, None)
    out.append((f"UCB1 lock-step ({n} trials together)", (time.perf_counter() - start) / n))
    if T <= 50_000:
        start = time.perf_counter()
        simulate(UCB1(env.n_arms), env, horizon=T, seed=derive_seed(0, 0, 1),
                 engine="reference")  # the protocol loop
        out.append(("UCB1 sequential simulate (1 trial)", time.perf_counter() - start))
    return out


def figure_times() -> list[tuple[str, float]]:
    from banditkit.experiments.runner import run_figure

    out = []
    for name in ("replicable-bandits:fig1", "replicable-bandits:rho-sweep"):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            run_figure(name, out=Path(tmp) / "run", progress=False)
            out.append((name, time.perf_counter() - start))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per batched policy")
    parser.add_argument("--skip-figures", action="store_true")
    args = parser.parse_args()
    for T in (45_000, 1_000_000):
        print(f"seconds per trial at T = {T}:")
        for name, sec in per_trial(args.trials, T):
            print(f"  {name:<42} {sec:10.4f}")
    if not args.skip_figures:
        print("wall time of full figures (run_figure, processes backend, all cores):")
        for name, sec in figure_times():
            print(f"  {name:<42} {sec:8.1f} s")


if __name__ == "__main__":
    main()
