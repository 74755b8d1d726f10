"""Load test of ``banditkit serve``: concurrent clients doing assign+record round trips on one
experiment, through 1 and through 2 server processes on one SQLite file, then a check from the
database that no unit was lost or duplicated.

A round trip is ``POST /experiments/NAME/assign {"n": U}`` then ``POST .../record`` of the
units it returned (rewards: Bernoulli draws with the arm's mean, from each client's own
stream of SeedSequence(seed)). An assign that returns no unit (the batch waits for the rewards
of units other clients hold) is counted and retried, not counted as a round trip. Clients are
threads with one keep-alive ``http.client`` connection each, to 127.0.0.1 only; the run stops
at the round-trip target or the time limit, whichever comes first.

Checked from the database after each run: every unit an assign returned exists once, in one
live slot; every reward whose record call returned is stored as sent (0 lost); no unit is
recorded that no client was given, and no (batch, slot) holds two live units (0 duplicated).

Run:  .venv/bin/python benchmarks/bench_service.py [--clients 8] [--round-trips 50000]
      [--servers 1 2] [--units 1] [--seed 0] [--time-limit 900]
"""

from __future__ import annotations

import argparse
import http.client
import json
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

# the real-server launcher the service tests use (a child `banditkit serve --port 0`)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from service_support import Server

NAME = "load"
MEANS = [0.10, 0.11, 0.12]  # close arms: elimination takes long, batches stay busy
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"],
              "horizon": 10_000_000, "params": {"rho": 0.3, "beta": 3}}


