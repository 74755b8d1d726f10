"""The outcomes part of a live experiment: rewards recorded, units expired, and the units whose
outcome window closed resolved by the experiment's rule (:mod:`.window`); with each, the
running totals and each arm's resolved prefix (:mod:`.resolved_prefix`: one cursor for all
arms) move on, and the predictable plug-in's sums follow the prefix.

The part owns what a call knows of its outcomes (the time the call resolves at, the plug-in
sums a read-only call caught up in memory). Every method runs in the transaction the
coordinator (:class:`banditkit.Experiment`) opens for the call; when units complete the
pending batch, the part calls the coordinator's hook that has the journal observe it, and with
new guardrail values the hook that checks the guardrails (``on_complete``, ``on_breach``: the
coordinator's :meth:`banditkit.Experiment._observe_if_complete` and
:meth:`banditkit.Experiment._pause_on_breach`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..definition import Definition, LiveClock
from ..errors import ExperimentError
from ..inputs import as_ids, check_summable, numbers
from ..journal.replay import Journal
from ..readout.guardrails import check_metrics
from ..readout.verdict_spec import VerdictSpec, check_unit_values
from ..store import CHUNK, Connection, Store
from ..store import reads as _reads
from ..store.codec import parse_stamp, stamp
from ..store.schema import ALGORITHM, ALL_BATCHES, FORMAT, OVERFLOW_TOTALS
from ..store.totals import add_metric_totals, add_totals
from .corrections import corrected_prefix, corrections_frame, counted_rewards, what_changes
from .resolved_prefix import (
    PLUGIN_UPDATE,
    PluginTuning,
    ResolvedPrefix,
    advance,
    plugin_catch_up,
    read_prefix,
)
from .unit_values import check_stored
from .value_guard import warn_outliers
from .window import Waiting

__all__ = ["Outcomes", "RecordInputs"]

#: ``record``'s arguments as checked: ids, rewards, costs, metrics, covariates, denominators.
RecordInputs = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None,
                     np.ndarray | None, np.ndarray | None]


def _check_range(ids: np.ndarray, values: np.ndarray, bounds: tuple[float, float] | None,
                 what: str) -> None:
    if bounds is None:
        return
    low, high = bounds
    bad = np.flatnonzero((values < low) | (values > high))
    if bad.size:
        i = int(bad[0])
        raise ExperimentError(f"{what}s must lie in [{low:g}, {high:g}] for this algorithm: "
                              f"unit {int(ids[i])} got {values[i]:g}")


class Outcomes:
    """Records, expires and resolves one experiment's units (see the module docstring)."""

    def __init__(self, definition: Definition, store: Store, clock: LiveClock,
                 journal: Journal, on_complete: Callable[[Connection], None],
                 on_breach: Callable[[Connection], None]) -> None:
        self._def = definition
        self._store = store
        self._clock = clock
        self._journal = journal
        self._on_complete = on_complete
        self._on_breach = on_breach
        #: the time (µs) the running call resolves at, read with its first round trip
        self._resolve_at: int | None = None
        #: a read-only call's plug-in sums caught up in memory (arm → (cursor, sums))
        self._plugin_fresh: dict[int, tuple[int, np.ndarray]] = {}

    @property
    def verdict_spec(self) -> VerdictSpec:
        return self._def.verdict_spec(self._journal.reward_range)

    # -- the call's first reads ----------------------------------------------------------------
    def reads(self, resolve: bool) -> list[_reads.Read]:
        """The reads a call sends with its lock: the plug-in's sums one call behind, and with
        ``resolve`` (a call that starts with :meth:`resolve`) the units whose window closed by
        now, the clock read here once for that :meth:`resolve`."""
        reads = []
        if self._wants_plugin:  # caught up by plugin_catch_up, first thing in the call
            reads.append(_reads.PLUGIN_BEHIND)
        window = self._def.window
        if resolve and window.seconds is not None:
            self._resolve_at = self._clock.micros()
            reads.append(_reads.stale_units(self._store.indexed_by("units_waiting"),
                                            stamp(self._resolve_at - window.micros)))
        return reads

    def end_call(self) -> None:
        self._resolve_at = None

    # -- recording -----------------------------------------------------------------------------
    def record_inputs(self, units: Sequence[int], rewards: Sequence[float], costs: Any,
                      metrics: Mapping[str, Sequence[float]] | None,
                      covariates: Sequence[float] | None = None,
                      denominators: Sequence[float] | None = None) -> RecordInputs:
        """``record``'s arguments checked before any work."""
        ids = as_ids(units)
        values = numbers(rewards)
        if values is None or values.ndim != 1 or values.size != ids.size:
            got = (f"shape {values.shape}" if values is not None
                   else "something that is not a list of numbers")
            raise ExperimentError(f"rewards must be numbers (true/false read as 1/0), one per "
                                  f"unit ({ids.size}), got {got}")
        values = values.astype(float)
        if not np.isfinite(values).all():
            i = int(np.flatnonzero(~np.isfinite(values))[0])
            raise ExperimentError(f"rewards must be finite: unit {int(ids[i])} got {values[i]}")
        check_summable("rewards", values, ids)
        cost_values = self.check_costs(costs, ids)
        metric_values = check_metrics(self._def.guardrails, metrics, ids.size)
        spec = self.verdict_spec
        covariate_values = check_unit_values(spec, "covariates", covariates, ids.size,
                                             required=False)
        denominator_values = check_unit_values(spec, "denominators", denominators, ids.size,
                                               required=True)
        return ids, values, cost_values, metric_values, covariate_values, denominator_values

    def check_costs(self, costs: Any, ids: np.ndarray) -> np.ndarray | None:
        """``costs`` of units ``ids`` checked (shape, finite, summable) before any work."""
        m = self._def.problem.n_costs
        name = self._def.algorithm_name
        if costs is None:
            if m:
                raise ExperimentError(f"costs are required: {name} records {m} cost(s) per "
                                      "unit")
            return None
        if not m:
            raise ExperimentError(f"costs: {name} records no costs (the experiment was "
                                  "created without thresholds)")
        values = numbers(costs)
        if values is not None and values.ndim == 1 and m == 1:
            values = values[:, None]
        if values is None or values.shape != (ids.size, m):
            got = "something that is not a table of numbers" if values is None else \
                f"shape {values.shape}"
            raise ExperimentError(f"costs must be numbers of shape (units, m) = ({ids.size}, "
                                  f"{m}), got {got}")
        values = values.astype(float)
        if not np.isfinite(values).all():
            raise ExperimentError("costs must be finite")
        check_summable("costs", values)
        return values

    def _check_values(self, ids: np.ndarray, values: np.ndarray,
                      cost_values: np.ndarray | None) -> None:
        """Rewards (and costs) against the algorithm's ranges and the declared
        ``reward_type`` (0/1, or in ``reward_range``)."""
        algorithm = self._journal.algorithm
        assert algorithm is not None
        _check_range(ids, values, algorithm.reward_range, "reward")
        spec = self.verdict_spec
        if spec.reward_type == "binary":
            bad = np.flatnonzero((values != 0) & (values != 1))
            if bad.size:
                i = int(bad[0])
                raise ExperimentError(f"rewards must be 0 or 1 (reward_type='binary'): unit "
                                      f"{int(ids[i])} got {values[i]:g}")
        elif spec.reward_type == "bounded":
            _check_range(ids, values, spec.reward_range, "reward")
        if cost_values is not None:
            for j in range(cost_values.shape[1]):
                _check_range(ids, cost_values[:, j], algorithm.cost_range, "cost")

    @staticmethod
    def units(conn: Connection, ids: np.ndarray) -> dict[int, tuple]:
        """The stored rows of units ``ids`` (:func:`~banditkit.live.store.reads.units_by_id`),
        by id, in chunks."""
        found: dict[int, tuple] = {}
        for start in range(0, ids.size, CHUNK):
            for row in conn.execute(*_reads.units_by_id(ids[start: start + CHUNK].tolist())):
                found[row[0]] = row[1:]
        return found

    def record(self, conn: Connection, ids: np.ndarray, values: np.ndarray,
               cost_values: np.ndarray | None, metric_values: np.ndarray | None,
               covariate_values: np.ndarray | None = None,
               denominator_values: np.ndarray | None = None) -> list[tuple]:
        """``Experiment.record`` in the caller's transaction (arguments checked): the units
        newly recorded, each as (reward, costs, unit, batch, arm, index in ``ids``)."""
        self.resolve(conn)  # first: a unit whose window closed is refused below
        self._check_values(ids, values, cost_values)
        new = self._new_units(conn, ids, values, cost_values, metric_values, covariate_values,
                              denominator_values)
        now = self._clock.stamp()
        conn.executemany("UPDATE units SET reward = ?, costs = ?, metrics = ?, "
                         "recorded_at = ?, covariate = COALESCE(?, covariate), "
                         "denominator = ? WHERE id = ?",
                         [(r, c, None if metric_values is None
                           else json.dumps(metric_values[i].tolist()), now,
                           None if covariate_values is None else covariate_values[i],
                           None if denominator_values is None else denominator_values[i], u)
                          for r, c, u, _, _, i in new])
        if metric_values is not None and new:
            add_metric_totals(conn, [(b, a, metric_values[i]) for *_, b, a, i in new])
        deltas: dict[int, dict[int, list]] = {}
        for r, _, _, b, a, _ in new:
            d = deltas.setdefault(b, {}).setdefault(a, [0, 0, 0.0, 0.0, 0])
            d[1] += 1
            d[2] += r
            d[3] += r * r
            d[4] += r not in (0.0, 1.0)
        for b, per_arm in deltas.items():
            add_totals(conn, b, {a: tuple(d) for a, d in per_arm.items()})
        # the one cursor G moves on (every arm with it) when the unit holding it got its reward
        advance(conn, self._store, {a for *_, a, _ in new}, len(self._def.guardrails),
                report=False)
        self._on_complete(conn)
        if self._def.guardrails and new:
            self._on_breach(conn)
        return new

    def _new_units(self, conn: Connection, ids: np.ndarray, values: np.ndarray,
                   cost_values: np.ndarray | None, metric_values: np.ndarray | None,
                   covariate_values: np.ndarray | None,
                   denominator_values: np.ndarray | None) -> list[tuple]:
        """The units of a ``record`` not recorded before, each as (reward, costs JSON, unit,
        batch, arm, index); a unit never assigned, expired, resolved by the window, or
        recorded before with other values is refused, and one recorded with the same values
        is skipped (a retried call counts nothing twice)."""
        known = self.units(conn, ids)
        if self._journal.reward_range is None and self.verdict_spec.reward_range is None:
            self._warn_outliers(conn, ids, values, known)
        cuped = self.verdict_spec.cuped
        new = []
        for i, unit in enumerate(ids.tolist()):
            row = known.get(unit)
            if row is None:
                raise ExperimentError(f"units: unit {unit} was never assigned")
            (batch_id, _, reward, stored_costs, expired_at, arm, stored_metrics, kind,
             imputed, stored_covariate, stored_denominator) = row
            check_stored(unit, i, stored_covariate, covariate_values, stored_denominator,
                         denominator_values, cuped and reward is None)
            if imputed:
                raise ExperimentError(
                    f"units: unit {unit}'s outcome window ({self._def.window.seconds:g} s) "
                    f"closed before its reward came, and missing='zero' recorded 0 for it; "
                    "an outcome after the window is not recorded")
            if kind != ALGORITHM:  # overflow and rollout: their totals, never the batch's
                batch_id = OVERFLOW_TOTALS
            if expired_at is not None:
                raise ExperimentError(f"units: unit {unit} expired at {expired_at} (its "
                                      "slot was offered to another unit); its reward "
                                      "cannot be recorded")
            unit_costs = None if cost_values is None else cost_values[i].tolist()
            if reward is not None:
                self._same_again(unit, reward, values[i], stored_costs, unit_costs,
                                 stored_metrics,
                                 None if metric_values is None else metric_values[i].tolist())
                continue
            new.append((float(values[i]), None if unit_costs is None
                        else json.dumps(unit_costs), unit, batch_id, arm, i))
        return new

    @staticmethod
    def _warn_outliers(conn: Connection, ids: np.ndarray, values: np.ndarray,
                       known: dict[int, tuple]) -> None:
        """Warn about rewards far from their arm's counted ones (:mod:`.value_guard`), from
        the moments ``record`` read ahead; the warning points at the user's ``record`` line
        (``Experiment.record`` → :meth:`record` → :meth:`_new_units` → here)."""
        arms = np.array([known[u][5] if u in known else -1 for u in ids.tolist()])
        moments = {int(a): (n, t, q) for a, n, t, q in conn.execute(*_reads.PREFIX_MOMENTS)}
        warn_outliers(values, ids, arms, moments, stacklevel=5)

    @staticmethod
    def _same_again(unit: int, reward: float, value: float, stored_costs: str | None,
                    unit_costs: list | None, stored_metrics: str | None,
                    unit_metrics: list | None) -> None:
        """A unit recorded before: refused unless with the same values."""
        if reward != value:
            raise ExperimentError(f"units: unit {unit} already has reward {reward} "
                                  f"(got {value}); a reward is recorded once")
        if stored_costs is not None and json.loads(stored_costs) != unit_costs:
            raise ExperimentError(f"units: unit {unit} already has costs "
                                  f"{json.loads(stored_costs)} (got {unit_costs}); "
                                  "costs are recorded once")
        if stored_metrics is not None and json.loads(stored_metrics) != unit_metrics:
            raise ExperimentError(f"metrics: unit {unit} already has metrics "
                                  f"{json.loads(stored_metrics)} (got {unit_metrics}); they "
                                  "are recorded once")

    # -- corrections ---------------------------------------------------------------------------
    def correct(self, conn: Connection, ids: np.ndarray, values: np.ndarray
                ) -> dict[str, list[Any]] | None:
        """What ``Experiment.correct`` changes, in the caller's transaction (arguments checked
        by :func:`.corrections.check_correction`): the rewards checked against the ranges as
        ``record`` checks them, then the audit row's detail, or ``None`` when nothing changes
        (:func:`.corrections.what_changes`). The coordinator has the audit row written."""
        self._check_values(ids, values, None)
        return what_changes(conn, ids, values)

    @staticmethod
    def corrections(conn: Connection, names: Sequence[str]) -> Any:
        """Every correction, oldest first (:func:`.corrections.corrections_frame`)."""
        return corrections_frame(conn, names)

    def counted_prefix(self, conn: Connection, corrected: bool) -> ResolvedPrefix:
        """Each arm's resolved prefix as ``status`` counts it: its sums (with a read-only
        call's plug-in sums caught up in memory) and, when the experiment has corrections
        (``corrected``: the operator's state says so), the corrected values in place of the
        recorded ones (:func:`.corrections.corrected_prefix`)."""
        d = self._def
        prefix = self.fresh_plugin(read_prefix(conn, d.n_arms, len(d.guardrails)))
        return corrected_prefix(conn, prefix, self.plugin_tuning) if corrected else prefix

    def counted_rewards(self, conn: Connection, corrected: bool) -> list[np.ndarray]:
        """Each arm's counted rewards (its resolved prefix), corrections applied:
        O(counted units) (:func:`.corrections.counted_rewards`)."""
        d = self._def
        cursor = read_prefix(conn, d.n_arms, len(d.guardrails)).cursor
        return counted_rewards(conn, cursor, corrected)

    # -- expiring ------------------------------------------------------------------------------
    def expire(self, conn: Connection, units: Sequence[int] | None,
               older_than: float | None) -> int:
        """``Experiment.expire``'s expiry, in the caller's transaction: units expired."""
        now = self._clock.stamp()
        G = len(self._def.guardrails)
        if units is not None:
            ids = as_ids(units)
            known = self.units(conn, ids)
            for unit in ids.tolist():
                row = known.get(unit)
                if row is None:
                    raise ExperimentError(f"units: unit {unit} was never assigned")
                if row[2] is not None:
                    raise ExperimentError(f"units: unit {unit} already has a reward; only "
                                          "unanswered units expire")
            todo = [u for u in ids.tolist() if known[u][4] is None]
            conn.executemany("UPDATE units SET expired_at = ? WHERE id = ?",
                             [(now, u) for u in todo])
            self._withdraw(conn, [(known[u][0], known[u][5], known[u][7]) for u in todo])
            advance(conn, self._store, {known[u][5] for u in todo}, G, report=False)
            return len(todo)
        if (isinstance(older_than, bool)
                or not isinstance(older_than, (int, float, np.integer, np.floating))
                or not np.isfinite(older_than) or older_than < 0):
            raise ExperimentError(f"older_than must be a number of seconds >= 0, got "
                                  f"{older_than!r}")
        now_s = self._clock.seconds()  # older than the epoch means every unit: cut it there
        cutoff = datetime.fromtimestamp(now_s - min(float(older_than), now_s), UTC)
        stale = conn.execute("SELECT id, batch, arm, kind FROM units WHERE reward IS NULL "
                             "AND expired_at IS NULL AND assigned_at < ?",
                             (cutoff.isoformat(timespec="microseconds"),)).fetchall()
        conn.executemany("UPDATE units SET expired_at = ? WHERE id = ?",
                         [(now, u) for u, *_ in stale])
        self._withdraw(conn, [(b, a, k) for _, b, a, k in stale])
        advance(conn, self._store, {a for _, _, a, _ in stale}, G, report=False)
        return len(stale)

    @staticmethod
    def _withdraw(conn: Connection, units: list[tuple[int, int, int]]) -> None:
        """Take expired units (their (batch, arm, kind)) out of the running totals (an
        overflow or rollout unit out of the overflow totals: its slot is no batch's)."""
        counts: dict[int, dict[int, int]] = {}
        for b, a, kind in units:
            b = b if kind == ALGORITHM else OVERFLOW_TOTALS
            counts.setdefault(b, {})[a] = counts.get(b, {}).get(a, 0) + 1
        for b, per_arm in counts.items():
            add_totals(conn, b, {a: (-c, 0, 0.0, 0.0, 0) for a, c in per_arm.items()})

    # -- the outcome window --------------------------------------------------------------------
    def resolve(self, conn: Connection) -> int:
        """Resolve, by the experiment's rule, every unit whose window has closed; then let the
        algorithm observe a batch they complete and check the guardrails. In the caller's
        transaction; returns the units resolved."""
        window = self._def.window
        if window.seconds is None:
            return 0
        # the time: read by the call's transaction when it sent this read ahead (the same
        # text and cutoff), else now
        now = self._resolve_at if self._resolve_at is not None else self._clock.micros()
        self._resolve_at = None
        cutoff = stamp(now - window.micros)
        # the partial index of waiting units on assigned_at: the closed ones only
        stale = conn.execute(*_reads.stale_units(self._store.indexed_by("units_waiting"),
                                                 cutoff)).fetchall()
        if not stale:
            return 0
        at = stamp(now)
        for _, _, arm, _ in stale:
            self._def.check_arm(arm)
        if window.missing == "zero":
            conn.executemany("UPDATE units SET reward = ?, imputed = ?, recorded_at = ? "
                             "WHERE id = ?", [(0.0, 1, at, u) for u, _, _, _ in stale])
            counts: dict[int, dict[int, int]] = {}
            for _, b, a, kind in stale:
                b = b if kind == ALGORITHM else OVERFLOW_TOTALS  # never the batch's totals
                counts.setdefault(b, {})[a] = counts.get(b, {}).get(a, 0) + 1
            for b, per_arm in counts.items():
                add_totals(conn, b, {a: (0, c, 0.0, 0.0, 0) for a, c in per_arm.items()})
        else:
            conn.executemany("UPDATE units SET expired_at = ? WHERE id = ?",
                             [(at, u) for u, _, _, _ in stale])
            self._withdraw(conn, [(b, a, kind) for _, b, a, kind in stale])
        if advance(conn, self._store, {a for _, _, a, _ in stale}, len(self._def.guardrails)) \
                and self._def.guardrails:
            self._on_breach(conn)
        self._on_complete(conn)
        return len(stale)

    def waiting(self, conn: Connection) -> Waiting:
        """How many units wait, the oldest, and when it resolves: O(arms + log units)."""
        (count,) = conn.execute("SELECT COALESCE(SUM(assigned - recorded), 0) FROM totals "
                                "WHERE batch IN (?, ?)", (ALL_BATCHES, OVERFLOW_TOTALS)
                                ).fetchone()
        if not count:
            return Waiting(0)
        hint = self._store.indexed_by("units_waiting")
        row = conn.execute(
            f"SELECT id, arm, assigned_at FROM units {hint} WHERE reward IS NULL AND "
            "expired_at IS NULL ORDER BY assigned_at, id LIMIT 1").fetchone()
        if row is None:
            return Waiting(int(count))
        unit, arm, assigned_at = row
        self._def.check_arm(arm)
        window, name = self._def.window, self._def.arm_names[arm]
        if window.seconds is None:
            return Waiting(int(count), int(unit), name, assigned_at)
        closes = parse_stamp(assigned_at) + window.micros
        overdue = 0
        now = self._clock.micros()
        if closes <= now:
            (overdue,) = conn.execute(
                f"SELECT COUNT(*) FROM units {hint} WHERE reward IS NULL AND expired_at IS "
                "NULL AND assigned_at <= ?", (stamp(now - window.micros),)).fetchone()
        return Waiting(int(count), int(unit), name, assigned_at, stamp(closes), int(overdue))

    def waiting_warnings(self, waiting: Waiting, blocked: bool) -> list[str]:
        """Warnings for ``status``: the batch waits on units (``blocked``: ``assign`` hands out
        nothing until they resolve), or units past their window await a call that writes."""
        out = []
        window = self._def.window
        if blocked and waiting.units:
            oldest = (f"the oldest, unit {waiting.oldest_unit} (arm {waiting.oldest_arm!r}), "
                      f"was assigned at {waiting.oldest_assigned_at}")
            if window.seconds is None:
                then = ("it waits until its outcome is recorded or it is expired by hand "
                        "(Experiment.expire, POST /experiments/NAME/expire, `banditkit "
                        "experiment expire`): this experiment has no outcome window")
            else:
                rule = ("reward 0 is recorded for it" if window.missing == "zero"
                        else "it is withdrawn and its slot handed out again")
                then = (f"its window closes at {waiting.resolves_at}, when {rule} "
                        f"(missing={window.missing!r}), or record its outcome before")
            meanwhile = ("assign hands out no unit" if self._def.overflow == "off"
                         else "assign serves overflow units only (never shown to the algorithm)")
            out.append(f"{meanwhile}: the algorithm's batch is all assigned and waits for "
                       f"{waiting.units} unit(s) without an outcome; {oldest}; {then}")
        if waiting.overdue:
            out.append(f"{waiting.overdue} unit(s) are past their outcome window and are "
                       "resolved by the next call that writes (this experiment was read with "
                       "readonly=True); until then status counts them as waiting")
        return out

    # -- the plug-in's sums --------------------------------------------------------------------
    @property
    def _wants_plugin(self) -> bool:
        """Whether the experiment keeps the plug-in's sums (bounded or binary rewards), known
        before the algorithm is built (a file without stored verdicts: unless its algorithm,
        once built, declares no range)."""
        if self._store.format != FORMAT:  # an older file: its upgrade builds them
            return False
        stored = self._def.meta.get("verdicts")
        if stored is None:
            return self._journal.algorithm is None or self._journal.reward_range is not None
        return stored.get("reward_type") != "continuous"

    @property
    def plugin_tuning(self) -> PluginTuning | None:
        """How the resolved prefix accumulates the plug-in's sums (None: continuous rewards,
        which take no exact sequence)."""
        return PluginTuning.of(self.verdict_spec, self._def.n_arms)

    def plugin_catch_up(self, conn: Connection) -> None:
        """Bring the resolved prefix's plug-in sums to its cursor (:mod:`.resolved_prefix`):
        answered by the call's first round trip when it read ahead, stored with the call's
        writes, kept in memory by a read-only call."""
        self._plugin_fresh = {}
        tuning = self.plugin_tuning
        if tuning is None or self._store.format != FORMAT:
            return
        fresh = plugin_catch_up(conn.execute(*_reads.PLUGIN_BEHIND).fetchall(), tuning)
        if not fresh:
            return
        if self._store.readonly:
            self._plugin_fresh = fresh
        else:
            conn.executemany(PLUGIN_UPDATE, [(*sums.tolist(), cursor, arm)
                                             for arm, (cursor, sums) in fresh.items()])

    def fresh_plugin(self, prefix: ResolvedPrefix) -> ResolvedPrefix:
        """``prefix`` with the plug-in sums a read-only call caught up in memory."""
        if not self._plugin_fresh:
            return prefix
        plugin, at = prefix.plugin.copy(), prefix.plugin_cursor.copy()
        for arm, (cursor, sums) in self._plugin_fresh.items():
            if 0 <= arm < plugin.shape[0] and cursor == prefix.cursor[arm]:
                plugin[arm], at[arm] = sums, cursor
        return replace(prefix, plugin=plugin, plugin_cursor=at)
