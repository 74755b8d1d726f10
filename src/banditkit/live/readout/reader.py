"""The readout part of a live experiment: what it reports without changing it. ``status``
(per-arm counts, means, intervals, the algorithm's state, warnings, guardrails) from the
running totals and the resolved prefix, ``units``, the log of every unit, and the readouts
beside ``status`` on the same counted units: the metric family (:mod:`.family`), quantiles
(:mod:`.quantiles`) and Bayesian summaries (:mod:`.bayes`). Each counts the corrected value
of a corrected reward (:mod:`banditkit.live.outcomes.corrections`).

The part reads the other parts through their narrow interfaces — the journal's algorithm and
pending batch, the outcomes' waiting units and plug-in sums, the operator's state and rollout
arm, the guardrails' check — inside the transaction the coordinator
(:class:`banditkit.Experiment`) opens for the call, after it resolved what the outcome window
closed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ...protocol import Algorithm
from ..assignment.operations import Operations
from ..assignment.propensity import batch_propensities
from ..definition import Definition
from ..errors import ExperimentError
from ..inputs import as_ids
from ..journal.defaults import NOT_PROVED
from ..journal.replay import Journal
from ..outcomes.ingest import edge_warnings
from ..outcomes.recorder import Outcomes
from ..outcomes.resolved_prefix import ResolvedPrefix
from ..outcomes.unit_values import recorded_unit_sums
from ..store import CHUNK, Connection, Store
from ..store.codec import unpack_draws, unpack_runs
from ..store.reads import CORRECTED
from ..store.schema import ALL_BATCHES, KINDS, OVERFLOW_TOTALS
from .bayes import bayesian_frame
from .family import experiment_family
from .guard import Guard
from .leader import leader
from .looks import check_look, planned_look
from .quantiles import quantile_frame
from .segments import segment_sums
from .statistics import arm_table, check_alpha, check_intervals, describe, missing_outcome_warnings
from .status import ExperimentStatus
from .sums import ArmSums
from .verdict_spec import VerdictSpec, check_verdicts
from .winsorize import Capped, winsorized_sums

__all__ = ["COUNTS", "Readout", "check_status", "check_units", "decision"]

#: What ``status`` counts: each arm's resolved prefix (default), or every outcome recorded.
COUNTS = ("resolved", "recorded")


def decision(frame: pd.DataFrame, rollout: tuple[int, str], control: str,
             stopped: dict | None) -> dict:
    """What a finished or stopped experiment decided, to show first: the winner (the rollout
    arm) and why, its difference to the control with the interval and verdict of ``frame``,
    and the arms eliminated (``active`` False)."""
    arm, why = rollout
    name = str(frame.index[arm])
    row = frame.iloc[arm]

    def number(value: object) -> float | None:
        value = float(value)  # type: ignore[arg-type]
        return None if np.isnan(value) else value

    eliminated = ([str(a) for a in frame.index[~frame["active"].to_numpy(bool)]]
                  if "active" in frame else [])
    return {"winner": name, "why": why, "control": control,
            "diff": number(row["diff"]), "diff_low": number(row["diff_low"]),
            "diff_high": number(row["diff_high"]), "verdict": str(row["verdict"]),
            "eliminated": eliminated,
            "stopped_by": None if stopped is None else stopped.get("by")}


def check_status(intervals: object, alpha: object, count: object, verdicts: object,
                 stored: VerdictSpec, look: object = None
                 ) -> tuple[str, float, str, VerdictSpec, int | None]:
    """``status``'s arguments checked before any work, with the verdict spec this look uses
    (``stored``, or ``verdicts`` over it) and the planned look asked for (:mod:`.looks`)."""
    intervals = check_intervals(intervals)
    alpha = check_alpha(alpha)
    if not isinstance(count, str) or count not in COUNTS:
        raise ExperimentError(f"count must be 'resolved' (each arm's units in assignment "
                              f"order up to its first still waiting) or 'recorded' (every "
                              f"outcome recorded so far), got {count!r}")
    spec = stored
    if verdicts is not None:
        spec = check_verdicts(spec.reward_type, spec.reward_range,
                              {**{k: v for k, v in spec.as_json().items()
                                  if k in ("tune_n", "control_share", "margin", "cuped",
                                           "ratio", "winsorize", "looks", "look_every",
                                           "spending", "segments")},
                               **dict(verdicts)}
                              if isinstance(verdicts, Mapping) else verdicts, None)
        if spec.sequence == "exact":  # the plug-in's sums were tuned at create
            spec = replace(spec, tune_n=stored.tune_n)
    return intervals, alpha, count, spec, check_look(look, spec)


def check_units(ids: Sequence[int] | None, unanswered: object, after: object,
                limit: object) -> np.ndarray | None:
    """``units``'s arguments checked before any work: the ids wanted (``None``: all)."""
    if not isinstance(unanswered, bool):
        raise ExperimentError(f"unanswered must be True or False, got {unanswered!r}")
    for name, value, low in (("after", after, 0), ("limit", limit, 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(
                value, (int, np.integer)) or value < low):
            raise ExperimentError(f"{name} must be an integer >= {low} (a unit id"
                                  f"{'' if name == 'after' else ' count'}), got {value!r}")
    return None if ids is None else as_ids(ids, allow_empty=True)


class Readout:
    """Reads one experiment's state for ``status`` and ``units`` (see the module
    docstring)."""

    def __init__(self, definition: Definition, store: Store, journal: Journal,
                 outcomes: Outcomes, operations: Operations, guard: Guard) -> None:
        self._def = definition
        self._store = store
        self._journal = journal
        self._outcomes = outcomes
        self._operations = operations
        self._guard = guard

    def status(self, conn: Connection, intervals: str, alpha: float, count: str,
               spec: VerdictSpec, look: int | None = None) -> ExperimentStatus:
        """``Experiment.status`` in the caller's transaction (arguments checked)."""
        d = self._def
        algorithm = self._journal.algorithm
        assert algorithm is not None
        pending = self._journal.ask()
        # the running totals over all batches: O(arms), however many units
        rows = conn.execute(
            "SELECT batch, arm, assigned, recorded, reward, reward_sq, non_binary FROM "
            "totals WHERE batch IN (?, ?) AND (assigned <> 0 OR recorded <> 0)",
            (ALL_BATCHES, OVERFLOW_TOTALS)).fetchall()
        state = self._operations.state(conn)
        waiting = unassigned = 0
        if pending is not None:
            answered, live = conn.execute(
                "SELECT COALESCE(SUM(recorded), 0), COALESCE(SUM(assigned), 0) FROM totals "
                "WHERE batch = ?", (self._journal.observed,)).fetchone()
            waiting, unassigned = pending.n_pulls - answered, pending.n_pulls - live
        prefix, extra, capped = self._sums(conn, spec, count, intervals, CORRECTED in state)
        # the planned look first: a look asked for and not complete is refused before the rest
        planned = planned_look(conn, spec, d.arm_names, d.control_index, alpha, look,
                               CORRECTED in state)
        frame = self._arm_table(rows, algorithm, intervals, alpha, prefix, count, spec,
                                capped=capped is not None, extra=extra)
        uncounted = int(frame["recorded"].sum() + frame["overflow_recorded"].sum()
                        - frame["counted"].sum()) if count == "resolved" else 0
        # the missing-outcome check on the prefix: units expired there count as lost
        warnings = d.create_warnings + missing_outcome_warnings(
            d.arm_names, prefix.n + prefix.expired, prefix.n, alpha)
        if planned is not None and planned.warning() is not None:
            warnings.append(planned.warning())
        if "edge" in state:  # exposures refused as a broken client's (outcomes/ingest.py)
            warnings += edge_warnings(conn)
        waiting_units = self._outcomes.waiting(conn)
        warnings += self._outcomes.waiting_warnings(
            waiting_units, blocked=pending is not None and unassigned == 0 and waiting > 0)
        self._cost_columns(conn, frame)
        arm, reason = leader(algorithm, frame["mean"].to_numpy(float), d.arm_names,
                             finished=pending is None)
        stopped = state.get("stopped")
        rollout = (self._operations.rollout_arm(conn)
                   if pending is None or stopped is not None else None)
        if (d.algorithm_name in NOT_PROVED and d.params.get("commit") == "argmax"
                and "commit" in d.live_defaults and reason.startswith("committed")):
            reason += ("; commit='argmax' is this live experiment's default (the paper's "
                       "'lowest-index' plays the first-listed surviving arm)")
        recommendation = algorithm.recommendation
        decided = None if rollout is None else decision(frame, rollout, d.control, stopped)
        if rollout is not None and "active" in frame.columns:
            # after a decision assign hands the winner alone units (assignment/operations.py)
            frame["active"] = np.arange(len(frame)) == rollout[0]
        return ExperimentStatus(
            arms=frame, algorithm=d.algorithm_name, batches_observed=self._journal.observed,
            pulls_observed=algorithm.t, batch_pending=waiting, batch_unassigned=unassigned,
            budget_left=None if d.horizon is None else d.horizon - algorithm.t,
            finished=pending is None,
            recommendation=None if recommendation is None
            else d.arm_names[int(recommendation)],
            info=dict(algorithm.info), intervals=intervals, alpha=alpha,
            control=d.control, warnings=warnings,
            interval_note=describe(intervals, alpha, d.n_arms, algorithm.reward_range, spec),
            verdicts={**spec.as_json(), **({} if capped is None
                                            else {"winsorize_cap": capped.cap}),
                      **({} if capped is None or not spec.cuped
                         else {"winsorize_covariate_cap": capped.covariate_cap})},
            leader=None if arm is None else d.arm_names[arm], reason=reason,
            params=dict(d.params), live_defaults=list(d.live_defaults),
            reward_range=None if algorithm.reward_range is None
            else tuple(map(float, algorithm.reward_range)),
            guardrails=self._guard.frame(conn, count),
            paused=self._operations.paused(conn, state), count=count,
            outcome_window=d.window.seconds, missing=d.window.missing,
            window_note=d.window.describe(), uncounted=uncounted,
            counting_note=_counting_note(count, uncounted, waiting_units),
            waiting_units=waiting_units, overflow=d.overflow, stopped=stopped,
            archived="archived" in state,
            decision=decided, planned=planned)

    def _sums(self, conn: Connection, spec: VerdictSpec, count: str, intervals: str,
              corrected: bool) -> tuple[ResolvedPrefix, np.ndarray | None, Capped | None]:
        """The resolved prefix's sums (with a read-only call's plug-in sums; ``corrected``:
        corrections counted), the recorded units' covariate and denominator sums
        (``count="recorded"`` with CUPED or ratios), and with ``winsorize`` the capped sums,
        which replace the plain ones."""
        K = self._def.n_arms
        prefix = self._outcomes.counted_prefix(conn, corrected)
        fixed_only = intervals == "fixed"  # fixed-n intervals: the algorithm's units
        # every recorded reward: the covariates' and denominators' sums of those units
        extra = (recorded_unit_sums(conn, self._store, K, fixed_only)
                 if count == "recorded" and (spec.cuped or spec.ratio) else None)
        if spec.winsorize is None:
            return prefix, extra, None
        capped = winsorized_sums(conn, self._store, K, spec.winsorize, count,
                                 algorithm_units_only=fixed_only, covariates=spec.cuped)
        prefix = replace(prefix, total=capped.total, total_sq=capped.total_sq)
        if spec.cuped:  # CUPED on the capped rewards and capped covariates
            prefix = replace(prefix, covariate=capped.covariate,
                             covariate_sq=capped.covariate_sq,
                             covariate_reward=capped.covariate_reward)
            if extra is not None:
                extra[:, :3] = np.stack([capped.covariate, capped.covariate_sq,
                                         capped.covariate_reward], axis=-1)
        return prefix, extra, capped

    def _corrected(self, conn: Connection) -> bool:
        """Whether the experiment has corrections to count (the operator's state says so)."""
        return CORRECTED in self._operations.state(conn)

    def bayesian(self, conn: Connection) -> pd.DataFrame:
        """``Experiment.bayesian`` in the caller's transaction: chance to beat the control and
        expected losses on the units ``status`` counts (:mod:`.bayes`)."""
        d = self._def
        prefix = self._outcomes.counted_prefix(conn, self._corrected(conn))
        return bayesian_frame(d.arm_names, prefix.n, prefix.total, prefix.total_sq,
                              d.control_index)

    def family(self, conn: Connection, alpha: float) -> pd.DataFrame:
        """``Experiment.family`` in the caller's transaction (``alpha`` checked): the reward
        and the guardrails' metrics as one family (:mod:`.family`)."""
        d = self._def
        corrected = self._corrected(conn)
        prefix = self._outcomes.counted_prefix(conn, corrected)
        spec = self._outcomes.verdict_spec
        segments = (None if spec.segments is None
                    else segment_sums(conn, prefix.cursor, spec.segments, corrected))
        return experiment_family(d.arm_names, d.control_index, prefix, d.guardrails, alpha,
                                 spec.tune_n, segments)

    def quantiles(self, conn: Connection, p: float, alpha: float) -> pd.DataFrame:
        """``Experiment.quantiles`` in the caller's transaction (arguments checked): each arm's
        p-quantile of its counted rewards and its difference to the control
        (:mod:`.quantiles`): O(counted units)."""
        d = self._def
        values = self._outcomes.counted_rewards(conn, self._corrected(conn))
        return quantile_frame(d.arm_names, values, d.control_index, p, alpha)

    def _cost_columns(self, conn: Connection, frame: pd.DataFrame) -> None:
        """Add the mean of each cost per arm to ``frame`` (units store their costs as a JSON
        list)."""
        m = self._def.problem.n_costs
        if not m:
            return
        store = self._store
        sums = ", ".join(store.total(store.json_item("costs", i)) for i in range(m))
        cost_means = np.full((self._def.n_arms, m), np.nan)
        for arm, n, *totals in conn.execute(
                f"SELECT arm, COUNT(costs), {sums} FROM units WHERE expired_at IS NULL "
                "AND costs IS NOT NULL GROUP BY arm"):
            self._def.check_arm(arm)
            cost_means[arm] = np.asarray(totals, dtype=float) / n
        for i in range(m):
            frame[f"cost_{i + 1}"] = cost_means[:, i]

    def _arm_table(self, rows: list[tuple], algorithm: Algorithm, intervals: str,
                   alpha: float, prefix: Any, count: str, spec: VerdictSpec,
                   capped: bool = False, extra: np.ndarray | None = None) -> pd.DataFrame:
        """The per-arm frame (:func:`.statistics.arm_table`) from SQL aggregates (count, sum,
        sum of squares, and whether any reward is other than 0/1) — of the
        resolved prefix, or (``count="recorded"``) of every recorded outcome: O(K) Python work
        however many units. ``recorded`` is every outcome recorded, ``counted`` those the
        intervals use, ``imputed`` the window's zeros among the prefix's. ``extra``: with
        ``count="recorded"``, the covariates' and denominators' sums of those outcomes
        (CUPED, ratio metrics; the prefix keeps its own)."""
        K = self._def.n_arms
        # [algorithm, overflow and rollout] per arm
        counts = np.zeros((2, K, 2), dtype=np.int64)
        totals = np.zeros((2, K, 2))
        binary = np.ones((2, K), dtype=bool)
        for batch, arm, assigned, n, total, total_sq, non_binary in rows:
            self._def.check_arm(arm)
            i = int(batch == OVERFLOW_TOTALS)
            counts[i, arm] = assigned, n
            totals[i, arm] = total, total_sq
            binary[i, arm] = non_binary == 0
        if count == "resolved":
            # the resolved prefix runs over every unit of the arm, overflow and rollout units
            # included: all were allocated from the past only, which the sequences allow
            sums = prefix.arm_sums(counts[0, :, 0])
        else:
            # the confidence sequences hold under any allocation predictable from the past,
            # which overflow and rollout are: their rewards count; the fixed-n intervals are
            # for one look at the algorithm's own sample: they do not (assignment/overflow.py)
            both = intervals == "anytime"
            n = counts[0, :, 1] + (counts[1, :, 1] if both else 0)
            sums = ArmSums(counts[0, :, 0], n,
                           prefix.total if capped
                           else totals[0, :, 0] + (totals[1, :, 0] if both else 0),
                           prefix.total_sq if capped
                           else totals[0, :, 1] + (totals[1, :, 1] if both else 0),
                           binary[0] & (binary[1] if both else True), extra=extra)
        frame = arm_table(self._def.arm_names, sums, algorithm.reward_range,
                          intervals=intervals, alpha=alpha,
                          control=self._def.control_index, spec=spec)
        frame["recorded"] = counts[0, :, 1]
        frame["overflow"] = counts[1, :, 0]
        frame["overflow_recorded"] = counts[1, :, 1]
        frame.insert(2, "counted", sums.n.astype(np.int64))
        frame.insert(3, "imputed", prefix.imputed.astype(np.int64))
        active = getattr(algorithm, "active", None)
        if active is not None:
            flags = np.zeros(K, dtype=bool)
            flags[np.asarray(active, dtype=np.int64)] = True
            frame["active"] = flags
        return frame

    def unit_rows(self, conn: Connection, wanted: np.ndarray | None, unanswered: bool,
                  after: int | None, limit: int | None) -> tuple[pd.DataFrame, list, list]:
        """``Experiment.units``' reads in the caller's transaction (arguments checked): the
        units' rows, the batches' runs and the i.i.d. batches' descriptions."""
        where = " AND reward IS NULL AND expired_at IS NULL" if unanswered else ""
        page: list[int] = []
        if after is not None:
            where += " AND id > ?"
            page.append(int(after))
        tail = "" if limit is None else f" LIMIT {int(limit)}"
        columns = ("id AS unit, batch, slot, arm AS arm_index, reward, costs, assigned_at, "
                   "recorded_at, expired_at, imputed, (SELECT key FROM keys k WHERE "
                   "k.unit = units.id) AS key, kind, propensity AS stored_propensity")
        store = self._store
        try:
            if wanted is None:
                # waiting units through their partial index: O(waiting), not O(units)
                hint = store.indexed_by("units_waiting") if unanswered else ""
                frame = store.read_frame(conn, f"SELECT {columns} FROM units {hint} WHERE "
                                         f"1 = 1{where} ORDER BY id{tail}", page)
            else:  # by primary key, in chunks: O(len(ids)) whatever the experiment holds
                parts = [store.read_frame(
                    conn, f"SELECT {columns} FROM units WHERE id IN "
                    f"({','.join('?' * len(chunk))}){where}", chunk + page)
                    for chunk in (wanted[i: i + CHUNK].tolist()
                                  for i in range(0, max(wanted.size, 1), CHUNK))]
                frame = pd.concat(parts, ignore_index=True).sort_values(
                    "unit", ignore_index=True)
                if limit is not None:
                    frame = frame.iloc[:int(limit)].reset_index(drop=True)
        except pd.errors.DatabaseError as error:
            raise ExperimentError(f"{store.label} cannot be read ({error})") from None
        batches = conn.execute("SELECT b.id, r.arms, r.counts, b.strategy FROM batches b "
                               "JOIN runs r ON r.batch = b.id").fetchall()
        draws = conn.execute("SELECT batch, cdf, state, n_pulls FROM draws").fetchall()
        return frame, batches, draws

    def unit_frame(self, frame: pd.DataFrame, batches: list, draws: list) -> pd.DataFrame:
        """:meth:`unit_rows`' answer as ``Experiment.units`` returns it: arm names, keys,
        and each unit's propensity (:mod:`banditkit.live.assignment.propensity`)."""
        names = self._def.arm_names
        for a in frame["arm_index"].unique():
            self._def.check_arm(a)
        frame["key"] = frame["key"].astype(object).where(frame["key"].notna(), None)
        frame["imputed"] = frame["imputed"].fillna(0).astype(bool)
        frame.insert(3, "arm", [names[a] for a in frame["arm_index"]])
        try:
            # an i.i.d. batch gave each unit an arm drawn from its design: that is the
            # propensity (the design's probabilities, read off its cdf)
            batches = batches + [(i, b"", b"", json.dumps(np.diff(unpack_draws(c, s, n).cdf,
                                                                   prepend=0.0).tolist()))
                                 for i, c, s, n in draws]
            shares = batch_propensities(
                [(i, *unpack_runs(arms, counts), strategy)
                 for i, arms, counts, strategy in batches], len(names))
            design = shares[frame["batch"].to_numpy(np.int64),
                            frame["arm_index"].to_numpy(np.int64)]
            # overflow and rollout units: the probability their rule drew the arm with; a unit
            # exposed at the edge (outcomes/ingest.py): its arm's weight in its allocation
            # version
            kinds = frame["kind"].to_numpy(np.int64)
            stored = pd.to_numeric(frame["stored_propensity"], errors="coerce").to_numpy(float)
            frame["propensity"] = np.where((kinds == 0) & np.isnan(stored), design, stored)
        except (ValueError, TypeError, IndexError) as error:  # JSONDecodeError: a ValueError
            raise ExperimentError(f"{self._store.label} is damaged: its batches cannot be "
                                  f"read ({error})") from None
        frame["kind"] = [KINDS.get(int(k), "algorithm") for k in frame["kind"]]
        return frame.drop(columns=["stored_propensity"])


def _counting_note(count: str, uncounted: int, waiting: Any) -> str:
    """One line: what the intervals count, and the outcomes recorded but not yet counted."""
    if count == "recorded":
        return ("counted: every outcome recorded so far (count='recorded'; valid only if when "
                "an outcome arrives does not depend on its value)")
    line = ("counted: every arm's units before the first unit of any arm still waiting "
            "(the resolved prefix, one cursor for all arms: intervals, differences and "
            "verdicts valid however outcomes arrive)")
    if uncounted:
        line += (f"; {uncounted} recorded outcome(s) not yet counted: they follow a unit "
                 "still waiting"
                 + (f" (the oldest waiting resolves at {waiting.resolves_at})"
                    if waiting.resolves_at else "")
                 + "; counting outcomes as they arrive would favour those that arrive first "
                 "(conversions before non-conversions)")
    return line
