"""Assignment at the edge (issue 38), measured in one run: how fast an application assigns, how
fast the service ingests, what polling costs, that nothing is lost when a server is killed, and
that the verdicts stay valid.

Sections (``--section``, default all):

- ``assign``: keys per second of :class:`banditkit.client.Assigner` (``assign`` one key at a
  time, keys ``user-<i>``, 4 arms) in CPython on one core, and of the JavaScript client in Node
  (``clients/js/bench.mjs``); goals 300,000/s and 1,000,000/s.
- ``ingest``: events per second through ``POST /experiments/NAME/events`` in bodies of 1,000
  events (500 exposures and their 500 outcomes), from ``--clients`` keep-alive clients, on
  SQLite (one server) and PostgreSQL (one server, and two servers sharing the database); beside
  it ``GET /health``'s rate on the same servers. Goals 50,000/s (SQLite), 20,000/s
  (PostgreSQL).
- ``kill``: the feed of ``--kill-bodies`` bodies sent by a client while the server is killed
  (SIGKILL) after half of them, then the whole feed sent again to a new server: every key
  stored once, every outcome once (0 lost, 0 duplicated), on both backends.
- ``poll``: ``GET .../allocation`` answered 304 (``If-None-Match``) against ``GET /health``,
  the same clients in the same run; goal ≥ 50% of /health's rate.
- ``shop``: the worked example, ``examples/edge_shop.py --load N`` (``--visitors``, ``--seed``)
  against ``banditkit serve`` on each backend: BatchedThompson (batches of 300, seed 4, a horizon
  of N) over ``control``, ``new-button``, ``new-copy`` with hidden conversion rates 0.10, 0.12,
  0.18; the time assigning added to each page view (mean, median, 99th percentile; goal ≤ 50 µs)
  and the experiment's verdicts, read after the shop's last events, from the bulk feed alone
  (the shop, its simulated visitors and the service share the machine).
- ``validity``: ``--runs`` null experiments (4 arms of equal mean 0.3, BatchedThompson whose
  weights move every 100 exposures, exposures up to two allocation versions late, outcomes in
  value-dependent order, ``status`` read every other round) through the client and
  ``Experiment.ingest`` (the events route is this call behind HTTP): the share with a false
  ``better``/``worse`` verdict at any look, with its 95% Wilson interval; goal ≤ 5%.

Run:
    .venv/bin/python benchmarks/bench_edge.py                      # everything (~15 min)
    .venv/bin/python benchmarks/bench_edge.py --section validity --runs 300
    .venv/bin/python benchmarks/bench_edge.py --section ingest --backend sqlite
    .venv/bin/python benchmarks/bench_edge.py --section shop --visitors 6000 --seed 2
    git archive REV src | tar -x -C /tmp/old && .venv/bin/python benchmarks/bench_edge.py \
        --section ingest --baseline /tmp/old/src --rounds 3   # this code against REV's
The exit status is 1 when anything was lost or duplicated.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from banditkit.client import Assigner  # noqa: E402
from bench_service import Connection, cpu_seconds, postgres_store, sqlite_store  # noqa: E402
from edge_support import null_run  # noqa: E402
from service_support import Server, call  # noqa: E402

ARMS = ["control", "b", "c", "d"]
DEFINITION = {"algorithm": "BatchedThompson", "arms": ARMS, "seed": 1, "horizon": 10**9,
              "params": {"batch_size": 10**7, "draws": 1000}}
JSON = {"Content-Type": "application/json"}
_NAMES = itertools.count()


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)


# -- assign ---------------------------------------------------------------------------------
def bench_assign(keys: int) -> dict:
    assigner = Assigner({"version": "v", "salt": "826e399a0c5c90ad", "arms": ARMS,
                         "weights": [0.25] * 4})
    names = [f"user-{i}" for i in range(keys)]
    assign = assigner.assign
    start, cpu = time.perf_counter(), time.process_time()
    for name in names:
        assign(name)
    python = keys / (time.perf_counter() - start)
    python_cpu = keys / (time.process_time() - cpu)
    node = subprocess.run(["node", str(ROOT / "clients/js/bench.mjs"), str(keys * 4)],
                          capture_output=True, text=True, check=True)
    js = json.loads(node.stdout)
    # per CPU second too: on a shared machine the wall clock counts the other processes' turns
    return {"python_keys_per_s": python, "python_keys_per_cpu_s": python_cpu,
            "node_keys_per_s": js["per_second"], "node_keys_per_cpu_s": js["per_cpu_second"]}


# -- ingest ---------------------------------------------------------------------------------
def _bodies(allocation: dict, count: int, prefix: str, size: int = 1000) -> list[bytes]:
    assigner = Assigner(allocation)
    bodies = []
    for b in range(count):
        keys = [f"{prefix}-{b}-{i}" for i in range(size // 2)]
        exposures = [assigner.exposure(k, assigner.assign(k)) for k in keys]
        outcomes = [{"key": k, "value": i % 2} for i, k in enumerate(keys)]
        bodies.append(json.dumps({"exposures": exposures, "outcomes": outcomes}).encode())
    return bodies


def _send(port: int, name: str, bodies: list[bytes], answers: list) -> None:
    conn = Connection("127.0.0.1", port, timeout=300)
    try:
        for body in bodies:
            conn.request("POST", f"/experiments/{name}/events", body=body, headers=JSON)
            response = conn.getresponse()
            answers.append((response.status, json.loads(response.read())))
    finally:
        conn.close()


def _rate(ports: list[int], clients: int, seconds: float, path: str,
          headers: dict | None = None) -> float:
    """Requests per second of ``clients`` keep-alive clients looping on GET ``path``."""
    counts = [0] * clients
    stop = time.monotonic() + seconds

    def loop(i: int) -> None:
        conn = Connection("127.0.0.1", ports[i % len(ports)], timeout=60)
        while time.monotonic() < stop:
            conn.request("GET", path, headers=headers or {})
            response = conn.getresponse()
            response.read()
            counts[i] += 1
        conn.close()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - start)


def bench_ingest(store, servers: int, clients: int, bodies_per_client: int,
                 health_seconds: float, baseline: str | None = None) -> dict:
    """One ingest row; with ``baseline`` (a ``src`` folder), servers running that code."""
    env = None if baseline is None else {"PYTHONPATH": baseline}
    running = [Server(store.db, env=env) for _ in range(servers)]
    try:
        ports = [s.port for s in running]
        name = f"ingest{os.getpid()}{servers}{next(_NAMES)}"
        assert call(ports[0], "POST", "/experiments", {"name": name, **DEFINITION})[0] == 201
        allocation = call(ports[0], "GET", f"/experiments/{name}/allocation")[1]
        health = _rate(ports, clients, health_seconds, "/health")
        work = [_bodies(allocation, bodies_per_client, f"c{i}") for i in range(clients)]
        answers: list = []
        threads = [threading.Thread(target=_send, args=(ports[i % servers], name, work[i],
                                                        answers)) for i in range(clients)]
        pids = [s.process.pid for s in running]
        start, cpu = time.monotonic(), cpu_seconds(pids)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.monotonic() - start
        cpu = cpu_seconds(pids) - cpu  # the servers' processes (not PostgreSQL's)
        events = sum(a[1]["new"] for a in answers if a[0] == 200)
        refused = sum(a[1].get("refused", 0) for a in answers if a[0] == 200)
        errors = sum(a[0] != 200 for a in answers)
        return {"backend": store.backend, "servers": servers,
                "code": "this" if baseline is None else "baseline",
                "events_per_s": events / seconds,
                "events_per_server_cpu_s": events / cpu, "health_per_s": health,
                "refused": refused, "errors": errors}
    finally:
        for s in running:
            s.stop()


# -- kill -----------------------------------------------------------------------------------
def bench_kill(store, count: int) -> dict:
    from banditkit import Experiment

    server = Server(store.db)
    name = f"kill{os.getpid()}"
    assert call(server.port, "POST", "/experiments", {"name": name, **DEFINITION})[0] == 201
    allocation = call(server.port, "GET", f"/experiments/{name}/allocation")[1]
    bodies = _bodies(allocation, count, "k")
    answers: list = []
    feeder = threading.Thread(target=lambda: _try_send(server.port, name, bodies, answers))
    feeder.start()
    while len(answers) < count // 2:
        time.sleep(0.01)
    server.kill()
    feeder.join()
    acknowledged = len([a for a in answers if a[0] == 200])
    server = Server(store.db)
    try:
        again: list = []
        _send(server.port, name, bodies, again)  # the whole feed again, from the start
    finally:
        server.stop()
    path, experiment = store.location(name)
    with Experiment.open(path, name=experiment, readonly=True) as e:
        units = e.units()
    keys = count * 500
    stored = len(units)
    duplicated = stored - units["key"].nunique()
    lost = keys - units["key"].nunique()
    recorded = int(units["reward"].notna().sum())
    return {"backend": store.backend, "bodies": count, "acknowledged_before_kill": acknowledged,
            "keys": keys, "stored": stored, "lost": lost, "duplicated": duplicated,
            "outcomes_recorded": recorded, "outcomes_lost": keys - recorded}


def _try_send(port: int, name: str, bodies: list[bytes], answers: list) -> None:
    try:
        _send(port, name, bodies, answers)
    except OSError:  # the server was killed: the rest is sent again later
        pass


# -- poll -----------------------------------------------------------------------------------
def bench_poll(store, clients: int, seconds: float) -> dict:
    server = Server(store.db)
    try:
        name = f"poll{os.getpid()}"
        assert call(server.port, "POST", "/experiments", {"name": name, **DEFINITION})[0] == 201
        conn = Connection("127.0.0.1", server.port)
        conn.request("GET", f"/experiments/{name}/allocation")
        response = conn.getresponse()
        response.read()
        etag = response.getheader("etag")
        conn.close()
        health = _rate([server.port], clients, seconds, "/health")
        not_modified = _rate([server.port], clients, seconds,
                             f"/experiments/{name}/allocation", {"If-None-Match": etag})
        return {"health_per_s": health, "allocation_304_per_s": not_modified,
                "share": not_modified / health}
    finally:
        server.stop()


# -- shop -----------------------------------------------------------------------------------
_TIMING = re.compile(r"(\d+) visitors; assigning took ([\d.]+) µs per request on average "
                     r"\(([\d.]+) µs median, ([\d.]+) µs at the 99th percentile\); (\d+) "
                     r"events sent, (\d+) failed send")


def bench_shop(store, visitors: int, seed: int) -> dict:
    from banditkit import Experiment

    server = Server(store.db)
    try:
        name = f"shop{os.getpid()}"
        definition = {"algorithm": "BatchedThompson", "seed": 4, "horizon": visitors,
                      "arms": ["control", "new-button", "new-copy"],
                      "params": {"batch_size": 300}}
        assert call(server.port, "POST", "/experiments", {"name": name, **definition})[0] == 201
        start = time.monotonic()
        run = subprocess.run([sys.executable, str(ROOT / "examples" / "edge_shop.py"),
                              "--service", f"http://127.0.0.1:{server.port}", "--name", name,
                              "--port", "0", "--load", str(visitors), "--seed", str(seed)],
                             capture_output=True, text=True, check=True)
        seconds = time.monotonic() - start
    finally:
        server.stop()
    found = _TIMING.search(run.stdout)
    assert found is not None, run.stdout + run.stderr
    path, experiment = store.location(name)
    with Experiment.open(path, name=experiment, readonly=True) as e:
        status = e.status()
        units = e.units()
    arms = status.arms
    return {"backend": store.backend, "visitors": visitors, "seed": seed,
            "seconds": round(seconds, 1), "assign_mean_us": float(found.group(2)),
            "assign_median_us": float(found.group(3)), "assign_p99_us": float(found.group(4)),
            "events_sent": int(found.group(5)), "failed_sends": int(found.group(6)),
            "units": len(units), "rewards": int(units["reward"].notna().sum()),
            "verdicts": {arm: {"verdict": str(row["verdict"]), "counted": int(row["counted"]),
                               "mean": round(float(row["mean"]), 4),
                               "diff_low": None if row["verdict"] == "control"
                               else round(float(row["diff_low"]), 4)}
                         for arm, row in arms.iterrows()},
            "warnings": list(status.warnings)}


# -- validity -------------------------------------------------------------------------------
def bench_validity(runs: int, seed: int) -> dict:
    false = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        for run in range(runs):
            result = null_run(Path(folder) / f"{run}.db", seed, run, horizon=600,
                              batch_size=100, chunk=50, look_every=2)
            false += result["false"]
    low, high = wilson(false, runs)
    return {"runs": runs, "false": false, "rate": false / runs, "wilson_low": low,
            "wilson_high": high, "seconds": time.monotonic() - start}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", choices=["assign", "ingest", "kill", "poll", "shop",
                                              "validity", "all"], default="all")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--keys", type=int, default=300_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--bodies", type=int, default=25, help="bodies per client (ingest)")
    parser.add_argument("--kill-bodies", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--visitors", type=int, default=6000, help="shop: simulated visitors")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", metavar="SRC",
                        help="ingest: also run the servers on this src folder (another "
                        "version's, e.g. from git archive REV src), alternately with this "
                        "one, --rounds times each: their ratio measured in one run")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    wanted = {"assign", "ingest", "kill", "poll", "shop", "validity"} \
        if args.section == "all" \
        else {args.section}
    results: dict = {"machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"}
    if "assign" in wanted:
        results["assign"] = bench_assign(args.keys)
        print(json.dumps(results["assign"]), flush=True)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    bad = False
    for backend in backends:
        opener = sqlite_store(None) if backend == "sqlite" else postgres_store(None)
        with opener as store:
            if "ingest" in wanted:
                for servers in ((1, 2) if backend == "postgres" else (1,)):
                    for _ in range(args.rounds):
                        for code in [None] if args.baseline is None \
                                else [args.baseline, None]:
                            row = bench_ingest(store, servers, args.clients, args.bodies,
                                               args.seconds, code)
                            results.setdefault("ingest", []).append(row)
                            print(json.dumps(row), flush=True)
                            bad |= row["errors"] > 0 or row["refused"] > 0
            if "kill" in wanted:
                row = bench_kill(store, args.kill_bodies)
                results.setdefault("kill", []).append(row)
                print(json.dumps(row), flush=True)
                bad |= row["lost"] > 0 or row["duplicated"] > 0 or row["outcomes_lost"] > 0
            if "shop" in wanted:
                row = bench_shop(store, args.visitors, args.seed)
                results.setdefault("shop", []).append(row)
                print(json.dumps(row), flush=True)
                bad |= row["rewards"] != args.visitors  # every visit counted once
            if "poll" in wanted and backend == "sqlite":
                results["poll"] = bench_poll(store, args.clients, args.seconds)
                print(json.dumps(results["poll"]), flush=True)
    if "validity" in wanted:
        results["validity"] = bench_validity(args.runs, args.seed)
        print(json.dumps(results["validity"]), flush=True)
    results["machine_after"] = f"load {os.getloadavg()[0]:.1f}"
    print(json.dumps(results, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
