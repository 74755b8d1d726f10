"""The journal part of a live experiment: the algorithm, rebuilt in memory from its name,
parameters and seed (never pickled) and brought to the store's state on every call.

:meth:`Journal.sync` replays the batches observed since the last call (by another process, or
all of them after open), checking that the algorithm asks for exactly the batches it asked
before (a digest per batch, the runs themselves once per batch and process);
:meth:`Journal.pending` asks the next batch and stores it; :meth:`Journal.observe_if_complete`
lets the algorithm observe the pending batch once every pull has a reward. The part owns the
in-memory algorithm and what it knows of the store (batches observed, the pending batch
checked, its run ends); the coordinator (:class:`banditkit.Experiment`) calls it inside the
call's transaction and tells it when a transaction rolled back (:meth:`Journal.snapshot`,
:meth:`Journal.rolled_back`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np

from ...protocol import Algorithm, Batch, IIDBatch
from ...registry import get_policy, make_policy
from ...rng import as_generator
from ..definition import Definition, LiveClock
from ..errors import ExperimentError
from ..problem import LiveArms
from ..store import Connection, Store
from ..store import reads as _reads
from ..store.codec import pack_draws, pack_runs, unpack_draws, unpack_runs
from .slots import slot_order

__all__ = ["Journal", "build_algorithm", "next_batch"]


def next_batch(algorithm: Algorithm, name: str) -> Batch | None:
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


def build_algorithm(meta: Mapping[str, Any], problem: LiveArms) -> Algorithm:
    """The registered algorithm ``meta`` names, built on ``problem`` from its parameters and
    seed (ξ), as every process rebuilds it; bad parameters are one ExperimentError."""
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


class Journal:
    """The algorithm of one experiment and its replay (see the module docstring)."""

    def __init__(self, definition: Definition, store: Store, clock: LiveClock) -> None:
        self._def = definition
        self._store = store
        self._clock = clock
        self._algorithm: Algorithm | None = None
        self._observed = 0  # batches the in-memory algorithm has observed
        # (batch id, digest) of the pending batch once compared with the algorithm's, and its
        # cumulative run ends: later calls compare the digest only and find arms in O(log runs)
        self._checked: tuple[int, str] | None = None
        self._ends: tuple[int, np.ndarray] | None = None
        self._stored_now: int | None = None

    # -- what the other parts read --------------------------------------------------------------
    @property
    def algorithm(self) -> Algorithm | None:
        """The in-memory algorithm (``None`` until the first call's :meth:`sync`)."""
        return self._algorithm

    @property
    def observed(self) -> int:
        """Batches the algorithm has observed: the pending batch's id."""
        return self._observed

    @property
    def stored_now(self) -> int | None:
        """The batch the running call stored (:meth:`pending`), if any."""
        return self._stored_now

    @property
    def reward_range(self) -> tuple[float, float] | None:
        """The algorithm's reward range (``None`` before it is built, or when it has none)."""
        return None if self._algorithm is None else self._algorithm.reward_range

    # -- the call's life -----------------------------------------------------------------------
    def adopt(self, algorithm: Algorithm) -> None:
        """Use ``algorithm`` (built from this definition, its first batch asked, nothing
        observed) instead of building it again: create's."""
        self._algorithm, self._observed = algorithm, 0
        self._checked = self._ends = None

    def begin_call(self) -> None:
        self._stored_now = None

    def snapshot(self) -> tuple[Any, ...]:
        """What :meth:`rolled_back` needs: the state before a transaction."""
        return self._algorithm, self._observed, self._checked

    def rolled_back(self, snapshot: tuple[Any, ...], error: BaseException) -> None:
        """The store rolled the call back; the in-memory algorithm may be ahead of it.

        A call refused by the library's own checks (an ExperimentError: a unit never assigned,
        a reward out of range) that observed no batch keeps the algorithm: its state is the
        store's as of the last commit, so the next call need not rebuild and replay it all
        (every such 400 of the service cost a full replay). Only the stored-batch check is
        taken back to where it was (a batch this call stored is rolled back with it). Any other
        failure drops the algorithm: the next call rebuilds it and checks the stored batches
        again."""
        algorithm, observed, checked = snapshot
        if (type(error) is ExperimentError and algorithm is not None
                and self._algorithm is algorithm and self._observed == observed):
            self._checked, self._ends = checked, None
        else:
            self._algorithm = None
            self._checked = self._ends = None

    # -- replay --------------------------------------------------------------------------------
    def sync(self, conn: Connection) -> None:
        """Bring the in-memory algorithm to the store's state: replay the batches observed
        since (by another process, or all of them after open) and check the pending one."""
        if self._algorithm is None:
            self._algorithm = build_algorithm(self._def.replay_meta(), self._def.problem)
            self._observed = 0
            self._checked = self._ends = None
        rows = conn.execute(*_reads.batches(self._observed)).fetchall()
        for batch_id, digest, reward_sums, cost_sums in rows:
            asked = self.ask()
            if batch_id != self._observed or asked is None:
                self._mismatch(batch_id)
            self._check_stored(conn, batch_id, digest, asked)
            if reward_sums is None:
                break  # the pending batch
            self._replay(conn, batch_id, asked, reward_sums, cost_sums)
            self._observed += 1

    def _check_stored(self, conn: Connection, batch_id: int, digest: str, asked: Batch
                      ) -> None:
        """The stored batch ``batch_id`` against the one the algorithm asks: an i.i.d. batch's
        description (O(arms)), or once per batch and process the stored runs (O(runs) in C);
        later calls compare the digest alone."""
        if self._checked == (batch_id, digest):
            return
        if isinstance(asked, IIDBatch):
            row = conn.execute("SELECT cdf, state, n_pulls FROM draws WHERE batch = ?",
                               (batch_id,)).fetchone()
            try:
                stored_draws = unpack_draws(*(row if row is not None else (None,) * 3))
            except ValueError as error:
                self._damaged(f"stored batch {batch_id} cannot be read ({error})")
            if not (pack_draws(stored_draws)[2] == pack_draws(asked)[2] == digest):
                self._mismatch(batch_id)
        else:
            row = conn.execute("SELECT arms, counts FROM runs WHERE batch = ?",
                               (batch_id,)).fetchone()
            arms, counts = row if row is not None else (None, None)
            try:
                stored = unpack_runs(arms, counts)
            except ValueError as error:
                self._damaged(f"stored batch {batch_id} cannot be read ({error})")
            if (not np.array_equal(asked.arms, stored[0])
                    or not np.array_equal(asked.counts, stored[1])
                    or digest != pack_runs(asked.arms, asked.counts)[2]):
                self._mismatch(batch_id)
        self._checked = (batch_id, digest)

    def _replay(self, conn: Connection, batch_id: int, asked: Batch, reward_sums: str,
                cost_sums: str | None) -> None:
        """Let the algorithm observe stored batch ``batch_id``'s sums, checked against the
        running totals of its units."""
        assert self._algorithm is not None
        try:
            costs = None if cost_sums is None else np.asarray(json.loads(cost_sums), float)
            sums = np.asarray(json.loads(reward_sums), float)
            pulls = self._check_totals(conn, batch_id, asked, sums)
            if isinstance(asked, IIDBatch):
                self._algorithm.observe_arm_sums(asked, sums, pulls)
            else:
                self._algorithm.observe(asked, sums, costs)
        except (ValueError, TypeError) as error:
            self._damaged(f"the stored outcome of batch {batch_id} is refused ({error})")

    def _damaged(self, what: str) -> NoReturn:
        self._algorithm = None
        raise ExperimentError(f"{self._def.label} is damaged: {what}") from None

    def _mismatch(self, batch_id: int) -> NoReturn:
        self._algorithm = None
        raise ExperimentError(
            f"{self._def.label}: replaying the experiment, {self._def.algorithm_name} asks "
            f"for other pulls than stored batch {batch_id} (the file was edited, or "
            "written by a banditkit whose algorithm differs); refusing to go on")

    def _check_totals(self, conn: Connection, batch_id: int, batch: Batch,
                      sums: np.ndarray) -> np.ndarray:
        """Refuse an observed batch whose stored run sums disagree with the running totals of
        its units (an edit of ``batches.reward_sums`` or of ``totals``): O(arms). An i.i.d.
        batch stores per-arm sums, and its pulls per arm are the totals' (its runs are never
        computed): they must add up to its size. Returns the pulls per arm."""
        K = self._def.n_arms
        lazy = isinstance(batch, IIDBatch)
        if sums.shape != ((K,) if lazy else (batch.n_runs,)):
            raise ValueError(f"{sums.size} sums for {K if lazy else batch.n_runs} "
                             f"{'arms' if lazy else 'runs'}")
        expected = sums if lazy else batch.arm_sums(sums, K)
        pulls = None if lazy else batch.allocation(K)
        got, got_sq = np.zeros(K), np.zeros(K)
        counted = np.zeros(K, dtype=np.int64)
        for arm, recorded, total, total_sq in conn.execute(
                "SELECT arm, recorded, reward, reward_sq FROM totals WHERE batch = ?",
                (batch_id,)):
            self._def.check_arm(arm)
            got[arm], got_sq[arm], counted[arm] = total, total_sq, recorded
        if pulls is None:  # an i.i.d. batch: its pulls per arm are what its units recorded
            pulls = counted
            if int(counted.sum()) != batch.n_pulls:
                raise ValueError(f"its units recorded {int(counted.sum())} rewards for its "
                                 f"{batch.n_pulls} pulls: the file was edited by hand")
        # sums in another order differ by up to n·eps·Σ|x| ≤ n·eps·√(n·Σx²): large rewards
        # (revenue, an outlier) need a slack relative to them, not only 1e-9 per pull
        slack = 1e-9 * np.maximum(pulls, 1) * (1 + np.sqrt(np.maximum(pulls, 1) * got_sq) * 1e-4)
        if not np.array_equal(counted, pulls) or np.any(np.abs(got - expected) > slack):
            raise ValueError("its run sums do not match the rewards recorded for its units "
                             "(the totals kept with them): the file was edited by hand")
        return pulls

    # -- the pending batch ---------------------------------------------------------------------
    def ask(self) -> Batch | None:
        """The algorithm's pending batch, cut to the horizon as :func:`banditkit.simulate` cuts
        it (an identifier given a horizon stops there; its last batch is then a prefix, which
        ends its run), or ``None`` once it has stopped or spent the horizon."""
        assert self._algorithm is not None
        batch = next_batch(self._algorithm, self._def.algorithm_name)
        horizon = self._def.horizon
        if batch is None or horizon is None:
            return batch
        left = horizon - self._algorithm.t
        if left <= 0:
            return None
        return batch.truncated(left) if batch.n_pulls > left else batch

    def pending(self, conn: Connection) -> tuple[int, Batch] | None:
        """The batch waiting for rewards (asked now and stored if new), or ``None`` once the
        algorithm has stopped."""
        batch = self.ask()
        if batch is None:
            return None
        batch_id = self._observed
        if self._checked is None or self._checked[0] != batch_id:  # not stored yet
            lazy = isinstance(batch, IIDBatch)
            if lazy:  # its description, O(arms), never its runs
                cdf, state, digest = pack_draws(batch)
            else:
                arms, counts, digest = pack_runs(batch.arms, batch.counts)
            conn.execute(
                "INSERT INTO batches (id, digest, strategy, n_pulls, asked_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (batch_id, digest,
                 None if batch.strategy is None else json.dumps(batch.strategy.tolist()),
                 batch.n_pulls, self._clock.stamp()))
            if lazy:
                conn.execute("INSERT INTO draws (batch, cdf, state, n_pulls) VALUES "
                             "(?, ?, ?, ?)", (batch_id, cdf, state, batch.n_pulls))
            else:
                conn.execute("INSERT INTO runs (batch, arms, counts) VALUES (?, ?, ?)",
                             (batch_id, arms, counts))
            self._checked = (batch_id, digest)
            self._stored_now = batch_id
        return batch_id, batch

    def slot_order(self, batch_id: int, n_pulls: int, start: int = 0,
                   count: int | None = None) -> np.ndarray:
        """Slots ``start .. start + count − 1`` of the order in which the slots of a batch are
        handed out: the algorithm's pull order, or (``order="shuffled"``) a keyed random
        permutation evaluated at those positions only (:func:`.slots.slot_order`), the same
        whatever the sizes of the calls and in any process."""
        count = n_pulls - start if count is None else count
        if self._def.order == "batch":
            return np.arange(start, start + count, dtype=np.int64)
        return slot_order(self._def.seed, batch_id, n_pulls, start, count)

    def arms_at(self, batch_id: int, batch: Batch, slots: np.ndarray) -> np.ndarray:
        """The arms of the pending batch's ``slots`` (its run ends computed once)."""
        if self._ends is None or self._ends[0] != batch_id:
            self._ends = (batch_id, np.cumsum(batch.counts))
        return batch.arms[np.searchsorted(self._ends[1], slots, side="right")]

    def finished_reason(self) -> str:
        """One line: why the algorithm asks for nothing more."""
        algorithm = self._algorithm
        assert algorithm is not None
        horizon = self._def.horizon
        if horizon is not None and algorithm.t >= horizon:
            return (f"the experiment is finished: its horizon of {horizon} pulls is "
                    "spent; no more units are assigned")
        return (f"the experiment is finished: {self._def.algorithm_name} asks for no more "
                "pulls (see status for its decision)")

    # -- observing -----------------------------------------------------------------------------
    def observe_if_complete(self, conn: Connection) -> None:
        """Let the algorithm observe the pending batch once every pull has a reward: the count
        comes from the running totals (O(arms)); so do the sums of an i.i.d. batch, which the
        algorithm observes by arm (:meth:`banditkit.Algorithm.observe_arm_sums`), and the run
        sums when every run is a different arm and the rewards are 0/1 (integer sums: exact
        in any order); otherwise they are summed over the batch's units in slot order, once
        per batch."""
        pending = self.pending(conn)
        if pending is None:
            return
        batch_id, batch = pending
        K = self._def.n_arms
        recorded = np.zeros(K, dtype=np.int64)
        totals = np.zeros(K)
        non_binary = 0
        for arm, n, total, odd in conn.execute(
                "SELECT arm, recorded, reward, non_binary FROM totals WHERE batch = ?",
                (batch_id,)):
            self._def.check_arm(arm)
            recorded[arm], totals[arm] = n, total
            non_binary += odd
        if int(recorded.sum()) < batch.n_pulls:
            return
        assert self._algorithm is not None
        if isinstance(batch, IIDBatch):
            # the IPS identifiers read per-arm sums only: the running totals, O(arms); with
            # 0/1 rewards integers, the simulation's numbers exactly
            self._algorithm.observe_arm_sums(batch, totals, recorded)
            self._observed += 1
            conn.execute("UPDATE batches SET reward_sums = ?, observed_at = ? WHERE id = ?",
                         (json.dumps(totals.tolist()), self._clock.stamp(), batch_id))
            return
        reward_sums, cost_sums = self._run_sums(conn, batch_id, batch, totals, non_binary)
        self._algorithm.observe(batch, reward_sums, cost_sums)
        self._observed += 1
        conn.execute("UPDATE batches SET reward_sums = ?, cost_sums = ?, observed_at = ? "
                     "WHERE id = ?",
                     (json.dumps(reward_sums.tolist()),
                      None if cost_sums is None else json.dumps(cost_sums.tolist()),
                      self._clock.stamp(), batch_id))

    def _run_sums(self, conn: Connection, batch_id: int, batch: Batch, totals: np.ndarray,
                  non_binary: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The complete batch's run sums (and cost sums): from the per-arm totals when every
        run is a different arm and the rewards are 0/1, else from its units in slot order."""
        n_costs = self._def.problem.n_costs
        if not n_costs and non_binary == 0 and np.unique(batch.arms).size == batch.n_runs:
            return totals[batch.arms], None
        rows = conn.execute("SELECT slot, reward, costs FROM units WHERE batch = ? AND "
                            "expired_at IS NULL AND reward IS NOT NULL AND kind = 0 "
                            "ORDER BY slot", (batch_id,)).fetchall()
        reward_sums = batch.sum_runs(np.array([r[1] for r in rows], dtype=float))
        cost_sums = (batch.sum_runs(np.array([json.loads(r[2]) for r in rows], dtype=float))
                     if n_costs else None)
        return reward_sums, cost_sums
