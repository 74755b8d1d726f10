"""The assignment part of a live experiment: units get arms.

``assign(n, keys)`` hands out the pending batch's next slots (expired units' slots first, then
the batch's slot order: :meth:`banditkit.live.journal.replay.Journal.slot_order`), gives a
returning key its live unit again (sticky keys), and serves the units beyond the batch's
slots as overflow or, once the experiment has finished or was stopped, rollout units
(:mod:`banditkit.live.assignment.overflow`); nothing while it is paused
(:mod:`banditkit.live.assignment.operations`). Every method runs in the transaction the
coordinator (:class:`banditkit.Experiment`) opens for the call, after it resolved the units
whose outcome window closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...protocol import Batch, IIDBatch
from ..definition import Definition, LiveClock
from ..errors import ExperimentError
from ..journal.replay import Journal
from ..outcomes.unit_values import store_covariates, store_segments
from ..store import CHUNK, Connection, Store
from ..store import reads as _reads
from ..store.schema import OVERFLOW_TOTALS
from ..store.totals import add_totals
from .operations import Operations
from .overflow import MAX_PER_CALL, arms_in_play, design_shares, serve
from .rows import Assignment

__all__ = ["Assigner", "check_count"]

#: A key's current unit: (unit, arm, batch, expired_at).
KeyedUnit = tuple[int, int, int, str | None]


def check_count(n: object) -> int:
    """``n`` units to assign: an integer >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ExperimentError(f"n must be an integer >= 1, got {n!r}")
    return int(n)  # Python ints: no overflow of a numpy n near 2**64


