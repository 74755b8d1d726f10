"""Exposures and outcomes from the edge, in bulk: :meth:`banditkit.Experiment.ingest`.

An application assigns its visitors itself (:mod:`banditkit.client`, by a published allocation,
:mod:`banditkit.live.assignment.allocation`) and sends later, in bulk, what happened: each
**exposure** (key, arm, allocation version, time) and each **outcome** (key, value, time). This
module turns them into the experiment's units, so that the algorithm and the statistics see what
they would have seen through ``assign``/``record``:

- **Slots.** Each batch's per-arm slots are filled by that arm's first exposures in exposure
  order (time, then order in the call): the k-th exposure of arm a in batch b takes arm a's k-th
  slot in the batch's pull order (``edge_slots`` counts them), a slot whose unit expired is
  offered again first; an exposure beyond its arm's slots is an **overflow** unit, once the
  experiment has finished or was stopped a **rollout** unit
  (:mod:`banditkit.live.assignment.overflow`: never shown to the algorithm). Given the same
  rewards per arm, the algorithm then observes the same run sums and makes the same decisions as
  through ``assign``/``record`` (tests/test_ingest.py checks ReplicableElimination, RAGE and
  BatchedThompson).
- **Propensity log.** ``edge_units`` keeps each exposure's version and the weight its arm had
  in that version (also ``units.propensity``), and its exposure time (µs since the epoch).
- **Idempotent and order-free.** A key is exposed once: the same exposure again (a retry, a
  duplicate in the feed) counts as *repeated*; an outcome recorded with the same value again is
  *repeated*. An outcome whose exposure has not come yet waits (``edge_outcomes``) and is
  recorded when it comes, in that call. The whole call is one transaction: a call killed
  before it returns left nothing, and its retry counts every event once.
- **Refusals, per event.** An event that cannot be used is refused with its index and one line
  of reason; the others are kept. An exposure to an arm its version did not offer (weight 0), or
  a key exposed on two arms, is refused *and* counted in ``edge_flags`` (a sign of a broken
  client; :func:`flags`, shown by ``status``: :func:`edge_warnings`). An outcome after its
  unit's outcome window (measured from the exposure's time) is refused; a unit whose window
  closed unanswered was resolved by the experiment's rule
  (:mod:`banditkit.live.outcomes.window`).

Within one call, the exposures are placed (in time order) before the outcomes are recorded. An
experiment fed this way is refused by ``assign`` (its slots are filled by exposures), and an
experiment whose units came from ``assign`` is refused here: one feeding path per experiment.
An outcome of a constrained policy (an experiment created with thresholds) carries its
``costs``, one per threshold, as ``record`` takes them. Algorithms that draw i.i.d. pulls from a
design (G-BAI, P1-RAGE, ...: their slots' arms are drawn from the experiment's internal
randomness, on which their replicability rests, not planned) are not fed through the edge:
their ``allocation()`` is refused (:mod:`banditkit.live.assignment.allocation`).

:class:`Ingest` is the outcomes part's edge: the coordinator (:meth:`banditkit.Experiment.ingest`)
opens the call's transaction and hands it the events read; it reaches the other parts only
through their public methods: the journal's pending batch, the operator's state
(:class:`~banditkit.live.assignment.operations.Operations`), the published versions
(:class:`~banditkit.live.assignment.allocation.Allocator`) and the record path
(:class:`~banditkit.live.outcomes.recorder.Outcomes`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...protocol import Batch, IIDBatch
from ..assignment.allocation import Allocator
from ..assignment.operations import Operations
from ..definition import Definition, LiveClock
from ..errors import ExperimentError
from ..journal.replay import Journal
from ..readout.guardrails import check_metrics
from ..readout.verdict_spec import check_unit_values
from ..store import Connection, Store
from ..store.codec import parse_stamp, stamp, stamps
from ..store.schema import (
    ALGORITHM,
    EDGE_NOT_OFFERED,
    EDGE_TWO_ARMS,
    OVERFLOW,
    OVERFLOW_TOTALS,
    ROLLOUT,
)
from ..store.totals import add_totals
from .events import (
    Exposure,
    Outcome,
    Refusal,
    as_events,
    check_sizes,
    read_exposures,
    read_outcomes,
)
from .recorder import Outcomes

__all__ = ["Ingest", "Ingested", "edge_warnings", "flags"]

#: ``edge_flags`` reasons (:mod:`banditkit.live.store.schema`).
NOT_OFFERED, TWO_ARMS = EDGE_NOT_OFFERED, EDGE_TWO_ARMS


@dataclass
class Ingested:
    """What one :meth:`~banditkit.Experiment.ingest` call did.

    Attributes
    ----------
    new, repeated, refused : int
        Events (exposures and outcomes together) newly kept, already kept before (or twice in
        this call), refused.
    exposures, outcomes : dict
        The same per kind; ``exposures`` also counts the new ones by ``kind`` (``algorithm``,
        ``overflow``, ``rollout``), ``outcomes`` those ``waiting`` for their exposure and those
        ``recorded``.
    refusals : list of Refusal
        One per refused event: ``kind``, ``index`` (in its list), ``key``, ``reason``.
    """

    exposures: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("new", "repeated", "refused", "algorithm", "overflow", "rollout"), 0))
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("new", "repeated", "refused", "waiting", "recorded"), 0))
    refusals: list[Refusal] = field(default_factory=list)

    @property
    def new(self) -> int:
        return self.exposures["new"] + self.outcomes["new"]

    @property
    def repeated(self) -> int:
        return self.exposures["repeated"] + self.outcomes["repeated"]

    @property
    def refused(self) -> int:
        return len(self.refusals)

    def as_json(self) -> dict[str, Any]:
        return {"new": self.new, "repeated": self.repeated, "refused": self.refused,
                "exposures": dict(self.exposures), "outcomes": dict(self.outcomes),
                "refusals": [r.as_json() for r in
                             sorted(self.refusals, key=lambda r: (r.kind, r.index))]}

    def _refuse(self, kind: str, index: int, key: str | None, reason: str) -> None:
        self.refusals.append(Refusal(kind, index, key, reason))
        (self.exposures if kind == "exposure" else self.outcomes)["refused"] += 1


#: The events of one call, read and checked: exposures, outcomes, the refusals of both.
Events = tuple[list[Exposure], list[Outcome], list[Refusal]]


class Ingest:
    """The outcomes part's feed from the edge (see the module docstring)."""

    def __init__(self, definition: Definition, store: Store, clock: LiveClock,
                 journal: Journal, operations: Operations, allocator: Allocator,
                 outcomes: Outcomes) -> None:
        self._def = definition
        self._store = store
        self._clock = clock
        self._journal = journal
        self._operations = operations
        self._allocator = allocator
        self._outcomes = outcomes

    def read(self, exposures: object, outcomes: object) -> tuple[int, Events]:
        """The call's events read before any work (a call of the wrong shape refused whole,
        each unreadable event refused alone): (the call's time in µs, events)."""
        check_sizes(as_events(exposures, "exposures"), as_events(outcomes, "outcomes"))
        now = self._clock.micros()
        arm_index = {name: i for i, name in enumerate(self._def.arm_names)}
        read_e, refused_e = read_exposures(exposures, arm_index, now)
        read_o, refused_o = read_outcomes(outcomes, now)
        return now, (read_e, read_o, [*refused_e, *refused_o])

    def ingest(self, conn: Connection, now: int, events: Events) -> Ingested:
        """``Experiment.ingest`` in the caller's transaction (events read by :meth:`read`)."""
        exposures, outcomes, refused = events
        result = Ingested()
        for refusal in refused:
            result._refuse(refusal.kind, refusal.index, refusal.key, refusal.reason)
        self._claim(conn)
        self._outcomes.resolve(conn)
        feed = _Feed(self, conn, result, now)
        feed.expose(sorted(exposures, key=lambda e: (e.at, e.index)))
        feed.outcomes(outcomes)
        feed.flush_flags()
        self._allocator.remember(conn, self._allocator.current(conn, "-"))
        return result

    def _claim(self, conn: Connection) -> None:
        """Mark the experiment as fed from the edge (``meta.edge``), refusing one whose units
        came from ``assign``."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'edge'").fetchone()
        if row is not None:
            return
        (units,) = conn.execute("SELECT COUNT(*) FROM units").fetchone()
        if units:
            raise ExperimentError("ingest: this experiment's units were assigned by assign "
                                  f"({units} of them); an experiment is fed either by "
                                  "assign/record or from the edge (allocation, ingest), not "
                                  "both")
        conn.execute("INSERT INTO meta (key, value) VALUES ('edge', ?)",
                     (json.dumps({"since": self._clock.stamp()}),))


def flags(conn: Connection) -> dict[str, int]:
    """The exposures refused as signs of a broken client, by reason, of an experiment fed
    from the edge (``meta.edge`` set: its tables were created in the same transaction)."""
    return {reason: int(count) for reason, count in
            conn.execute("SELECT reason, count FROM edge_flags")}


def _among(postgres: bool, column: str, values: list) -> tuple[str, tuple]:
    """``column`` among ``values`` as one parameter: a PostgreSQL array (``= ANY``), SQLite's
    ``json_each`` of a JSON list. Why: psycopg parses a statement of more than 50 parameters
    anew on every call (its cache skips them), and an ingest body's ``IN (?, ?, ...)`` of 500
    keys cost about 20 ms of it a statement on a loaded machine; one parameter is parsed once."""
    if postgres:
        return f"{column} = ANY(?)", (list(values),)
    return f"{column} IN (SELECT value FROM json_each(?))", (json.dumps(list(values)),)


class _Feed:
    """One call's exposures and outcomes, placed in the caller's transaction."""

    def __init__(self, part: Ingest, conn: Connection, result: Ingested, now: int) -> None:
        self.part = part
        self.d = part._def  # the feed is the part's own helper: its state is shared
        self.conn = conn
        self.result = result
        self.now = now
        self.flags: dict[str, int] = {}
        # key → (unit, arm, exposed at µs or None, expired_at) of the keys seen by this call
        self.units: dict[str, tuple[int, int, int | None, str | None]] = {}
        self.placed: set[int] = set()  # the units this call created (no outcome yet)
        self.postgres = part._store.url is not None
        window = self.d.window
        self.window = window.micros if window.seconds is not None else None

    # -- exposures ----------------------------------------------------------------------------
    def expose(self, exposures: list[Exposure]) -> None:
        if not exposures:
            return
        conn, result = self.conn, self.result
        self._pending()  # an algorithm whose slots the edge cannot fill: refused first
        keys = list(dict.fromkeys(x.key for x in exposures))
        known = self._keyed(keys)
        for key, (unit, arm, _, expired_at) in known.items():
            self.units[key] = (unit, arm, None, expired_at)
        allocator = self.part._allocator
        versions = allocator.stored_versions(conn, list(dict.fromkeys(x.version
                                                                     for x in exposures)))
        if any(x.version not in versions for x in exposures):
            # published by a read-only process (it keeps no version): the current one is known
            now = allocator.current(conn, "-")
            if any(x.version == now.version for x in exposures):
                allocator.remember(conn, now)
                versions[now.version] = (now.batch, now.mode, now.weights)
        fresh: list[tuple[Exposure, float]] = []
        for x in exposures:
            had = self.units.get(x.key)
            if had is not None:
                if had[1] == x.arm:
                    result.exposures["repeated"] += 1
                else:
                    self._flag(TWO_ARMS)
                    result._refuse("exposure", x.index, x.key,
                                   f"key {x.key!r} was exposed on arm "
                                   f"{self.d.arm_names[had[1]]!r} before; a key keeps its "
                                   "first arm (is the client sticky?)")
                continue
            found = versions.get(x.version)
            if found is None:
                result._refuse("exposure", x.index, x.key,
                               f"version {x.version!r} was never published by this "
                               "experiment (GET .../allocation gives the current one)")
                continue
            _, mode, weights = found
            weight = float(weights[x.arm]) if x.arm < len(weights) else 0.0
            if mode == "control":
                result._refuse("exposure", x.index, x.key,
                               f"version {x.version!r} published the control only (the "
                               "experiment was paused or stopped): the exposure is not "
                               "part of the experiment")
                continue
            if weight <= 0:
                self._flag(NOT_OFFERED)
                result._refuse("exposure", x.index, x.key,
                               f"arm {self.d.arm_names[x.arm]!r} was not offered by version "
                               f"{x.version!r} (weight 0): the client assigned it wrongly")
                continue
            self.units[x.key] = (-1, x.arm, x.at, None)  # placed below
            fresh.append((x, weight))
        if fresh:
            self._place(fresh)

    def _pending(self) -> tuple[int, Batch] | None:
        """The algorithm's pending batch (``None``: finished or stopped); one drawn i.i.d.
        from a design is refused (:mod:`banditkit.live.assignment.allocation` publishes
        none)."""
        conn, journal = self.conn, self.part._journal
        stopped = self.part._operations.state(conn).get("stopped")
        pending = None if stopped is not None else journal.pending(conn)
        if pending is not None and isinstance(pending[1], IIDBatch):
            raise ExperimentError(f"ingest: {self.d.algorithm_name} draws each batch's pulls "
                                  "i.i.d. from its design (its slots' arms are drawn, not "
                                  "planned), which the edge cannot fill; use assign/record")
        return pending

    def _place(self, fresh: list[tuple[Exposure, float]]) -> None:
        """Units for the new exposures: the pending batch's free slots of their arm, else
        overflow (or rollout once finished or stopped)."""
        d, conn, journal = self.d, self.conn, self.part._journal
        pending = self._pending()
        if pending is None and journal.observed == 0:
            journal.pending(conn)  # stopped before any unit: file them under batch 0
        batch_id = pending[0] if pending is not None else max(journal.observed - 1, 0)
        slots = _Slots(conn, batch_id, pending[1], d.n_arms) \
            if pending is not None else None
        floor = self.now - (self.window or 0) + min(60_000_000, (self.window or 0) // 2)
        taken = slots.take_all([x.arm for x, _ in fresh]) if slots is not None \
            else [None] * len(fresh)
        rows, keyed, logged = [], [], []
        # a unit is never born with its window closed: its outcome may be in this call
        born = stamps([min(max(x.at, floor), self.now) if self.window else min(x.at, self.now)
                       for x, _ in fresh])
        for (x, weight), slot, text in zip(fresh, taken, born, strict=True):
            kind = ALGORITHM if slot is not None else (OVERFLOW if pending is not None
                                                       else ROLLOUT)
            rows.append((batch_id, -1 if slot is None else slot, x.arm, text, kind, weight))
            keyed.append(x.key)
            logged.append((x.version, weight, x.at))
        conn.executemany("INSERT INTO units (batch, slot, arm, assigned_at, kind, propensity) "
                         "VALUES (?, ?, ?, ?, ?, ?)", rows)
        (last,) = conn.execute(self.part._store.last_id_sql).fetchone()
        ids = range(last - len(rows) + 1, last + 1)  # the write lock is held: consecutive
        conn.executemany("INSERT INTO keys (unit, key) VALUES (?, ?)", list(zip(ids, keyed,
                                                                                strict=True)))
        conn.executemany("INSERT INTO edge_units (unit, version, weight, exposed_at) "
                         "VALUES (?, ?, ?, ?)",
                         [(u, *log) for u, log in zip(ids, logged, strict=True)])
        per: dict[tuple[int, int], int] = {}
        self.placed.update(ids)
        for (x, _), unit, row in zip(fresh, ids, rows, strict=True):
            self.units[x.key] = (unit, x.arm, x.at, None)
            target = batch_id if row[4] == ALGORITHM else OVERFLOW_TOTALS
            per[(target, x.arm)] = per.get((target, x.arm), 0) + 1
            self.result.exposures[("algorithm", "overflow", "rollout")[row[4]]] += 1
        self.result.exposures["new"] += len(rows)
        for target in {t for t, _ in per}:
            add_totals(conn, target, {a: (c, 0, 0.0, 0.0, 0) for (t, a), c in per.items()
                                      if t == target})
        if slots is not None:
            slots.save()

    # -- outcomes -----------------------------------------------------------------------------
    def outcomes(self, outcomes: list[Outcome]) -> None:
        """Record the outcomes of exposed keys; keep the others waiting; then record the
        waiting outcomes of the keys exposed in this call."""
        conn, result = self.conn, self.result
        keys = list(dict.fromkeys(o.key for o in outcomes))
        unknown = [k for k in keys if k not in self.units]
        for key, (unit, arm, _, expired_at) in self._keyed(unknown).items():
            self.units[key] = (unit, arm, None, expired_at)
        waiting = self._waiting([k for k in keys if k not in self.units]
                                + [k for k, u in self.units.items() if u[2] is not None])
        ready: list[Outcome] = []
        seen: dict[str, float] = {}
        park: list[Outcome] = []
        for o in outcomes:
            if o.key in seen:
                if seen[o.key] == o.value:
                    result.outcomes["repeated"] += 1
                else:
                    result._refuse("outcome", o.index, o.key,
                                   f"key {o.key!r} has outcome {seen[o.key]:g} in this call "
                                   f"(got {o.value:g}); an outcome is recorded once")
                continue
            seen[o.key] = o.value
            if o.key in self.units:
                ready.append(o)
                continue
            before = waiting.get(o.key)
            if before is not None:
                if before.value == o.value:
                    result.outcomes["repeated"] += 1
                else:
                    result._refuse("outcome", o.index, o.key,
                                   f"key {o.key!r} already has outcome {before.value:g} "
                                   f"waiting for its exposure (got {o.value:g}); an outcome "
                                   "is recorded once")
                continue
            park.append(o)
        if park:
            conn.executemany("INSERT INTO edge_outcomes (key, value, at, extra) VALUES "
                             "(?, ?, ?, ?)", [(o.key, o.value, stamp(o.at), _extra(o))
                                              for o in park])
            result.outcomes["new"] += len(park)
            result.outcomes["waiting"] += len(park)
        # the waiting outcomes of keys exposed now: recorded with this call's (a key with an
        # outcome in this call too: that one, checked against what is recorded)
        done = [k for k in waiting if k in self.units]
        due = [waiting[k] for k in done if k not in seen]
        if done:
            conn.executemany("DELETE FROM edge_outcomes WHERE key = ?", [(k,) for k in done])
        self._record(ready, due)

    def _keyed(self, keys: list[str]) -> dict[str, tuple[int, int, int, str | None]]:
        """The current unit of each of ``keys`` already known: key → (unit, arm, batch,
        expired_at), as the assigner's sticky keys read them, in one statement."""
        if not keys:
            return {}
        where, parameters = _among(self.postgres, "k.key", keys)
        found = {}
        for key, unit, arm, batch_id, expired_at in self.conn.execute(
                "SELECT k.key, k.unit, u.arm, u.batch, u.expired_at FROM keys k JOIN units u "
                f"ON u.id = k.unit WHERE k.superseded_at IS NULL AND {where}", parameters):
            self.d.check_arm(arm)
            found[key] = (unit, arm, batch_id, expired_at)
        return found

    def _waiting(self, keys: list[str]) -> dict[str, Outcome]:
        """The outcomes kept for ``keys`` before their exposure (index −1: not this call's)."""
        found: dict[str, Outcome] = {}
        if not keys:
            return found
        where, parameters = _among(self.postgres, "key", keys)
        for key, value, at, extra in self.conn.execute(
                f"SELECT key, value, at, extra FROM edge_outcomes WHERE {where}", parameters):
            parts = json.loads(extra) if extra else {}
            costs = parts.get("costs")
            found[key] = Outcome(-1, key, float(value), _micros_of(at), parts.get("metrics"),
                                 parts.get("covariate"), parts.get("denominator"),
                                 None if costs is None else tuple(costs))
        return found

    def _record(self, ready: list[Outcome], due: list[Outcome]) -> None:
        """Record the outcomes of exposed keys, each checked first; a refused one is
        reported with its reason, the others recorded together."""
        conn, result = self.conn, self.result
        todo = [*ready, *due]
        if not todo:
            return
        exposed = self._exposure_times([self.units[o.key][0] for o in todo
                                        if self.units[o.key][2] is None])
        # units placed by this call have no outcome yet: only the older ones are read
        rows = Outcomes.units(conn, np.asarray([self.units[o.key][0] for o in todo
                                          if self.units[o.key][2] is None or
                                          self.units[o.key][0] not in self.placed],
                                         dtype=np.int64))
        good: list[Outcome] = []
        for o in todo:
            unit, _, at, _ = self.units[o.key]
            row = _FRESH if unit in self.placed else rows.get(unit)
            why = self._why_not(o, unit, row, at if at is not None else exposed.get(unit))
            if why == "repeated":
                result.outcomes["repeated"] += o.index >= 0
            elif why is not None:
                if o.index >= 0:
                    result._refuse("outcome", o.index, o.key, why)
            else:
                good.append(o)
        self._record_checked(good)

    def _why_not(self, o: Outcome, unit: int, row: tuple | None, exposed_at: int | None
                 ) -> str | None:
        """Why outcome ``o`` of ``unit`` cannot be recorded ("repeated": it is already)."""
        if row is None:
            return f"key {o.key!r}: its unit {unit} cannot be found"
        reward, expired_at, imputed = row[2], row[4], row[8]
        if imputed:
            return (f"key {o.key!r}: its outcome window ({self.d.window.seconds:g} s) closed "
                    "before its outcome came, and 0 was recorded for it (missing='zero')")
        if expired_at is not None:
            return (f"key {o.key!r}: its unit expired at {expired_at} (its outcome window "
                    "closed unanswered); the outcome is not recorded")
        if reward is not None:
            return "repeated" if reward == o.value else (
                f"key {o.key!r} already has outcome {reward:g} (got {o.value:g}); an outcome "
                "is recorded once")
        if self.window is not None and exposed_at is not None \
                and o.at - exposed_at > self.window:
            return (f"key {o.key!r}: the outcome came {(o.at - exposed_at) / 1e6:.0f} s after "
                    f"the exposure, after the outcome window ({self.d.window.seconds:g} s)")
        return None

    def _record_checked(self, good: list[Outcome]) -> None:
        """Record ``good`` in one call of the experiment's record path; when it refuses one
        (a value out of range, a missing metric), record them one by one instead, so that
        each refusal names its event and the others are kept."""
        if not good:
            return
        try:
            self._record_some(good)
        except ExperimentError:
            for o in good:
                try:
                    self._record_some([o])
                except ExperimentError as error:
                    if o.index >= 0:
                        self.result._refuse("outcome", o.index, o.key, str(error))

    def _record_some(self, good: list[Outcome]) -> None:
        """Record ``good`` through the experiment's record path (its checks first: a refusal
        raises before anything is written)."""
        d = self.d
        ids = np.asarray([self.units[o.key][0] for o in good], dtype=np.int64)
        values = np.asarray([o.value for o in good], dtype=float)
        metrics = None
        if d.guardrails or any(o.metrics for o in good):
            for g in d.guardrails:
                if any(g.metric not in (o.metrics or {}) for o in good):
                    raise ExperimentError(f"metrics: {g.metric!r} missing (each outcome "
                                          "carries every guardrail's metric)")
            names = {m for o in good for m in (o.metrics or {})}
            metrics = {m: [(o.metrics or {}).get(m, 0.0) for o in good] for m in names}
        metric_values = check_metrics(d.guardrails, metrics, ids.size)
        recorder = self.part._outcomes
        spec = recorder.verdict_spec
        covariates = [o.covariate for o in good]
        covariate_values = check_unit_values(
            spec, "covariates", None if all(c is None for c in covariates) else covariates,
            ids.size, required=False)
        denominators = [o.denominator for o in good]
        denominator_values = check_unit_values(
            spec, "denominators", None if all(d is None for d in denominators)
            else denominators, ids.size, required=True)
        new = recorder.record(self.conn, ids, values, self._costs(good, ids), metric_values,
                              covariate_values, denominator_values)
        self.result.outcomes["new"] += sum(1 for o in good if o.index >= 0)
        self.result.outcomes["recorded"] += len(new)

    def _costs(self, good: list[Outcome], ids: np.ndarray) -> np.ndarray | None:
        """The costs of ``good`` as ``record`` takes them: each outcome of a constrained
        policy carries one per threshold, and no other outcome carries any."""
        m, name = self.d.problem.n_costs, self.d.algorithm_name
        for o in good:
            if m and (o.costs is None or len(o.costs) != m):
                raise ExperimentError(f"costs: {name} records {m} cost(s) with each outcome "
                                      f"(one per threshold), got "
                                      f"{0 if o.costs is None else len(o.costs)}")
            if not m and o.costs is not None:
                raise ExperimentError(f"costs: {name} records no costs (the experiment was "
                                      "created without thresholds)")
        if not m:
            return None
        return self.part._outcomes.check_costs([list(o.costs or ()) for o in good], ids)

    def _exposure_times(self, units: list[int]) -> dict[int, int]:
        if not units:
            return {}
        where, parameters = _among(self.postgres, "unit", units)
        return {int(unit): int(at) for unit, at in self.conn.execute(
            f"SELECT unit, exposed_at FROM edge_units WHERE {where}", parameters)}

    # -- flags --------------------------------------------------------------------------------
    def _flag(self, reason: str) -> None:
        self.flags[reason] = self.flags.get(reason, 0) + 1

    def flush_flags(self) -> None:
        if self.flags:
            self.conn.executemany(
                "INSERT INTO edge_flags (reason, count) VALUES (?, ?) ON CONFLICT (reason) "
                "DO UPDATE SET count = edge_flags.count + excluded.count",
                list(self.flags.items()))


