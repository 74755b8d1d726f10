"""The replicability audits of issue 25: ReplicableRAGE at ρ ∈ {0.1, 0.3} and RAGE, on the
Soare et al. instance (d = 5, 10; ω = 0.01, 0.1) and the P1-RAGE paper's multivariate-testing
instance, at δ = 0.05, with 200 pairs each (seed 0), as ``banditkit audit`` runs them:

    .venv/bin/python benchmarks/audit_replicable_bai.py [--pairs 200] [--seed 0] [--out F.json]

Each row is one ``banditkit audit POLICY --instance NAME --instance-param ... --pairs P
--seed S --param rho=R --param delta=0.05``: the same instance (built from
``stream(seed, "audit", "instance")``), the same pair seeds, so RAGE and ReplicableRAGE see the
same noise streams and their mean sample complexities compare on the same seeds. Printed as a
markdown table; ``--out`` also writes the audits' JSON summaries.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.registry import get_policy
from banditkit.rng import stream

INSTANCES = [("soare", {"d": 5, "omega": 0.01}), ("soare", {"d": 5, "omega": 0.1}),
             ("soare", {"d": 10, "omega": 0.01}), ("soare", {"d": 10, "omega": 0.1}),
             ("p1-multivariate-testing", {"D": 4})]
RUNS = [("RAGE", {}), ("ReplicableRAGE", {"rho": 0.3}), ("ReplicableRAGE", {"rho": 0.1})]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows, docs = [], []
    print("| instance | policy | rho | identical pairs | non-replication 95% CI | verdict "
          "| correct executions | mean pulls | pulls / RAGE's |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, iparams in INSTANCES:
        env = make_instance(name, rng=stream(args.seed, "audit", "instance"), **iparams)
        base = None
        for policy, params in RUNS:
            params = {**params, "delta": args.delta}
            start = time.perf_counter()
            result = audit(get_policy(policy).factory, env, pairs=args.pairs, seed=args.seed,
                           params=params, name=policy, instance=name)
            seconds = time.perf_counter() - start
            pulls = float(np.mean(result.n_pulls))
            base = pulls if policy == "RAGE" else base
            lo, hi = result.interval
            label = name + "(" + ", ".join(f"{k}={v}" for k, v in iparams.items()) + ")"
            print(f"| {label} | {policy} | {params.get('rho', '-')} | "
                  f"{result.n_identical}/{result.pairs} | [{lo:.3f}, {hi:.3f}] | "
                  f"{result.verdict} | {int(result.correct.sum())}/{result.correct.size} | "
                  f"{pulls:.4g} | {pulls / base:.4g} |", flush=True)
            docs.append({**result.summary(), "instance_params": iparams, "seconds": seconds,
                         "recommendations": None})
            rows.append((label, policy, params.get("rho"), pulls / base))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(docs, f, indent=1, default=float)


if __name__ == "__main__":
    main()
