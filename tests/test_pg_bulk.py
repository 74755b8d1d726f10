"""Many rows in one PostgreSQL statement (banditkit.live.store.pg_bulk): the rewritten
``executemany`` writes what SQLite's writes, row for row and id for id, and the column types it
casts to are the database's own."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from banditkit.live.store.pg_bulk import bulk_statements, column_types
from banditkit.live.store.postgres import schema_name

_ARGS = dict(algorithm="ReplicableElimination", arms=["a", "b", "c"], seed=4, horizon=10**6,
             params={"rho": 0.05})

# (statement, rows): an insert with ids in order, values of mixed Python types (and numpy's
# float) and a
# column of None only; an upsert whose conflicting rows add; an UPDATE by id with COALESCE
# both ways round and a column set to None.
_AUDIT = "INSERT INTO audit (at, who, action, detail) VALUES (?, ?, ?, ?)"
_OUTCOMES = "INSERT INTO edge_outcomes (key, value, at, extra) VALUES (?, ?, ?, ?)"
_FLAGS = ("INSERT INTO edge_flags (reason, count) VALUES (?, ?) ON CONFLICT (reason) DO UPDATE "
          "SET count = edge_flags.count + excluded.count")
_UPDATE = ("UPDATE audit SET action = ?, detail = COALESCE(?, detail), who = COALESCE(who, ?) "
           "WHERE id = ?")
_WRITES = [
    (_AUDIT, [(f"2026-01-0{i}", f"bulk{i}", f"act{i}", None) for i in range(1, 6)]),
    (_OUTCOMES, [("k1", 1, "t1", None), ("k2", 0.25, "t2", None), ("k3", 3, "t3", None),
                 ("k4", np.float64(-2.5), "t4", None), ("k5", True, "t5", None)]),
    (_FLAGS, [("two_arms", 2), ("not_offered", 5)]),
    (_FLAGS, [("two_arms", 3), ("other", 1)]),
]


def _write_and_read(conn, backend: str) -> list:
    for sql, rows in _WRITES:
        conn.executemany(sql, rows)
    ids = [i for (i,) in conn.execute("SELECT id FROM audit WHERE who LIKE 'bulk%' ORDER BY id")]
    assert ids == list(range(ids[0], ids[0] + 5)), ids  # consecutive, in the rows' order
    conn.executemany(_UPDATE, [("new1", "d1", "x", ids[0]), ("new2", None, "y", ids[1]),
                               ("new3", np.float64(2.0) and "d3", None, ids[3])])
    return [conn.execute("SELECT at, who, action, detail FROM audit WHERE who LIKE 'bulk%' "
                         "ORDER BY id").fetchall(),
            conn.execute("SELECT key, value, at, extra FROM edge_outcomes ORDER BY key").fetchall(),
            conn.execute("SELECT reason, count FROM edge_flags ORDER BY reason").fetchall()]


def test_bulk_writes_as_sqlite_does(tmp_path, pg_experiment):
    """The statements above, on each backend's store inside an experiment's transaction: the
    same rows (the insert's ids consecutive and in order, each type as SQLite stores it)."""
    from banditkit import Experiment

    assert all(bulk_statements(sql, rows) is not None for sql, rows in _WRITES)
    assert bulk_statements(_UPDATE, [("a", None, None, 1)] * 2) is not None
    got = {}
    for backend, (target, name) in (("sqlite", (str(tmp_path / "e.sqlite"), None)),
                                    ("postgres", pg_experiment)):
        with Experiment.create(target, name=name, **_ARGS) as e:
            with e._store.transaction() as conn:
                got[backend] = [[tuple(row) for row in rows]
                                for rows in _write_and_read(conn, backend)]
    assert got["postgres"] == got["sqlite"]
    audit, outcomes, flags = got["postgres"]
    assert audit[0] == ("2026-01-01", "bulk1", "new1", "d1")
    assert audit[1] == ("2026-01-02", "bulk2", "new2", None)
    assert audit[3] == ("2026-01-04", "bulk4", "new3", "d3")
    assert [v for _, v, _, _ in outcomes] == [1.0, 0.25, 3.0, -2.5, 1.0]
    assert flags == [("not_offered", 5), ("other", 1), ("two_arms", 5)]


def test_column_types_are_the_databases(pg_experiment):
    """The types read from the schema's code are those of the tables PostgreSQL created."""
    from banditkit import Experiment

    url, name = pg_experiment
    Experiment.create(url, name=name, **_ARGS).close()
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped",
            (schema_name(name),)).fetchall()
    database: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        database.setdefault(table, {})[column] = kind
    assert column_types() == database


@pytest.mark.parametrize("sql", [
    "INSERT INTO meta VALUES (?, ?)",  # no column list: the types cannot be told
    "INSERT INTO audit (at, who) VALUES (?, now())",  # not a placeholder each
    "UPDATE keys SET superseded_at = ? WHERE key = ? AND superseded_at IS NULL",
    "INSERT INTO nowhere (a, b) VALUES (?, ?)",  # a table the schema lacks
])
def test_other_statements_are_left_to_psycopg(sql):
    assert bulk_statements(sql, [(1, 2), (3, 4)]) is None
