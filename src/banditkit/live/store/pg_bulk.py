"""Many rows in one PostgreSQL statement of a fixed text, for
:meth:`banditkit.live.store.postgres._Connection.executemany`.

The experiment's SQL writes many rows with ``executemany`` (an ``assign`` of 10,000 units, an
``ingest`` of 500 exposures and their outcomes). On PostgreSQL a statement per row costs a
server execution each, and a multi-row ``VALUES (...), (...)`` statement has a different text
(and parameter count) for every number of rows: psycopg parses such a text anew on every call
(it caches only statements of at most 50 parameters) and never prepares it, which was about a
third of an ``ingest`` body's time in the server (issue 38). Here the rows travel as **one array
per column**, ``unnest``-ed by the server, so the text depends on the statement only: psycopg
parses it once, and prepares it after its fifth use.

Two shapes are rewritten; any other statement is left to psycopg's own ``executemany``:

- ``INSERT INTO t (a, b) VALUES (?, ?) [tail]`` → ``INSERT INTO t (a, b) SELECT * FROM
  unnest(%b::A[], %b::B[]) [tail]``. ``unnest`` yields the rows in array order, so the units'
  ids follow the slots' order as a multi-row ``VALUES`` did, and an upsert of distinct keys
  behaves as the rows one by one.
- ``UPDATE t SET a = ?, b = COALESCE(?, b) WHERE id = ?`` (each assignment a placeholder, or
  ``COALESCE`` of one and a column) → ``UPDATE t SET a = v.p0, b = COALESCE(v.p1, b) FROM
  unnest(...) AS v(p0, p1, p2) WHERE t.id = v.p2`` (the ids of one call are distinct).

The arrays travel in psycopg's binary format (``%b``): a text array's every element is
quoted by a regular expression in Python, which cost as much as the parsing saved.

Each array is cast to its column's type (from the store's schema, :func:`column_types`): an
array whose values are all ``None`` has no type of its own. The values are made of the
column's Python type first (``int``, ``float``, ``str``), so that a list mixing ``1`` and
``0.5`` (or a numpy integer) dumps as one array.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .schema import POSTGRES_TYPES, schema

__all__ = ["bulk_statements", "column_types"]

#: ``INSERT INTO t (a, b) VALUES (?, ?) tail``: (table, columns, placeholders, tail).
_INSERT = re.compile(r"INSERT INTO (\w+) \(([\w, ]+)\) VALUES \(([?, ]+)\)(.*)", re.S)
#: One assignment of an ``UPDATE ... WHERE id = ?`` rewritten here.
_ASSIGNMENT = r"\w+ = (?:\?|COALESCE\(\?, \w+\)|COALESCE\(\w+, \?\))"
_UPDATE = re.compile(rf"UPDATE (\w+) SET ((?:{_ASSIGNMENT}, )*{_ASSIGNMENT}) WHERE id = \?")

#: Rows a statement carries at most (its arrays' memory on both sides, not a server limit).
MAX_ROWS = 50_000

#: A column's definition in :func:`banditkit.live.store.schema.schema`: (name, type).
_COLUMN = re.compile(r"\s*(\w+) (BIGINT|DOUBLE PRECISION|TEXT|BYTEA)\b")


@lru_cache(maxsize=1)
def column_types() -> dict[str, dict[str, str]]:
    """table → column → PostgreSQL type, read from the store's schema in PostgreSQL's types
    (:func:`banditkit.live.store.schema.schema`): the same in every experiment's schema at the
    store's format (a writable open upgrades an older one before it writes). Read from the
    code, not from ``pg_attribute``: a look-up would cost a call a round trip."""
    found: dict[str, dict[str, str]] = {}
    for table, body in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+) \((.*?)\);",
                                  schema(POSTGRES_TYPES), re.S):
        columns = found.setdefault(table, {})
        for item in _split(body):
            match = _COLUMN.match(item)
            if match is not None and match.group(1).upper() not in ("PRIMARY", "UNIQUE"):
                columns[match.group(1)] = match.group(2).lower()
    return found


def _split(body: str) -> list[str]:
    """A table's definitions, split at the commas outside parentheses."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(body):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    return [*items, body[start:]]


@lru_cache(maxsize=256)
def _plan(sql: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(the rewritten statement with ``{casts}`` where its arrays go, the table, the column
    each parameter is cast to), or ``None`` for a statement of another shape."""
    insert = _INSERT.fullmatch(sql)
    if insert is not None:
        table, columns, marks, tail = insert.groups()
        names = tuple(c.strip() for c in columns.split(","))
        if marks.replace(" ", "") != ",".join("?" * len(names)):
            return None
        return (f"INSERT INTO {table} ({columns}) SELECT * FROM unnest({{casts}})"
                f"{tail}", table, names)
    update = _UPDATE.fullmatch(sql)
    if update is not None:
        table, assignments = update.groups()
        parts = re.findall(_ASSIGNMENT, assignments)
        names = tuple(part.split(" = ")[0] for part in parts)
        values = [f"p{i}" for i in range(len(names) + 1)]
        sets = ", ".join(part.replace("?", f"v.{p}") for part, p in zip(parts, values,
                                                                         strict=False))
        return (f"UPDATE {table} SET {sets} FROM unnest({{casts}}) AS v({', '.join(values)}) "
                f"WHERE {table}.id = v.{values[-1]}", table, (*names, "id"))
    return None


_MAKE: dict[str, Callable[[Any], Any]] = {"bigint": int, "integer": int, "smallint": int,
                                          "double precision": float, "real": float,
                                          "text": str}


def _column(values: list[Any], kind: str) -> list[Any]:
    make = _MAKE.get(kind)
    if make is None:
        return values
    return [v if v is None or type(v) is make else make(v) for v in values]


def bulk_statements(sql: str, rows: list[Sequence[Any]]) -> list[tuple[str, list[Any]]] | None:
    """``executemany(sql, rows)`` as statements of one array per column (the module
    docstring): ``[(psycopg statement, parameters), ...]``, or ``None`` when ``sql`` is of
    another shape (or names a column this table lacks: the server's own error then)."""
    plan = _plan(sql)
    if plan is None or len(rows) < 2:
        return None
    text, table, columns = plan
    types = column_types().get(table, {})
    if any(c not in types for c in columns):
        return None
    kinds = [types[c] for c in columns]
    statement = text.format(casts=", ".join(f"%b::{k}[]" for k in kinds))
    out = []
    for start in range(0, len(rows), MAX_ROWS):
        chunk = rows[start: start + MAX_ROWS]
        arrays = [_column(list(values), kind)
                  for values, kind in zip(zip(*chunk, strict=True), kinds, strict=True)]
        out.append((statement, arrays))
    return out
