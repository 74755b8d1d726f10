"""Error rate of a fixed-budget identifier on one instance under relabelled arms.

The same instance with its arms listed in another order is the same problem: an identifier
whose ties are broken by its own randomness ξ errs equally often (issue 17 §1; before that fix
P1-Peace's error on the Soare benchmark moved from .074 to .112 with the order). Each order
runs ``--trials`` trials; trial i uses ξ = stream(seed, "relabel", i, "algorithm") and noise
derive_seed(seed, "relabel", i, "environment") under every order, so the orders differ only
in the labels. Prints the error rate with its Wilson 95% interval per order.

    nice -n 10 python benchmarks/relabel_p1.py --algorithm P1Peace --T 1010 --trials 3000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.identification import GBAI, P1RAGE, MixedPeace, ODLinBAI, P1Peace, Peace
from banditkit.intervals import wilson_interval
from banditkit.rng import derive_seed, stream

CLASSES = {c.__name__: c for c in (GBAI, P1RAGE, P1Peace, MixedPeace, Peace, ODLinBAI)}


def orders(K: int, seed: int) -> dict[str, np.ndarray]:
    """The listed order, the reversed one and one random permutation (drawn from ``seed``)."""
    return {"listed": np.arange(K), "reversed": np.arange(K)[::-1],
            "permuted": stream(seed, "relabel", "permutation").permutation(K)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", choices=sorted(CLASSES), default="P1Peace")
    parser.add_argument("--T", type=int, default=1010)
    parser.add_argument("--trials", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--orders", default="listed,reversed,permuted")
    args = parser.parse_args()
    base = make_instance("soare", d=10, omega=0.1)
    cls = CLASSES[args.algorithm]
    all_orders = orders(base.n_arms, args.seed)
    for name in args.orders.split(","):
        perm = all_orders[name]
        env = LinearBandit(base.X[perm], base.theta, sigma=base.sigma)
        start = time.perf_counter()
        errors = 0
        for i in range(args.trials):
            algo = cls(env.X, None, args.T, rng=stream(args.seed, "relabel", i, "algorithm"))
            trial = simulate(algo, env, seed=derive_seed(args.seed, "relabel", i, "environment"))
            errors += not trial.correct
        low, high = wilson_interval(errors, args.trials)
        print(f"{args.algorithm} T = {args.T} {name:9s} ({' '.join(map(str, perm))}): "
              f"error {errors / args.trials:.4f} [{low:.4f}, {high:.4f}] "
              f"({errors}/{args.trials}, {time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