class Client(threading.Thread):
    def __init__(self, port: int, seed: np.random.SeedSequence, units: int,
                 budget: list[int], lock: threading.Lock, deadline: float) -> None:
        super().__init__(daemon=True)
        self.port, self.units, self.budget, self.lock = port, units, budget, lock
        self.deadline = deadline
        self.rng = np.random.default_rng(seed)
        self.latency: list[float] = []  # seconds per request (assign and record alike)
        self.given: list[int] = []  # units an assign returned
        self.recorded: dict[int, float] = {}  # unit -> reward, for record calls that returned
        self.empty = 0
        self.trips = 0  # round trips whose record call returned
        self.error: str | None = None

    def _post(self, conn: http.client.HTTPConnection, path: str, body: dict) -> dict:
        start = time.perf_counter()
        conn.request("POST", path, body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        answer = json.loads(response.read())
        self.latency.append(time.perf_counter() - start)
        if response.status != 200:
            raise RuntimeError(f"{path}: {response.status} {answer}")
        return answer

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            while time.monotonic() < self.deadline:
                with self.lock:
                    if self.budget[0] <= 0:
                        return
                    self.budget[0] -= 1
                while True:
                    units = self._post(conn, f"/experiments/{NAME}/assign",
                                       {"n": self.units})["units"]
                    if units or time.monotonic() >= self.deadline:
                        break
                    self.empty += 1
                    time.sleep(0.002)
                if not units:
                    return
                ids = [u["unit"] for u in units]
                self.given += ids
                rewards = [float(self.rng.random() < MEANS[u["arm_index"]]) for u in units]
                self._post(conn, f"/experiments/{NAME}/record",
                           {"units": ids, "rewards": rewards})
                self.recorded.update(zip(ids, rewards, strict=True))
                self.trips += 1
        except Exception as error:  # reported in the results, never hidden
            self.error = f"{type(error).__name__}: {error}"
        finally:
            conn.close()


def run_load(servers: int, clients: int, round_trips: int, units: int, seed: int,
             time_limit: float, where: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        db = Path(tmp)
        started = [Server(db, wait=False) for _ in range(servers)]
        started = [s.wait() for s in started]
        try:
            conn = http.client.HTTPConnection("127.0.0.1", started[0].port, timeout=120)
            conn.request("POST", "/experiments", json.dumps({"name": NAME, "seed": seed,
                                                             **DEFINITION}))
            response = conn.getresponse()
            assert response.status == 201, response.read()
            conn.close()
            budget, lock = [round_trips], threading.Lock()
            streams = np.random.SeedSequence(seed).spawn(clients)
            begin = time.perf_counter()
            workers = [Client(started[i % servers].port, streams[i], units, budget, lock,
                              time.monotonic() + time_limit) for i in range(clients)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            elapsed = time.perf_counter() - begin
        finally:
            for server in started:
                server.stop()
        return {**_verify(db / f"{NAME}.sqlite", workers), "servers": servers,
                "clients": clients, "units_per_call": units, "seconds": elapsed,
                **_rates(workers, elapsed)}


def _rates(workers: list[Client], elapsed: float) -> dict:
    latency = np.concatenate([np.asarray(w.latency) for w in workers]) * 1000
    trips = sum(w.trips for w in workers)
    return {"requests": int(latency.size), "requests_per_s": latency.size / elapsed,
            "p50_ms": float(np.percentile(latency, 50)),
            "p99_ms": float(np.percentile(latency, 99)),
            "empty_assigns": sum(w.empty for w in workers),
            "errors": [w.error for w in workers if w.error],
            "round_trips_per_s": trips / elapsed}


def _verify(path: Path, workers: list[Client]) -> dict:
    """Lost and duplicated units, from the database itself."""
    given = [u for w in workers for u in w.given]
    recorded = {u: r for w in workers for u, r in w.recorded.items()}
    conn = sqlite3.connect(path)
    try:
        stored = dict(conn.execute("SELECT id, reward FROM units WHERE expired_at IS NULL"))
        (slot_dupes,) = conn.execute(
            "SELECT COUNT(*) FROM (SELECT batch, slot FROM units WHERE expired_at IS NULL "
            "GROUP BY batch, slot HAVING COUNT(*) > 1)").fetchone()
    finally:
        conn.close()
    lost = sum(1 for u, r in recorded.items() if stored.get(u) != r)
    known = set(given)
    # a unit handed to two clients, a slot holding two live units, or a unit nobody was given
    duplicated = (len(given) - len(known)) + slot_dupes + sum(1 for u in stored
                                                              if u not in known)
    return {"round_trips": sum(w.trips for w in workers), "units_given": len(given),
            "units_recorded": len(recorded), "lost": lost, "duplicated": duplicated}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--round-trips", type=int, default=50_000)
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--units", type=int, default=1, help="units per assign")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=900.0,
                        help="seconds per configuration at most")
    parser.add_argument("--dir", default=None,
                        help="folder for the experiment's file (default: the system's "
                             "temporary folder; /dev/shm measures without disk syncs)")
    args = parser.parse_args(argv)
    if not 1 <= args.clients <= 64 or args.round_trips < 1 or args.units < 1:
        parser.error("--clients must be in [1, 64]; --round-trips and --units >= 1")
    print(f"# {platform.node()} ({platform.processor() or platform.machine()}), "
          f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}; "
          f"{args.clients} clients, {args.round_trips} round trips of {args.units} unit(s), "
          f"seed {args.seed}; file in {args.dir or tempfile.gettempdir()}")
    print("servers  round_trips  seconds  requests/s  round_trips/s  p50_ms  p99_ms  "
          "empty_assigns  lost  duplicated  errors")
    failed = False
    for servers in args.servers:
        r = run_load(servers, args.clients, args.round_trips, args.units, args.seed,
                     args.time_limit, args.dir)
        print(f"{r['servers']:7d}  {r['round_trips']:11d}  {r['seconds']:7.1f}  "
              f"{r['requests_per_s']:10.0f}  {r['round_trips_per_s']:13.0f}  "
              f"{r['p50_ms']:6.1f}  {r['p99_ms']:6.1f}  {r['empty_assigns']:13d}  "
              f"{r['lost']:4d}  {r['duplicated']:10d}  {len(r['errors'])}", flush=True)
        for error in r["errors"]:
            print(f"  client error: {error}")
        failed |= bool(r["lost"] or r["duplicated"] or r["errors"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
