"""Where one server's CPU goes, thread by thread: ``GET /health`` against ``assign(1)`` +
``record(1)`` round trips, with the same keep-alive clients (benchmarks/bench_service.py's
``Client``), on a fresh ``banditkit serve`` of an SQLite folder.

Prints, for each phase, the rate, the server's CPU per request (per round trip for the round
trips) split into its event-loop thread (``loop``: HTTP, the routes, JSON) and the others (the
writer thread, from ``/proc/PID/task``), and the clients' CPU (this process). The CPU a request
costs moves much less with the machine's load than the rates do, which is why it is measured
(docs/service.md, "The fast path").

Run (the version under test is the one on ``PYTHONPATH``; alternate versions in one session):
    PYTHONPATH=src .venv/bin/python benchmarks/bench_service_cpu.py --health 5000 --round-trips 2000
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import DEFINITION, Client, Connection
from service_support import Server

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of ``pid``: the main thread (the event loop) as ``loop``,
    the others summed as ``others``."""
    found = {"loop": 0.0, "others": 0.0}
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        seconds = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
        found["loop" if task == str(pid) else "others"] += seconds
    return found


def per(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    return {k: round((after[k] - before[k]) / n * 1000, 3) for k in after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--health", type=int, default=5000, help="GET /health requests")
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder))
        pid = server.process.pid
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port)
            conn.request("POST", "/experiments", json.dumps(
                {"name": "cpu", "seed": args.seed, **DEFINITION}),
                {"Content-Type": "application/json"})
            assert conn.getresponse().status == 201
            conn.close()
            sent, lock = [0], threading.Lock()

            def health() -> None:
                c = Connection("127.0.0.1", server.port)
                while True:
                    with lock:
                        if sent[0] >= args.health:
                            return
                        sent[0] += 1
                    c.request("GET", "/health")
                    c.getresponse().read()

            before, client, start = thread_cpu(pid), time.process_time(), time.perf_counter()
            threads = [threading.Thread(target=health) for _ in range(args.clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rate = args.health / (time.perf_counter() - start)
            print(f"/health: {rate:,.0f} requests/s; server CPU ms per request "
                  f"{per(before, thread_cpu(pid), args.health)}; clients "
                  f"{(time.process_time() - client) / args.health * 1000:.3f}")
            budget = [args.round_trips]
            streams = np.random.SeedSequence(args.seed).spawn(args.clients)
            workers = [Client([server.port], 0, "cpu", streams[i], 1, budget, lock,
                              time.monotonic() + 600) for i in range(args.clients)]
            before, client, start = thread_cpu(pid), time.process_time(), time.perf_counter()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            rate = args.round_trips / (time.perf_counter() - start)
            errors = [w.error for w in workers if w.error]
            print(f"round trips: {rate:,.0f}/s; server CPU ms per round trip "
                  f"{per(before, thread_cpu(pid), args.round_trips)}; clients "
                  f"{(time.process_time() - client) / args.round_trips * 1000:.3f}"
                  + (f"; errors: {errors[:2]}" if errors else ""))
            if errors:
                raise SystemExit(1)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
