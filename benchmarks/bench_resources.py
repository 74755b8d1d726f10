"""Resources stay bounded (issue 26, section 5): 300 experiments touched through one
``banditkit serve`` (each created, assigned 2 units and read), its file descriptors (SQLite, the
server and its reader processes together) and its PostgreSQL connections counted every 50
experiments, against the bounds it was started with; then 40 calls refused with 400 and the
sessions they opened (before the pool, 40 bad calls opened 81).

Run (PostgreSQL: a temporary server of the test suite's launcher, tests/postgres_support.py):
    .venv/bin/python benchmarks/bench_resources.py                 # 300 experiments each
    .venv/bin/python benchmarks/bench_resources.py --experiments 100 --backend sqlite
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from service_support import Server, call

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


def _touch(port: int, name: str) -> None:
    assert call(port, "POST", "/experiments", {"name": name, **DEFINITION})[0] == 201
    assert len(call(port, "POST", f"/experiments/{name}/assign", {"n": 2})[1]["units"]) == 2
    assert call(port, "GET", f"/experiments/{name}/status")[0] == 200


def _connections(url: str) -> tuple[int, int]:
    """(connections to the database now, sessions opened on it so far)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        db = conn.execute("SELECT current_database()").fetchone()[0]
        now = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid "
                           "<> pg_backend_pid()", (db,)).fetchone()[0]
        opened = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s",
                              (db,)).fetchone()[0]
    return now, opened


def run(db: str, backend: str, experiments: int, options: tuple[str, ...]) -> list[str]:
    rows = []
    server = Server(Path(db) if backend == "sqlite" else db, options=options)
    try:
        start = time.perf_counter()
        base = server.descriptors()
        rows.append(f"| {backend} | {' '.join(options)} | 0 | {base} | "
                    f"{_connections(db)[0] if backend == 'postgres' else '–'} | |")
        for i in range(experiments):
            _touch(server.port, f"e{i}")
            if (i + 1) % 50 == 0 or i + 1 == experiments:
                conns = _connections(db)[0] if backend == "postgres" else "–"
                rows.append(f"| {backend} | {' '.join(options)} | {i + 1} | "
                            f"{server.descriptors()} | {conns} | "
                            f"{time.perf_counter() - start:.0f} |")
        if backend == "postgres":
            time.sleep(1.0)
            before = _connections(db)[1]
            for i in range(40):
                status, _ = call(server.port, "POST", f"/experiments/e{i % 5}/record",
                                 {"units": [10**6], "rewards": [1]})
                assert status == 400
            time.sleep(1.0)
            rows.append(f"| {backend} | 40 calls refused with 400 | | | sessions opened: "
                        f"{_connections(db)[1] - before} | |")
    finally:
        server.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=300)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), nargs="+",
                        default=["sqlite", "postgres"])
    args = parser.parse_args(argv)
    print(f"# {platform.node()} ({os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}); {args.experiments} experiments touched (create, "
          "assign 2, status)")
    print("| backend | server options | experiments | descriptors (server + readers) | "
          "connections to the database | seconds |")
    print("|---|---|---|---|---|---|")
    options = ("--max-open", "16", "--readers", "2", "--pool-size", "4")
    for backend in args.backend:
        if backend == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                for row in run(folder, "sqlite", args.experiments, options):
                    print(row, flush=True)
        else:
            from postgres_support import start_server

            cluster, stop = start_server()
            try:
                for row in run(cluster.url(socket=False), "postgres", args.experiments,
                               options):
                    print(row, flush=True)
            finally:
                stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
