"""The writer thread's cost per assign(1)+record(1) round trip of ``banditkit serve``, without
HTTP: groups of G ``assign`` requests, then G ``record`` requests, run on a folder catalog's
worker exactly as its queue runs a group (``Catalog._run``), timed with the worker's own CPU
clock (``time.thread_time``) and the wall clock (which adds the commits' disk syncs).

``--one-by-one`` makes the requests as plain calls (each its own savepoint), as the service
did before a group's plain assigns and records were served as one call each
(``Experiment.assign_many``, ``Experiment.record_many``).

Run:
    .venv/bin/python benchmarks/bench_writer.py --group 16 --rounds 60
    .venv/bin/python benchmarks/bench_writer.py --group 16 --rounds 60 --one-by-one
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any

import numpy as np

from banditkit.service.catalog import _Job
from banditkit.service.folder import ExperimentFolder
from banditkit.service.jsonable import to_json

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"],
              "horizon": 10_000_000, "params": {"rho": 0.3, "beta": 3}}


def _answer(units: Any) -> dict:
    """What ``POST .../assign`` answers (banditkit/service/app.py)."""
    return {"units": units.records(), "reason": units.reason,
            "overflow_units": to_json(units.overflow_units)}


def measure(group: int, rounds: int, together: bool, seed: int = 0) -> dict:
    """Writer CPU and wall ms per round trip over ``rounds`` rounds (after one unmeasured)."""
    with tempfile.TemporaryDirectory() as folder:
        catalog = ExperimentFolder(folder)
        try:
            catalog.submit(lambda: catalog.create("x", seed=seed, who="bench",
                                                  **DEFINITION)).result()
            rng = np.random.default_rng(seed)

            def run_group(jobs: list[_Job]) -> list[Any]:
                for job in jobs:
                    job.future.set_running_or_notify_cancel()
                catalog._run(jobs)
                return [job.future.result() for job in jobs]

            def assign_job() -> _Job:
                return _Job("x", lambda e: _answer(e.assign_rows(1)),
                            assign=1 if together else None, answer=_answer)

            def record_job(unit: int) -> _Job:
                args = ([unit], [float(rng.random() < 0.1)])
                return _Job("x", lambda e: e.record(*args), record=args if together else None)

            def rounds_of(count: int) -> None:
                for _ in range(count):
                    got = run_group([assign_job() for _ in range(group)])
                    run_group([record_job(a["units"][0]["unit"]) for a in got])

            def timed() -> tuple[float, float]:
                rounds_of(1)  # warm: the experiment opened, its first batch asked
                cpu, wall = time.thread_time(), time.perf_counter()
                rounds_of(rounds)
                return time.thread_time() - cpu, time.perf_counter() - wall

            cpu, wall = catalog.submit(timed).result()
        finally:
            catalog.close()
    trips = group * rounds
    return {"cpu_ms": 1000 * cpu / trips, "wall_ms": 1000 * wall / trips}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", type=int, default=16, help="requests per group (16)")
    parser.add_argument("--rounds", type=int, default=60, help="groups of each kind (60)")
    parser.add_argument("--one-by-one", action="store_true",
                        help="each request its own call, as before calls were served together")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.group < 1 or args.rounds < 1:
        parser.error("--group and --rounds must be >= 1")
    r = measure(args.group, args.rounds, not args.one_by_one, args.seed)
    print(f"groups of {args.group}, {args.rounds} rounds, "
          f"{'one by one' if args.one_by_one else 'served together'}: writer CPU "
          f"{r['cpu_ms']:.3f} ms per round trip, wall {r['wall_ms']:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
