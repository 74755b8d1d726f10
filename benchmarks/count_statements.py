"""Round trips to PostgreSQL per ``assign(1)`` and ``record(1)`` (issue 26: 9 and 7 today, goal
≤ 4), counted on a real server (the test suite's launcher, tests/postgres_support.py) by a
counting wrapper around the store's real connection: every statement the experiment sends
(``execute``, ``executemany``), the transaction's first round trip (``BEGIN`` + the lock, one
round trip) and its ``COMMIT``. With and without the service's connection pool (which sets the
schema inside that first round trip: no extra statement).

Run: .venv/bin/python benchmarks/count_statements.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def main() -> int:
    import banditkit.live.postgres_store as ps
    from banditkit import Experiment
    from postgres_support import start_server

    log: list[str] = []
    execute, executemany, begin = (ps._Connection.execute, ps._Connection.executemany,
                                   ps.PostgresStore._begin)

    def counted_execute(self, sql, parameters=()):
        log.append(" ".join(sql.split())[:100])
        return execute(self, sql, parameters)

    def counted_many(self, sql, rows):
        log.append(" ".join(sql.split())[:100] + "  [rows in one statement]")
        return executemany(self, sql, rows)

    def counted_begin(self):
        log.append("BEGIN ...; SELECT ... FOR UPDATE  [one round trip]")
        return begin(self)

    ps._Connection.execute, ps._Connection.executemany = counted_execute, counted_many
    ps.PostgresStore._begin = counted_begin
    cluster, stop = start_server()
    try:
        url = cluster.url()
        for pooled in (False, True):
            if pooled:
                ps.use_pool(url, 2)
            name = f"count{int(pooled)}"
            Experiment.create(url, name=name, algorithm="ReplicableElimination",
                              arms=["a", "b", "c"], seed=1, horizon=100_000,
                              params={"rho": 0.3, "beta": 3}).close()
            with Experiment.open(url, name=name) as e:
                for _ in range(3):  # the third call of each, once the batch is known
                    log.clear()
                    units = e.assign(1)
                    assigned = [*log, "COMMIT"]
                    log.clear()
                    e.record(units["unit"].tolist(), [1.0])
                    recorded = [*log, "COMMIT"]
            print(f"{'pooled' if pooled else 'own connection'}: assign(1) {len(assigned)} "
                  f"round trips, record(1) {len(recorded)}")
            for call, lines in (("assign", assigned), ("record", recorded)):
                for line in lines:
                    print(f"  {call}: {line}")
    finally:
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
