"""Run the P1-RAGE authors' own OD-LinBAI or P1-Peace (github.com/FFTypeZero/bobw_linear,
commit 6cf899c, ``algorithms/``) on their stationary Soare instance (d = 10, ω = 0.1) with one
``np.random.seed`` per trial, so that the trials are independent (their runner's forked workers
share NumPy's global state; docs/p1-rage.md "The authors' stored results"). Their code is not
part of banditkit: pass the folder of a checkout.

    .venv/bin/python benchmarks/authors_p1_code.py --repo CHECKOUT od|p1-peace T TRIALS

Prints wrong recommendations every 250 trials (trial i uses ``np.random.seed(10_000 + i)``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True, help="a checkout of their repository")
    parser.add_argument("algorithm", choices=("od", "p1-peace"))
    parser.add_argument("T", type=int)
    parser.add_argument("trials", type=int)
    args = parser.parse_args()
    sys.path.insert(0, args.repo)
    from algorithms.od_linbai import OD_LinBAI  # their module
    from algorithms.p1_linear import P1_Linear  # their module

    d, omega = 10, 0.1
    extra = np.zeros(d)
    extra[0], extra[1] = np.cos(omega), np.sin(omega)
    X = np.vstack((np.eye(d), extra))
    theta = np.zeros(d)
    theta[0] = 2.0
    wrong, start = 0, time.process_time()
    for i in range(args.trials):
        np.random.seed(10_000 + i)  # noqa: NPY002  (their code draws from the global state)

        def reward(x, t):
            return np.random.normal(x @ theta, 1.0)  # noqa: NPY002

        with contextlib.redirect_stdout(io.StringIO()):  # their code prints per trial
            algo = (OD_LinBAI(X, args.T, reward) if args.algorithm == "od"
                    else P1_Linear(X, args.T, reward, batch=True, alt=True))
            rec = algo.run()
        wrong += not np.all(rec == X[0])
        if (i + 1) % 250 == 0 or i + 1 == args.trials:
            print(f"{args.algorithm} T={args.T} trials={i + 1} wrong={wrong} "
                  f"rate={wrong / (i + 1):.4f} cpu={time.process_time() - start:.0f}s",
                  flush=True)


if __name__ == "__main__":
    main()
