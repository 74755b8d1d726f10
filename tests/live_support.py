"""Shared by the live-experiment tests and the child processes they start: rewards fixed in
advance per (arm, k-th pull of that arm), so a simulation and an experiment driven unit by unit
(in any order, with restarts and kills) see exactly the same rewards."""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from banditkit.envs.base import Environment, Outcome
from banditkit.live.store.codec import unpack_draws, unpack_runs
from banditkit.protocol import Batch


def reward_table(means: list[float], n: int = 20_000, seed: int = 0) -> np.ndarray:
    """0/1 rewards: row a holds the rewards of arm a's 1st, 2nd, ... pulls."""
    rng = np.random.default_rng(seed)
    return (rng.random((len(means), n)) < np.asarray(means)[:, None]).astype(float)


class TableBandit(Environment):
    """An environment answering the k-th pull of arm a with ``table[a, k]`` (stateful: for one
    simulation only). ``X`` makes it a linear problem for linear algorithms (Z = X)."""

    def __init__(self, table: np.ndarray, X: np.ndarray | None = None,
                 costs: np.ndarray | None = None, alpha: list[float] | None = None) -> None:
        self.table = table
        self.n_arms = self.n_items = table.shape[0]
        self.X = self.Z = X
        self.costs = costs  # shape (K, n, m): the m costs of each arm's k-th pull
        self.alpha = None if alpha is None else np.asarray(alpha, dtype=float)
        self.n_costs = 0 if costs is None else costs.shape[2]
        self.used = np.zeros(self.n_arms, dtype=np.int64)

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        sums = np.empty(batch.n_runs)
        cost_sums = None if self.costs is None else np.empty((batch.n_runs, self.n_costs))
        for i, (a, c) in enumerate(zip(batch.arms, batch.counts, strict=True)):
            sums[i] = self.table[a, self.used[a]: self.used[a] + c].sum()
            if cost_sums is not None:
                cost_sums[i] = self.costs[a, self.used[a]: self.used[a] + c].sum(axis=0)
            self.used[a] += c
        return Outcome(sums, cost_sums)

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        return np.zeros(batch.n_runs)

    def violation(self, batch: Batch, t0: int = 0) -> np.ndarray | None:
        return None if self.costs is None else np.zeros((batch.n_runs, self.n_costs))

    def best_item(self, horizon: int | None = None) -> int:
        return 0


@dataclass(frozen=True)
class Where:
    """Where a test's experiment lives: an SQLite file (``name`` None), or experiment ``name``
    in the PostgreSQL database at URL ``target``. The helpers below take one, or a plain path."""

    target: str
    name: str | None = None

    @property
    def backend(self) -> str:
        return "sqlite" if self.name is None else "postgres"

    def create(self, **kwargs: Any):
        from banditkit import Experiment

        return Experiment.create(self.target, name=self.name, **kwargs)

    def open(self, **kwargs: Any):
        from banditkit import Experiment

        return Experiment.open(self.target, name=self.name, **kwargs)

    def connect(self) -> Any:
        """A plain connection to the experiment's tables (``?`` placeholders on both), for
        tests that read or tamper with them behind the experiment's back."""
        if self.name is None:
            return sqlite3.connect(self.target, timeout=30)
        return _PostgresTables(self.target, self.name)

    def argv(self) -> list[str]:
        return [self.target] if self.name is None else [self.target, self.name]


class _PostgresTables:
    """A psycopg connection whose search path is the experiment's schema, with sqlite3's
    ``execute(sql, params)`` / ``commit`` / ``close`` and ``?`` placeholders."""

    def __init__(self, url: str, name: str) -> None:
        import psycopg

        from banditkit.live.store.postgres import schema_name

        # autocommit: each statement sees what the experiment committed (a cached connection
        # holds no snapshot), and a tampering UPDATE is in at once
        self._conn = psycopg.connect(url, autocommit=True)
        self._conn.execute(f'SET search_path TO "{schema_name(name)}"')

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), list(params) or None)

    def commit(self) -> None:
        return None  # autocommit

    def close(self) -> None:
        self._conn.close()


def as_where(where: Where | str | Path) -> Where:
    return where if isinstance(where, Where) else Where(str(where))


_READERS: dict[Where, Any] = {}


def _reader(where: Where) -> Any:
    """A connection that reads the experiment's tables, kept open per PostgreSQL experiment
    (a new server connection per record call of :func:`drive` cost more than the call)."""
    if where.name is None:
        return sqlite3.connect(where.target, timeout=30)
    if where not in _READERS:
        _READERS[where] = where.connect()
    return _READERS[where]


