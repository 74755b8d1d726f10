"""Guardrails that pause a live experiment (:mod:`banditkit.live.guardrails` holds the rule
and its test): the metrics' running sums kept with the units, the breaches stored in the
transaction of the record that caused them, the pause that ``assign`` honours and ``resume``
lifts. A part of :class:`banditkit.Experiment` (a mixin: the methods use its store and arms)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .guardrails import evaluate
from .journal import ALL_BATCHES
from .resolved_prefix import read_prefix
from .store import Connection

__all__ = ["Pausing"]


class Pausing:
    """Methods of :class:`banditkit.Experiment` (see the module docstring)."""

    @staticmethod
    def _add_metric_totals(conn: Connection,
                           values: list[tuple[int, int, np.ndarray]]) -> None:
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

    def _guardrail_check(self, conn: Connection, count: str = "resolved") -> Any:
        """Every guardrail against every arm (:func:`banditkit.live.guardrails.evaluate`):
        O(arms × guardrails). ``count="resolved"`` (what pauses the experiment): the metrics of
        each arm's resolved prefix (:mod:`banditkit.live.resolved_prefix`: its units before
        the first unit of any arm still waiting, an order their values cannot change);
        ``"recorded"``: every value recorded so far (the running sums of all batches)."""
        G, K = len(self.guardrails), len(self.arm_names)
        control = self.arm_names.index(self.control)
        tune_n = self.verdict_spec.tune_n
        if count == "resolved":
            prefix = read_prefix(conn, K, G)
            return evaluate(self.guardrails, prefix.metric_n, prefix.metric_total,
                            prefix.metric_total_sq, control, self.guardrail_alpha,
                            n_tune=tune_n)
        # every value recorded (a contrast, not what pauses): summed from the units, O(units)
        n, total, total_sq = np.zeros((G, K), dtype=np.int64), np.zeros((G, K)), np.zeros((G, K))
        store = self._journal
        items = [store.json_item("metrics", j) for j in range(G)]
        columns = ", ".join(f"COUNT({v}), {store.total(v)}, {store.total(f'({v}) * ({v})')}"
                            for v in items)
        for arm, *values in conn.execute(
                f"SELECT arm, {columns} FROM units WHERE metrics IS NOT NULL AND "
                "expired_at IS NULL GROUP BY arm"):
            self._check_arm_index(arm)
            for j in range(G):
                n[j, arm], total[j, arm], total_sq[j, arm] = values[3 * j: 3 * j + 3]
        return evaluate(self.guardrails, n, total, total_sq, control, self.guardrail_alpha,
                        n_tune=tune_n)

    def _pause_on_breach(self, conn: Connection) -> None:
        """Store every (guardrail, arm) breach not stored before, in the caller's (the
        record's) transaction: each pauses the experiment until :meth:`resume`. A breach
        resumed once does not pause again (a person saw it and chose to go on)."""
        check = self._guardrail_check(conn)
        known = {(j, a) for j, a in conn.execute("SELECT guardrail, arm FROM pauses")}
        now = self._stamp()
        for j, a in zip(*np.nonzero(check.breached), strict=True):
            if (int(j), int(a)) in known:
                continue
            g = self.guardrails[j]
            detail = (f"guardrail {g.describe()}: arm {self.arm_names[a]!r} minus control "
                      f"{self.control!r} is in [{check.diff_low[j, a]:.4g}, "
                      f"{check.diff_high[j, a]:.4g}] (anytime-valid, guardrail_alpha = "
                      f"{self.guardrail_alpha:g})")
            conn.execute("INSERT INTO pauses (guardrail, arm, breached_at, detail) VALUES "
                         "(?, ?, ?, ?)", (int(j), int(a), now, detail))

    def _paused(self, conn: Connection, state: dict[str, Any] | None = None) -> str | None:
        """Why the experiment is paused (by hand: ``state["paused"]``, read from ``meta`` when
        not given; or by its breaches not yet resumed), or ``None``."""
        manual = (self._ops_state(conn) if state is None else state).get("paused")
        if manual is not None:
            return (f"the experiment is paused by {manual['by']} since {manual['at']} "
                    f"({manual['reason']}); no unit is assigned until it is resumed "
                    "(Experiment.resume, `banditkit experiment resume`, POST .../resume)")
        if not self.guardrails:
            return None
        rows = conn.execute("SELECT breached_at, detail FROM pauses WHERE resumed_at IS NULL "
                            "ORDER BY id").fetchall()
        if not rows:
            return None
        return ("the experiment is paused by its guardrails; no unit is assigned until a person "
                "resumes it (Experiment.resume, `banditkit experiment resume`) or ends it: "
                + "; ".join(f"{detail} (since {at})" for at, detail in rows))

    def resume(self, *, who: str = "local") -> int:
        """Lift the pause (by hand, :meth:`pause`, and by the guardrails): ``assign`` hands out
        units again, the batch in progress continuing where it stopped (pausing never touched
        the algorithm). The breaches resumed stay in :meth:`status` and do not pause the
        experiment again; a new breach (another guardrail or arm) does. To end an experiment
        instead, :meth:`stop` it (:mod:`banditkit.live.operations`).

        Parameters
        ----------
        who : str
            Who resumes it, for the audit log (:mod:`banditkit.live.operations`).

        Returns
        -------
        int
            Pauses lifted: the breaches, plus 1 for a pause by hand (0 when the experiment was
            not paused).
        """
        from .operations import check_who

        self._check_writable("resume")
        who = check_who(who)
        with self._transaction() as conn:
            manual = "paused" in self._ops_state(conn)
            if manual:
                self._set_state(conn, "paused", None)
            # the rows lifted, read back (a pipelined PostgreSQL cursor has no rowcount
            # until its answer is read)
            lifted = len(conn.execute("UPDATE pauses SET resumed_at = ? WHERE resumed_at IS "
                                      "NULL RETURNING id", (self._stamp(),)).fetchall()
                         ) + int(manual)
            if lifted:
                self._audit(conn, who, "resume", {"lifted": lifted})
            self._resolve(conn)  # after: a breach the resolved units cause pauses again
            return lifted
