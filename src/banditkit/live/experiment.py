"""A live experiment: any registered algorithm driven by real traffic, durable across restarts.

An algorithm asks for a batch of pulls; :meth:`Experiment.assign` hands the batch's pulls out to
units (users, sessions) in pull order, and :meth:`Experiment.record` takes their rewards in any
order and in any number of calls. When every unit of the batch has a reward, the algorithm
observes the batch's run sums (:meth:`banditkit.Algorithm.observe`) and asks for the next one —
the same exchange as :func:`banditkit.simulate`, so an experiment fed the rewards a simulation
would have drawn makes the same decisions.

State lives in one SQLite file (:mod:`banditkit.live.journal`), written in one transaction per
call before the call returns. The algorithm itself is never pickled: :meth:`Experiment.open`
rebuilds it from its name, parameters and seed and replays the stored batches, checking that it
asks for exactly the batches it asked before. A process may die at any point (``kill -9``): the
file then holds every call that returned and nothing of the one that did not.

Units never answered: :meth:`Experiment.expire` withdraws them (explicitly, or all assigned more
than ``older_than`` seconds ago); their slots in the batch are offered again by the next
:meth:`~Experiment.assign`, so the algorithm still gets one reward per pull it asked for. A
reward recorded later for an expired unit is refused.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..intervals import student_interval, wilson_interval
from ..protocol import Algorithm, Batch
from ..registry import get_policy, make_policy
from ..rng import as_generator, stream
from .journal import ExperimentError, Journal
from .problem import LiveArms, arm_names

__all__ = ["Experiment", "ExperimentError", "ExperimentStatus"]

# SQLite's default limit on the variables of one statement is 999 (older builds): chunk lists.
_CHUNK = 900


def _next_batch(algorithm: Algorithm, name: str) -> Batch | None:
    """``algorithm.next_batch()``, with a failure of the algorithm on this experiment's arms
    (a design that cannot be computed, an LP the solver refuses) reported as one
    ExperimentError rather than a traceback from deep inside it."""
    try:
        return algorithm.next_batch()
    except (ArithmeticError, ValueError, RuntimeError, IndexError, np.linalg.LinAlgError
            ) as error:
        raise ExperimentError(f"algorithm {name!r} cannot choose its next batch on this "
                              f"experiment's arms ({type(error).__name__}: {error}); check the "
                              "features' scale and the parameters (if they are sound, this is "
                              "a banditkit bug: please report it)") from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class ExperimentStatus:
    """Where an experiment stands.

    Attributes
    ----------
    arms : pandas.DataFrame
        One row per arm (index: the arm's name): ``assigned`` units (expired ones excluded),
        ``recorded`` rewards, their ``mean`` and 95% interval ``low``/``high`` (Wilson for 0/1
        rewards, Student-t otherwise, clipped to the algorithm's reward range), and ``active``
        (``False`` once the algorithm eliminated the arm; missing for algorithms that keep no
        active set).
    algorithm : str
        Registered name of the algorithm.
    batches_observed : int
        Batches the algorithm has observed (its phases or epochs so far).
    pulls_observed : int
        Pulls (units with rewards) the algorithm has observed.
    waiting : int
        Pulls of the current batch still without a reward (assigned or not yet assigned).
    unassigned : int
        Pulls of the current batch not yet assigned to a unit.
    budget_left : int or None
        Horizon (or budget) minus the pulls observed; ``None`` without a horizon.
    finished : bool
        The algorithm asks for nothing more.
    recommendation : str or None
        The identified arm, for identifiers that have one.
    info : dict
        The algorithm's own facts (phases, eliminations...).
    """

    arms: pd.DataFrame
    algorithm: str
    batches_observed: int
    pulls_observed: int
    waiting: int
    unassigned: int
    budget_left: int | None
    finished: bool
    recommendation: str | None
    info: dict = field(default_factory=dict)

    def __str__(self) -> str:
        state = ("finished" if self.finished else
                 f"batch {self.batches_observed + 1}: {self.waiting} pull(s) waiting for a "
                 f"reward, {self.unassigned} not yet assigned")
        lines = [f"{self.algorithm}: {state}",
                 f"pulls observed: {self.pulls_observed}"
                 + ("" if self.budget_left is None else f", budget left: {self.budget_left}")]
        if self.recommendation is not None:
            lines.append(f"recommendation: {self.recommendation}")
        with pd.option_context("display.width", 120, "display.max_columns", 20):
            lines.append(self.arms.to_string(float_format=lambda v: f"{v:.4g}"))
        return "\n".join(lines)


class Experiment:
    """A durable ask/tell experiment over one registered algorithm (see the module docstring).

    Build one with :meth:`create` and reopen it with :meth:`open`; never call the constructor.
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        meta = journal.meta()
        try:
            self.algorithm_name: str = meta["algorithm"]
            self.params: dict[str, Any] = dict(meta["params"])
            self.seed: int = int(meta["seed"])
            self.horizon: int | None = meta["horizon"]
            self.order: str = meta["order"]
            self.arm_names: list[str] = list(meta["arms"])
            features = meta["features"]
            thresholds = meta["thresholds"]
        except (KeyError, TypeError, ValueError) as error:
            raise ExperimentError(f"{str(journal.path)!r} is damaged: its definition lacks "
                               f"{error}") from None
        self._problem = LiveArms(len(self.arm_names),
                                 None if features is None else np.asarray(features, float),
                                 None if thresholds is None else np.asarray(thresholds, float))
        self._algorithm: Algorithm | None = None
        self._observed = 0  # batches the in-memory algorithm has observed

    # -- creating and opening ----------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, *, algorithm: str, arms: Any, seed: int,
               horizon: int | None = None, params: Mapping[str, Any] | None = None,
               thresholds: Sequence[float] | None = None, order: str = "shuffled"
               ) -> Experiment:
        """Create a new experiment file at ``path``.

        Parameters
        ----------
        path : str or Path
            The SQLite file to create (it must not exist; its folder must).
        algorithm : str
            A registered algorithm (``banditkit audit --help`` lists them): K-armed policies
            take arm names; linear algorithms (RAGE, G-BAI, P1-RAGE, ...) take features.
        arms : list of str, 2-D array or DataFrame
            Arm names, or a feature matrix (one row per arm; a DataFrame's index names them).
            Names are stored as text: ``arms=[1, 2, 3]`` names the arms ``'1'``, ``'2'``,
            ``'3'`` (as ``status`` and ``assign`` show them).
        seed : int
            Seed of the algorithm's internal randomness ξ (as ``rng=seed`` would give it).
        horizon : int, optional
            T: the number of pulls of a regret policy, the budget of a fixed-budget identifier.
        params : mapping, optional
            The algorithm's parameters (JSON values), e.g. ``{"rho": 0.1}``.
        thresholds : sequence of float, optional
            Cost thresholds α of a constrained policy (its units then record m costs each).
        order : {"shuffled", "batch"}
            The order in which a batch's pulls go to units. ``"shuffled"`` (default): a random
            order, seeded by ``seed`` and the batch, so that whatever drifts during a batch
            (time of day, traffic source) does not line up with the arms, as a randomised
            A/B test requires. ``"batch"``: the algorithm's own pull order (a batched
            elimination asks for all pulls of arm 0, then of arm 1...). The algorithm sees the
            same run sums either way: a batch is observed once all its pulls have rewards.
        """
        from .. import __version__  # the package imports this module first

        _check_path(path)
        names, X = arm_names(arms)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ExperimentError(f"seed must be a non-negative integer, got {seed!r}")
        if horizon is not None and (isinstance(horizon, bool)
                                    or not isinstance(horizon, (int, np.integer))
                                    or horizon < 1):
            raise ExperimentError(f"horizon must be an integer >= 1, got {horizon!r}")
        if order not in ("shuffled", "batch"):
            raise ExperimentError(f"order must be 'shuffled' or 'batch', got {order!r}")
        params = dict(params or {})
        try:
            json.dumps(params, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ExperimentError(f"params must be JSON values (numbers, strings, lists) and "
                                  f"finite: {error}") from None
        if thresholds is not None:
            values = _numbers(thresholds)
            if (values is None or values.dtype.kind == "b" or values.ndim != 1
                    or values.size == 0 or not np.all((values >= 0) & (values <= 1))):
                raise ExperimentError(f"thresholds must be a non-empty list of numbers in "
                                      f"[0, 1], one per cost, got {thresholds!r}")
            thresholds = values.astype(float)
        meta = {"algorithm": algorithm, "params": params, "seed": int(seed),
                "horizon": None if horizon is None else int(horizon), "arms": names,
                "features": None if X is None else X.tolist(),
                "thresholds": None if thresholds is None else thresholds.tolist(),
                "order": order,
                "created": _now(), "banditkit": __version__}
        # build the algorithm and ask its first batch before writing anything, so that bad
        # input (or arms the algorithm cannot work with) creates no file
        first = cls._build(meta, LiveArms(len(names), X, thresholds))
        _next_batch(first, algorithm)
        if X is not None:
            try:  # features an algorithm never reads would be silently dropped: refuse them
                cls._build(meta, LiveArms(len(names), None, thresholds))
            except ExperimentError:
                pass
            else:
                raise ExperimentError(f"arms: {algorithm} takes arm names, not features (it "
                                      "would ignore them); pass a list of names")
        experiment = cls(Journal.create(path, meta))
        experiment._algorithm = first  # built from this meta, its first batch asked: reuse it
        return experiment

    @classmethod
    def open(cls, path: str | Path, readonly: bool = False) -> Experiment:
        """Open an existing experiment file (in this or any other process).

        Parameters
        ----------
        path : str or Path
            The experiment file.
        readonly : bool
            Open it for reading only (``status``, ``units``, ``decisions``): nothing is
            written, so a read-only file or folder can be read; ``assign``, ``record`` and
            ``expire`` are then refused.
        """
        _check_path(path)
        if not isinstance(readonly, bool):
            raise ExperimentError(f"readonly must be True or False, got {readonly!r}")
        experiment = cls(Journal.open(path, readonly=readonly))
        try:
            with experiment._transaction():
                pass  # replays the stored batches now, so a damaged file is refused at once
            if not readonly:
                experiment._journal.make_durable()  # writes: only once the file is accepted
        except BaseException:
            experiment.close()
            raise
        return experiment

    @staticmethod
    def _build(meta: Mapping[str, Any], problem: LiveArms) -> Algorithm:
        name = meta["algorithm"]
        try:
            get_policy(name)
            algorithm = make_policy(name, problem, as_generator(int(meta["seed"])),
                                    horizon=meta["horizon"], **meta["params"])
        except (ValueError, TypeError) as error:
            hint = (" (a linear algorithm: pass the arms as a feature matrix, one row per arm)"
                    if problem.X is None and "linear environment" in str(error) else "")
            raise ExperimentError(f"algorithm {name!r}: {error}{hint}") from None
        if algorithm.n_costs != problem.n_costs:
            raise ExperimentError(f"algorithm {name!r} records {algorithm.n_costs} cost(s) per "
                                  f"unit but {problem.n_costs} threshold(s) were given")
        return algorithm

    def close(self) -> None:
        self._journal.close()

    def __enter__(self) -> Experiment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self._journal.path

    @property
    def readonly(self) -> bool:
        """Opened with ``readonly=True``: it reads, and refuses every call that writes."""
        return self._journal.readonly

    def _check_writable(self, call: str) -> None:
        if self._journal.readonly:
            raise ExperimentError(f"{call} writes to the experiment, which was opened "
                                  "read-only (Experiment.open(path, readonly=True)); open it "
                                  "with readonly=False to write")

    # -- one transaction per call, with the algorithm brought up to date -----------------------
    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._journal.check_still_there()
        try:
            with self._journal.transaction() as conn:
                self._sync(conn)
                yield conn
        except BaseException as error:
            # the in-memory algorithm may be ahead of the rolled-back file: rebuild it next time
            self._algorithm = None
            if isinstance(error, sqlite3.DatabaseError):
                raise ExperimentError(f"{str(self.path)!r} cannot be read or written "
                                      f"({error})") from None
            raise

    def _sync(self, conn: sqlite3.Connection) -> None:
        """Bring the in-memory algorithm to the file's state: replay the batches observed since
        (by another process, or all of them after open) and check the pending one."""
        if self._algorithm is None:
            self._algorithm = self._build(self._journal_meta(), self._problem)
            self._observed = 0
        rows = conn.execute("SELECT id, arms, counts, reward_sums, cost_sums "
                            "FROM batches WHERE id >= ? ORDER BY id", (self._observed,))
        for batch_id, arms, counts, reward_sums, cost_sums in rows:
            asked = self._ask()
            try:
                stored = Batch(np.asarray(json.loads(arms), np.int64),
                               np.asarray(json.loads(counts), np.int64))
            except (ValueError, TypeError) as error:  # JSONDecodeError is a ValueError
                self._algorithm = None
                raise ExperimentError(f"{str(self.path)!r} is damaged: stored batch {batch_id} "
                                      f"cannot be read ({error})") from None
            if (batch_id != self._observed or asked is None
                    or not np.array_equal(asked.arms, stored.arms)
                    or not np.array_equal(asked.counts, stored.counts)):
                self._algorithm = None
                raise ExperimentError(
                    f"{str(self.path)!r}: replaying the experiment, {self.algorithm_name} asks "
                    f"for other pulls than stored batch {batch_id} (the file was edited, or "
                    "written by a banditkit whose algorithm differs); refusing to go on")
            if reward_sums is None:
                break  # the pending batch
            try:
                costs = (None if cost_sums is None
                         else np.asarray(json.loads(cost_sums), float))
                self._algorithm.observe(asked, np.asarray(json.loads(reward_sums), float),
                                        costs)
            except (ValueError, TypeError) as error:
                self._algorithm = None
                raise ExperimentError(f"{str(self.path)!r} is damaged: the stored outcome of "
                                      f"batch {batch_id} is refused ({error})") from None
            self._observed += 1

    def _ask(self) -> Batch | None:
        """The algorithm's pending batch, cut to the horizon as :func:`banditkit.simulate` cuts
        it (an identifier given a horizon stops there; its last batch is then a prefix, which
        ends its run), or ``None`` once it has stopped or spent the horizon."""
        assert self._algorithm is not None
        batch = _next_batch(self._algorithm, self.algorithm_name)
        if batch is None or self.horizon is None:
            return batch
        left = self.horizon - self._algorithm.t
        if left <= 0:
            return None
        return batch.truncated(left) if batch.n_pulls > left else batch

    def _journal_meta(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm_name, "params": self.params, "seed": self.seed,
                "horizon": self.horizon}

    def _pending(self, conn: sqlite3.Connection) -> tuple[int, Batch] | None:
        """The batch waiting for rewards (asked now and stored if new), or ``None`` once the
        algorithm has stopped."""
        batch = self._ask()
        if batch is None:
            return None
        batch_id = self._observed
        exists = conn.execute("SELECT 1 FROM batches WHERE id = ?", (batch_id,)).fetchone()
        if not exists:
            conn.execute(
                "INSERT INTO batches (id, arms, counts, strategy, n_pulls, asked_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (batch_id, json.dumps(batch.arms.tolist()), json.dumps(batch.counts.tolist()),
                 None if batch.strategy is None else json.dumps(batch.strategy.tolist()),
                 batch.n_pulls, _now()))
        return batch_id, batch

    # -- the exchange ------------------------------------------------------------------------
    def assign(self, n: int) -> pd.DataFrame:
        """Arms for the next ``n`` units, in the algorithm's pull order, with their unit ids.

        Fewer than ``n`` rows come back when the current batch has fewer pulls left to hand
        out (the algorithm needs its rewards before it can ask for more: a fully sequential
        policy such as UCB1 hands out one unit at a time), and none once it has stopped.
        Slots of expired units are handed out again first. The assignment is on disk before
        this returns.

        Returns
        -------
        DataFrame with columns ``unit`` (int id), ``arm`` (name), ``arm_index``, ``batch``.
        """
        self._check_writable("assign")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ExperimentError(f"n must be an integer >= 1, got {n!r}")
        with self._transaction() as conn:
            pending = self._pending(conn)
            if pending is None:
                return _units_frame([], [], [], self.arm_names)
            batch_id, batch = pending
            reoffer = [r[0] for r in conn.execute(
                "SELECT DISTINCT slot FROM units u WHERE batch = ? AND expired_at IS NOT NULL "
                "AND NOT EXISTS (SELECT 1 FROM units v WHERE v.batch = u.batch AND "
                "v.slot = u.slot AND v.expired_at IS NULL) ORDER BY slot", (batch_id,))]
            (handed,) = conn.execute("SELECT COUNT(DISTINCT slot) FROM units WHERE batch = ?",
                                     (batch_id,)).fetchone()
            n = min(int(n), batch.n_pulls)  # Python ints: no overflow of a numpy n near 2**64
            slots = np.asarray(reoffer[:n], dtype=np.int64)
            fresh = self._slot_order(batch_id, batch.n_pulls)[
                handed: min(batch.n_pulls, handed + n - slots.size)]
            slots = np.concatenate([slots, fresh]).astype(np.int64)
            arms = batch.arms[np.searchsorted(np.cumsum(batch.counts), slots, side="right")]
            now = _now()
            conn.executemany("INSERT INTO units (batch, slot, arm, assigned_at) "
                             "VALUES (?, ?, ?, ?)",
                             [(batch_id, int(s), int(a), now)
                              for s, a in zip(slots, arms, strict=True)])
            # the write lock is held, so the new ids are consecutive and end at the last one
            (last,) = conn.execute("SELECT last_insert_rowid()").fetchone()
            ids = list(range(last - slots.size + 1, last + 1)) if slots.size else []
        return _units_frame(ids, arms.tolist(), [batch_id] * len(ids), self.arm_names)

    def _slot_order(self, batch_id: int, n_pulls: int) -> np.ndarray:
        """The order in which the slots of a batch are handed out: the algorithm's pull order,
        or (``order="shuffled"``) a permutation drawn from a stream of its own keyed by the
        seed and the batch, so reopening the file hands out the same order."""
        if self.order == "batch":
            return np.arange(n_pulls)
        return stream(self.seed, "live-order", batch_id).permutation(n_pulls)

    def record(self, units: Sequence[int], rewards: Sequence[float],
               costs: Sequence[Sequence[float]] | None = None) -> int:
        """Record the rewards (and costs: shape (units, m)) of assigned units.

        All or nothing: a call with any unit the experiment refuses records none. A unit
        already recorded with the same values is skipped (a retried call counts nothing
        twice); with other values it is refused. When the units complete the current batch,
        the algorithm observes it before this returns.

        Returns
        -------
        int
            Units newly recorded.
        """
        self._check_writable("record")
        ids = _as_ids(units)
        values = _numbers(rewards)
        if values is None or values.ndim != 1 or values.size != ids.size:
            got = (f"shape {values.shape}" if values is not None
                   else "something that is not a list of numbers")
            raise ExperimentError(f"rewards must be numbers (true/false read as 1/0), one per "
                                  f"unit ({ids.size}), got {got}")
        values = values.astype(float)
        if not np.isfinite(values).all():
            i = int(np.flatnonzero(~np.isfinite(values))[0])
            raise ExperimentError(f"rewards must be finite: unit {int(ids[i])} got {values[i]}")
        cost_values = self._check_costs(costs, ids)
        with self._transaction() as conn:
            algorithm = self._algorithm
            assert algorithm is not None
            self._check_range(ids, values, algorithm.reward_range, "reward")
            if cost_values is not None:
                for j in range(cost_values.shape[1]):
                    self._check_range(ids, cost_values[:, j], algorithm.cost_range, "cost")
            known = self._units(conn, ids)
            new = []
            for i, unit in enumerate(ids.tolist()):
                row = known.get(unit)
                if row is None:
                    raise ExperimentError(f"units: unit {unit} was never assigned")
                _, _, reward, stored_costs, expired_at = row
                if expired_at is not None:
                    raise ExperimentError(f"units: unit {unit} expired at {expired_at} (its "
                                          "slot was offered to another unit); its reward "
                                          "cannot be recorded")
                unit_costs = None if cost_values is None else cost_values[i].tolist()
                if reward is not None:
                    if reward != values[i]:
                        raise ExperimentError(f"units: unit {unit} already has reward {reward} "
                                              f"(got {values[i]}); a reward is recorded once")
                    if stored_costs is not None and json.loads(stored_costs) != unit_costs:
                        raise ExperimentError(f"units: unit {unit} already has costs "
                                              f"{json.loads(stored_costs)} (got {unit_costs}); "
                                              "costs are recorded once")
                    continue
                new.append((float(values[i]), None if unit_costs is None
                            else json.dumps(unit_costs), unit))
            now = _now()
            conn.executemany("UPDATE units SET reward = ?, costs = ?, recorded_at = ? "
                             "WHERE id = ?", [(r, c, now, u) for r, c, u in new])
            self._observe_if_complete(conn)
        return len(new)

    def _check_costs(self, costs: Any, ids: np.ndarray) -> np.ndarray | None:
        m = self._problem.n_costs
        if costs is None:
            if m:
                raise ExperimentError(f"costs are required: {self.algorithm_name} records "
                                      f"{m} cost(s) per unit")
            return None
        if not m:
            raise ExperimentError(f"costs: {self.algorithm_name} records no costs (the "
                                  "experiment was created without thresholds)")
        values = _numbers(costs)
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
        return values

    @staticmethod
    def _check_range(ids: np.ndarray, values: np.ndarray,
                     bounds: tuple[float, float] | None, what: str) -> None:
        if bounds is None:
            return
        low, high = bounds
        bad = np.flatnonzero((values < low) | (values > high))
        if bad.size:
            i = int(bad[0])
            raise ExperimentError(f"{what}s must lie in [{low:g}, {high:g}] for this algorithm: "
                                  f"unit {int(ids[i])} got {values[i]:g}")

    @staticmethod
    def _units(conn: sqlite3.Connection, ids: np.ndarray) -> dict[int, tuple]:
        found: dict[int, tuple] = {}
        for start in range(0, ids.size, _CHUNK):
            chunk = ids[start: start + _CHUNK].tolist()
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(f"SELECT id, batch, slot, reward, costs, expired_at FROM "
                                    f"units WHERE id IN ({marks})", chunk):
                found[row[0]] = row[1:]
        return found

    def _observe_if_complete(self, conn: sqlite3.Connection) -> None:
        pending = self._pending(conn)
        if pending is None:
            return
        batch_id, batch = pending
        rows = conn.execute("SELECT slot, reward, costs FROM units WHERE batch = ? AND "
                            "expired_at IS NULL AND reward IS NOT NULL ORDER BY slot",
                            (batch_id,)).fetchall()
        if len(rows) < batch.n_pulls:
            return
        per_pull = np.array([r[1] for r in rows], dtype=float)
        reward_sums = batch.sum_runs(per_pull)
        cost_sums = None
        if self._problem.n_costs:
            cost_sums = batch.sum_runs(np.array([json.loads(r[2]) for r in rows], dtype=float))
        assert self._algorithm is not None
        self._algorithm.observe(batch, reward_sums, cost_sums)
        self._observed += 1
        conn.execute("UPDATE batches SET reward_sums = ?, cost_sums = ?, observed_at = ? "
                     "WHERE id = ?",
                     (json.dumps(reward_sums.tolist()),
                      None if cost_sums is None else json.dumps(cost_sums.tolist()), _now(),
                      batch_id))

    def expire(self, units: Sequence[int] | None = None, *, older_than: float | None = None
               ) -> int:
        """Withdraw units that will never be answered; their slots are handed out again.

        Parameters
        ----------
        units : sequence of int, optional
            These units (each assigned and without a reward).
        older_than : float, optional
            Or every unanswered unit assigned more than this many seconds ago.

        Returns
        -------
        int
            Units expired.
        """
        self._check_writable("expire")
        if (units is None) == (older_than is None):
            raise ExperimentError("expire needs exactly one of units= or older_than=")
        with self._transaction() as conn:
            now = _now()
            if units is not None:
                ids = _as_ids(units)
                known = self._units(conn, ids)
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
                return len(todo)
            if (isinstance(older_than, bool)
                    or not isinstance(older_than, (int, float, np.integer, np.floating))
                    or not np.isfinite(older_than) or older_than < 0):
                raise ExperimentError(f"older_than must be a number of seconds >= 0, got "
                                      f"{older_than!r}")
            now_s = time.time()  # older than the epoch means every unit: cut the cutoff there
            cutoff = datetime.fromtimestamp(now_s - min(float(older_than), now_s), UTC)
            cur = conn.execute("UPDATE units SET expired_at = ? WHERE reward IS NULL AND "
                               "expired_at IS NULL AND assigned_at < ?",
                               (now, cutoff.isoformat(timespec="microseconds")))
            return cur.rowcount

    # -- what it knows -------------------------------------------------------------------------
    def status(self) -> ExperimentStatus:
        """Per-arm counts, means and intervals, and where the algorithm stands."""
        with self._transaction() as conn:
            algorithm = self._algorithm
            assert algorithm is not None
            pending = self._ask()
            rows = conn.execute(
                "SELECT arm, COUNT(*), COUNT(reward), TOTAL(reward), TOTAL(reward * reward), "
                "TOTAL(reward <> 0 AND reward <> 1) FROM units WHERE expired_at IS NULL "
                "GROUP BY arm").fetchall()
            waiting = unassigned = 0
            if pending is not None:
                (answered,) = conn.execute(
                    "SELECT COUNT(*) FROM units WHERE batch = ? AND expired_at IS NULL AND "
                    "reward IS NOT NULL", (self._observed,)).fetchone()
                (live,) = conn.execute(
                    "SELECT COUNT(*) FROM units WHERE batch = ? AND expired_at IS NULL",
                    (self._observed,)).fetchone()
                waiting, unassigned = pending.n_pulls - answered, pending.n_pulls - live
            frame = self._arm_table(rows, algorithm)
            m = self._problem.n_costs
            if m:  # mean of each cost per arm (units store their costs as a JSON list)
                sums = ", ".join(f"TOTAL(json_extract(costs, '$[{i}]'))" for i in range(m))
                cost_means = np.full((len(self.arm_names), m), np.nan)
                for arm, n, *totals in conn.execute(
                        f"SELECT arm, COUNT(costs), {sums} FROM units WHERE expired_at IS NULL "
                        "AND costs IS NOT NULL GROUP BY arm"):
                    self._check_arm_index(arm)
                    cost_means[arm] = np.asarray(totals, dtype=float) / n
                for i in range(m):
                    frame[f"cost_{i + 1}"] = cost_means[:, i]
            recommendation = algorithm.recommendation
            return ExperimentStatus(
                arms=frame, algorithm=self.algorithm_name, batches_observed=self._observed,
                pulls_observed=algorithm.t, waiting=waiting, unassigned=unassigned,
                budget_left=None if self.horizon is None else self.horizon - algorithm.t,
                finished=pending is None,
                recommendation=None if recommendation is None
                else self.arm_names[int(recommendation)],
                info=dict(algorithm.info))

    def _arm_table(self, rows: list[tuple], algorithm: Algorithm) -> pd.DataFrame:
        """Per-arm counts, means and intervals from SQL aggregates (count, sum, sum of squares,
        and whether any reward is other than 0/1): O(K) Python work however many units."""
        K = len(self.arm_names)
        table = np.zeros((K, 2), dtype=np.int64)
        stats = np.full((K, 3), np.nan)
        bounds = algorithm.reward_range
        for arm, assigned, n, total, total_sq, non_binary in rows:
            self._check_arm_index(arm)
            table[arm] = assigned, n
            if not n:
                continue
            mean = total / n
            if non_binary == 0:  # every reward 0 or 1: a proportion
                low, high = wilson_interval(round(total), n)
            else:
                var = max(total_sq - n * mean * mean, 0.0) / (n - 1) if n > 1 else np.nan
                _, _, low, high = student_interval(n, mean, float(np.sqrt(var)))
                if bounds is not None and n > 1:
                    low, high = max(low, bounds[0]), min(high, bounds[1])
            stats[arm] = mean, low, high
        frame = pd.DataFrame({"assigned": table[:, 0], "recorded": table[:, 1],
                              "mean": stats[:, 0], "low": stats[:, 1], "high": stats[:, 2]},
                             index=pd.Index(self.arm_names, name="arm"))
        active = getattr(algorithm, "active", None)
        if active is not None:
            flags = np.zeros(K, dtype=bool)
            flags[np.asarray(active, dtype=np.int64)] = True
            frame["active"] = flags
        return frame

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
        ``expired_at``, one row per unit in id order.
        """
        if not isinstance(unanswered, bool):
            raise ExperimentError(f"unanswered must be True or False, got {unanswered!r}")
        wanted = None if ids is None else _as_ids(ids, allow_empty=True)
        where = " AND reward IS NULL AND expired_at IS NULL" if unanswered else ""
        columns = ("id AS unit, batch, slot, arm AS arm_index, reward, costs, assigned_at, "
                   "recorded_at, expired_at")
        with self._transaction() as conn:
            try:
                if wanted is None:
                    frame = pd.read_sql_query(f"SELECT {columns} FROM units WHERE 1{where} "
                                              "ORDER BY id", conn)
                else:  # by primary key, in chunks: O(len(ids)) whatever the experiment holds
                    parts = [pd.read_sql_query(
                        f"SELECT {columns} FROM units WHERE id IN "
                        f"({','.join('?' * len(chunk))}){where}", conn, params=chunk)
                        for chunk in (wanted[i: i + _CHUNK].tolist()
                                      for i in range(0, max(wanted.size, 1), _CHUNK))]
                    frame = pd.concat(parts, ignore_index=True).sort_values(
                        "unit", ignore_index=True)
            except pd.errors.DatabaseError as error:
                raise ExperimentError(f"{str(self.path)!r} cannot be read ({error})") from None
        for a in frame["arm_index"].unique():
            self._check_arm_index(a)
        frame.insert(3, "arm", [self.arm_names[a] for a in frame["arm_index"]])
        return frame

    def _check_arm_index(self, arm: object) -> None:
        """Refuse a stored unit whose arm is not one of the experiment's (a damaged or edited
        file), instead of an IndexError or a silent count for arm −1."""
        if (isinstance(arm, (bool, np.bool_)) or not isinstance(arm, (int, np.integer))
                or not 0 <= int(arm) < len(self.arm_names)):
            raise ExperimentError(f"{str(self.path)!r} is damaged: a unit's arm is {arm!r}, not "
                                  f"one of the {len(self.arm_names)} arms")

    def decisions(self) -> Any:
        """The algorithm's decision log so far (:class:`banditkit.DecisionLog`): the same
        object a simulation's :class:`banditkit.Trial` carries, for comparing the two."""
        with self._transaction():
            assert self._algorithm is not None
            return self._algorithm.decisions


