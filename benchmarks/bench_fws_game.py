"""Frank-Wolfe Sampling's matrix games: the compiled simplex (:mod:`banditkit.identification.
fw_game`) against HiGHS (``scipy.optimize.linprog``, the previous solver), in one process.

1. Per game: the games an FWS run meets (Soare benchmark, ω = 0.01, the paper threshold, whose
   r-subdifferential holds several alternatives most rounds) solved by both; µs per game, the
   ratio, and how much better one value is than the other (relative to the payoffs' scale).
2. Per pull: the same trial (seed, cap) run by ``simulate`` (the compiled kernel; the class
   solves the games) with each solver; CPU µs per pull, games, and the first pull where the
   two runs' decisions part (HiGHS's vertex is optimal only to its tolerances, so the iterate,
   then a pull, can differ).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_fws_game.py --d 10 --cap 300000

Timings are CPU time (``time.process_time``) with one BLAS thread, as the figures run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from banditkit import simulate
from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.identification import fw_game
from banditkit.identification.fw_sampling import FrankWolfeSampling, fw_vertex


def _highs(G: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float]:
    p = fw_vertex(G, x)
    return p, float(((p - x) @ G).min())


def _trial(env, d: int, seed: int, cap: int, threshold: str, solver) -> tuple[object, float,
                                                                                  list]:
    captured: list = []
    real = fw_game.solve_fw_game

    def solve(G, x):
        captured.append((G.copy(), x.copy()))
        return solver(G, x)

    fw_game.solve_fw_game = solve  # the class imports it at each game (lazily)
    try:
        alg = FrankWolfeSampling(env.X, env.Z, 0.05, threshold=threshold)
        t0 = time.process_time()
        trial = simulate(alg, env, seed=seed, horizon=cap)
        cpu = time.process_time() - t0
    finally:
        fw_game.solve_fw_game = real
    return trial, cpu, captured


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--omega", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cap", type=int, default=300_000, help="pulls per trial at most")
    ap.add_argument("--threshold", default="paper", choices=("paper", "heuristic"))
    ap.add_argument("--games", type=int, default=300, help="games timed in part 1")
    args = ap.parse_args()
    env = make_instance("soare", d=args.d, omega=args.omega)
    with single_threaded_blas():
        fw_game.solve_fw_game(np.eye(3)[:, :2], np.full(3, 1 / 3))  # compile (or load) first
        simulate(FrankWolfeSampling(env.X, env.Z, 0.05, threshold="heuristic"), env, seed=0,
                 horizon=2000)  # and the kernel
        new, cpu_new, games = _trial(env, args.d, args.seed, args.cap, args.threshold,
                                     fw_game.solve_fw_game)
        old, cpu_old, _ = _trial(env, args.d, args.seed, args.cap, args.threshold, _highs)
        # Part 1: the games of the simplex run, both solvers.
        sample = games[:: max(1, len(games) // args.games)][: args.games]
        timing = {}
        gap = 0.0
        for name, solver in (("simplex", fw_game.solve_fw_game), ("HiGHS", _highs)):
            t0 = time.process_time()
            values = [((solver(G, x)[0] - x) @ G).min() for G, x in sample]
            timing[name] = (time.process_time() - t0) / max(len(sample), 1)
            if name == "simplex":
                ours = values
            else:
                scale = [np.abs(G - x @ G).max() for G, x in sample]
                gap = max([(a - b) / s for a, b, s in zip(ours, values, scale, strict=True)],
                          default=0.0)
    sizes = [G.shape[1] for G, _ in sample]
    print(f"Soare d = {args.d}, ω = {args.omega}, {args.threshold} threshold, seed {args.seed}, "
          f"cap {args.cap}")
    print(f"part 1: {len(sample)} games (K = {env.n_arms}, |H| {min(sizes, default=0)}–"
          f"{max(sizes, default=0)}): simplex {1e6 * timing['simplex']:.1f} µs, HiGHS "
          f"{1e6 * timing['HiGHS']:.0f} µs a game "
          f"(ratio {timing['HiGHS'] / timing['simplex']:.0f}×);"
          f" simplex value − HiGHS value ≤ {gap:.2e} of the payoff scale")
    n = min(new.n_pulls, old.n_pulls)
    seq_new, seq_old = (np.repeat(*tr.decisions.runs()[:2])[:n] for tr in (new, old))
    part = np.flatnonzero(seq_new != seq_old)
    for name, tr, cpu in (("simplex", new, cpu_new), ("HiGHS", old, cpu_old)):
        print(f"part 2: {name:7s} {tr.n_pulls} pulls (stopped {tr.stopped}), "
              f"{tr.info['games']} games, {cpu:.2f} s CPU, {1e6 * cpu / tr.n_pulls:.2f} µs a pull")
    ratio = cpu_old / old.n_pulls / (cpu_new / new.n_pulls)
    print(f"part 2: per-pull ratio HiGHS/simplex {ratio:.1f}×; "
          f"decisions part at pull {int(part[0]) if part.size else 'never'} (of the first "
          f"{n} pulls)")


if __name__ == "__main__":
    main()
