"""Cost of a live experiment's calls against the budget and the units already recorded
(issue 15 §3): assign + record of 10,000 units and ``status``, for G-BAI, P1-RAGE and
ReplicableElimination at budgets 10⁵, 10⁷ and 10⁹, in-process and through the CLI
(``banditkit experiment ...``, one process per call), and the last 10,000 of 100,000 units of
one batch.

    python benchmarks/bench_live.py [--budgets 1e5 1e7 1e9] [--no-cli] [--units 10000]
        [--db postgresql://...] [--call-size N]

``--db URL`` keeps the experiments in that PostgreSQL database (each under a fresh name, in
process only: the CLI takes a file) instead of SQLite files in a temporary folder;
``--call-size N`` assigns and records N units per call (default: as many as are left), so
that a small N measures the cost of a call rather than of a unit.

Rewards are 0/1 draws (rate 0.5) from ``numpy.random.default_rng(0)``; arms: the 3 × 3
identity for the linear identifiers, names a, b, c for ReplicableElimination (ρ = 0.2, its live
defaults). Prints µs per unit of assign + record (wall clock, and CPU time of the process
and its CLI children: on a shared machine the wall clock is mostly waiting for the disk's
fsync), ms per status, and each row's ratio to the
10⁵ row of its algorithm and path, and (``first s``) the seconds of the first call on a
fresh file (two units: P1-RAGE's first epoch is one pull, so its second epoch is asked
then), which asks and stores the batch: once per batch (O(arms) for the i.i.d. identifiers,
whose batches are stored as a description, ``banditkit.protocol.IIDBatch``). Times are
wall-clock on whatever machine runs it (upper bounds on a shared one). A budget an algorithm
refuses (Peace and OD-LinBAI hold their shuffled pull sequence in memory) is printed as
refused, with the message.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from banditkit import Experiment, ExperimentError

CASES = {"GBAI": (np.eye(3), {}), "P1RAGE": (np.eye(3), {}),
         "ReplicableElimination": (["a", "b", "c"], {"rho": 0.2})}


#: Where an experiment lives: (SQLite path, None) or (PostgreSQL URL, experiment name).
Location = tuple[Path | str, str | None]


def _create(path: Location, name: str, budget: int, params: dict | None = None) -> None:
    arms, base = CASES[name]
    Experiment.create(path[0], name=path[1], algorithm=name, arms=arms, seed=1,
                      horizon=budget, params={**base, **(params or {})}).close()


def _first(path: Location, rng: np.random.Generator) -> float:
    """Seconds of the first two assign + record calls of one unit: the batch asked and stored,
    once per batch (O(batch): an i.i.d. identifier's batch is its whole budget or epoch)."""
    start = time.perf_counter()
    with Experiment.open(path[0], name=path[1]) as exp:
        for _ in range(2):  # P1-RAGE's first epoch is one pull: the second asks epoch 2
            frame = exp.assign(1)
            exp.record(frame["unit"], rng.integers(0, 2, len(frame)).astype(float))
    return time.perf_counter() - start


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the CLI calls)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _in_process(path: Location, units: int, rng: np.random.Generator,
                call_size: int | None = None) -> tuple[float, float, float, int]:
    """(wall and CPU seconds of assign + record for ``units`` units, ``call_size`` a call,
    wall seconds of one status, units done)."""
    with Experiment.open(path[0], name=path[1]) as exp:
        done, start, cpu = 0, time.perf_counter(), _cpu()
        while done < units:
            frame = exp.assign(min(units - done, call_size or units))
            if frame.empty:
                break
            exp.record(frame["unit"], rng.integers(0, 2, len(frame)).astype(float))
            done += len(frame)
        calls, cpu = time.perf_counter() - start, _cpu() - cpu
        start = time.perf_counter()
        exp.status()
        return calls, cpu, time.perf_counter() - start, done


def _cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "banditkit", "experiment", *args],
                          capture_output=True, text=True, env=os.environ.copy())
    if done.returncode:
        raise RuntimeError(done.stderr)


