"""Load test of ``banditkit serve``: concurrent clients doing assign+record round trips on one
experiment, through 1 and 2 server processes, on SQLite (one file) and on PostgreSQL (one
database), then a check from the store that no unit was lost or duplicated.

A round trip is ``POST /experiments/NAME/assign {"n": U}`` then ``POST .../record`` of the
units it returned (rewards: Bernoulli draws with the arm's mean, from each client's own stream
of SeedSequence(seed)). An assign that returns no unit (the batch waits for the rewards of
units other clients hold) is counted and retried, not counted as a round trip. Clients are
threads with one keep-alive ``http.client`` connection each, to 127.0.0.1 only, spread over the
servers in turn; a configuration stops at the round-trip target or its time limit, whichever
comes first.

Beside it, in the same run and on the same servers, the machine's ceiling for a request that
does nothing: the same number of clients (keep-alive, spread over the servers alike) loop on
``GET /health`` for ``--health-seconds`` before the round trips start; the table shows its
requests/s and the round trips/s as a share of it (issue 26's goal with 32 clients: at least
35% on SQLite, 20% on PostgreSQL; a round trip is two requests). On a shared machine both
rates move with what else runs; the table also shows the CPU each costs (user + system, from
``/proc``): the servers' CPU per round trip and per ``/health`` request, and the *CPU share*,
a ``/health`` request's CPU over a round trip's, servers and clients (this process) together,
which is what the share of the rates comes to where CPU bounds both.

Checked from the store after each configuration (``Experiment.open(...).units()``, the same on
both backends): every unit whose record call returned is stored with the reward sent (else
*lost*); no unit was handed to two clients, no (batch, slot) holds two live units, and no unit
is stored that no client was given (else *duplicated*). The exit status is 1 on any lost or
duplicated unit or client error.

PostgreSQL: a temporary server started by the test suite's own code (tests/postgres_support.py:
Debian's binaries, ``make postgresql``), or the database of ``--db URL`` (each configuration
creates a new experiment ``load-<pid>-<n>`` there and leaves it).

Run (the README's table; about half an hour on an idle machine):
    .venv/bin/python benchmarks/bench_service.py
    .venv/bin/python benchmarks/bench_service.py --round-trips 2000 --backend postgres
    .venv/bin/python benchmarks/bench_service.py --db postgresql://me@/mydb?host=/run/postgresql
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the launchers the service tests use: a child `banditkit serve --port 0`, a throwaway cluster
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from service_support import Server

MEANS = [0.10, 0.11, 0.12]  # close arms: elimination takes long, batches stay busy
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"],
              "horizon": 10_000_000, "params": {"rho": 0.3, "beta": 3}}
_NAMES = itertools.count()
_health_count, _health_lock = [0], threading.Lock()  # /health requests sent, for their CPU


@dataclass(frozen=True)
class Store:
    """Where the configurations' experiments live: ``db`` is what ``banditkit serve --db``
    takes (a folder, or a ``postgresql://`` URL)."""

    backend: str
    db: str
    shown: str  # for the report's first line (no password)

    def location(self, name: str) -> tuple[str, str | None]:
        """``(path or URL, name)`` of ``Experiment.open``."""
        if self.backend == "sqlite":
            return str(Path(self.db) / f"{name}.sqlite"), None
        return self.db, name


@contextmanager
def sqlite_store(where: str | None) -> Iterator[Store]:
    with tempfile.TemporaryDirectory(dir=where) as folder:
        yield Store("sqlite", folder, f"SQLite {sqlite3.sqlite_version}, files in "
                    f"{where or tempfile.gettempdir()}")


@contextmanager
def postgres_store(url: str | None) -> Iterator[Store]:
    from banditkit.live.store.postgres import safe_url

    if url is not None:
        yield Store("postgres", url, f"PostgreSQL at {safe_url(url)}")
        return
    from postgres_support import postgres_bin, start_server

    server, stop = start_server()
    try:
        version = postgres_bin().parent.name  # /usr/lib/postgresql/16/bin: 16
        yield Store("postgres", server.url(socket=False),
                    f"PostgreSQL {version} (temporary server, tests/postgres_support.py, TCP "
                    "127.0.0.1)")
    finally:
        stop()


class Connection(http.client.HTTPConnection):
    """``http.client``'s keep-alive connection, sending a request's head and body in one
    ``send``, as curl does for a small body (and older ``http.client`` versions did: Python
    2.7's joined a bytes body to the head). Python 3's sends them in two: two system calls for
    the client, and for the server two reads, the head parsed in one and the body awaited in
    another. The clients of ``GET /health`` (no body) and of the round trips use it alike."""

    def _send_output(self, message_body: object = None, encode_chunked: bool = False) -> None:
        if not isinstance(message_body, bytes) or encode_chunked:
            super()._send_output(message_body, encode_chunked)
            return
        self._buffer.extend((b"", b""))  # type: ignore[attr-defined]
        head = b"\r\n".join(self._buffer)  # type: ignore[attr-defined]
        del self._buffer[:]  # type: ignore[attr-defined]
        self.send(head + message_body)


JSON = {"Content-Type": "application/json"}


class Client(threading.Thread):
    """One client: assign then record, again and again. ``ports[server]`` is its server's port,
    which a ``--kill`` run changes when it starts that server again: a request its server died
    under is sent again to the new one (a record is idempotent: units already recorded with
    the same rewards count nothing), except an assign, whose units the client never saw."""

    def __init__(self, ports: list[int], server: int, name: str, seed: np.random.SeedSequence,
                 units: int, budget: list[int], lock: threading.Lock, deadline: float) -> None:
        super().__init__(daemon=True)
        self.ports, self.server, self.name, self.units = ports, server, name, units
        self.cut = 0  # requests cut by a killed server (sent again, or for an assign dropped)
        self.budget, self.lock, self.deadline = budget, lock, deadline
        self.rng = np.random.default_rng(seed)
        self.latency: list[float] = []  # seconds per request (assign and record alike)
        self.given: list[int] = []  # units an assign returned
        self.recorded: dict[int, float] = {}  # unit -> reward, for record calls that returned
        self.empty = 0
        self.trips = 0  # round trips whose record call returned
        self.error: str | None = None

    def _post(self, path: str, body: bytes, *, again: bool) -> dict | None:
        """The answer, or ``None`` for an assign its server died under (``again=False``)."""
        while True:
            port = self.ports[self.server]
            if self.conn is None or self.conn.port != port:
                self.conn = Connection("127.0.0.1", port, timeout=120)
            start = time.perf_counter()
            try:
                self.conn.request("POST", path, body=body, headers=JSON)
                response = self.conn.getresponse()
                answer = json.loads(response.read())
            except (OSError, http.client.HTTPException):
                # its server was killed: wait for the one started in its place
                self.cut += 1
                self.conn.close()
                self.conn = None
                while self.ports[self.server] == port and time.monotonic() < self.deadline:
                    time.sleep(0.01)
                if not again or time.monotonic() >= self.deadline:
                    return None
                continue
            self.latency.append(time.perf_counter() - start)
            if response.status != 200:
                raise RuntimeError(f"{path}: {response.status} {answer}")
            return answer

    def run(self) -> None:
        self.conn: http.client.HTTPConnection | None = None
        route = f"/experiments/{self.name}"
        assign, record = f"{route}/assign", f"{route}/record"
        ask = json.dumps({"n": self.units}).encode()  # the same body every time
        try:
            while time.monotonic() < self.deadline:
                with self.lock:
                    if self.budget[0] <= 0:
                        return
                    self.budget[0] -= 1
                while True:
                    answer = self._post(assign, ask, again=False)
                    units = [] if answer is None else answer["units"]
                    if units or time.monotonic() >= self.deadline:
                        break
                    self.empty += 1
                    time.sleep(0.002)
                if not units:
                    return
                ids = [u["unit"] for u in units]
                self.given += ids
                rewards = [float(self.rng.random() < MEANS[u["arm_index"]]) for u in units]
                if self._post(record, json.dumps({"units": ids, "rewards": rewards}).encode(),
                              again=True) is None:
                    return  # the deadline passed while its server was down
                self.recorded.update(zip(ids, rewards, strict=True))
                self.trips += 1
        except Exception as error:  # reported in the results, never hidden
            self.error = f"{type(error).__name__}: {error}"
        finally:
            if self.conn is not None:
                self.conn.close()


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system, all threads) the processes ``pids`` have used so far, from
    ``/proc`` (NaN where there is none). A rate depends on what else the machine runs; the CPU
    a request costs does much less, so the table shows both (the machine is often shared)."""
    try:
        total = 0
        for pid in pids:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        return total / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def health_rate(ports: list[int], clients: int, seconds: float) -> float:
    """Requests/s of ``GET /health`` from ``clients`` keep-alive clients spread over the
    servers, for ``seconds``."""
    counts = [0] * clients
    deadline = time.monotonic() + seconds

    def loop(i: int) -> None:
        conn = Connection("127.0.0.1", ports[i % len(ports)], timeout=120)
        try:
            while time.monotonic() < deadline:
                conn.request("GET", "/health")
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"/health: {response.status}")
                counts[i] += 1
        finally:
            with _health_lock:
                _health_count[0] += counts[i]
            conn.close()

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(clients)]
    begin = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - begin)


def kill_and_restart(store: Store, started: list[Server], ports: list[int], name: str,
                     workers: list[Client], budget: list[int], round_trips: int) -> dict:
    """``--kill``: once half the round trips are done, SIGKILL server 0 in the middle of its
    calls and start a new one on the same store; then expire the units that calls cut by the
    kill assigned (stored, unanswered, and given to no client: no client will answer them, and
    an elimination batch waits for every unit). Returns what it did, for the check."""
    while budget[0] > round_trips // 2 and any(w.is_alive() for w in workers):
        time.sleep(0.01)
    started[0].kill()
    killed_at = round_trips - budget[0]
    started[0] = Server(store.db)
    ports[0] = started[0].port
    time.sleep(1.0)  # the clients cut off find the new server
    port = ports[-1] if len(ports) > 1 else ports[0]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", f"/experiments/{name}/units")
    units = json.loads(conn.getresponse().read())["units"]
    waiting = {u["unit"] for u in units if u["reward"] is None and u["expired_at"] is None}
    time.sleep(0.5)  # a unit whose assign answer was being read when the list was taken
    orphans = sorted(waiting - {u for w in workers for u in w.given})
    if orphans:
        conn.request("POST", f"/experiments/{name}/expire", json.dumps({"units": orphans}),
                     {"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())
        assert answer.get("expired") == len(orphans), answer
    conn.close()
    return {"killed_at": killed_at, "orphans": orphans}


def run_load(store: Store, servers: int, clients: int, round_trips: int, units: int, seed: int,
             time_limit: float, kill: bool = False, health_seconds: float = 10.0) -> dict:
    name = f"load-{os.getpid()}-{next(_NAMES)}"
    started = [Server(store.db, wait=False) for _ in range(servers)]
    try:
        started = [s.wait() for s in started]
        conn = http.client.HTTPConnection("127.0.0.1", started[0].port, timeout=120)
        conn.request("POST", "/experiments", json.dumps({"name": name, "seed": seed,
                                                         **DEFINITION}),
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 201, response.read()
        conn.close()
        pids = [s.process.pid for s in started]
        cpu = (cpu_seconds(pids), time.process_time())
        before = _health_count[0]
        health = (health_rate([s.port for s in started], clients, health_seconds)
                  if health_seconds > 0 else float("nan"))
        asked = _health_count[0] - before
        # CPU per /health request: the servers', and the clients' (this process)
        health_cpu = ((cpu_seconds(pids) - cpu[0]) / max(asked, 1),
                      (time.process_time() - cpu[1]) / max(asked, 1))
        cpu = (cpu_seconds(pids), time.process_time())
        budget, lock = [round_trips], threading.Lock()
        streams = np.random.SeedSequence(seed).spawn(clients)
        begin = time.perf_counter()
        deadline = time.monotonic() + time_limit
        ports = [server.port for server in started]
        workers = [Client(ports, i % servers, name, streams[i], units, budget, lock, deadline)
                   for i in range(clients)]
        for worker in workers:
            worker.start()
        killed = (kill_and_restart(store, started, ports, name, workers, budget, round_trips)
                  if kill else None)
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - begin
        trips = max(sum(w.trips for w in workers), 1)
        trip_cpu = ((cpu_seconds(pids) - cpu[0]) / trips, (time.process_time() - cpu[1]) / trips)
    finally:
        for server in started:
            server.stop()
    return {**verify(store, name, workers, killed), "backend": store.backend, "servers": servers,
            "killed_at": None if killed is None else killed["killed_at"],
            "cut_requests": sum(w.cut for w in workers),
            "clients": clients, "units_per_call": units, "seconds": elapsed,
            "health_per_s": health, "health_cpu": health_cpu, "trip_cpu": trip_cpu,
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


def verify(store: Store, name: str, workers: list[Client], killed: dict | None = None) -> dict:
    """Lost and duplicated units, from the store itself (read through the library, the same
    way on both backends). After ``--kill``, the units the cut calls assigned and the run
    expired are no client's, and are counted apart (``orphans``), not as duplicated."""
    from banditkit import Experiment

    given = [u for w in workers for u in w.given]
    recorded = {u: r for w in workers for u, r in w.recorded.items()}
    location, experiment = store.location(name)
    with Experiment.open(location, name=experiment, readonly=True) as exp:
        units = exp.units()
    live = units[units["expired_at"].isna()]
    stored = dict(zip(live["unit"].tolist(), live["reward"].tolist(), strict=True))
    # a slot of the algorithm's holding two live units; overflow and rollout units take no
    # slot (all stored with slot -1), so they are checked by id alone
    algorithm = live[live["kind"] == "algorithm"]
    slot_dupes = int(algorithm.duplicated(["batch", "slot"]).sum())
    lost = sum(1 for u, r in recorded.items() if stored.get(u) != r)
    orphans = [] if killed is None else killed["orphans"]
    expired = set(units.loc[units["expired_at"].notna(), "unit"].tolist())
    if not set(orphans) <= expired:
        raise AssertionError("an orphaned unit was not expired")
    known = set(given)
    # a unit handed to two clients, a slot holding two live units, or a unit nobody was given
    duplicated = (len(given) - len(known)) + slot_dupes + sum(1 for u in stored
                                                              if u not in known)
    return {"round_trips": sum(w.trips for w in workers), "units_given": len(given),
            "overflow_units": int((units["kind"] != "algorithm").sum()),
            "units_recorded": len(recorded), "units_stored": len(units), "lost": lost,
            "orphans": len(orphans),
            "duplicated": duplicated}