def unit_rewards(path: Where | str, units: list[int], table: np.ndarray) -> list:
    """The reward of each unit: ``table[arm, k]`` with k the unit's pull's rank among all pulls
    of its arm in the algorithm's pull order (earlier batches, then earlier slots). A 3-D
    ``table`` (costs) gives each unit's row of costs."""
    where = as_where(path)
    conn = _reader(where)
    try:
        batches = {b: unpack_runs(a, c)
                   for b, a, c in conn.execute("SELECT batch, arms, counts FROM runs")}
        # an i.i.d. batch is stored as its description: its runs are the draws it describes
        batches.update({b: (lazy.arms, lazy.counts) for b, lazy in (
            (b, unpack_draws(c, s, n)) for b, c, s, n in conn.execute(
                "SELECT batch, cdf, state, n_pulls FROM draws"))})
        rows = {u: (b, s) for u, b, s in conn.execute(
            f"SELECT id, batch, slot FROM units WHERE id IN ({','.join('?' * len(units))})",
            units)}
    finally:
        if where.name is None:
            conn.close()
    K = table.shape[0]
    before = {}  # batch -> pulls of each arm in earlier batches
    total = np.zeros(K, dtype=np.int64)
    for b in sorted(batches):
        before[b] = total.copy()
        arms, counts = batches[b]
        total += np.bincount(arms, weights=counts, minlength=K).astype(np.int64)
    out = []
    for u in units:
        b, s = rows[u]
        arms, counts = batches[b]
        seq = np.repeat(arms, counts)
        a = int(seq[s])
        k = int(before[b][a] + np.sum(seq[:s] == a))
        out.append(table[a, k].tolist())
    return out


def drive(path: Where | str, table: np.ndarray, seed: int, max_calls: int, log=None, *,
          restart_every: int | None = None, cost_table: np.ndarray | None = None) -> None:
    """Assign and record in small random steps until the experiment finishes (or
    ``max_calls`` calls), printing each returned record call's units to ``log`` and reopening
    the file every ``restart_every`` calls. ``cost_table`` gives the units' costs, as ``table``
    their rewards."""
    import time


    rng = np.random.default_rng(seed)
    where = as_where(path)
    exp = where.open()
    try:
        # units assigned but never answered (by a process that died) are answered here
        units = exp.units()
        waiting: list[int] = units.loc[units["reward"].isna() & units["expired_at"].isna(),
                                       "unit"].tolist()
        for call in range(1, max_calls + 1):
            if restart_every and call % restart_every == 0:
                exp.close()
                exp = where.open()
            if rng.random() < 0.6 or not waiting:
                frame = exp.assign(int(rng.integers(1, 40)))
                # overflow and rollout units are never shown to the algorithm: left unanswered
                extra = set(frame.attrs.get("overflow_units", []))
                units = [u for u in frame["unit"].tolist() if u not in extra]
                if not units and not waiting:
                    if exp.status().finished:
                        return
                    time.sleep(0.01)  # another process holds the batch's units: let it answer
                    continue
                waiting += units
            else:
                rng.shuffle(waiting)
                k = int(rng.integers(1, len(waiting) + 1))
                take, waiting = waiting[:k], waiting[k:]
                costs = None if cost_table is None else unit_rewards(where, take, cost_table)
                exp.record(take, unit_rewards(where, take, table), costs)
                if log is not None:
                    print("recorded", *take, file=log, flush=True)
    finally:
        exp.close()


if __name__ == "__main__":  # a child process: drive PATH (or URL NAME) with the table of MEANS
    args = sys.argv[1:]
    where = Where(*args[:2]) if args[0].startswith("postgresql://") else Where(args[0])
    means, seed, calls = args[len(where.argv()):]
    drive(where, reward_table(json.loads(means)), int(seed), int(calls), log=sys.stdout)


def check_consistent(path: Where | str | Path) -> None:
    """No slot holds two live units, and every observed batch's stored run sums are its units'
    rewards, each slot counted once (so no reward was lost or counted twice); overflow and
    rollout units (``kind`` <> 0) hold no slot."""
    conn = as_where(path).connect()
    try:
        (dupes,) = conn.execute("SELECT COUNT(*) FROM (SELECT batch, slot FROM units WHERE "
                                "expired_at IS NULL AND kind = 0 GROUP BY batch, slot HAVING "
                                "COUNT(*) > 1) AS d"
                                ).fetchone()
        assert dupes == 0
        for b, counts, sums in conn.execute(
                "SELECT id, counts, reward_sums FROM batches JOIN runs ON runs.batch = id "
                "WHERE reward_sums IS NOT NULL"):
            rows = conn.execute("SELECT slot, reward FROM units WHERE batch = ? AND "
                                "expired_at IS NULL AND kind = 0 ORDER BY slot",
                                (b,)).fetchall()
            counts = np.frombuffer(counts, dtype="<i8")
            assert [r[0] for r in rows] == list(range(int(counts.sum())))
            per_pull = np.array([r[1] for r in rows], dtype=float)
            ends = np.cumsum(counts)
            np.testing.assert_allclose(np.add.reduceat(per_pull, np.r_[0, ends[:-1]]),
                                       json.loads(sums))
    finally:
        conn.close()


