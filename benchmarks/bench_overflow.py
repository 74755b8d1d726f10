"""What an overflow unit costs: ``assign(n)`` served entirely by overflow units (the algorithm's
first round handed out, its rewards not in) against ``assign(n)`` of the algorithm's own slots,
on SQLite, best of 5 calls each (``python benchmarks/bench_overflow.py``)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from banditkit import Experiment

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 7,
              "params": {"rho": 0.2}}


def _best(exp: Experiment, n: int, overflow: bool) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        frame = exp.assign(n)
        times.append(time.perf_counter() - start)
        assert (len(frame.attrs["overflow_units"]) == n) == overflow
    return min(times)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    with Experiment.create(folder / "o.sqlite", horizon=30_000, **DEFINITION) as exp:
        exp.assign(13_824)  # the whole first round: every later unit is an overflow unit
        for n in (1, 100, 1000, 10_000):
            print(f"overflow  assign({n}): {1e3 * _best(exp, n, True):.1f} ms")
    for n in (1, 100, 1000):
        with Experiment.create(folder / f"a{n}.sqlite", horizon=30_000, **DEFINITION) as exp:
            print(f"algorithm assign({n}): {1e3 * _best(exp, n, False):.1f} ms")


if __name__ == "__main__":
    main()