class Assigner:
    """Hands out one experiment's units (see the module docstring)."""

    def __init__(self, definition: Definition, store: Store, clock: LiveClock,
                 journal: Journal, operations: Operations) -> None:
        self._def = definition
        self._store = store
        self._clock = clock
        self._journal = journal
        self._operations = operations

    def reads(self, n: int, keys: list[str] | None) -> list[_reads.Read]:
        """The reads ``assign(n, keys)`` makes first, sent with the lock
        (:mod:`banditkit.live.store.reads`): the operator's state, the keys' units, the
        pending batch's re-offered slots and count handed out (for the batch pending when the
        call starts; another process's progress makes them unused, never wrong), the overflow
        counter."""
        observed = self._journal.observed
        reads = [_reads.ops_state(), _reads.reoffered_slots(observed, n),
                 _reads.handed(observed)]
        if keys is not None:
            reads.append(_reads.keyed_units(keys[:CHUNK]))
        if self._def.overflow != "off":
            reads.append(_reads.OVERFLOW_DRAWN)
        return reads

    def _closed(self, conn: Connection, state: dict) -> str | None:
        """Why nothing is assigned: paused (by hand or by the guardrails), or stopped without
        rollout or archived; ``None`` when units may be assigned."""
        stopped = state.get("stopped")
        return (self._operations.paused(conn, state)
                or (stopped is not None and not stopped.get("rollout", True)
                    and f"the experiment was "
                    f"{'archived' if 'archived' in state else 'stopped'} by "
                    f"{stopped['by']} at {stopped['at']} (without rollout); no unit "
                    "is assigned"))

    def assign(self, conn: Connection, n: int, keys: list[str] | None,
               covariates: np.ndarray | None, segments: list[str] | None = None
               ) -> Assignment:
        """``Experiment.assign_rows`` in the caller's transaction (arguments checked)."""
        state = self._operations.state(conn)
        if "edge" in state:  # its slots are filled by exposures (outcomes/ingest.py)
            raise ExperimentError("assign: this experiment is fed from the edge "
                                  "(allocation and ingest); assign there, with the "
                                  "client, and send the exposures to ingest")
        stopped = state.get("stopped")
        closed = self._closed(conn, state)
        if closed:  # with keys, the columns a keyed call returns, empty
            return Assignment([], [], [], self._def.arm_names, closed, [],
                              *(([], []) if keys is not None else ()))
        # sticky units: a key's live unit comes back as it is, without a slot (an overflow or
        # rollout unit too: a key keeps its arm)
        known = {} if keys is None else self._keyed_units(conn, keys)
        wanted = n if keys is None else sum(
            1 for k in keys if k not in known or known[k][3] is not None)
        journal = self._journal
        # a stopped experiment hands out no slot of the algorithm's
        pending = (journal.pending(conn) if stopped is None and (wanted or keys is None)
                   else None)
        ids: list[int] = []
        arms = np.empty(0, dtype=np.int64)
        batch_id = journal.observed if pending is not None else max(journal.observed - 1, 0)
        if pending is not None:
            batch_id, batch = pending
            handed = self.hand_out(conn, batch_id, batch, min(wanted, batch.n_pulls), n,
                                   journal.stored_now == batch_id)
            assert handed is not None  # not ``whole``: never None
            ids, arms = handed
        if pending is None and journal.observed == 0:
            journal.pending(conn)  # stopped before any call: file the units under batch 0
        extra_ids, extra_arms, why = self._serve_overflow(conn, pending, batch_id,
                                                          wanted - len(ids), stopped is not None)
        batches = [batch_id] * (len(ids) + len(extra_ids))
        ids, arms = ids + extra_ids, np.concatenate([arms, extra_arms])
        if keys is None:
            rows: tuple[Any, ...] = (ids, arms.tolist(), batches, None, None)
        else:
            rows = self._keyed_rows(conn, keys, known, ids, arms.tolist(), batches)
        if covariates is not None:
            store_covariates(conn, rows[0], rows[3], keys, covariates)
        if segments is not None:
            store_segments(conn, rows[0], rows[3], keys, segments)
        got = len(rows[0])
        if got == n:
            reason = why
        elif pending is None:
            reason = journal.finished_reason() if wanted else None
        else:
            reason = self._short_reason(conn, batch_id, batch, n, got)
        unit, arm, batch_ids, key, repeated = rows
        return Assignment(unit, arm, batch_ids, self._def.arm_names, reason, extra_ids, key,
                          repeated)

    def assign_many(self, conn: Connection, counts: list[int]) -> list[Assignment] | None:
        """``Experiment.assign_many`` in the caller's transaction (counts checked): ``None``,
        nothing written, unless the pending batch has a slot for every unit."""
        state = self._operations.state(conn)
        if (state.get("stopped") is not None or self._operations.paused(conn, state)
                or "edge" in state):  # fed from the edge: assign refuses it, with the reason
            return None
        pending = self._journal.pending(conn)
        if pending is None:
            return None
        batch_id, batch = pending
        total = sum(counts)
        handed = self.hand_out(conn, batch_id, batch, total, total,
                               self._journal.stored_now == batch_id, whole=True)
        if handed is None:
            return None
        ids, arms = handed[0], handed[1].tolist()
        parts, start = [], 0
        for n in counts:
            stop = start + n
            parts.append(Assignment(ids[start:stop], arms[start:stop], [batch_id] * n,
                                    self._def.arm_names, None, []))
            start = stop
        return parts

    def hand_out(self, conn: Connection, batch_id: int, batch: Batch, n: int, asked: int,
                 new: bool, whole: bool = False) -> tuple[list[int], np.ndarray] | None:
        """Insert up to ``n`` new units into the pending batch's next slots (expired units'
        slots first): their ids and arms, in slot-order. ``asked``: the call's ``n`` (≥ n, the
        re-offered slots' read limit, as read ahead); ``new``: the batch was stored by this
        call (none of its slots is handed out or expired: nothing to read). With ``whole``, all
        ``n`` or none: ``None`` (nothing written) when fewer than ``n`` slots are left."""
        if new:
            reoffer: list[int] = []
            handed = 0
        else:
            # slots of expired units first (a partial index holds the expired ones only)
            reoffer = [r[0] for r in conn.execute(
                *_reads.reoffered_slots(batch_id, asked))][:n]
            (handed,) = conn.execute(*_reads.handed(batch_id)).fetchone()
        take = min(batch.n_pulls - handed, n - len(reoffer))
        if whole and len(reoffer) + take < n:
            return None
        if isinstance(batch, IIDBatch):
            # i.i.d. pulls are in a random order already (exchangeable: a drift during the
            # batch cannot line up with the arms), so the slots go out in draw order,
            # whatever ``order`` says, and their arms cost O(units), not O(batch)
            fresh = np.arange(handed, handed + take, dtype=np.int64)
            slots = np.concatenate([np.asarray(reoffer, dtype=np.int64), fresh])
            arms = batch.arms_at(slots)
        else:
            slots = np.concatenate([np.asarray(reoffer, dtype=np.int64),
                                    self._journal.slot_order(batch_id, batch.n_pulls, handed,
                                                             take)])
            arms = self._journal.arms_at(batch_id, batch, slots)
        now = self._clock.stamp()
        conn.executemany("INSERT INTO units (batch, slot, arm, assigned_at) "
                         "VALUES (?, ?, ?, ?)",
                         [(batch_id, int(s), int(a), now)
                          for s, a in zip(slots, arms, strict=True)])
        # the write lock is held, so the new ids are consecutive and end at the last one
        # (read before the totals' inserts, which move last_insert_rowid; PostgreSQL's
        # sequence moves only under the lock too, and is read only after an insert)
        ids: list[int] = []
        if slots.size:
            (last,) = conn.execute(self._store.last_id_sql).fetchone()
            ids = list(range(last - slots.size + 1, last + 1))
        if take:
            conn.execute("UPDATE batches SET handed = handed + ? WHERE id = ?",
                         (take, batch_id))
        per_arm = np.bincount(arms, minlength=self._def.n_arms)
        add_totals(conn, batch_id, {int(a): (int(per_arm[a]), 0, 0.0, 0.0, 0)
                                    for a in np.flatnonzero(per_arm)})
        return ids, np.asarray(arms, dtype=np.int64)

    # -- sticky keys ---------------------------------------------------------------------------
    def _keyed_units(self, conn: Connection, keys: list[str]) -> dict[str, KeyedUnit]:
        """The current unit of each key already known: key → (unit, arm, batch, expired_at).
        By the keys' unique index, in chunks: O(len(keys))."""
        found: dict[str, KeyedUnit] = {}
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start: start + CHUNK]
            for key, unit, arm, batch_id, expired_at in conn.execute(
                    *_reads.keyed_units(chunk)):
                self._def.check_arm(arm)
                found[key] = (unit, arm, batch_id, expired_at)
        return found

    def _keyed_rows(self, conn: Connection, keys: list[str], known: Mapping[str, KeyedUnit],
                    ids: list[int], arms: list[int], batch_ids: list[int]) -> tuple[list, ...]:
        """Store the keys of the new units (``ids``, given to the keys that need a slot in
        their order) in the caller's transaction; the columns (unit, arm, batch, key,
        repeated) of every key served."""
        rows: list[tuple[int, int, int, str, bool]] = []
        fresh = iter(zip(ids, arms, batch_ids, strict=True))
        stored: list[tuple[int, str]] = []
        superseded: list[str] = []
        for key in keys:
            old = known.get(key)
            if old is not None and old[3] is None:  # its unit is live: the same unit again
                rows.append((old[0], old[1], old[2], key, True))
                continue
            unit_arm = next(fresh, None)
            if unit_arm is None:
                continue  # no slot left for it this call
            if old is not None:  # its unit expired: the key now points to the new unit
                superseded.append(key)
            stored.append((unit_arm[0], key))
            rows.append((unit_arm[0], unit_arm[1], unit_arm[2], key, False))
        now = self._clock.stamp()
        conn.executemany("UPDATE keys SET superseded_at = ? WHERE key = ? AND "
                         "superseded_at IS NULL", [(now, k) for k in superseded])
        conn.executemany("INSERT INTO keys (unit, key) VALUES (?, ?)", stored)
        return tuple([r[i] for r in rows] for i in range(5))

    # -- beyond the slots ----------------------------------------------------------------------
    def _short_reason(self, conn: Connection, batch_id: int, batch: Batch,
                      asked: int, got: int) -> str:
        """One line: why ``assign`` handed out ``got`` < ``asked`` units."""
        (waiting,) = conn.execute(
            "SELECT COALESCE(SUM(assigned - recorded), 0) FROM totals WHERE batch = ?",
            (batch_id,)).fetchone()
        size = f"batch {batch_id + 1} has {batch.n_pulls} pull(s)"
        algorithm = self._journal.algorithm
        assert algorithm is not None
        R = getattr(algorithm, "epoch_length", None)
        horizon = self._def.horizon
        if R is not None and getattr(algorithm, "update", None) == "periodic":
            size += (f" (an epoch of Xiong et al.'s Algorithm 4: λ is refreshed after pull 1, "
                     f"then every R = {R} pulls, line 8)")
        elif batch.n_pulls == 1 and not algorithm.stops_by_itself:
            size += f" ({self._def.algorithm_name} chooses one pull at a time)"
        if horizon is not None and algorithm.t + batch.n_pulls >= horizon:
            size += f" (the last before the horizon of {horizon})"
        head = ("no unit assigned" if got == 0 else f"{got} of {asked} units assigned")
        return (f"{head}: {size}, all now assigned; the algorithm needs their rewards "
                f"({waiting} still waiting) before it chooses the next batch")

    def _serve_overflow(self, conn: Connection, pending: tuple[int, Batch] | None,
                        batch_id: int, count: int, stopped: bool
                        ) -> tuple[list[int], np.ndarray, str | None]:
        """``count`` overflow units (the algorithm waits: ``pending`` is its batch) or rollout
        units (finished, or ``stopped`` with a rollout arm, which rolls out even with
        ``overflow="off"``) by :mod:`banditkit.live.assignment.overflow`'s rules: their ids,
        arms, and one line saying so (``None`` when there are none)."""
        none: tuple[list[int], np.ndarray, str | None] = ([], np.empty(0, dtype=np.int64), None)
        rule, names = self._def.overflow, self._def.arm_names
        if count <= 0 or (rule == "off" and not stopped):
            return none
        if count > MAX_PER_CALL:  # refused in the call's transaction: nothing changes
            raise ExperimentError(f"n: {count} units beyond the algorithm's slots; at most "
                                  f"{MAX_PER_CALL} overflow or rollout units are "
                                  "served per call (assign in several calls)")
        if pending is None:
            arm, why = self._operations.rollout_arm(conn)
            ids, arms = self._serve(conn, batch_id, count, rollout_arm=arm)
            return ids, arms, (f"{count} rollout unit(s) on {names[arm]!r} ({why}): "
                               "the experiment is finished or stopped; they are not shown "
                               "to the algorithm")
        _, batch = pending
        shares = design_shares(rule, batch, len(names), self._def.control_index,
                               arms_in_play(self._journal.algorithm, batch))
        ids, arms = self._serve(conn, batch_id, count, shares=shares)
        return ids, arms, (f"{count} overflow unit(s) (rule {rule!r}): batch "
                           f"{batch_id + 1}'s {batch.n_pulls} slot(s) are all assigned and the "
                           "algorithm waits for their rewards; overflow units are not shown "
                           "to it")

    def _serve(self, conn: Connection, batch_id: int, count: int, **rule: Any
               ) -> tuple[list[int], np.ndarray]:
        """:func:`~banditkit.live.assignment.overflow.serve` at the experiment's clock, its
        units counted in the overflow totals."""
        ids, arms, _ = serve(conn, self._store.last_id_sql, self._def.seed, batch_id, count,
                             now=self._clock.stamp(), **rule)
        per_arm = np.bincount(arms)
        add_totals(conn, OVERFLOW_TOTALS, {int(a): (int(per_arm[a]), 0, 0.0, 0.0, 0)
                                           for a in np.flatnonzero(per_arm)})
        return ids, arms
