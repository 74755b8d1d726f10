"""Seconds per trial of the constrained policies of Bollini et al., "Replicable Constrained
Bandits" (DEBORA, DEBORA-S, DEBORA-H) and of their baselines (Algorithm 2 of Replicable Bandits
and UCB1 unconstrained; the optimistic soft-constraint policy and its safe variant), on the
instances of the ``replicable-constrained:*`` figures, at T = 10⁶ and at the long horizons of
``replicable-constrained:soft-long`` (up to 9·10¹⁵). Every policy but UCB1 costs O(K) per epoch
(DEBORA-S/H's and the baselines' epochs are sampled exactly as per-arm counts), so its time
grows with log T; UCB1 takes one step per pull and runs at T ≤ ``--ucb1-max`` only.

Run:  .venv/bin/python benchmarks/bench_constrained.py [--trials 3]
          [--horizons 1e6 1e9 1e12 1e15 9e15] [--ucb1-max 1e6]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from banditkit import simulate
from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.policies import (
    DEBORA,
    DEBORAH,
    DEBORAS,
    OptimisticConstrained,
    OptimisticMixingConstrained,
    ReplicableElimination,
    ucb1_lockstep,
)
from banditkit.rng import derive_seed, stream


def cases(T: int):
    bern = make_instance("bernoulli")
    soft = make_instance("constrained-soft")
    hard = make_instance("constrained-hard", lambda_min=0.1)
    margins = hard.alpha - hard.G @ hard.safe_strategy
    yield "bernoulli(6)", "DEBORA", bern, lambda rng: DEBORA(6, T, rho=0.3, delta=0.05, rng=rng)
    yield "bernoulli(6)", "ReplicableElimination", bern, lambda rng: ReplicableElimination(
        6, T, 0.3, rng)
    yield "constrained-soft", "DEBORA-S", soft, lambda rng: DEBORAS(
        5, T, soft.alpha, rho=0.3, delta=0.05, rng=rng)
    yield "constrained-soft", "Optimistic", soft, lambda rng: OptimisticConstrained(
        5, T, soft.alpha, delta=0.05, rng=rng)
    yield "constrained-hard(0.1)", "DEBORA-H", hard, lambda rng: DEBORAH(
        5, T, hard.alpha, hard.safe_strategy, rho=0.3, delta=0.05, safe_margins=margins,
        rng=rng)
    yield "constrained-hard(0.1)", "Optimistic + Eq. (4) mixing", hard, (
        lambda rng: OptimisticMixingConstrained(5, T, hard.alpha, hard.safe_strategy,
                                                safe_margins=margins, delta=0.05, rng=rng))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--horizons", type=float, nargs="+",
                        default=[1e6, 1e9, 1e12, 1e15, 1e18])
    parser.add_argument("--ucb1-max", type=float, default=1e6,
                        help="largest T at which UCB1 (one step per pull) is run")
    args = parser.parse_args()
    n = args.trials
    horizons = [int(h) for h in args.horizons]
    print(f"# {platform.machine()}, python {platform.python_version()}, numpy {np.__version__};"
          f" {n} trials, mean seconds per trial")
    print(f"{'instance':<24} {'policy':<24}" + "".join(f"{f'T={T:.0e}':>11}" for T in horizons))
    rows: dict[tuple[str, str], list[str]] = {}
    for T in horizons:
        for label, name, env, make in cases(T):
            secs = []
            for trial in range(n):
                rng = stream(0, "bench-constrained", name, trial)
                t0 = time.perf_counter()
                simulate(make(rng), env, horizon=T, seed=derive_seed(0, name, trial))
                secs.append(time.perf_counter() - t0)
            rows.setdefault((label, name), []).append(f"{np.mean(secs):11.3f}")
        bern = make_instance("bernoulli")
        cell = f"{'–':>11}"
        if T <= args.ucb1_max:
            t0 = time.perf_counter()
            # UCB1 through its exact lock-step driver (the figures run it so)
            ucb1_lockstep([bern] * n, [None] * n, [derive_seed(0, "ucb", i) for i in range(n)],
                          T, None)
            cell = f"{(time.perf_counter() - t0) / n:11.3f}"
        rows.setdefault(("bernoulli(6)", "UCB1 (lock-step)"), []).append(cell)
    for (label, name), cells in rows.items():
        print(f"{label:<24} {name:<24}" + "".join(cells))


if __name__ == "__main__":
    with single_threaded_blas():  # as the runner: one BLAS thread, set once
        main()
