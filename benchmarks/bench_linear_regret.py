"""Speed of OFUL and linear Thompson sampling, µs per pull per trial, on the instance of
``replicable-bandits:linear`` (K = 20 unit arms in R^5, Rademacher rewards; root seed 0), by path:

* ``simulate``: the sequential class, one Python step per pull (and the protocol's checks);
* numpy lock-step: one vectorised round across n trials (``BANDITKIT_JIT=0``'s path);
* compiled: the numba kernel of ``policies/linear/kernel.py``, one trial after another (the
  default when numba is installed; its first call compiles, or loads the cache, outside the
  timing).

All three play the same arms from the same seeds (``tests/test_linear_regret.py``); this script
checks it again on what it times.

    .venv/bin/python benchmarks/bench_linear_regret.py [--trials 40] [--horizon 2000]

Times are CPU seconds (``time.process_time``) of one process.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import jit, simulate
from banditkit.experiments.figures.replicable_linear import make_random_unit
from banditkit.experiments.tasks import instance_rng
from banditkit.policies.linear.lockstep import _kernel_arms, _numpy_arms
from banditkit.policies.linear.oful import OFUL
from banditkit.policies.linear.thompson import LinearThompson
from banditkit.rng import derive_seed


def _policies(X: np.ndarray, horizon: int) -> dict:
    return {
        "OFUL (Theorem 2 radius)": lambda rng: OFUL(X),
        "LinTS (paper v)": lambda rng: LinearThompson(X, rng, horizon=horizon),
        "LinTS (v = 1)": lambda rng: LinearThompson(X, rng, v=1.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[1, 40, 200])
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--kernel-horizon", type=int, default=20_000)
    args = parser.parse_args()
    env = make_random_unit(instance_rng(0, "replicable-bandits:linear", 0, None), K=20, d=5)
    print(f"instance: K = {env.n_arms}, d = {env.d}, Rademacher rewards; "
          f"numba kernel {'on' if jit.available() else 'off'}")
    for name, make in _policies(env.X, args.horizon).items():
        seq_T = min(args.horizon, 1000)
        start = time.process_time()
        simulate(make(np.random.default_rng(1)), env, horizon=seq_T, seed=derive_seed(0, 0),
                 engine="reference")  # the protocol loop
        per_pull = (time.process_time() - start) / seq_T * 1e6
        print(f"{name}: simulate {per_pull:.0f} us/pull (T = {seq_T}, 1 trial)")
        for n in args.trials:
            seeds = [derive_seed(0, i) for i in range(n)]
            policy = make(np.random.default_rng(1))
            start = time.process_time()
            a = _numpy_arms(policy, env, [np.random.default_rng(i) for i in range(n)], seeds,
                            args.horizon)
            cpu = time.process_time() - start
            line = (f"  {n:4d} trials: numpy lock-step {cpu / args.horizon / n * 1e6:8.2f} "
                    f"us/pull/trial (T = {args.horizon})")
            if jit.available():
                b = _kernel_arms(policy, env, [np.random.default_rng(i) for i in range(n)],
                                 seeds, args.horizon)  # compiles or loads the cache
                assert np.array_equal(a, b), "the kernel left the numpy path"
                T = args.kernel_horizon
                start = time.process_time()
                _kernel_arms(policy, env, [np.random.default_rng(i) for i in range(n)], seeds,
                             T)
                cpu = time.process_time() - start
                line += f", compiled {cpu / T / n * 1e6:6.3f} us/pull/trial (T = {T})"
            print(line)


if __name__ == "__main__":
    main()
