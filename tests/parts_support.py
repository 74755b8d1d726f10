"""One part of a live experiment on its own (tests/test_part_*.py): a real SQLite store created
from a checked definition, a clock the test moves, and the journal; no Experiment."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from banditkit.live.creating import define
from banditkit.live.definition import Definition, LiveClock
from banditkit.live.journal.replay import Journal
from banditkit.live.store import Store, create_store

#: 1 Jan 2027, 00:00 UTC: the tests' clock starts here.
START = 1_798_761_600.0

DEFAULTS: dict[str, Any] = dict(
    algorithm="FixedAllocation", arms=["a", "b", "c"], seed=7, horizon=None,
    params={"batch_size": 12}, thresholds=None, order="shuffled", control=None,
    guardrails=None, guardrail_alpha=0.05, outcome_window=None, missing=None, clock=None,
    overflow="design", who="local", reward_type=None, reward_range=None, verdicts=None)


class Clock:
    """Seconds since the epoch, moved by hand."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Setup:
    """A store, its definition, a clock and a journal, for one test."""

    def __init__(self, folder: Path, name: str = "part.sqlite", **given: Any) -> None:
        meta, _ = define(**{**DEFAULTS, **given}, version="test")
        self.store: Store = create_store(folder / name, None, meta)
        self.definition = Definition.from_meta(self.store.meta(), self.store.label)
        self.seconds = Clock()
        self.clock = LiveClock(self.seconds)
        self.journal = Journal(self.definition, self.store, self.clock)

    @contextmanager
    def transaction(self, journal: Journal | None = None) -> Iterator[Any]:
        """A write transaction with ``journal`` (default: the setup's) brought up to date, as
        a call of the coordinator opens it."""
        journal = self.journal if journal is None else journal
        with self.store.transaction([]) as conn:
            journal.begin_call()
            journal.sync(conn)
            yield conn

    def units(self, conn: Any, batch: int, arms: list[int], kind: int = 0) -> list[int]:
        """Insert units as assignment would (slots 0, 1, ... of ``batch``), their totals too."""
        from banditkit.live.store.totals import add_totals

        now = self.clock.stamp()
        start = conn.execute("SELECT COALESCE(MAX(slot), -1) + 1 FROM units WHERE batch = ?",
                             (batch,)).fetchone()[0]
        ids = []
        for i, arm in enumerate(arms):
            conn.execute("INSERT INTO units (batch, slot, arm, assigned_at, kind) VALUES "
                         "(?, ?, ?, ?, ?)", (batch, start + i if kind == 0 else -1, arm, now,
                                             kind))
            ids.append(conn.execute(self.store.last_id_sql).fetchone()[0])
        per_arm: dict[int, int] = {}
        for arm in arms:
            per_arm[arm] = per_arm.get(arm, 0) + 1
        add_totals(conn, batch if kind == 0 else -2,
                   {a: (c, 0, 0.0, 0.0, 0) for a, c in per_arm.items()})
        return ids

    def record(self, conn: Any, units: list[int], rewards: list[float]) -> None:
        """Write rewards as the outcomes part would (units and totals), nothing else."""
        from banditkit.live.store.totals import add_totals

        now = self.clock.stamp()
        for unit, reward in zip(units, rewards, strict=True):
            batch, arm = conn.execute("SELECT batch, arm FROM units WHERE id = ?",
                                      (unit,)).fetchone()
            conn.execute("UPDATE units SET reward = ?, recorded_at = ? WHERE id = ?",
                         (reward, now, unit))
            add_totals(conn, batch, {arm: (0, 1, reward, reward * reward,
                                           int(reward not in (0.0, 1.0)))})

    def fresh_journal(self) -> Journal:
        """Another process's journal of the same store."""
        return Journal(self.definition, self.store, self.clock)

    def close(self) -> None:
        self.store.close()