#: The edge's tables, which format 10 added (a format 5 to 9 file has none), and the units'
#: segment, which format 11 added.
_EDGE_10 = (*(f"DROP TABLE {t}" for t in ("edge_versions", "edge_units", "edge_slots",
                                           "edge_outcomes", "edge_flags")),
            "ALTER TABLE units DROP COLUMN segment")

#: The plug-in sums format 8 added to ``prefix``.
_PLUGIN_8 = ("plugin_lam", "plugin_lam_x", "plugin_pen_low", "plugin_pen_high",
             "plugin_cursor")

#: The statements that take a format 8 experiment back to format 7's layout (no plug-in sums).
DOWNGRADE_TO_7 = (
    *(f"ALTER TABLE prefix DROP COLUMN {c}" for c in _PLUGIN_8),
    *_EDGE_10,
    "UPDATE meta SET value = '7' WHERE key = 'format'",
)

#: The statements that take a format 8 experiment back to format 6's layout (no covariate or
#: denominator columns, no prefix sums of them, no guardrail sums of squares).
DOWNGRADE_TO_6 = (
    *(f"ALTER TABLE prefix DROP COLUMN {c}" for c in _PLUGIN_8),
    "ALTER TABLE units DROP COLUMN covariate", "ALTER TABLE units DROP COLUMN denominator",
    *(f"ALTER TABLE prefix DROP COLUMN {c}" for c in (
        "covariate", "covariate_sq", "covariate_reward", "denominator", "denominator_sq",
        "denominator_reward")),
    "ALTER TABLE prefix_metrics DROP COLUMN total_sq",
    *_EDGE_10,
    "UPDATE meta SET value = '6' WHERE key = 'format'",
)

#: The statements that take a format 8 experiment back to format 5's layout, as an older
#: banditkit wrote it (both dialects): no outcome window (``imputed``, the prefix tables, the
#: window's meta), no overflow (``kind``, ``propensity``, the live-slot index on algorithm units,
#: the ``overflow`` meta), no audit table.
DOWNGRADE_TO_5 = (
    "ALTER TABLE units DROP COLUMN covariate", "ALTER TABLE units DROP COLUMN denominator",
    "DROP TABLE prefix", "DROP TABLE prefix_metrics", "DROP INDEX units_arm",
    "ALTER TABLE units DROP COLUMN imputed", "DROP INDEX units_live_slot",
    "ALTER TABLE units DROP COLUMN kind", "ALTER TABLE units DROP COLUMN propensity",
    "DROP TABLE audit",
    "CREATE UNIQUE INDEX units_live_slot ON units(batch, slot) WHERE expired_at IS NULL",
    "DELETE FROM meta WHERE key IN ('outcome_window', 'missing', 'outcome_window_defaults', "
    "'overflow', 'create_warnings', 'overflow_drawn')",
    *_EDGE_10,
    "UPDATE meta SET value = '5' WHERE key = 'format'",
)


def vm_steps(exp: Any, call) -> int:
    """SQLite virtual-machine steps ``call()`` takes on ``exp``'s connection, in hundreds (a
    measure of work that does not depend on the machine's load)."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    exp._journal.conn.set_progress_handler(count, 100)
    try:
        call()
    finally:
        exp._journal.conn.set_progress_handler(None, 100)
    return steps[0]


def thompson_looks(means: np.ndarray, runs: int, seed: int, name: str, *, horizon: int,
                   draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every batch end of ``runs`` BatchedThompson runs (batches of 200, no control floor: it
    starves the worse arms) on Bernoulli arms of ``means``: per-arm counts and sums at each
    look, and the run of each look. Run r draws its rewards from ``stream(seed, name, r)`` and
    its ξ from ``stream(seed, name + "-xi", r)``."""
    from banditkit.live.problem import LiveArms
    from banditkit.registry import make_policy
    from banditkit.rng import stream

    K = means.size
    looks_n, looks_s, run_of = [], [], []
    for r in range(runs):
        noise = stream(seed, name, r)
        policy = make_policy("BatchedThompson", LiveArms(K, None, None),
                             stream(seed, f"{name}-xi", r), horizon=horizon, batch_size=200,
                             draws=draws)
        n, S = np.zeros(K), np.zeros(K)
        while (batch := policy.next_batch()) is not None:
            pulls = np.bincount(batch.arms, weights=batch.counts, minlength=K)
            got = noise.binomial(pulls.astype(np.int64), means).astype(float)
            policy.observe(batch, got[batch.arms])
            n, S = n + pulls, S + got
            looks_n.append(n)
            looks_s.append(S)
            run_of.append(r)
    return np.array(looks_n), np.array(looks_s), np.array(run_of)
