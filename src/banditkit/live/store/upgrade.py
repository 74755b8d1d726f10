"""Bringing an older experiment's tables to the current layout (:data:`.schema.FORMAT`), in the
transaction of the writable open that finds it: the columns and tables each format since 5
lacks (:func:`.schema.upgrade_5_to_6` ...), and the meta entries a format 5 experiment lacks.
The coordinator (:meth:`banditkit.Experiment.open`) then rebuilds the resolved prefix from the
units (:func:`banditkit.live.outcomes.resolved_prefix.rebuild`) and sets the format."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .base import Connection, Store
from .schema import (
    FORMAT,
    upgrade_5_to_6,
    upgrade_6_to_7,
    upgrade_7_to_8,
    upgrade_9_to_10,
    upgrade_10_to_11,
)

__all__ = ["upgrade_tables"]


def upgrade_tables(conn: Connection, store: Store, window_meta: Mapping[str, Any]) -> None:
    """The statements from ``store.format`` (5 to 10) to :data:`FORMAT`, in the caller's
    transaction; ``window_meta``: a format 5 experiment's outcome window entries (it had none:
    its units wait until recorded or expired, as before)."""
    old = store.format
    types = store.types
    statements = []
    if old == 5:  # its prefix tables are created in the newest layout
        statements += upgrade_5_to_6(types)
    if old in (5, 6):
        statements += upgrade_6_to_7(types, prefix_tables=old == 6)
    if old in (6, 7):
        statements += upgrade_7_to_8(types)
    if old < 10:
        statements += upgrade_9_to_10(types)  # the edge's tables
    statements += upgrade_10_to_11(types)  # every older format: the units' segment
    for statement in statements:
        conn.execute(statement)
    if old == 5:
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                         [(k, json.dumps(v)) for k, v in window_meta.items()])
    conn.execute("UPDATE meta SET value = ? WHERE key = 'format'", (json.dumps(FORMAT),))