def _through_cli(location: Location, units: int, rng: np.random.Generator, folder: Path
                 ) -> tuple[float, float, float, int]:
    path = Path(location[0])
    done, calls, k, cpu = 0, 0.0, 0, _cpu()
    while done < units:
        k += 1
        out, answers = folder / f"{path.stem}-a{k}.csv", folder / f"{path.stem}-r{k}.csv"
        start = time.perf_counter()
        _cli("assign", str(path), str(units - done), "--out", str(out))
        calls += time.perf_counter() - start
        frame = pd.read_csv(out)
        if frame.empty:
            break
        pd.DataFrame({"unit": frame["unit"], "reward": rng.integers(0, 2, len(frame))}
                     ).to_csv(answers, index=False)
        start = time.perf_counter()
        _cli("record", str(path), str(answers))
        calls += time.perf_counter() - start
        done += len(frame)
    cpu = _cpu() - cpu  # includes writing the answer files here: a few ms
    start = time.perf_counter()
    _cli("status", str(path))
    return calls, cpu, time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[1e5, 1e7, 1e9])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--no-cli", action="store_true")
    parser.add_argument("--algorithms", nargs="+", default=list(CASES))
    parser.add_argument("--db", default=None, help="a postgresql:// URL (default: SQLite "
                        "files in a temporary folder)")
    parser.add_argument("--call-size", type=int, default=None)
    parser.add_argument("--no-late", action="store_true",
                        help="skip the last-10,000-of-100,000 rows")
    args = parser.parse_args()
    paths = ["in-process"] + ([] if args.no_cli or args.db else ["cli"])
    run_id = f"b{os.getpid()}_{int(time.time())}"

    def where(folder: Path, stem: str) -> Location:
        if args.db is None:
            return folder / f"{stem}.sqlite", None
        return args.db, f"{run_id}_{stem}".replace("+", "")
    print(f"{'algorithm':22s} {'path':10s} {'budget':>7s} {'units':>6s} {'us/unit':>9s} "
          f"{'ratio':>6s} {'cpu us':>8s} {'ratio':>6s} {'status ms':>9s} {'ratio':>6s} "
          f"{'first s':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.algorithms:
            for how in paths:
                first: tuple[float, float, float] | None = None
                for budget in (int(b) for b in args.budgets):
                    path = where(folder, f"{name}-{how}-{budget}")
                    rng = np.random.default_rng(0)
                    try:
                        _create(path, name, budget)
                    except ExperimentError as error:
                        print(f"{name:22s} {how:10s} {budget:7.0e} refused: {error}")
                        continue
                    once = _first(path, rng)
                    run = (lambda p, u, r: _in_process(p, u, r, args.call_size)) \
                        if how == "in-process" else \
                        (lambda p, u, r: _through_cli(p, u, r, folder))
                    calls, cpu, status, done = run(path, args.units, rng)
                    per_unit, status_ms = 1e6 * calls / max(done, 1), 1e3 * status
                    cpu_unit = 1e6 * cpu / max(done, 1)
                    first = first or (per_unit, cpu_unit, status_ms)
                    print(f"{name:22s} {how:10s} {budget:7.0e} {done:6d} {per_unit:9.1f} "
                          f"{per_unit / first[0]:6.2f} {cpu_unit:8.1f} "
                          f"{cpu_unit / first[1]:6.2f} {status_ms:9.1f} "
                          f"{status_ms / first[2]:6.2f} {once:8.2f}", flush=True)
        # the last 10,000 of 100,000 units of one batch (the first 90,000 untimed)
        for name, budget, params in [] if args.no_late else [
                ("ReplicableElimination", 10**7, {"beta": 40_000}), ("GBAI", 100_000, {})]:
            path = where(folder, f"{name}-late")
            _create(path, name, budget, params)
            rng = np.random.default_rng(0)
            _in_process(path, 90_000, rng)
            calls, cpu, status, done = _in_process(path, args.units, rng, args.call_size)
            print(f"{name:22s} {'late':10s} {budget:7.0e} {done:6d} "
                  f"{1e6 * calls / done:9.1f} {'':6s} {1e6 * cpu / done:8.1f} {'':6s} "
                  f"{1e3 * status:9.1f}   (units 90,001-100,000 of one batch)", flush=True)


if __name__ == "__main__":
    main()
