"""The guardrails of a live experiment at work: every guardrail checked against every arm on
the resolved prefix (:func:`banditkit.live.readout.guardrails.evaluate` holds the rule and its
test), and each new breach stored in the transaction of the call that caused it, which pauses
the experiment (:meth:`~banditkit.live.assignment.operations.Operations.paused`) until a
person resumes it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..definition import Definition, LiveClock
from ..journal.replay import Journal
from ..outcomes.resolved_prefix import read_prefix
from ..store import Connection, Store
from .guardrails import evaluate

__all__ = ["Guard"]


class Guard:
    """The guardrails' check and pause of one experiment (see the module docstring)."""

    def __init__(self, definition: Definition, store: Store, clock: LiveClock,
                 journal: Journal) -> None:
        self._def = definition
        self._store = store
        self._clock = clock
        self._journal = journal

    def check(self, conn: Connection, count: str = "resolved") -> Any:
        """Every guardrail against every arm (:func:`~.guardrails.evaluate`): O(arms ×
        guardrails). ``count="resolved"`` (what pauses the experiment): the metrics of each
        arm's resolved prefix (:mod:`banditkit.live.outcomes.resolved_prefix`: its units before
        the first unit of any arm still waiting, an order their values cannot change);
        ``"recorded"``: every value recorded so far (summed from the units, O(units))."""
        d = self._def
        G, K = len(d.guardrails), d.n_arms
        tune_n = d.verdict_spec(self._journal.reward_range).tune_n
        if count == "resolved":
            prefix = read_prefix(conn, K, G)
            return evaluate(d.guardrails, prefix.metric_n, prefix.metric_total,
                            prefix.metric_total_sq, d.control_index, d.guardrail_alpha,
                            n_tune=tune_n)
        # every value recorded (a contrast, not what pauses)
        n, total, total_sq = np.zeros((G, K), dtype=np.int64), np.zeros((G, K)), np.zeros((G, K))
        store = self._store
        items = [store.json_item("metrics", j) for j in range(G)]
        columns = ", ".join(f"COUNT({v}), {store.total(v)}, {store.total(f'({v}) * ({v})')}"
                            for v in items)
        for arm, *values in conn.execute(
                f"SELECT arm, {columns} FROM units WHERE metrics IS NOT NULL AND "
                "expired_at IS NULL GROUP BY arm"):
            d.check_arm(arm)
            for j in range(G):
                n[j, arm], total[j, arm], total_sq[j, arm] = values[3 * j: 3 * j + 3]
        return evaluate(d.guardrails, n, total, total_sq, d.control_index, d.guardrail_alpha,
                        n_tune=tune_n)

    def pause_on_breach(self, conn: Connection) -> None:
        """Store every (guardrail, arm) breach not stored before, in the caller's (the
        record's) transaction: each pauses the experiment until it is resumed. A breach
        resumed once does not pause again (a person saw it and chose to go on)."""
        check = self.check(conn)
        known = {(j, a) for j, a in conn.execute("SELECT guardrail, arm FROM pauses")}
        now = self._clock.stamp()
        d = self._def
        for j, a in zip(*np.nonzero(check.breached), strict=True):
            if (int(j), int(a)) in known:
                continue
            g = d.guardrails[j]
            detail = (f"guardrail {g.describe()}: arm {d.arm_names[a]!r} minus control "
                      f"{d.control!r} is in [{check.diff_low[j, a]:.4g}, "
                      f"{check.diff_high[j, a]:.4g}] (anytime-valid, guardrail_alpha = "
                      f"{d.guardrail_alpha:g})")
            conn.execute("INSERT INTO pauses (guardrail, arm, breached_at, detail) VALUES "
                         "(?, ?, ?, ?)", (int(j), int(a), now, detail))

    def frame(self, conn: Connection, count: str = "resolved") -> pd.DataFrame:
        """:attr:`ExperimentStatus.guardrails`: one row per (guardrail, arm but the
        control)."""
        columns = ["metric", "rule", "margin", "arm", "diff", "diff_low", "diff_high",
                   "breached", "pausing"]
        d = self._def
        if not d.guardrails:
            return pd.DataFrame(columns=columns)
        check = self.check(conn, count)
        pausing = {(j, a): resumed is None for j, a, resumed in conn.execute(
            "SELECT guardrail, arm, resumed_at FROM pauses")}
        control = d.control_index
        rows = [(g.metric, g.rule, g.margin, name, check.diff[j, a], check.diff_low[j, a],
                 check.diff_high[j, a], bool(check.breached[j, a]),
                 pausing.get((j, a), False))
                for j, g in enumerate(d.guardrails)
                for a, name in enumerate(d.arm_names) if a != control]
        return pd.DataFrame(rows, columns=columns)
