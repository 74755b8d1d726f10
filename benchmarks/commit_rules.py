"""Regret and measured replicability of every commit rule of Algorithms 1 and 2 (Esfandiari et
al., ICLR 2023), by replicability audits (pairs of executions sharing ξ, independent noise).

    .venv/bin/python benchmarks/commit_rules.py appendix-h [--pairs 100] [--seed 0] [--workers 1]
    .venv/bin/python benchmarks/commit_rules.py k4 [--pairs 100] [--seed 0] [--workers 1]

``appendix-h``: the 6-armed instance of Appendix H, T = 45000, ρ = 0.3; Algorithm 2 with the
paper's β (2304) and without its 2304 floor (β = ⌊K²/ρ²⌋), Algorithm 1, each with every commit
rule, and UCB1 with c = 2 and c = 4.5. ``k4``: K = 4 Bernoulli arms at 0.3, 0.433, 0.567, 0.7,
ρ = 0.2, T ∈ {10⁵, 10⁶, 10⁷, 10⁸}, Algorithms 2 and 1 with every rule.

Each row is one audit (:func:`banditkit.experiments.replicability.audit`, the engine of
``banditkit audit``; the same numbers as ``banditkit audit POLICY --instance ... --pairs N
--horizon T --param rho=... --param commit=RULE --seed S``). Printed as markdown: mean regret
(and regret/T) with a Student-t 95% interval over pairs (the pair's mean: its two executions
share ξ), identical pairs, and the Clopper–Pearson 95% interval of the non-replication rate.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.policies import ucb1_lockstep
from banditkit.policies.commit import COMMIT_RULES
from banditkit.policies.named import (
    replicable_batched_elimination,
    replicable_elimination,
    ucb1,
)


def _row(label: str, res, T: int) -> str:
    per_pair = res.regret.mean(axis=1)
    m = float(per_pair.mean())
    half = (float(stats.t.ppf(0.975, per_pair.size - 1) * per_pair.std(ddof=1)
                  / np.sqrt(per_pair.size)) if per_pair.size > 1 else float("nan"))
    lo, hi = res.interval
    differ = res.pairs - res.n_identical
    return (f"| {label} | {m:,.1f} [{m - half:,.1f}, {m + half:,.1f}] | {m / T:.4g} | "
            f"{res.n_identical}/{res.pairs} | {differ / res.pairs:.3f} [{lo:.3f}, {hi:.3f}] | "
            f"{res.differences.mean():,.0f} |")


HEADER = ("| policy | regret (95% CI) | regret/T | identical pairs | non-replication "
          "[Clopper–Pearson 95%] | differing pulls (mean) |\n|---|---|---|---|---|---|")


def appendix_h(pairs: int, seed: int, workers: int) -> None:
    env = make_instance("bernoulli")
    T, rho = 45_000, 0.3
    print(f"Appendix H, T = {T}, rho = {rho}, {pairs} pairs, seed {seed}\n\n{HEADER}")
    for c in (2.0, 4.5):
        res = audit(ucb1, env, pairs=pairs, seed=seed, horizon=T, params={"exploration": c},
                    lockstep=ucb1_lockstep, workers=workers)
        print(_row(f"UCB1 (c = {c:g})", res, T), flush=True)
    for label, factory, extra in (("Alg. 2", replicable_elimination, {}),
                                  ("Alg. 2, beta = K^2/rho^2", replicable_elimination,
                                   {"beta_floor": False}),
                                  ("Alg. 1", replicable_batched_elimination, {})):
        for rule in COMMIT_RULES:
            res = audit(factory, env, pairs=pairs, seed=seed, horizon=T, workers=workers,
                        params={"rho": rho, "horizon": T, "commit": rule, **extra})
            print(_row(f"{label}, {rule}", res, T), flush=True)


def k4(pairs: int, seed: int, workers: int) -> None:
    env = make_instance("bernoulli-linspace", K=4, low=0.3, high=0.7)
    rho = 0.2
    print(f"K = 4, means {np.round(env.means, 3).tolist()}, rho = {rho}, {pairs} pairs, "
          f"seed {seed}")
    for T in (10**5, 10**6, 10**7, 10**8):
        print(f"\nT = {T:.0e}\n\n{HEADER}")
        for label, factory in (("Alg. 2", replicable_elimination),
                               ("Alg. 1", replicable_batched_elimination)):
            for rule in COMMIT_RULES:
                res = audit(factory, env, pairs=pairs, seed=seed, horizon=T, workers=workers,
                            params={"rho": rho, "horizon": T, "commit": rule})
                print(_row(f"{label}, {rule}", res, T), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("setting", choices=("appendix-h", "k4"))
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    (appendix_h if args.setting == "appendix-h" else k4)(args.pairs, args.seed, args.workers)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
