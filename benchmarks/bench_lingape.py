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

Lock-step on per-trial instances (Fiez et al.'s Fig. 2a and 2b, a new instance per trial)::

    .venv/bin/python benchmarks/bench_lingape.py --lockstep mvt6 mvt4 click40 \
        [--ls-trials 20] [--ls-horizon 20000] [--ls-ref-trials 3]

``--ls-trials`` instances drawn with ``stream(0, "bench", k)``, run together through
:func:`lingape_lockstep` (capped at ``--ls-horizon`` pulls if given), against the first
``--ls-ref-trials`` of them through :func:`simulate_lingape` with the same cap, each checked to
make the same decisions; µs per pull per trial is wall time over the trials' pulls, cold (pair
cache cleared: every arm-selection LP solved) and warm (LPs cached: the per-pull cost alone).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate
from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.identification.lingape import LinGapE
from banditkit.identification.lingape_blocks import clear_pair_cache, simulate_lingape
from banditkit.identification.lingape_lockstep import lingape_lockstep
from banditkit.rng import derive_seed, stream

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
        ref = simulate(lingape(env), env, horizon=seq_horizon, seed=seeds[0])
        wall = time.perf_counter() - start
        us = 1e6 * wall / ref.n_pulls
        out["sequential"] = (us, us * out.get("pulls", ref.n_pulls) / 1e6)
        block = simulate_lingape(lingape(env), env, horizon=seq_horizon, seed=seeds[0])
        if not (block.decisions.same_as(ref.decisions) and block.stopped == ref.stopped
                and block.recommendation == ref.recommendation):
            raise AssertionError(f"{name}: the block driver differs from simulate")
    return out


PER_TRIAL = {
    "mvt6": ("multivariate-testing", {"D": 6}),
    "mvt4": ("multivariate-testing", {"D": 4}),
    "click40": ("click-through", {"n": 40}),
}


def bench_lockstep(name: str, trials: int, horizon: int | None, ref_trials: int) -> dict:
    """Lock-step against the block driver on ``trials`` per-trial instances of ``name``.

    Each driver runs twice: cold (the pair cache cleared: every arm-selection LP solved, as in a
    fresh worker) and warm (the LPs cached), which isolates the per-pull cost.
    """
    family, params = PER_TRIAL[name]
    envs = [make_instance(family, rng=stream(0, "bench", k), **params) for k in range(trials)]
    seeds = [derive_seed(0, "bench-lingape-lockstep", name, k) for k in range(trials)]
    rngs = [stream(0, "xi", k) for k in range(trials)]
    out: dict = {}
    for run in ("cold", "warm"):
        if run == "cold":
            clear_pair_cache()
        start = time.perf_counter()
        runs = lingape_lockstep(envs, rngs, seeds, horizon, None, delta=0.05)
        pulls = np.array([t.n_pulls for t in runs])
        out[f"lockstep {run}"] = 1e6 * (time.perf_counter() - start) / pulls.sum()
    out.update(pulls=pulls.mean(), max=pulls.max(), stopped=sum(t.stopped for t in runs))
    for run in ("cold", "warm"):
        if run == "cold":
            clear_pair_cache()
        start, ref_pulls = time.perf_counter(), 0
        for k in range(min(ref_trials, trials)):
            ref = simulate_lingape(lingape(envs[k]), envs[k], horizon=horizon, seed=seeds[k])
            ref_pulls += ref.n_pulls
            if not (ref.decisions.same_as(runs[k].decisions) and ref.stopped == runs[k].stopped
                    and ref.recommendation == runs[k].recommendation):
                raise AssertionError(f"{name}: lock-step trial {k} differs from the block driver")
        out[f"blocks {run}"] = 1e6 * (time.perf_counter() - start) / max(ref_pulls, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=INSTANCES)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--drivers", nargs="+", default=["blocks", "sequential"],
                        choices=["blocks", "sequential"])
    parser.add_argument("--seq-horizon", type=int, default=30_000)
    parser.add_argument("--lockstep", nargs="+", choices=PER_TRIAL, default=None,
                        help="per-trial instances: lock-step against blocks (instead of the "
                             "fixed-instance comparison)")
    parser.add_argument("--ls-trials", type=int, default=20)
    parser.add_argument("--ls-horizon", type=int, default=None)
    parser.add_argument("--ls-ref-trials", type=int, default=3)
    args = parser.parse_args()
    if args.lockstep:
        cols = ("lockstep cold", "blocks cold", "lockstep warm", "blocks warm")
        print(f"{'instances':>10} {'trials':>6} {'mean pulls':>10} {'max pulls':>9} "
              f"{'stopped':>7} " + " ".join(f"{c + ' µs':>18}" for c in cols)
              + f" {'speed-up cold':>13} {'warm':>6}")
        with single_threaded_blas():
            for name in args.lockstep:
                r = bench_lockstep(name, args.ls_trials, args.ls_horizon, args.ls_ref_trials)
                print(f"{name:>10} {args.ls_trials:>6} {r['pulls']:>10.0f} {r['max']:>9} "
                      f"{r['stopped']:>7} " + " ".join(f"{r[c]:>18.2f}" for c in cols)
                      + f" {r['blocks cold'] / r['lockstep cold']:>13.1f}"
                      f" {r['blocks warm'] / r['lockstep warm']:>6.1f}", flush=True)
        return
    print(f"{'instance':>14} {'mean pulls':>11} " + " ".join(
        f"{d + ' µs/pull':>20} {'s/trial':>8}" for d in args.drivers))
    with single_threaded_blas():
        for name in args.instances:
            r = bench(name, args.trials, args.drivers, args.seq_horizon)
            cells = " ".join(f"{r[d][0]:>20.3f} {r[d][1]:>8.2f}" for d in args.drivers)
            print(f"{name:>14} {r.get('pulls', float('nan')):>11.0f} {cells}", flush=True)


if __name__ == "__main__":
    main()
