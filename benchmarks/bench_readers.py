"""Readers never slow writers (issue 26, section 3): the writers' latency with and without a
client looping on the page and another on ``GET /units``, measured in one run on one server.

One ``banditkit serve`` on a folder of SQLite files, one ``ReplicableElimination`` experiment
(3 arms, means 0.10/0.11/0.12, horizon 10⁷, rho 0.3, beta 3) filled with ``--prefill`` units
first (the page and ``/units`` cost grows with them: 30,000 units took 0.7–0.9 s to draw). Then
``--writers`` client threads (a keep-alive ``http.client`` connection each) do ``--trips``
assign(1)+record(1) round trips each, twice: alone, then while one client reloads the page and
another pulls ``/units`` in a loop. Reported: the writers' p50 and p99 per request in each
phase, their ratio (the issue's goal: p50 with readers ≤ 3 × without), and the reads done.
Rewards: Bernoulli draws from SeedSequence(seed), one stream per writer.

Before this work the page and ``/units`` ran on the writer's own thread: one page reader took
the writers' p50 from 16 ms to 1,376 ms (issue 26). Run:
    .venv/bin/python benchmarks/bench_readers.py                    # 30,000 units, 2 writers
    .venv/bin/python benchmarks/bench_readers.py --prefill 5000 --trips 150   # the test's size
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from service_support import Server

MEANS = [0.10, 0.11, 0.12]
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"],
              "horizon": 10_000_000, "params": {"rho": 0.3, "beta": 3}}
JSON = {"Content-Type": "application/json"}


def _post(conn: http.client.HTTPConnection, path: str, body: dict) -> tuple[dict, float]:
    start = time.perf_counter()
    conn.request("POST", path, body=json.dumps(body), headers=JSON)
    response = conn.getresponse()
    answer = json.loads(response.read())
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {answer}")
    return answer, time.perf_counter() - start


def _prefill(port: int, units: int, rng: np.random.Generator) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    done = 0
    while done < units:
        answer, _ = _post(conn, "/experiments/load/assign", {"n": min(2000, units - done)})
        got = answer["units"]
        if not got:
            raise RuntimeError("the prefill got no units")
        rewards = [float(rng.random() < MEANS[u["arm_index"]]) for u in got]
        _post(conn, "/experiments/load/record",
              {"units": [u["unit"] for u in got], "rewards": rewards})
        done += len(got)
    conn.close()


def _writer(port: int, trips: int, rng: np.random.Generator, latency: list[float],
            errors: list[str]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        done = 0
        while done < trips:
            answer, seconds = _post(conn, "/experiments/load/assign", {"n": 1})
            latency.append(seconds)
            if not answer["units"]:
                time.sleep(0.002)  # the batch waits for the other writer's unit
                continue
            unit = answer["units"][0]
            _, seconds = _post(conn, "/experiments/load/record", {
                "units": [unit["unit"]],
                "rewards": [float(rng.random() < MEANS[unit["arm_index"]])]})
            latency.append(seconds)
            done += 1
    except Exception as error:  # reported, never hidden
        errors.append(f"{type(error).__name__}: {error}")
    finally:
        conn.close()


#: A reading client, in a process of its own as a browser or a dashboard would be (a thread
#: of this process would take the writers' interpreter lock and slow them here, not in the
#: server): GET PATH again and again until its standard input closes, then print the count.
_READ_LOOP = """
import http.client, sys, threading
port, path = int(sys.argv[1]), sys.argv[2]
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
conn, count = http.client.HTTPConnection("127.0.0.1", port, timeout=300), 0
while not done.is_set():
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"GET {path}: {response.status}")
    count += 1