def _numbers(values: Any) -> np.ndarray | None:
    """``values`` as an array of real numbers (booleans read as 0/1), or ``None`` when they are
    not (text, None, ragged lists...)."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "biuf":
        return None
    return arr


def _check_path(path: object) -> None:
    """Refuse a path that is not a file name (None, a number...) in one message, rather than
    the TypeError ``Path(path)`` raises."""
    if not isinstance(path, (str, Path)) or not str(path).strip():
        raise ExperimentError(f"path must be a file name (str or pathlib.Path), got "
                              f"{_brief(path)}")


def _brief(value: object) -> str:
    """What was given, in a few words: its type, and its value only when that is short (a
    Series or a long list would dump itself into the message)."""
    text = repr(value)
    kind = type(value).__name__
    size = getattr(value, "size", None) if hasattr(value, "shape") else (
        len(value) if isinstance(value, (list, tuple)) else None)
    dtype = getattr(value, "dtype", None)
    if len(text) <= 40 and "\n" not in text:
        return text if size is None else f"{kind} {text}"
    details = ", ".join(d for d in (None if size is None else f"{size} values",
                                    None if dtype is None else f"dtype {dtype}") if d)
    return f"a {kind}" + (f" ({details})" if details else "")


def _as_ids(units: Any, allow_empty: bool = False) -> np.ndarray:
    try:
        arr = np.asarray(units) if units is not None else np.empty(0)
    except (TypeError, ValueError):
        arr = np.empty(0)
    if arr.size == 0 and allow_empty and units is not None and arr.ndim == 1:
        return arr.astype(np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.size == 0:
        raise ExperimentError(f"units must be a non-empty list of unit ids (integers), got "
                              f"{_brief(units)}")
    if arr.dtype.kind == "u" and int(arr.max()) > np.iinfo(np.int64).max:
        raise ExperimentError(f"units: {int(arr.max())} is not a unit id (ids are below 2**63)")
    if np.unique(arr).size != arr.size:
        raise ExperimentError("units: each unit may appear once per call")
    return arr.astype(np.int64)


def _units_frame(ids: list[int], arms: list[int], batches: list[int], names: list[str]
                 ) -> pd.DataFrame:
    return pd.DataFrame({"unit": pd.Series(ids, dtype="int64"),
                         "arm": pd.Series([names[a] for a in arms], dtype="object"),
                         "arm_index": pd.Series(arms, dtype="int64"),
                         "batch": pd.Series(batches, dtype="int64")})