COLUMNS = ("backend", "servers", "clients", "round trips", "seconds", "requests/s",
           "round trips/s", "/health req/s", "round trips / /health", "p50 (ms)", "p99 (ms)",
           "server CPU ms / round trip", "server CPU ms / /health",
           "client CPU ms / round trip", "client CPU ms / /health", "CPU share",
           "empty assigns", "lost", "duplicated")


def row(r: dict) -> str:
    share = r["round_trips_per_s"] / r["health_per_s"]
    cells = (r["backend"], r["servers"], r["clients"], f"{r['round_trips']:,}",
             f"{r['seconds']:,.0f}", f"{r['requests_per_s']:,.0f}",
             f"{r['round_trips_per_s']:,.0f}", f"{r['health_per_s']:,.0f}",
             f"{100 * share:.0f}%" if share == share else "–",
             f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}",
             *(_ms(1000 * r[k][i]) for i in (0, 1) for k in ("trip_cpu", "health_cpu")),
             # a /health request's CPU (servers + clients) over a round trip's: the share of
             # the rates on a machine where CPU is what bounds both (– after --kill: the
             # killed server's CPU is gone with it)
             _ms(100 * sum(r["health_cpu"]) / sum(r["trip_cpu"]), "{:.0f}%"),
             f"{r['empty_assigns']:,}", r["lost"],
             r["duplicated"])
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _ms(value: float, form: str = "{:.2f}") -> str:
    return "–" if value != value else form.format(value)