print(count)
"""


def _reader(port: int, path: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _READ_LOOP, str(port), path],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _phase(port: int, writers: int, trips: int, seeds: list[np.random.SeedSequence],
           readers: bool, read_port: int | None = None) -> dict:
    """The writers' round trips on ``port``; with ``readers``, while the two readers loop on
    ``read_port`` (default: the same server)."""
    latency: list[float] = []
    errors: list[str] = []
    counts: dict[str, int] = {}
    paths = ("/experiments/load", "/experiments/load/units") if readers else ()
    pulling = {path: _reader(read_port or port, path) for path in paths}
    if readers:
        time.sleep(2.0)  # the readers are at work before the writers start
    begin = time.perf_counter()
    threads = [threading.Thread(target=_writer, args=(port, trips,
                                                      np.random.default_rng(seeds[i]),
                                                      latency, errors))
               for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - begin
    for path, process in pulling.items():
        out, err = process.communicate("", timeout=300)
        if process.returncode != 0:
            errors.append(f"reader of {path}: {err.strip()[-300:]}")
        else:
            counts[path] = int(out)
    ms = np.asarray(latency) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)),
            "requests": int(ms.size), "seconds": elapsed,
            "pages": counts.get("/experiments/load", 0),
            "units_reads": counts.get("/experiments/load/units", 0), "errors": errors}


def _serve_prefilled(folder: Path, prefill: int, seed: int, stream: np.random.SeedSequence,
                     options: tuple[str, ...]) -> Server:
    folder.mkdir(parents=True, exist_ok=True)
    server = Server(folder, options=options)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    conn.request("POST", "/experiments", body=json.dumps({"name": "load", "seed": seed,
                                                          **DEFINITION}), headers=JSON)
    response = conn.getresponse()
    assert response.status == 201, response.read()
    conn.close()
    _prefill(server.port, prefill, np.random.default_rng(stream))
    return server


def measure(folder: str | Path, *, writers: int = 2, trips: int = 300, prefill: int = 30_000,
            seed: int = 0, options: tuple[str, ...] = (), elsewhere: bool = False) -> dict:
    """Both phases on one server (see the module docstring); returns their numbers.

    With ``elsewhere``, a third phase runs the same readers against a second server with the
    same experiment while the writers use the first: the same CPU load, and no way for a read
    to hold a write. ``ratio_p50_elsewhere`` (readers on the writers' server over readers on
    another) then isolates blocking from CPU contention, which on a 2-core machine shared
    with other work (CI's second test worker) moves the plain ratio by itself; the test suite
    judges that one, the idle benchmark the plain ratio."""
    folder = Path(folder)
    streams = np.random.SeedSequence(seed).spawn(3 * writers + 2)
    server = _serve_prefilled(folder / "writers", prefill, seed, streams[0], options)
    other = None
    try:
        if elsewhere:
            other = _serve_prefilled(folder / "readers", prefill, seed, streams[-1], options)
        alone = _phase(server.port, writers, trips, streams[1:writers + 1], readers=False)
        read = _phase(server.port, writers, trips, streams[writers + 1:2 * writers + 1],
                      readers=True)
        apart = (_phase(server.port, writers, trips, streams[2 * writers + 1:3 * writers + 1],
                        readers=True, read_port=other.port) if other is not None else None)
    finally:
        server.stop()
        if other is not None:
            other.stop()
    result = {"alone": alone, "with_readers": read, "ratio_p50": read["p50_ms"] / alone["p50_ms"],
              "writers": writers, "trips": trips, "prefill": prefill, "seed": seed}
    if apart is not None:
        result["readers_elsewhere"] = apart
        result["ratio_p50_elsewhere"] = read["p50_ms"] / apart["p50_ms"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--trips", type=int, default=300,
                        help="round trips per writer and phase (default 300)")
    parser.add_argument("--prefill", type=int, default=30_000,
                        help="units in the experiment before measuring (default 30,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--readers", type=int, default=None,
                        help="the server's --readers (default: its own default)")
    args = parser.parse_args(argv)
    options = () if args.readers is None else ("--readers", str(args.readers))
    print(f"# {platform.node()} ({os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}), python {platform.python_version()}; {args.writers} "
          f"writers x {args.trips} round trips per phase, {args.prefill:,} units first, seed "
          f"{args.seed}, server options {' '.join(options) or '(defaults)'}")
    with tempfile.TemporaryDirectory() as folder:
        r = measure(folder, writers=args.writers, trips=args.trips, prefill=args.prefill,
                    seed=args.seed, options=options)
    print("| phase | writers' p50 (ms) | p99 (ms) | requests | seconds | pages drawn or "
          "served | /units reads |")
    print("|---|---|---|---|---|---|---|")
    for phase in ("alone", "with_readers"):
        p = r[phase]
        print(f"| {phase.replace('_', ' ')} | {p['p50_ms']:.1f} | {p['p99_ms']:.1f} | "
              f"{p['requests']:,} | {p['seconds']:.1f} | {p['pages']} | {p['units_reads']} |")
    print(f"\nratio of the p50s: {r['ratio_p50']:.2f} (goal <= 3)")
    errors = r["alone"]["errors"] + r["with_readers"]["errors"]
    for error in errors:
        print(f"# error: {error}")
    return 1 if errors or r["ratio_p50"] > 3 else 0


if __name__ == "__main__":
    sys.exit(main())
