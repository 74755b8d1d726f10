"""Speed of LinGapE on the Soare et al. benchmark (Fiez et al. 2019, Fig. 1a): the sequential
class through simulate against the lock-step driver, and the projected wall time of the LinGapE
part of rage:fig1a.

    .venv/bin/python benchmarks/bench_lingape.py [--d 5 10 35] [--trials 20] [--horizon 20000]
        [--seq-trials 2] [--full]

Per dimension d (δ = 0.05, θ-bound ‖θ*‖₂ = 2, ω = 0.01):

* capped runs: ``--seq-trials`` trials through simulate and ``--trials`` trials through
  ``lingape_lockstep``, every trial cut at ``--horizon`` pulls, give µs per pull of each path (the
  lock-step trials that were also run sequentially are checked to be identical);
* ``--full``: the ``--trials`` trials in lock-step to the end (LinGapE stops by itself): pulls
  per trial and seconds per trial, the figure's actual cost for that point; the sequential
  seconds per trial are projected as mean pulls × its µs per pull.

The projection for rage:fig1a (d = 5, 10, ..., 35, 20 trials per point, one lock-step task per
point, 2 workers) interpolates the measured full-run seconds linearly in d between the measured
dimensions. CPU time is printed beside wall time because the machine may be shared.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate
from banditkit.envs.instances.rage import soare
from banditkit.identification.lingape_lockstep import lingape_lockstep, make_lingape
from banditkit.rng import derive_seed

FIG1A_DIMENSIONS = (5, 10, 15, 20, 25, 30, 35)


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def capped(d: int, trials: int, seq_trials: int, horizon: int) -> dict:
    env = soare(d)
    seeds = [derive_seed(0, "bench-lingape", d, k) for k in range(trials)]
    lock, lwall, lcpu = timed(lambda: lingape_lockstep(env, [None] * trials, seeds, horizon,
                                                       None, delta=0.05))
    seq = []
    swall = scpu = 0.0
    for k in range(seq_trials):
        tr, w, c = timed(lambda k=k: simulate(make_lingape(env, delta=0.05), env,
                                              horizon=horizon, seed=seeds[k]))
        seq.append(tr)
        swall, scpu = swall + w, scpu + c
        same = (tr.decisions.same_as(lock[k].decisions) and tr.info == lock[k].info
                and tr.recommendation == lock[k].recommendation)
        if not same:
            raise AssertionError(f"d={d}, trial {k}: lock-step differs from simulate")
    lock_pulls = sum(t.n_pulls for t in lock)
    seq_pulls = sum(t.n_pulls for t in seq)
    return {"seq_us": 1e6 * swall / seq_pulls, "seq_cpu_us": 1e6 * scpu / seq_pulls,
            "lock_us": 1e6 * lwall / lock_pulls, "lock_cpu_us": 1e6 * lcpu / lock_pulls}


def full(d: int, trials: int) -> dict:
    env = soare(d)
    seeds = [derive_seed(0, "bench-lingape", d, k) for k in range(trials)]
    lock, wall, cpu = timed(lambda: lingape_lockstep(env, [None] * trials, seeds, None, None,
                                                     delta=0.05))
    pulls = np.array([t.n_pulls for t in lock])
    return {"pulls_mean": pulls.mean(), "pulls_max": int(pulls.max()), "wall": wall, "cpu": cpu,
            "correct": sum(bool(t.correct) for t in lock), "stopped": sum(t.stopped for t in lock)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[5, 10, 35])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seq-trials", type=int, default=2)
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args()

    print(f"capped at {args.horizon} pulls: sequential {args.seq_trials} trials, lock-step "
          f"{args.trials} trials")
    print(f"{'d':>3} {'seq µs/pull':>12} {'(cpu)':>7} {'lock µs/pull':>13} {'(cpu)':>7} "
          f"{'speed-up':>9}")
    rates = {}
    for d in args.d:
        r = capped(d, args.trials, args.seq_trials, args.horizon)
        rates[d] = r
        print(f"{d:>3} {r['seq_us']:>12.1f} {r['seq_cpu_us']:>7.1f} {r['lock_us']:>13.2f} "
              f"{r['lock_cpu_us']:>7.2f} {r['seq_us'] / r['lock_us']:>8.1f}x", flush=True)
    if not args.full:
        return
    print(f"\nfull runs, {args.trials} trials in lock-step until LinGapE stops")
    print(f"{'d':>3} {'mean pulls':>11} {'max pulls':>10} {'s/trial':>8} {'cpu s/trial':>12} "
          f"{'seq s/trial (proj.)':>20} {'correct':>8}")
    walls = {}
    for d in args.d:
        f = full(d, args.trials)
        walls[d] = f["wall"]
        seq = f["pulls_mean"] * rates[d]["seq_us"] / 1e6
        print(f"{d:>3} {f['pulls_mean']:>11.0f} {f['pulls_max']:>10} "
              f"{f['wall'] / args.trials:>8.2f} {f['cpu'] / args.trials:>12.2f} {seq:>20.1f} "
              f"{f['correct']:>5}/{args.trials}", flush=True)
    measured = sorted(walls)
    if len(measured) >= 2:
        per_point = np.interp(FIG1A_DIMENSIONS, measured, [walls[d] for d in measured])
        workers = [0.0, 0.0]  # one task per point, longest first to the least loaded worker
        for w in sorted(per_point, reverse=True):
            workers[int(np.argmin(workers))] += w
        print(f"\nrage:fig1a LinGapE ({len(FIG1A_DIMENSIONS)} points x {args.trials} trials): "
              f"{per_point.sum():.0f} s of lock-step work, about {max(workers):.0f} s on 2 "
              f"workers (interpolated in d from d = {measured})")


if __name__ == "__main__":
    main()