def statements_per_call() -> str:
    """PostgreSQL's round trips (on the wire) and statements per assign(1) and record(1), from
    benchmarks/count_statements.py (its own throwaway server: the same code path as the
    service's pooled experiments), as comment lines under the table."""
    import subprocess

    script = Path(__file__).resolve().parent / "count_statements.py"
    done = subprocess.run([sys.executable, str(script), "--calls", "20"], capture_output=True,
                          text=True, check=False)
    lines = (done.stdout if done.returncode == 0 else done.stdout + done.stderr).splitlines()
    return "".join(f"# statements per call (PostgreSQL): {line}\n" for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 32],
                        help="client threads, one configuration each (default: 8 32)")
    parser.add_argument("--health-seconds", type=float, default=10.0,
                        help="seconds of GET /health before each configuration's round trips "
                             "(default 10; 0 skips it)")
    parser.add_argument("--round-trips", type=int, default=50_000,
                        help="round trips per configuration (default 50,000)")
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 2],
                        help="server processes on one store, one configuration each "
                             "(default: 1 2)")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), nargs="+",
                        default=None, help="stores to measure (default both; postgres only "
                                           "with --db)")
    parser.add_argument("--db", default=None, metavar="URL",
                        help="a PostgreSQL database to use instead of a temporary server")
    parser.add_argument("--units", type=int, default=1, help="units per assign (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=900.0,
                        help="seconds per configuration at most (default 900)")
    parser.add_argument("--dir", default=None,
                        help="folder for the SQLite files (default: the system's temporary "
                             "folder; /dev/shm measures without disk syncs)")
    parser.add_argument("--kill", action="store_true",
                        help="SIGKILL server 0 half-way through each configuration and start "
                             "it again (the check then also proves that nothing returned was "
                             "lost and nothing counted twice across a crash)")
    parser.add_argument("--json", default=None, metavar="FILE",
                        help="also write every configuration's numbers to FILE")
    parser.add_argument("--no-statements", dest="statements", action="store_false",
                        help="skip the PostgreSQL round trips and statements per call "
                             "(benchmarks/count_statements.py, run after the table when "
                             "postgres is measured; about 20 s)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if not all(1 <= c <= 64 for c in args.clients) or args.round_trips < 1 or args.units < 1:
        parser.error("--clients must be in [1, 64]; --round-trips and --units >= 1")
    if any(s < 1 for s in args.servers):
        parser.error("--servers: each count must be >= 1")
    if args.db is not None and not args.db.startswith(("postgresql://", "postgres://")):
        parser.error(f"--db must be a postgresql:// URL, got {args.db!r}")
    backends = args.backend or (["postgres"] if args.db else ["sqlite", "postgres"])
    if args.db is not None and "sqlite" in backends and args.backend is not None:
        parser.error("--db is a PostgreSQL database: drop sqlite from --backend")
    print(f"# {platform.node()} ({os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}), python {platform.python_version()}; "
          f"{'/'.join(map(str, args.clients))} clients, {args.round_trips:,} round trips of "
          f"{args.units} unit(s) per configuration, seed {args.seed}, time limit "
          f"{args.time_limit:.0f} s")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS), flush=True)
    results, notes = [], []
    for backend in backends:
        opened = sqlite_store(args.dir) if backend == "sqlite" else postgres_store(args.db)
        with opened as store:
            notes.append(f"{backend}: {store.shown}")
            for servers in args.servers:
                for clients in args.clients:
                    r = run_load(store, servers, clients, args.round_trips, args.units,
                                 args.seed, args.time_limit, kill=args.kill,
                                 health_seconds=args.health_seconds)
                    results.append(r)
                    print(row(r), flush=True)
    print()
    for note in notes:
        print(f"# {note}")
    if "postgres" in backends and args.statements:
        print(statements_per_call(), end="", flush=True)
    print(f"# whole run: {time.perf_counter() - started:,.0f} s")
    failed = False
    for r in results:
        for error in r["errors"]:
            print(f"# {r['backend']}, {r['servers']} server(s): client error: {error}")
        if r["round_trips"] < args.round_trips:
            print(f"# {r['backend']}, {r['servers']} server(s): stopped by the time limit at "
                  f"{r['round_trips']:,} of {args.round_trips:,} round trips")
        if r["killed_at"] is not None:
            print(f"# {r['backend']}, {r['servers']} server(s): server 0 killed with SIGKILL "
                  f"after {r['killed_at']:,} round trips and started again; "
                  f"{r['cut_requests']} requests cut (a record sent again, an assign dropped), "
                  f"{r['orphans']} units of cut assigns expired")
        failed |= bool(r["lost"] or r["duplicated"] or r["errors"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