#: The stored row of a unit created by this call (:meth:`.recorder.Outcomes.units`' columns): no
#: reward, not expired, not imputed.
_FRESH = (None, None, None, None, None, None, None, None, 0, None, None)


def _extra(o: Outcome) -> str | None:
    parts = {k: v for k, v in (("metrics", o.metrics), ("covariate", o.covariate),
                               ("denominator", o.denominator), ("costs", o.costs))
             if v is not None}
    return json.dumps(parts) if parts else None


def _micros_of(text: str) -> int:
    return int(parse_stamp(text))


class _Slots:
    """The free slots of each arm of the pending batch, taken in the batch's pull order: the
    k-th exposure of arm a takes arm a's k-th slot (``edge_slots`` counts those taken); a slot
    whose unit expired is offered again first."""

    def __init__(self, conn: Connection, batch_id: int, batch: Batch, n_arms: int) -> None:
        self.conn, self.batch_id, self.batch = conn, batch_id, batch
        self.per_arm = batch.allocation(n_arms)
        self.taken = np.zeros(n_arms, dtype=np.int64)
        for arm, taken in conn.execute("SELECT arm, taken FROM edge_slots WHERE batch = ?",
                                       (batch_id,)):
            self.taken[int(arm)] = int(taken)
        self.start = self.taken.copy()
        self.reoffer: dict[int, list[int]] | None = None
        ends = np.cumsum(batch.counts)
        self.run_starts = ends - batch.counts
        self.arms_runs: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def take_all(self, arms: list[int]) -> list[int | None]:
        """A free slot for each of ``arms`` in order (``None``: none left for it), the k-th of
        an arm in its run order computed for all of them at once."""
        out: list[int | None] = [None] * len(arms)
        wanted: dict[int, list[int]] = {}
        for i, arm in enumerate(arms):
            wanted.setdefault(arm, []).append(i)
        for arm, where in wanted.items():
            free = max(int(self.per_arm[arm] - self.taken[arm]), 0)
            first = where[:free]
            if first:
                k = np.arange(int(self.taken[arm]), int(self.taken[arm]) + len(first))
                self.taken[arm] += len(first)
                starts, cumulative = self._runs(arm)
                r = np.searchsorted(cumulative, k, side="right")
                before = np.where(r > 0, cumulative[np.maximum(r - 1, 0)], 0)
                for i, slot in zip(first, (starts[r] + k - before).tolist(), strict=True):
                    out[i] = int(slot)
            for i in where[free:]:
                out[i] = self._reoffered(arm)
        return out

    def _runs(self, arm: int) -> tuple[np.ndarray, np.ndarray]:
        """The start of each run of ``arm`` and the arm's cumulative pulls at each run's end."""
        runs = self.arms_runs.get(arm)
        if runs is None:
            mine = np.flatnonzero(self.batch.arms == arm)
            runs = (self.run_starts[mine], np.cumsum(self.batch.counts[mine]))
            self.arms_runs[arm] = runs
        return runs

    def _reoffered(self, arm: int) -> int | None:
        if self.reoffer is None:
            self.reoffer = {}
            for slot, a in self.conn.execute(
                    "SELECT DISTINCT slot, arm FROM units u WHERE batch = ? AND expired_at IS "
                    "NOT NULL AND kind = 0 AND NOT EXISTS (SELECT 1 FROM units v WHERE "
                    "v.batch = u.batch AND v.slot = u.slot AND v.expired_at IS NULL) "
                    "ORDER BY slot", (self.batch_id,)):
                self.reoffer.setdefault(int(a), []).append(int(slot))
        free = self.reoffer.get(arm)
        return free.pop(0) if free else None

    def save(self) -> None:
        changed = [(self.batch_id, a, int(t)) for a, t in enumerate(self.taken)
                   if t != self.start[a]]
        self.conn.executemany(
            "INSERT INTO edge_slots (batch, arm, taken) VALUES (?, ?, ?) ON CONFLICT "
            "(batch, arm) DO UPDATE SET taken = excluded.taken", changed)
        added = int((self.taken - self.start).sum())
        if added:
            self.conn.execute("UPDATE batches SET handed = handed + ? WHERE id = ?",
                              (added, self.batch_id))
        self.start = self.taken.copy()


def edge_warnings(conn: Connection) -> list[str]:
    """``status``'s warning about exposures refused as signs of a broken client."""
    counted = flags(conn)
    if not counted:
        return []
    words = {NOT_OFFERED: "to an arm their allocation version did not offer",
             TWO_ARMS: "of a key already exposed on another arm"}
    parts = [f"{count} exposure(s) {words.get(reason, reason)}"
             for reason, count in sorted(counted.items())]
    return ["the edge client looks broken: " + "; ".join(parts) + " (refused by ingest, not "
            "counted; check its hashing and sticky bucketing)"]
