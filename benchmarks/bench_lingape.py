"""Speed of LinGapE's drivers on the instances of Fiez et al. (2019, Section 5): the block driver
(simulate_lingape) against sequential simulate.

    .venv/bin/python benchmarks/bench_lingape.py [--instances soare5 soare10 soare35 ...]
        [--trials 3] [--drivers blocks sequential] [--seq-horizon 30000]

δ = 0.05, S = ‖θ*‖₂, one BLAS thread. Every instance is one fixed instance (the random ones drawn
once from SeedSequence(0)), run for ``--trials`` noise seeds:

* ``blocks``: each trial through :func:`simulate_lingape` until LinGapE stops;
* ``sequential``: the first trial through :func:`banditkit.simulate`, cut at ``--seq-horizon``
  pulls (a full run is 0.5–3 million pulls at ~50 µs each); its trial is checked to equal the
  block driver's run with the same horizon.

µs per pull is wall time per pull per trial; s/trial for ``sequential`` is projected as the
blocks' mean pulls × its µs per pull.

The lock-step driver this replaced (``lingape_lockstep``: all trials of a point advanced one
pull at a time together) was measured with this script before its removal (see git history),
on the same loaded 2-core machine, 3 trials, µs per pull per trial, lock-step vs blocks:
soare5 36.7 vs 2.0, soare10 72.1 vs 1.6, soare35 82.5 vs 2.4, multivariate6 90.0 vs 75.5;
many-arms 232.6 vs 229.4, then 260.7 vs 232.8 and 251.3 vs 255.0; sphere 197.0 vs 204.3, then
166.8 vs 141.3 and 183.1 vs 161.8 (the first pair of each with an earlier version of the block
driver). Many-arms and sphere are dominated by the arm-selection linear programs, solved once
per pair in both drivers: there the two are equal within the machine's noise.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate
from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.identification.lingape import LinGapE
from banditkit.identification.lingape_blocks import simulate_lingape
from banditkit.rng import derive_seed

INSTANCES = {
    "soare5": ("soare", {"d": 5, "omega": 0.01}),
    "soare10": ("soare", {"d": 10, "omega": 0.01}),
    "soare35": ("soare", {"d": 35, "omega": 0.01}),
    "multivariate6": ("multivariate-testing", {"D": 6}),
    "many-arms": ("many-arms", {"n": 10000}),
    "sphere": ("sphere", {"n": 2000, "d": 9}),
}
RANDOM = ("multivariate-testing", "many-arms", "sphere")


def make_env(name: str):
    family, params = INSTANCES[name]
    if family in RANDOM:
        params = {**params, "rng": np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(0)))}
    return make_instance(family, **params)


def lingape(env) -> LinGapE:
    return LinGapE(env.X, env.Z, 0.05, theta_bound=float(np.linalg.norm(env.theta)))


def bench(name: str, trials: int, drivers: list[str], seq_horizon: int) -> dict:
    env = make_env(name)
    seeds = [derive_seed(0, "bench-lingape", name, k) for k in range(trials)]
    out: dict = {}
    if "blocks" in drivers:
        start = time.perf_counter()
        runs = [simulate_lingape(lingape(env), env, seed=s) for s in seeds]
        wall = time.perf_counter() - start
        pulls = np.array([t.n_pulls for t in runs])
        out["blocks"] = (1e6 * wall / pulls.sum(), wall / trials)
        out["pulls"] = pulls.mean()
        out["correct"] = sum(bool(t.correct) for t in runs)
    if "sequential" in drivers:
        start = time.perf_counter()
        ref = simulate(lingape(env), env, horizon=seq_horizon, seed=seeds[0],
                       engine="reference")  # the protocol loop
        wall = time.perf_counter() - start
        us = 1e6 * wall / ref.n_pulls
        out["sequential"] = (us, us * out.get("pulls", ref.n_pulls) / 1e6)
        block = simulate_lingape(lingape(env), env, horizon=seq_horizon, seed=seeds[0])
        if not (block.decisions.same_as(ref.decisions) and block.stopped == ref.stopped
                and block.recommendation == ref.recommendation):
            raise AssertionError(f"{name}: the block driver differs from simulate")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=INSTANCES)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--drivers", nargs="+", default=["blocks", "sequential"],
                        choices=["blocks", "sequential"])
    parser.add_argument("--seq-horizon", type=int, default=30_000)
    args = parser.parse_args()
    print(f"{'instance':>14} {'mean pulls':>11} " + " ".join(
        f"{d + ' µs/pull':>20} {'s/trial':>8}" for d in args.drivers))
    with single_threaded_blas():
        for name in args.instances:
            r = bench(name, args.trials, args.drivers, args.seq_horizon)
            cells = " ".join(f"{r[d][0]:>20.3f} {r[d][1]:>8.2f}" for d in args.drivers)
            print(f"{name:>14} {r.get('pulls', float('nan')):>11.0f} {cells}", flush=True)


if __name__ == "__main__":
    main()
