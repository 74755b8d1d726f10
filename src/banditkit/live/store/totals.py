"""The running totals a live experiment keeps beside its units, in the caller's transaction:
per (batch, arm) and per arm over all batches (``totals``), and the guardrails' metric sums
(``metric_totals``), so that a call reads O(arms) rows however many units were recorded.
Assignment adds units assigned; outcomes add rewards, and take expired units out."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .base import Connection
from .schema import ALL_BATCHES, OVERFLOW_TOTALS

__all__ = ["add_metric_totals", "add_totals"]


def add_totals(conn: Connection, batch_id: int,
               deltas: Mapping[int, tuple[int, int, float, float, int]]) -> None:
    """Add (assigned, recorded, reward, reward², non-binary) to the running totals of
    (batch, arm) and of (all batches, arm), in the caller's transaction; with ``batch_id``
    :data:`~banditkit.live.store.schema.OVERFLOW_TOTALS`, to the overflow totals alone (the
    algorithm's rows never see overflow and rollout units)."""
    targets = ((OVERFLOW_TOTALS,) if batch_id == OVERFLOW_TOTALS
               else (batch_id, ALL_BATCHES))
    rows = [(b, arm, *delta) for arm, delta in deltas.items() for b in targets]
    if not rows:
        return
    conn.executemany(
        "INSERT INTO totals (batch, arm, assigned, recorded, reward, reward_sq, non_binary) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (batch, arm) DO UPDATE SET "
        "assigned = totals.assigned + excluded.assigned, "
        "recorded = totals.recorded + excluded.recorded, "
        "reward = totals.reward + excluded.reward, "
        "reward_sq = totals.reward_sq + excluded.reward_sq, "
        "non_binary = totals.non_binary + excluded.non_binary", rows)


def add_metric_totals(conn: Connection, values: list[tuple[int, int, np.ndarray]]) -> None:
    """Add newly recorded units' guardrail metrics ((batch, arm, values in the guardrails'
    order)) to the running sums of (batch, arm, guardrail) and (all batches, arm,
    guardrail), in the caller's transaction: the check reads O(arms × guardrails)."""
    sums: dict[tuple[int, int, int], list] = {}
    for b, a, row in values:
        for j, v in enumerate(row.tolist()):
            for key in ((b, a, j), (ALL_BATCHES, a, j)):
                d = sums.setdefault(key, [0, 0.0])
                d[0] += 1
                d[1] += v
    conn.executemany(
        "INSERT INTO metric_totals (batch, arm, guardrail, n, total) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (batch, arm, guardrail) DO UPDATE SET "
        "n = metric_totals.n + excluded.n, total = metric_totals.total + excluded.total",
        [(*k, n, t) for k, (n, t) in sums.items()])
