"""The fixed-budget audits of issue 25 §2: ReplicableGBAI (ρ ∈ {0.1, 0.3}) against G-BAI and
P1-RAGE at the same budget T, as ``banditkit audit POLICY --instance soare --instance-param d=3
--instance-param omega=0.3 --horizon T --pairs P --seed S`` runs them:

    .venv/bin/python benchmarks/audit_replicable_fixed_budget.py [--pairs 200] [--seed 0]
    .venv/bin/python benchmarks/audit_replicable_fixed_budget.py --pairs 30 --budgets 1000000
    .venv/bin/python benchmarks/audit_replicable_fixed_budget.py --instance sphere \
        --policies GBAI ReplicableGBAI --pairs 100 --budgets 1000 10000 100000

``--instance sphere`` is issue 35's held-out instance: 30 arms uniform on the unit sphere of
R^6 and θ* uniform on it (``linear-random-unit``, K = 30, d = 6, drawn from
``numpy.random.default_rng(11)``; Rademacher rewards; top gap 0.052).

Reports, per (T, policy): identical pairs (same pulls and same recommendation) with the
Clopper–Pearson interval of non-replication, and the error probability (wrong
recommendations over the 2·pairs executions, with its Clopper–Pearson interval).
"""

from __future__ import annotations

import argparse

import numpy as np

from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit, clopper_pearson
from banditkit.registry import get_policy
from banditkit.rng import stream

BUDGETS = (20, 100, 1_000, 10_000, 100_000)
RUNS = [("GBAI", {}), ("P1RAGE", {}), ("ReplicableGBAI", {"rho": 0.3}),
        ("ReplicableGBAI", {"rho": 0.1})]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--omega", type=float, default=0.3)
    parser.add_argument("--instance", choices=("soare", "sphere"), default="soare")
    parser.add_argument("--policies", nargs="+", default=sorted({p for p, _ in RUNS}),
                        help="which of GBAI, P1RAGE, ReplicableGBAI to run")
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS),
                        help="budgets T (an audit keeps every execution's pulls: at T = 10^6 "
                             "a pair holds ~25 MB, so use fewer pairs there)")
    args = parser.parse_args()
    if args.instance == "sphere":
        env = make_instance("linear-random-unit", rng=np.random.default_rng(11), K=30, d=6)
        print(f"linear-random-unit(K=30, d=6, default_rng(11)), {args.pairs} pairs, "
              f"seed {args.seed}")
    else:
        env = make_instance("soare", rng=stream(args.seed, "audit", "instance"), d=args.d,
                            omega=args.omega)
        print(f"soare(d={args.d}, omega={args.omega}), {args.pairs} pairs, seed {args.seed}")
    print("| T | policy | rho | identical pairs | non-replication 95% CI | wrong / executions "
          "| error probability 95% CI |")
    print("|---|---|---|---|---|---|---|")
    for T in args.budgets:
        for policy, params in RUNS:
            if policy not in args.policies:
                continue
            entry = get_policy(policy)
            try:
                result = audit(entry.factory, env, pairs=args.pairs, seed=args.seed,
                               horizon=T, params=params, name=policy,
                               instance=args.instance)
            except ValueError as error:  # a budget the policy refuses (too small)
                print(f"| {T} | {policy} | {params.get('rho', '-')} | refused: {error} |")
                continue
            wrong = int(result.correct.size - result.correct.sum())
            elo, ehi = clopper_pearson(wrong, result.correct.size)
            lo, hi = result.interval
            print(f"| {T} | {policy} | {params.get('rho', '-')} | "
                  f"{result.n_identical}/{result.pairs} | [{lo:.3f}, {hi:.3f}] | "
                  f"{wrong}/{result.correct.size} | [{elo:.3f}, {ehi:.3f}] |", flush=True)


if __name__ == "__main__":
    main()
