"""What a live experiment reports without changing it: :meth:`status` (per-arm counts, means,
intervals, the algorithm's state, warnings, guardrails) from the running totals, and
:meth:`units`, the log of every unit. A part of :class:`banditkit.Experiment` (a mixin: the
methods use its store, algorithm and arms)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..protocol import Algorithm
from .corrections import CORRECTED, corrected_prefix
from .defaults import NOT_PROVED
from .inputs import as_ids
from .journal import (
    ALL_BATCHES,
    KINDS,
    OVERFLOW_TOTALS,
    ExperimentError,
    unpack_draws,
    unpack_runs,
)
from .leader import leader
from .propensity import batch_propensities
from .resolved_prefix import read_prefix
from .statistics import (
    ArmSums,
    arm_table,
    check_alpha,
    check_intervals,
    describe,
    missing_outcome_warnings,
)
from .status import ExperimentStatus
from .store import CHUNK, Connection
from .unit_values import recorded_unit_sums
from .verdict_spec import VerdictSpec, check_verdicts
from .winsorize import winsorized_sums

__all__ = ["COUNTS", "Reading", "decision"]

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


class Reading:
    """Methods of :class:`banditkit.Experiment` (see the module docstring)."""

    def status(self, intervals: str = "anytime", alpha: float = 0.05,
               count: str = "resolved", verdicts: Mapping[str, Any] | None = None
               ) -> ExperimentStatus:
        """Per-arm counts, means, intervals, differences to the control, warnings, and where the
        algorithm stands.

        Parameters
        ----------
        intervals : {"anytime", "fixed"}
            ``"anytime"`` (default): confidence sequences, valid at every look together (arms,
            differences to the control and verdicts: error ≤ ``alpha`` over all of them and all
            looks, however the algorithm allocated). ``"fixed"``: fixed-n intervals, each valid
            only for one look decided in advance (:mod:`banditkit.live.statistics`).
        alpha : float
            Error probability, in (0, 1); also that of the missing-outcome check.
        count : {"resolved", "recorded"}
            ``"resolved"`` (default): intervals, differences, verdicts and guardrails use each
            arm's **resolved prefix** — its units before the one cursor G, the first unit of
            *any* arm still waiting for an outcome (:mod:`banditkit.live.resolved_prefix`):
            every arm's and every pair's counted units are a prefix of the assignment order,
            which stays valid however outcomes arrive (conversions at once, zeros when the
            window closes); outcomes recorded beyond it are shown in ``recorded`` and
            ``uncounted`` but not yet counted. ``"recorded"``: every outcome recorded so far,
            the behaviour before outcome windows — valid only when whether an outcome has
            arrived does not depend on its value.
        verdicts : dict, optional
            Show this look with other sequence options than the stored ones (keys of
            ``Experiment.create(verdicts=...)``, e.g. ``{"sequence": "msprt", "tau": 0.01}``),
            on the same data: to compare methods, not to pick the one that decides (choosing
            among several after seeing them spends α once per method tried). The exact
            default's plug-in sums were accumulated at the stored ``tune_n``: another
            ``tune_n`` here changes the other sequences' tuning, not the exact default's
            (shown at its stored ``tune_n``).

        Notes
        -----
        On an experiment opened for writing, status first resolves the units whose outcome
        window closed (:mod:`banditkit.live.outcome_window`); read-only, it says how many
        await the next call that writes.
        """
        intervals = check_intervals(intervals)
        alpha = check_alpha(alpha)
        if not isinstance(count, str) or count not in COUNTS:
            raise ExperimentError(f"count must be 'resolved' (each arm's units in assignment "
                                  f"order up to its first still waiting) or 'recorded' (every "
                                  f"outcome recorded so far), got {count!r}")
        spec = self.verdict_spec
        if verdicts is not None:
            spec = check_verdicts(spec.reward_type, spec.reward_range,
                                  {**{k: v for k, v in spec.as_json().items()
                                      if k in ("tune_n", "control_share", "margin", "cuped",
                                               "ratio", "winsorize")},
                                   **dict(verdicts)}
                                  if isinstance(verdicts, Mapping) else verdicts, None)
            if spec.sequence == "exact":  # the plug-in's sums were tuned at create
                spec = replace(spec, tune_n=self.verdict_spec.tune_n)
        with self._transaction() as conn:
            if not self.readonly and self._resolve(conn):
                self._plugin_catch_up(conn)  # the window's rule moved some prefixes
            algorithm = self._algorithm
            assert algorithm is not None
            pending = self._ask()
            # the running totals over all batches: O(arms), however many units
            rows = conn.execute(
                "SELECT batch, arm, assigned, recorded, reward, reward_sq, non_binary FROM "
                "totals WHERE batch IN (?, ?) AND (assigned <> 0 OR recorded <> 0)",
                (ALL_BATCHES, OVERFLOW_TOTALS)).fetchall()
            state = self._ops_state(conn)
            waiting = unassigned = 0
            if pending is not None:
                answered, live = conn.execute(
                    "SELECT COALESCE(SUM(recorded), 0), COALESCE(SUM(assigned), 0) FROM totals "
                    "WHERE batch = ?", (self._observed,)).fetchone()
                waiting, unassigned = pending.n_pulls - answered, pending.n_pulls - live
            prefix = self._fresh_plugin(read_prefix(conn, len(self.arm_names),
                                                    len(self.guardrails)))
            if CORRECTED in state:  # recorded corrections replace wrong rewards
                prefix = corrected_prefix(conn, prefix, self._plugin_tuning)
            fixed_only = intervals == "fixed"  # fixed-n intervals: the algorithm's units
            # every recorded reward: the covariates' and denominators' sums of those units
            extra = (recorded_unit_sums(conn, self._journal, len(self.arm_names), fixed_only)
                     if count == "recorded" and (spec.cuped or spec.ratio) else None)
            capped = None
            if spec.winsorize is not None:  # the capped sums replace the plain ones
                capped = winsorized_sums(conn, self._journal, len(self.arm_names),
                                         spec.winsorize, count, algorithm_units_only=fixed_only,
                                         covariates=spec.cuped)
                prefix = replace(prefix, total=capped.total, total_sq=capped.total_sq)
                if spec.cuped:  # CUPED on the capped rewards and capped covariates
                    prefix = replace(prefix, covariate=capped.covariate,
                                     covariate_sq=capped.covariate_sq,
                                     covariate_reward=capped.covariate_reward)
                    if extra is not None:
                        extra[:, :3] = np.stack([capped.covariate, capped.covariate_sq,
                                                 capped.covariate_reward], axis=-1)
            cap = None if capped is None else capped.cap
            frame = self._arm_table(rows, algorithm, intervals, alpha, prefix, count, spec,
                                    capped=cap is not None, extra=extra)
            uncounted = int(frame["recorded"].sum() + frame["overflow_recorded"].sum()
                            - frame["counted"].sum()) if count == "resolved" else 0
            # the missing-outcome check on the prefix: units expired there count as lost
            warnings = self.create_warnings + missing_outcome_warnings(
                self.arm_names, prefix.n + prefix.expired, prefix.n, alpha)
            waiting_units = self._waiting(conn)
            warnings += self._waiting_warnings(
                waiting_units, blocked=pending is not None and unassigned == 0 and waiting > 0)
            rails, paused = self._guardrail_frame(conn, count), self._paused(conn, state)
            m = self._problem.n_costs
            if m:  # mean of each cost per arm (units store their costs as a JSON list)
                store = self._journal
                sums = ", ".join(store.total(store.json_item("costs", i)) for i in range(m))
                cost_means = np.full((len(self.arm_names), m), np.nan)
                for arm, n, *totals in conn.execute(
                        f"SELECT arm, COUNT(costs), {sums} FROM units WHERE expired_at IS NULL "
                        "AND costs IS NOT NULL GROUP BY arm"):
                    self._check_arm_index(arm)
                    cost_means[arm] = np.asarray(totals, dtype=float) / n
                for i in range(m):
                    frame[f"cost_{i + 1}"] = cost_means[:, i]
            recommendation = algorithm.recommendation
            arm, reason = leader(algorithm, frame["mean"].to_numpy(float), self.arm_names,
                                 finished=pending is None)
            stopped = state.get("stopped")
            rollout = (self._rollout_arm(conn) if pending is None or stopped is not None
                       else None)
            if (self.algorithm_name in NOT_PROVED and self.params.get("commit") == "argmax"
                    and "commit" in self.live_defaults and reason.startswith("committed")):
                reason += ("; commit='argmax' is this live experiment's default (the paper's "
                           "'lowest-index' plays the first-listed surviving arm)")
            return ExperimentStatus(
                arms=frame, algorithm=self.algorithm_name, batches_observed=self._observed,
                pulls_observed=algorithm.t, waiting=waiting, unassigned=unassigned,
                budget_left=None if self.horizon is None else self.horizon - algorithm.t,
                finished=pending is None,
                recommendation=None if recommendation is None
                else self.arm_names[int(recommendation)],
                info=dict(algorithm.info), intervals=intervals, alpha=alpha,
                control=self.control, warnings=warnings,
                interval_note=describe(intervals, alpha, len(self.arm_names),
                                       algorithm.reward_range, spec),
                verdicts={**spec.as_json(), **({} if capped is None
                                                else {"winsorize_cap": cap}),
                          **({} if capped is None or not spec.cuped
                             else {"winsorize_covariate_cap": capped.covariate_cap})},
                leader=None if arm is None else self.arm_names[arm], reason=reason,
                params=dict(self.params), live_defaults=list(self.live_defaults),
                reward_range=None if algorithm.reward_range is None
                else tuple(map(float, algorithm.reward_range)),
                guardrails=rails, paused=paused, count=count,
                outcome_window=self.window.seconds, missing=self.window.missing,
                window_note=self.window.describe(), uncounted=uncounted,
                counting_note=_counting_note(count, uncounted, waiting_units),
                waiting_units=waiting_units, overflow=self.overflow, stopped=stopped,
                archived="archived" in state,
                decision=None if rollout is None else decision(frame, rollout, self.control,
                                                               stopped))

    def _guardrail_frame(self, conn: Connection, count: str = "resolved") -> pd.DataFrame:
        """:attr:`ExperimentStatus.guardrails`: one row per (guardrail, arm but the
        control)."""
        columns = ["metric", "rule", "margin", "arm", "diff", "diff_low", "diff_high",
                   "breached", "pausing"]
        if not self.guardrails:
            return pd.DataFrame(columns=columns)
        check = self._guardrail_check(conn, count)
        pausing = {(j, a): resumed is None for j, a, resumed in conn.execute(
            "SELECT guardrail, arm, resumed_at FROM pauses")}
        control = self.arm_names.index(self.control)
        rows = [(g.metric, g.rule, g.margin, name, check.diff[j, a], check.diff_low[j, a],
                 check.diff_high[j, a], bool(check.breached[j, a]),
                 pausing.get((j, a), False))
                for j, g in enumerate(self.guardrails)
                for a, name in enumerate(self.arm_names) if a != control]
        return pd.DataFrame(rows, columns=columns)

    def _arm_table(self, rows: list[tuple], algorithm: Algorithm, intervals: str,
                   alpha: float, prefix: Any, count: str, spec: VerdictSpec,
                   capped: bool = False, extra: np.ndarray | None = None) -> pd.DataFrame:
        """The per-arm frame (:func:`banditkit.live.statistics.arm_table`) from SQL aggregates
        (count, sum, sum of squares, and whether any reward is other than 0/1) — of the
        resolved prefix, or (``count="recorded"``) of every recorded outcome: O(K) Python work
        however many units. ``recorded`` is every outcome recorded, ``counted`` those the
        intervals use, ``imputed`` the window's zeros among the prefix's. ``extra``: with
        ``count="recorded"``, the covariates' and denominators' sums of those outcomes
        (CUPED, ratio metrics; the prefix keeps its own)."""
        K = len(self.arm_names)
        # [algorithm, overflow and rollout] per arm
        counts = np.zeros((2, K, 2), dtype=np.int64)
        totals = np.zeros((2, K, 2))
        binary = np.ones((2, K), dtype=bool)
        for batch, arm, assigned, n, total, total_sq, non_binary in rows:
            self._check_arm_index(arm)
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
            # for one look at the algorithm's own sample: they do not (banditkit.live.overflow)
            both = intervals == "anytime"
            n = counts[0, :, 1] + (counts[1, :, 1] if both else 0)
            sums = ArmSums(counts[0, :, 0], n,
                           prefix.total if capped
                           else totals[0, :, 0] + (totals[1, :, 0] if both else 0),
                           prefix.total_sq if capped
                           else totals[0, :, 1] + (totals[1, :, 1] if both else 0),
                           binary[0] & (binary[1] if both else True), extra=extra)
        frame = arm_table(self.arm_names, sums, algorithm.reward_range, intervals=intervals,
                          alpha=alpha, control=self.arm_names.index(self.control),
                          spec=spec)
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

    def units(self, ids: Sequence[int] | None = None, unanswered: bool = False, *,
              after: int | None = None, limit: int | None = None) -> pd.DataFrame:
        """Assignments: unit, batch, slot, arm, reward, costs, and when each happened.

        The recovery path when the output of :meth:`assign` was lost (a killed process, a
        closed pipe): every unit it assigned is here, with the ``assigned_at`` time of its call.

        Parameters
        ----------
        ids : sequence of int, optional
            Only these units (a unit never assigned has no row). Looked up by id: the cost is
            O(len(ids)), not O(units in the experiment).
        unanswered : bool
            Only units waiting for a reward: no reward recorded and not expired (on an
            experiment opened for writing, the units whose outcome window closed are resolved
            first). Read through the partial index of waiting units: O(waiting units).
        after : int, optional
            Only units with an id above this one (paging: pass the last id of a page).
        limit : int, optional
            At most this many units (>= 1), the lowest ids first.

        Returns
        -------
        DataFrame with columns ``unit``, ``batch``, ``slot``, ``arm`` (name), ``arm_index``,
        ``reward``, ``costs`` (JSON list or None), ``assigned_at``, ``recorded_at``,
        ``expired_at``, ``imputed`` (``True`` when the reward is the 0 that ``missing="zero"``
        recorded when the unit's outcome window closed), ``key`` (the external key given to
        ``assign(keys=...)``, or None; an expired unit keeps the key it had) and
        ``propensity``: the probability with which the design gave the unit its arm (the
        batch's sampling strategy, or its share of the arm;
        :mod:`banditkit.live.propensity`), for inverse-propensity re-analysis of the log; one
        row per unit in id order.
        """
        if not isinstance(unanswered, bool):
            raise ExperimentError(f"unanswered must be True or False, got {unanswered!r}")
        for name, value, low in (("after", after, 0), ("limit", limit, 1)):
            if value is not None and (isinstance(value, bool) or not isinstance(
                    value, (int, np.integer)) or value < low):
                raise ExperimentError(f"{name} must be an integer >= {low} (a unit id"
                                      f"{'' if name == 'after' else ' count'}), got {value!r}")
        wanted = None if ids is None else as_ids(ids, allow_empty=True)
        where = " AND reward IS NULL AND expired_at IS NULL" if unanswered else ""
        page: list[int] = []
        if after is not None:
            where += " AND id > ?"
            page.append(int(after))
        tail = "" if limit is None else f" LIMIT {int(limit)}"
        columns = ("id AS unit, batch, slot, arm AS arm_index, reward, costs, assigned_at, "
                   "recorded_at, expired_at, imputed, (SELECT key FROM keys k WHERE "
                   "k.unit = units.id) AS key, kind, propensity AS stored_propensity")
        with self._transaction() as conn:
            if not self.readonly:
                self._resolve(conn)
            try:
                read = self._journal.read_frame
                if wanted is None:
                    # waiting units through their partial index: O(waiting), not O(units)
                    hint = self._journal.indexed_by("units_waiting") if unanswered else ""
                    frame = read(conn, f"SELECT {columns} FROM units {hint} WHERE 1 = 1{where} "
                                 f"ORDER BY id{tail}", page)
                else:  # by primary key, in chunks: O(len(ids)) whatever the experiment holds
                    parts = [read(
                        conn, f"SELECT {columns} FROM units WHERE id IN "
                        f"({','.join('?' * len(chunk))}){where}", chunk + page)
                        for chunk in (wanted[i: i + CHUNK].tolist()
                                      for i in range(0, max(wanted.size, 1), CHUNK))]
                    frame = pd.concat(parts, ignore_index=True).sort_values(
                        "unit", ignore_index=True)
                    if limit is not None:
                        frame = frame.iloc[:int(limit)].reset_index(drop=True)
            except pd.errors.DatabaseError as error:
                raise ExperimentError(f"{self._journal.label} cannot be read ({error})") from None
            batches = conn.execute("SELECT b.id, r.arms, r.counts, b.strategy FROM batches b "
                                   "JOIN runs r ON r.batch = b.id").fetchall()
            draws = conn.execute("SELECT batch, cdf, state, n_pulls FROM draws").fetchall()
        for a in frame["arm_index"].unique():
            self._check_arm_index(a)
        frame["key"] = frame["key"].astype(object).where(frame["key"].notna(), None)
        frame["imputed"] = frame["imputed"].fillna(0).astype(bool)
        frame.insert(3, "arm", [self.arm_names[a] for a in frame["arm_index"]])
        try:
            # an i.i.d. batch gave each unit an arm drawn from its design: that is the
            # propensity (the design's probabilities, read off its cdf)
            batches += [(i, b"", b"", json.dumps(np.diff(unpack_draws(c, s, n).cdf,
                                                          prepend=0.0).tolist()))
                        for i, c, s, n in draws]
            shares = batch_propensities(
                [(i, *unpack_runs(arms, counts), strategy)
                 for i, arms, counts, strategy in batches], len(self.arm_names))
            design = shares[frame["batch"].to_numpy(np.int64),
                                frame["arm_index"].to_numpy(np.int64)]
            # overflow and rollout units: the probability their rule drew the arm with
            kinds = frame["kind"].to_numpy(np.int64)
            stored = pd.to_numeric(frame["stored_propensity"], errors="coerce").to_numpy(float)
            frame["propensity"] = np.where(kinds == 0, design, stored)
        except (ValueError, TypeError, IndexError) as error:  # JSONDecodeError: a ValueError
            raise ExperimentError(f"{self._journal.label} is damaged: its batches cannot be read "
                                  f"({error})") from None
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
