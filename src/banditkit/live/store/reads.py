"""The reads a live experiment's calls make first, as (sql, parameters) — one text for each,
shared by the call that runs it and by the read-ahead that sends it early.

Why: on PostgreSQL every read a call waits for is a round trip to the server, and a call made
of a dozen sequential reads spent most of its time waiting (issue 26: assign 9 round trips,
record 7). The reads that do not depend on another read's answer — the stored batches (the
replay check), the units whose outcome window closed, the operator's state, the keys, the
pending batch's free slots, the units a ``record`` names — are known before the call starts,
so :meth:`banditkit.live.store.base.Store.transaction` sends them with the lock in its first
round trip (``read_ahead``), and the call's own ``execute`` of the same text and parameters
takes that answer (the PostgreSQL backend's ``_Connection``; SQLite runs them as before). The
text must therefore be built here, once, for both: a read built twice could differ by a space
and silently cost its round trip again (``tests/test_pg_round_trips.py`` counts them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["CORRECTED", "OVERFLOW_DRAWN", "PLUGIN_BEHIND", "PREFIX_MOMENTS", "STATE_KEYS",
           "batches", "handed", "keyed_units", "ops_state", "reoffered_slots", "stale_units",
           "units_by_id"]

#: A read: its SQL (``?`` placeholders) and parameters.
Read = tuple[str, Sequence[Any]]

#: The ``meta`` key counting the calls that recorded corrections
#: (:mod:`banditkit.live.outcomes.corrections`): read with the operator's state, so an
#: experiment without corrections pays nothing for them.
CORRECTED = "corrections"

#: The operator's state keys of ``meta`` (:mod:`banditkit.live.assignment.operations`):
#: :data:`CORRECTED`, and ``edge``: the experiment is fed from the edge
#: (:mod:`banditkit.live.outcomes.ingest`).
STATE_KEYS = ("paused", "stopped", "archived", CORRECTED, "edge")

#: Each arm's counted rewards (count, sum, sum of squares) that ``record`` sends ahead with
#: its first round trip, for the outlier warning (:mod:`banditkit.live.outcomes.value_guard`).
PREFIX_MOMENTS: Read = ("SELECT arm, n, reward, reward_sq FROM prefix", ())

#: The overflow stream's counter (:mod:`banditkit.live.assignment.overflow`).
OVERFLOW_DRAWN: Read = ("SELECT value FROM meta WHERE key = 'overflow_drawn'", ())


#: The rewards each arm's prefix passed over that its plug-in sums do not hold yet (between
#: ``plugin_cursor`` and ``cursor``, in assignment order), each row with the arm's stored sums
#: (:func:`banditkit.live.outcomes.resolved_prefix.plugin_catch_up`).
PLUGIN_BEHIND: Read = (
    "SELECT p.arm, p.cursor, u.reward, p.n, p.reward, p.reward_sq, p.plugin_lam, "
    "p.plugin_lam_x, p.plugin_pen_low, p.plugin_pen_high FROM prefix p JOIN units u ON "
    "u.arm = p.arm AND u.id >= p.plugin_cursor AND u.id < p.cursor WHERE u.reward IS NOT NULL "
    "ORDER BY p.arm, u.id", ())


def batches(observed: int) -> Read:
    """The stored batches from ``observed`` on (the replay check of every call)."""
    return ("SELECT id, digest, reward_sums, cost_sums FROM batches WHERE id >= ? ORDER BY id",
            (observed,))


def stale_units(indexed_by: str, cutoff: str) -> Read:
    """The units still waiting whose outcome window closed at ``cutoff`` (through the partial
    index of waiting units on ``assigned_at``)."""
    return (f"SELECT id, batch, arm, kind FROM units {indexed_by} "
            "WHERE reward IS NULL AND expired_at IS NULL AND assigned_at <= ? ORDER BY id",
            (cutoff,))


def ops_state() -> Read:
    """The operator's state rows of ``meta``."""
    return (f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(STATE_KEYS))})",
            STATE_KEYS)


def keyed_units(keys: Sequence[str]) -> Read:
    """The current unit of each of ``keys`` (one chunk) already known."""
    return ("SELECT k.key, k.unit, u.arm, u.batch, u.expired_at FROM keys k "
            "JOIN units u ON u.id = k.unit WHERE k.superseded_at IS NULL AND k.key IN "
            f"({','.join('?' * len(keys))})", tuple(keys))


#: The largest ``LIMIT`` a store takes (SQLite's and PostgreSQL's 64-bit integers): an n
#: beyond it (``assign`` takes Python ints of any size) reads every expired slot.
_MAX_LIMIT = 2**62


def reoffered_slots(batch_id: int, limit: int) -> Read:
    """Up to ``limit`` slots of batch ``batch_id`` whose units all expired (handed out again
    first), in slot order; a partial index holds the expired units only."""
    return ("SELECT DISTINCT slot FROM units u WHERE batch = ? AND expired_at IS NOT NULL "
            "AND kind = 0 AND NOT EXISTS (SELECT 1 FROM units v WHERE v.batch = u.batch AND "
            "v.slot = u.slot AND v.expired_at IS NULL) ORDER BY slot LIMIT ?",
            (batch_id, min(int(limit), _MAX_LIMIT)))


def handed(batch_id: int) -> Read:
    """How many of batch ``batch_id``'s slots were handed out."""
    return "SELECT handed FROM batches WHERE id = ?", (batch_id,)


def units_by_id(ids: Sequence[int]) -> Read:
    """The stored rows of units ``ids`` (one chunk) that ``record`` checks."""
    return ("SELECT id, batch, slot, reward, costs, expired_at, arm, metrics, kind, imputed, "
            f"covariate, denominator FROM units WHERE id IN ({','.join('?' * len(ids))})",
            tuple(ids))
