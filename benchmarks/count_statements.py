"""Round trips and statements to PostgreSQL per call of a live experiment (issue 26: assign 9
and record 7 sequential round trips before; goal ≤ 4 per call).

Counted on a real server (the test suite's launcher, tests/postgres_support.py):

- **round trips** on the wire, by a counting TCP relay between the experiment and the server
  (tests/roundtrip_proxy.py: a round trip each time the client sends after the server
  answered) — what a call waits for;
- **statements**: every statement the experiment sends (``execute``, ``executemany`` as its
  multi-row statements, the transaction's ``BEGIN``/lock/``COMMIT``, the reads sent ahead with
  the lock; a read answered from those is not counted twice), counted by wrapping the store's
  connection.

For each case, the mean over ``--calls`` calls after ``--warm`` calls, with the experiment's
own connection and with the service's pool (which sets the schema inside the first round trip).

Run: .venv/bin/python benchmarks/count_statements.py [--calls 20] [--show]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

CASES = (
    # name, algorithm, arms, params, keyed
    ("ReplicableElimination", "ReplicableElimination", ["a", "b", "c"],
     {"rho": 0.3, "beta": 3}, False),
    ("ReplicableElimination, sticky keys", "ReplicableElimination", ["a", "b", "c"],
     {"rho": 0.3, "beta": 3}, True),
    ("UCB1 (a batch per pull; overflow)", "UCB1", ["a", "b", "c"], {}, False),
)


def measure(url: str, proxy_url: str, proxy, case, pooled: bool, calls: int, warm: int,
            log: list[str]) -> dict[str, float]:
    """Mean round trips and statements of assign(1) and record(1) for one case."""
    from banditkit import Experiment

    title, algorithm, arms, params, keyed = case
    name = f"count{abs(hash((title, pooled))) % 10**8}"
    Experiment.create(url, name=name, algorithm=algorithm, arms=arms, seed=1,
                      horizon=1_000_000, params=params).close()
    sums = {"assign_rt": 0, "assign_st": 0, "record_rt": 0, "record_st": 0}
    shown: dict[str, list[str]] = {}
    with Experiment.open(proxy_url, name=name) as e:
        for i in range(warm + calls):
            log.clear()
            before = proxy.count
            units = e.assign(keys=[f"user{i}"]) if keyed else e.assign(1)
            a_rt, a_st = proxy.count - before, len(log)
            shown["assign"] = list(log)
            log.clear()
            before = proxy.count
            e.record(units["unit"].tolist(), [float(i % 2)])
            r_rt, r_st = proxy.count - before, len(log)
            shown["record"] = list(log)
            if i >= warm:
                sums["assign_rt"] += a_rt
                sums["assign_st"] += a_st
                sums["record_rt"] += r_rt
                sums["record_st"] += r_st
    return {k: v / calls for k, v in sums.items()} | {"shown": shown}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--show", action="store_true", help="print the statements of the "
                        "last call of each case")
    args = parser.parse_args()

    import banditkit.live.store.postgres as ps
    from postgres_support import start_server
    from roundtrip_proxy import RoundTripProxy

    log: list[str] = []
    execute, executemany, raw = (ps._Connection.execute, ps._Connection.executemany,
                                 ps.PostgresStore._begin)

    def counted_execute(self, sql, parameters=()):
        # an answer read ahead was sent (and counted) with the first round trip: not again
        if (sql, tuple(parameters)) not in getattr(self, "_ahead", {}):
            log.append(" ".join(sql.split())[:110])
        return execute(self, sql, parameters)

    def counted_many(self, sql, rows):
        rows = list(rows)
        if rows:
            log.append(" ".join(sql.split())[:110] + "  [its rows in one statement]")
        return executemany(self, sql, rows)

    def counted_begin(self, *read_ahead):  # (a banditkit before read-ahead: no argument)
        log.append("BEGIN; [SET LOCAL search_path;] SELECT ... FOR UPDATE")
        log.extend("  read ahead: " + " ".join(sql.split())[:100]
                   for sql, _ in (read_ahead[0] if read_ahead else ()))
        return raw(self, *read_ahead)

    ps._Connection.execute, ps._Connection.executemany = counted_execute, counted_many
    ps.PostgresStore._begin = counted_begin
    cluster, stop = start_server()
    try:
        url = cluster.url()
        with RoundTripProxy("127.0.0.1", cluster.port) as proxy:
            proxy_url = proxy.url(url)
            for pooled in (False, True):
                if pooled:
                    ps.use_pool(proxy_url, 2)
                print(f"== {'pooled (banditkit serve)' if pooled else 'own connection'}; "
                      f"mean of {args.calls} calls after {args.warm}")
                for case in CASES:
                    got = measure(url, proxy_url, proxy, case, pooled, args.calls, args.warm,
                                  log)
                    print(f"{case[0]:<40} assign(1): {got['assign_rt']:.2f} round trips, "
                          f"{got['assign_st']:.2f} statements; record(1): "
                          f"{got['record_rt']:.2f} round trips, {got['record_st']:.2f} "
                          "statements")
                    if args.show:
                        for call, lines in got["shown"].items():
                            for line in lines:
                                print(f"    {call}: {line}")
    finally:
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
