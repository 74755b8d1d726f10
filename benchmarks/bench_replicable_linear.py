"""Seconds per trial of the linear policies at T = 45000 and T = 10^6 (and the replicability
audit of the instances of the figures ``replicable-bandits:linear`` / ``:infinite``).

Usage::

    .venv/bin/python benchmarks/bench_replicable_linear.py            # timings
    .venv/bin/python benchmarks/bench_replicable_linear.py --audit 200  # + audits, 200 pairs

Timings: mean wall time of ``simulate`` over ``--trials`` trials (after one warm-up trial),
on the figures' instances: K = 20 random unit arms in R^5 for the finite-arm policies, the
0.1-grid of the unit disc (317 arms) for Algorithm 4.
"""

from __future__ import annotations

import argparse
import time

from banditkit import simulate
from banditkit.experiments.figures.replicable_linear import (
    ALG4_PRACTICAL,
    INFINITE,
    LINEAR,
)
from banditkit.experiments.replicability import audit
from banditkit.experiments.tasks import instance_rng
from banditkit.policies.linear.elimination import LinearElimination, linear_elimination
from banditkit.policies.linear.replicable import (
    ReplicableLinearElimination,
    ReplicableLinearLSE,
    replicable_linear_elimination,
    replicable_linear_lse,
)


def figure_env(spec, point: int = 0, seed: int = 0):
    """The instance the runner builds for ``spec``'s sweep point (same stream, same draw)."""
    return spec.make_env(instance_rng(seed, spec.name, point, None),
                         **spec.env_params(spec.points[point]))


POLICIES = {
    "LinearElimination": lambda X, T, s: LinearElimination(X, T),
    "ReplicableLinearElimination (Alg. 3)":
        lambda X, T, s: ReplicableLinearElimination(X, T, 0.3, rng=s),
    "ReplicableLinearLSE (Alg. 4)": lambda X, T, s: ReplicableLinearLSE(X, T, 0.3, rng=s),
    "ReplicableLinearLSE (Alg. 4, practical)":
        lambda X, T, s: ReplicableLinearLSE(X, T, 0.3, rng=s, **ALG4_PRACTICAL),
}


def seconds_per_trial(name: str, env, T: int, trials: int) -> float:
    make = POLICIES[name]
    simulate(make(env.X, T, 0), env, horizon=T, seed=0)  # warm-up
    start = time.perf_counter()
    for s in range(trials):
        simulate(make(env.X, T, s), env, horizon=T, seed=1 + s)
    return (time.perf_counter() - start) / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--audit", type=int, default=0, metavar="PAIRS",
                        help="also audit the figure instances with this many pairs")
    parser.add_argument("--workers", type=int, default=1, help="processes for the audits")
    args = parser.parse_args()

    finite, disc = figure_env(LINEAR), figure_env(INFINITE)
    print(f"{'policy':42s} {'instance':10s} {'T=45000':>10s} {'T=10^6':>10s}  (s/trial)")
    for name in POLICIES:
        env = disc if "LSE" in name else finite
        t1 = seconds_per_trial(name, env, 45_000, args.trials)
        t2 = seconds_per_trial(name, env, 10**6, args.trials)
        label = "disc" if env is disc else "K=20,d=5"
        print(f"{name:42s} {label:10s} {t1:10.4f} {t2:10.4f}")

    if args.audit:
        T_lin = 10**8
        for label, factory, params in [
                ("LinearElimination", linear_elimination, {}),
                ("ReplicableLinearElimination", replicable_linear_elimination, {"rho": 0.3}),
                ("ReplicableLinearElimination argmax", replicable_linear_elimination,
                 {"rho": 0.3, "commit": "argmax"})]:
            res = audit(factory, finite, pairs=args.audit, workers=args.workers,
                        horizon=T_lin, seed=0,
                        params={**params, "horizon": T_lin}, rho=0.3, name=label,
                        instance="replicable-bandits:linear instance")
            print(res.render())
        for T in (10**6, 10**8):
            for label, params in [("ReplicableLinearLSE", {"rho": 0.3}),
                                  ("ReplicableLinearLSE practical",
                                   {"rho": 0.3, **ALG4_PRACTICAL})]:
                res = audit(replicable_linear_lse, disc, pairs=args.audit,
                            workers=args.workers, horizon=T, seed=0,
                            params={**params, "horizon": T}, name=label,
                            instance="replicable-bandits:infinite disc")
                print(res.render())


if __name__ == "__main__":
    main()
