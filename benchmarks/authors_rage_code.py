"""Run the RAGE authors' own code (Fiez et al., github.com/fiezt/Transductive-Linear-Bandit-Code,
commit 19e51b9) on their instances, serially, for the reproduction's ``authors' code rerun``
references (issue 35 §1). Their code is not part of banditkit: pass the folder of a checkout.

    .venv/bin/python benchmarks/authors_rage_code.py --repo PATH rage|oracle D COUNT \
        transductive|sincos

Calls their ``RAGE(X, theta_star, factor=10, delta=0.05, Z)`` / ``XY_ORACLE(X, theta_star, 0.05,
Z)`` and ``.algorithm(seed)`` exactly as their ``run_transductive.py`` (Fig. 1d) and
``run_sin_cos_example.py`` (Fig. 1a, ω = 0.01) do: ``np.random.seed(43)``, then COUNT seeds from
``np.random.randint(0, 100000, COUNT)``, one instance per seed (their scripts use a process pool;
the numbers do not depend on it). Prints the mean sample complexity ``N``, its standard error
(their ``np.std(N)/sqrt(count)``), the number of successes and the CPU time.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

import numpy as np


def transductive(d: int, rad: float = 0.1):
    """run_transductive.py's transductive_problem_instance (Fig. 1d)."""
    X = np.eye(2 * d)
    Z = np.vstack((np.eye(2 * d)[0:d, :],
                   np.cos(rad) * np.eye(2 * d)[0:d, :] + np.sin(rad) * np.eye(2 * d)[d:2 * d, :]))
    theta = np.zeros((2 * d, 1))
    theta[0, 0] = 1
    return X, Z, theta


def sin_cos(d: int, rad: float = 0.01):
    """run_sin_cos_example.py's sin_cos_problem_instance (Fig. 1a)."""
    extra = np.zeros(d)
    extra[0], extra[1] = np.cos(rad), np.sin(rad)
    theta = np.zeros((d, 1))
    theta[0, 0] = 2.0
    return np.r_[np.eye(d), extra[None, :]], None, theta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True, help="a checkout of their repository")
    parser.add_argument("algorithm", choices=("rage", "oracle"))
    parser.add_argument("d", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("instance", choices=("transductive", "sincos"))
    args = parser.parse_args()
    sys.path.insert(0, args.repo)
    logging.disable(logging.CRITICAL)  # their code logs every phase
    from RAGE import RAGE  # their module
    from XY_ORACLE import XY_ORACLE  # their module

    X, Z, theta = (transductive if args.instance == "transductive" else sin_cos)(args.d)
    # their scripts' seeding, on NumPy's legacy global state as their code draws from it
    np.random.seed(43)  # noqa: NPY002
    seeds = list(np.random.randint(0, 100000, args.count))  # noqa: NPY002
    start, n, ok = time.process_time(), [], 0
    for seed in seeds:
        algo = (RAGE(X, theta, 10, 0.05, Z) if args.algorithm == "rage"
                else XY_ORACLE(X, theta, 0.05, Z))
        algo.algorithm(seed)
        n.append(algo.N)
        ok += bool(algo.success)
    n = np.asarray(n, dtype=float)
    print(f"{args.instance} {args.algorithm} d={args.d} count={args.count} mean={n.mean():.6g} "
          f"se={n.std() / np.sqrt(args.count):.4g} success={ok} "
          f"cpu={time.process_time() - start:.0f}s")


if __name__ == "__main__":
    main()
