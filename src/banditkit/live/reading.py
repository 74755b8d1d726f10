"""What a live experiment reports without changing it: :meth:`status` (per-arm counts, means,
intervals, the algorithm's state, warnings, guardrails) from the running totals, and
:meth:`units`, the log of every unit. A part of :class:`banditkit.Experiment` (a mixin: the
methods use its store, algorithm and arms)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..protocol import Algorithm
from .defaults import NOT_PROVED
from .inputs import as_ids
from .journal import ALL_BATCHES, ExperimentError, unpack_draws, unpack_runs
from .leader import leader
from .propensity import batch_propensities
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
from .verdict_spec import VerdictSpec, check_verdicts

__all__ = ["Reading"]


class Reading:
    """Methods of :class:`banditkit.Experiment` (see the module docstring)."""

    def status(self, intervals: str = "anytime", alpha: float = 0.05,
               verdicts: Mapping[str, Any] | None = None) -> ExperimentStatus:
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
        verdicts : dict, optional
            Show this look with other sequence options than the stored ones (keys of
            ``Experiment.create(verdicts=...)``, e.g. ``{"sequence": "msprt", "tau": 0.01}``),
            on the same data: to compare methods, not to pick the one that decides (choosing
            among several after seeing them spends α once per method tried).
        """
        intervals = check_intervals(intervals)
        alpha = check_alpha(alpha)
        spec = self.verdict_spec
        if verdicts is not None:
            spec = check_verdicts(spec.reward_type, spec.reward_range,
                                  {**{k: v for k, v in spec.as_json().items()
                                      if k in ("tune_n", "control_share", "margin")},
                                   **dict(verdicts)}
                                  if isinstance(verdicts, Mapping) else verdicts, None)
        with self._transaction() as conn:
            algorithm = self._algorithm
            assert algorithm is not None
            pending = self._ask()
            # the running totals over all batches: O(arms), however many units
            rows = conn.execute(
                "SELECT arm, assigned, recorded, reward, reward_sq, non_binary FROM totals "
                "WHERE batch = ? AND (assigned <> 0 OR recorded <> 0)", (ALL_BATCHES,)
            ).fetchall()
            waiting = unassigned = 0
            if pending is not None:
                answered, live = conn.execute(
                    "SELECT COALESCE(SUM(recorded), 0), COALESCE(SUM(assigned), 0) FROM totals "
                    "WHERE batch = ?", (self._observed,)).fetchone()
                waiting, unassigned = pending.n_pulls - answered, pending.n_pulls - live
            frame = self._arm_table(rows, algorithm, intervals, alpha, spec)
            warnings = self._missing_outcomes(conn, alpha)
            rails, paused = self._guardrail_frame(conn), self._paused(conn)
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
                verdicts=spec.as_json(),
                leader=None if arm is None else self.arm_names[arm], reason=reason,
                params=dict(self.params), live_defaults=list(self.live_defaults),
                reward_range=None if algorithm.reward_range is None
                else tuple(map(float, algorithm.reward_range)),
                guardrails=rails, paused=paused)

    def _guardrail_frame(self, conn: Connection) -> pd.DataFrame:
        """:attr:`ExperimentStatus.guardrails`: one row per (guardrail, arm but the
        control)."""
        columns = ["metric", "rule", "margin", "arm", "diff", "diff_low", "diff_high",
                   "breached", "pausing"]
        if not self.guardrails:
            return pd.DataFrame(columns=columns)
        check = self._guardrail_check(conn)
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
                   alpha: float, spec: VerdictSpec) -> pd.DataFrame:
        """The per-arm frame (:func:`banditkit.live.statistics.arm_table`) from SQL aggregates
        (count, sum, sum of squares, and whether any reward is other than 0/1): O(K) Python
        work however many units."""
        K = len(self.arm_names)
        counts = np.zeros((K, 2), dtype=np.int64)
        totals = np.zeros((K, 2))
        binary = np.ones(K, dtype=bool)
        for arm, assigned, n, total, total_sq, non_binary in rows:
            self._check_arm_index(arm)
            counts[arm] = assigned, n
            totals[arm] = total, total_sq
            binary[arm] = non_binary == 0
        sums = ArmSums(counts[:, 0], counts[:, 1], totals[:, 0], totals[:, 1], binary)
        frame = arm_table(self.arm_names, sums, algorithm.reward_range, intervals=intervals,
                          alpha=alpha, control=self.arm_names.index(self.control),
                          spec=spec)
        active = getattr(algorithm, "active", None)
        if active is not None:
            flags = np.zeros(K, dtype=bool)
            flags[np.asarray(active, dtype=np.int64)] = True
            frame["active"] = flags
        return frame

    def _missing_outcomes(self, conn: Connection, alpha: float) -> list[str]:
        """:func:`banditkit.live.statistics.missing_outcome_warnings` on each arm's units
        assigned before its oldest unit still waiting (neither answered nor expired): units
        assigned recently may simply not have answered yet.

        Each arm's units (expired ones included: they are the outcomes that went missing) and
        outcomes come from the running totals plus a count of the expired units, its oldest
        waiting unit from the partial index of waiting units, and the units from the oldest
        waiting one on (a range of the primary key: the recent units only) are taken off: the
        cost grows with the expired, waiting and recent units, never with all units (a scan of
        every unit took 0.5 s a status at 10⁶ units)."""
        K = len(self.arm_names)
        totals = np.zeros((K, 2), dtype=np.int64)
        first = np.full(K, np.iinfo(np.int64).max, dtype=np.int64)
        for arm, n, m in conn.execute("SELECT arm, assigned, recorded FROM totals WHERE "
                                      "batch = ?", (ALL_BATCHES,)):
            self._check_arm_index(arm)
            totals[arm] = n, m
        for arm, n in conn.execute("SELECT arm, COUNT(*) FROM units WHERE expired_at IS NOT "
                                   "NULL GROUP BY arm"):
            self._check_arm_index(arm)
            totals[arm, 0] += n
        # INDEXED BY: SQLite's planner otherwise walks units_live_slot, every live unit
        for arm, oldest in conn.execute(
                f"SELECT arm, MIN(id) FROM units {self._journal.indexed_by('units_waiting')} "
                "WHERE reward IS NULL AND expired_at IS NULL GROUP BY arm"):
            self._check_arm_index(arm)
            first[arm] = oldest
        if (first < np.iinfo(np.int64).max).any():
            cases = " ".join(f"WHEN {a} THEN ?" for a in range(K))
            for arm, n, m in conn.execute(
                    f"SELECT arm, COUNT(*), COUNT(reward) FROM units WHERE id >= ? AND "
                    f"id >= (CASE arm {cases} END) GROUP BY arm",
                    (int(first.min()), *map(int, first))):
                totals[arm] -= (n, m)
        return missing_outcome_warnings(self.arm_names, totals[:, 0], totals[:, 1], alpha)

    def units(self, ids: Sequence[int] | None = None, unanswered: bool = False
              ) -> pd.DataFrame:
        """Assignments: unit, batch, slot, arm, reward, costs, and when each happened.

        The recovery path when the output of :meth:`assign` was lost (a killed process, a
        closed pipe): every unit it assigned is here, with the ``assigned_at`` time of its call.

        Parameters
        ----------
        ids : sequence of int, optional
            Only these units (a unit never assigned has no row). Looked up by id: the cost is
            O(len(ids)), not O(units in the experiment).
        unanswered : bool
            Only units waiting for a reward: no reward recorded and not expired.

        Returns
        -------
        DataFrame with columns ``unit``, ``batch``, ``slot``, ``arm`` (name), ``arm_index``,
        ``reward``, ``costs`` (JSON list or None), ``assigned_at``, ``recorded_at``,
        ``expired_at``, ``key`` (the external key given to ``assign(keys=...)``, or None; an
        expired unit keeps the key it had) and ``propensity``: the probability with which the
        design gave the unit its arm (the batch's sampling strategy, or its share of the arm;
        :mod:`banditkit.live.propensity`), for inverse-propensity re-analysis of the log; one
        row per unit in id order.
        """
        if not isinstance(unanswered, bool):
            raise ExperimentError(f"unanswered must be True or False, got {unanswered!r}")
        wanted = None if ids is None else as_ids(ids, allow_empty=True)
        where = " AND reward IS NULL AND expired_at IS NULL" if unanswered else ""
        columns = ("id AS unit, batch, slot, arm AS arm_index, reward, costs, assigned_at, "
                   "recorded_at, expired_at, (SELECT key FROM keys k WHERE k.unit = units.id) "
                   "AS key")
        with self._transaction() as conn:
            try:
                read = self._journal.read_frame
                if wanted is None:
                    frame = read(conn, f"SELECT {columns} FROM units WHERE 1 = 1{where} "
                                 "ORDER BY id")
                else:  # by primary key, in chunks: O(len(ids)) whatever the experiment holds
                    parts = [read(
                        conn, f"SELECT {columns} FROM units WHERE id IN "
                        f"({','.join('?' * len(chunk))}){where}", chunk)
                        for chunk in (wanted[i: i + CHUNK].tolist()
                                      for i in range(0, max(wanted.size, 1), CHUNK))]
                    frame = pd.concat(parts, ignore_index=True).sort_values(
                        "unit", ignore_index=True)
            except pd.errors.DatabaseError as error:
                raise ExperimentError(f"{self._journal.label} cannot be read ({error})") from None
            batches = conn.execute("SELECT b.id, r.arms, r.counts, b.strategy FROM batches b "
                                   "JOIN runs r ON r.batch = b.id").fetchall()
            draws = conn.execute("SELECT batch, cdf, state, n_pulls FROM draws").fetchall()
        for a in frame["arm_index"].unique():
            self._check_arm_index(a)
        frame["key"] = frame["key"].astype(object).where(frame["key"].notna(), None)
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
            frame["propensity"] = shares[frame["batch"].to_numpy(np.int64),
                                         frame["arm_index"].to_numpy(np.int64)]
        except (ValueError, TypeError, IndexError) as error:  # JSONDecodeError: a ValueError
            raise ExperimentError(f"{self._journal.label} is damaged: its batches cannot be read "
                                  f"({error})") from None
        return frame
