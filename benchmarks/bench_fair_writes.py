"""Write fairness of ``banditkit serve``: another experiment's calls while one client records
100,000 units in one call (issue 34: such a record once stalled every other experiment's
writes for 6.2 s).

One server over a folder (SQLite), two experiments: ``big`` (``--units`` units assigned
beforehand) and ``small``. A client records every unit of ``big`` in one ``POST
.../record``; meanwhile another client loops ``POST /experiments/small/assign {"n": 1}`` then
``POST .../record`` of that unit, timing each request. The table gives the small experiment's
request latency (p50, p99, max) during the big record, and the big record's own time. The
service splits a record into parts of ``RECORD_PART`` units, each its own call on the writer,
so the other experiment's calls run between the parts (routes_calls.py).

Run:
    .venv/bin/python benchmarks/bench_fair_writes.py            # 100,000 units
    .venv/bin/python benchmarks/bench_fair_writes.py --units 20000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from service_support import Server, call

TOKEN = "bench-token-0123456789"
DEFINITION = {"algorithm": "ThompsonSampling", "arms": ["a", "b"], "seed": 1}


def measure(units: int, seed: int = 0) -> dict[str, float]:
    """One run (see the module docstring): latencies of the small experiment's requests in
    seconds, and the big record's time."""
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder), token=TOKEN,
                        options=("--readers", "0", "--max-body", str(64 * 2**20)))
        try:
            port = server.port
            for name in ("big", "small"):
                assert call(port, "POST", "/experiments", {"name": name, **DEFINITION},
                            token=TOKEN)[0] == 201
            ids: list[int] = []
            while len(ids) < units:
                code, answer = call(port, "POST", "/experiments/big/assign",
                                    {"n": min(20_000, units - len(ids))}, token=TOKEN)
                assert code == 200, answer
                ids += [u["unit"] for u in answer["units"]]
            rewards = np.random.default_rng(np.random.SeedSequence(seed)).random(units).tolist()
            done = threading.Event()
            latencies: list[tuple[float, float]] = []  # (start, seconds) of each request

            def small() -> None:
                import http.client

                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                while not done.is_set():
                    start = time.perf_counter()
                    _, answer = call(port, "POST", "/experiments/small/assign", {"n": 1},
                                     token=TOKEN, connection=conn)
                    latencies.append((start, time.perf_counter() - start))
                    unit = [u["unit"] for u in answer["units"]]
                    start = time.perf_counter()
                    call(port, "POST", "/experiments/small/record",
                         {"units": unit, "rewards": [1.0] * len(unit)}, token=TOKEN,
                         connection=conn)
                    latencies.append((start, time.perf_counter() - start))
                conn.close()

            thread = threading.Thread(target=small)
            thread.start()
            time.sleep(0.5)  # the small client is running
            start = time.perf_counter()
            code, answer = call(port, "POST", "/experiments/big/record",
                                {"units": ids, "rewards": rewards}, token=TOKEN)
            end = time.perf_counter()
            big = end - start
            done.set()
            thread.join()
            # every request of the small client that started while the big record ran
            during = [seconds for began, seconds in latencies if start <= began <= end]
            assert code == 200 and answer == {"recorded": units}, answer
        finally:
            server.stop()
    values = np.array(during)
    return {"big_record_s": big, "small_requests": len(values),
            "p50_ms": 1000 * float(np.percentile(values, 50)),
            "p99_ms": 1000 * float(np.percentile(values, 99)),
            "max_ms": 1000 * float(values.max())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    found = measure(args.units, args.seed)
    print(f"record of {args.units} units: {found['big_record_s']:.2f} s; meanwhile the other "
          f"experiment's {found['small_requests']} requests: p50 {found['p50_ms']:.1f} ms, "
          f"p99 {found['p99_ms']:.1f} ms, max {found['max_ms']:.1f} ms")
    return 0 if found["p99_ms"] <= 200 else 1


if __name__ == "__main__":
    sys.exit(main())
