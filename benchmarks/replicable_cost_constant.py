"""How ReplicableRAGE's cost scales in 1/ρ, and what a different split of ρ saves (issue 35 §4):

    .venv/bin/python benchmarks/replicable_cost_constant.py [--pairs 20] [--seed 0]

On Soare et al.'s instance (d = 5, ω = 0.1, δ = 0.05), per ρ: the mean pulls of ReplicableRAGE
with the default δ_s = min(δ, ρ/4) and with δ_s = ρ/40, the rule's factor (2.5(|Z| − 1)/ρ_q)²
with ρ_q = ρ − 2δ_s, and RAGE's mean pulls on the same pair seeds (as ``banditkit audit`` draws
them). The samples are sized for log(|Z|²/δ_t)/ε̃_t², ε̃_t ∝ ρ_q: cost ∝ log(1/δ_s)/ρ_q², and
ρ_q is ρ/2 at small ρ under the default split, which is where the measured ×68 from ρ = 0.5
to 0.1 comes from ((0.4/0.05)² = 64, not (0.5/0.1)² = 25).
"""

from __future__ import annotations

import argparse

import numpy as np

from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.identification import ReplicableRAGE
from banditkit.identification.replicable_rule import ReplicableGapRule
from banditkit.registry import get_policy

RHOS = (0.05, 0.1, 0.2, 0.3, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    env = make_instance("soare", d=5, omega=0.1)
    M = env.Z.shape[0]
    rage = audit(get_policy("RAGE").factory, env, pairs=args.pairs, seed=args.seed,
                 params={"delta": 0.05})
    rage_pulls = float(np.mean(rage.n_pulls))
    print(f"soare(d=5, omega=0.1), delta=0.05, {args.pairs} pairs, seed {args.seed}; "
          f"RAGE mean pulls {rage_pulls:.4g}")
    print("| ρ | δ_s | ρ_q | (2.5(\\|Z\\| − 1)/ρ_q)² | mean pulls | / RAGE | identical pairs "
          "| correct |")
    print("|---|---|---|---|---|---|---|---|")
    for rho in RHOS:
        for ds in (min(0.05, rho / 4), rho / 40):
            def factory(e, rng, horizon=None, ds=ds, rho=rho):
                return ReplicableRAGE(e.X, e.Z, 0.05, rho, rng=rng, sample_delta=ds)
            res = audit(factory, env, pairs=args.pairs, seed=args.seed)
            rule = ReplicableGapRule(rho, 0.05, M, sample_delta=ds)
            pulls = float(np.mean(res.n_pulls))
            print(f"| {rho:g} | {ds:.4g} | {rule.rho_rounding:.4g} | {rule.blowup(1, M):.4g} "
                  f"| {pulls:.3g} | {pulls / rage_pulls:.3g} | {res.n_identical}/{res.pairs} "
                  f"| {int(res.correct.sum())}/{res.correct.size} |", flush=True)


if __name__ == "__main__":
    main()
