"""A live experiment: any registered algorithm driven by real traffic, durable across restarts.

An algorithm asks for a batch of pulls; :meth:`Experiment.assign` hands the batch's pulls out to
units (users, sessions) in pull order, and :meth:`Experiment.record` takes their rewards in any
order and in any number of calls. When every unit of the batch has a reward, the algorithm
observes the batch's run sums (:meth:`banditkit.Algorithm.observe`) and asks for the next one —
the same exchange as :func:`banditkit.simulate`, so an experiment fed the rewards a simulation
would have drawn makes the same decisions.

State lives in one store (an SQLite file or a PostgreSQL schema: :mod:`banditkit.live.store`),
written in one transaction per call before the call returns. The algorithm itself is never
pickled: :meth:`Experiment.open` rebuilds it from its name, parameters and seed and replays the
stored batches, checking that it asks for exactly the batches it asked before. A process may
die at any point (``kill -9``): the store then holds every call that returned and nothing of
the one that did not.

Units never answered: every experiment has an outcome window and a rule for a unit unanswered
when it closes (:mod:`banditkit.live.outcomes.window`: reward 0, or withdrawn), applied on every
call, so a batch never waits past the window. :meth:`Experiment.expire` withdraws units by hand
(explicitly, or all assigned more than ``older_than`` seconds ago); the slots of withdrawn units
are offered again by the next :meth:`~Experiment.assign`, so the algorithm still gets one reward
per pull it asked for. A reward recorded later for a withdrawn or resolved unit is refused.

What ``status`` counts is each arm's resolved prefix
(:mod:`banditkit.live.outcomes.resolved_prefix`): its units before the first unit of any arm
still waiting (one cursor for all arms).

:class:`Experiment` is a thin coordinator over parts that each own their state: the **store**
(:mod:`banditkit.live.store`), the **journal** (the algorithm and its replay:
:class:`~banditkit.live.journal.replay.Journal`), **assignment**
(:class:`~banditkit.live.assignment.assigner.Assigner`, and the operator's
:class:`~banditkit.live.assignment.operations.Operations`), **outcomes**
(:class:`~banditkit.live.outcomes.recorder.Outcomes`) and the **readout**
(:class:`~banditkit.live.readout.reader.Readout` and the guardrails'
:class:`~banditkit.live.readout.guard.Guard`); assignment at the edge adds the published
allocation (:class:`~banditkit.live.assignment.allocation.Allocator`) and the outcomes' bulk
feed (:class:`~banditkit.live.outcomes.ingest.Ingest`). Each public method checks its arguments,
opens the call's transaction (:meth:`Experiment._transaction`: the journal brought up to date,
the plug-in's sums caught up) and asks the parts in turn. This module is long for one reason: it
carries the public API's documentation (most of its lines are docstrings; the code is under
400 lines).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from ..protocol import Algorithm
from .assignment import Assignment
from .assignment.allocation import DEFAULT_CACHE_SECONDS, Allocation, Allocator, check_publish
from .assignment.assigner import Assigner, check_count
from .assignment.operations import Operations, check_reason, check_stop, check_who
from .creating import define
from .definition import Clock, Definition, LiveClock, check_clock
from .errors import ExperimentError
from .inputs import MAX_KEY_LENGTH
from .inputs import as_keys as _as_keys
from .inputs import joined_calls as _joined_calls
from .journal.replay import Journal
from .outcomes.corrections import check_correction
from .outcomes.ingest import Ingest, Ingested
from .outcomes.recorder import Outcomes
from .outcomes.resolved_prefix import rebuild as _rebuild_prefix
from .outcomes.window import OutcomeWindow
from .problem import LiveArms
from .readout.guard import Guard
from .readout.history import History, check_points, read_history
from .readout.quantiles import check_quantile
from .readout.reader import Readout, check_status, check_units
from .readout.statistics import check_alpha
from .readout.status import ExperimentStatus
from .readout.verdict_spec import VerdictSpec, check_unit_segments, check_unit_values
from .readout.verify import verify as _verify
from .store import CHUNK, Connection, Store, check_location, create_store, open_store
from .store import reads as _reads
from .store.base import UPGRADABLE
from .store.schema import FORMAT
from .store.upgrade import upgrade_tables

__all__ = ["MAX_KEY_LENGTH", "Experiment", "ExperimentError", "ExperimentStatus"]


class Experiment:
    """A durable ask/tell experiment over one registered algorithm (see the module docstring).

    Build one with :meth:`create` and reopen it with :meth:`open`; never call the constructor.
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, journal: Store, clock: Clock | None = None) -> None:
        self._store = journal
        self._clock = LiveClock(clock)
        d = self._definition = Definition.from_meta(journal.meta(), journal.label)
        self.algorithm_name: str = d.algorithm_name
        self.params: dict[str, Any] = d.params
        self.live_defaults: list[str] = d.live_defaults
        self.seed: int = d.seed
        self.horizon: int | None = d.horizon
        self.order: str = d.order
        self.arm_names: list[str] = d.arm_names
        self.control: str = d.control
        self.guardrails = d.guardrails
        self.guardrail_alpha: float = d.guardrail_alpha
        #: the outcome window and its rule (:mod:`banditkit.live.outcomes.window`)
        self.window: OutcomeWindow = d.window
        #: the overflow rule (:mod:`banditkit.live.assignment.overflow`)
        self.overflow: str = d.overflow
        self.create_warnings: list[str] = d.create_warnings
        self._problem: LiveArms = d.problem
        # the parts, each with its own state, wired through narrow interfaces
        self._replay = Journal(d, journal, self._clock)
        self._operations = Operations(d, self._clock, self._replay)
        self._guard = Guard(d, journal, self._clock, self._replay)
        # late-bound hooks: the outcomes part reaches the journal and the guardrails through
        # the coordinator (a patched hook, as the tests' fault injection does, takes effect)
        self._outcomes = Outcomes(d, journal, self._clock, self._replay,
                                  lambda conn: self._observe_if_complete(conn),
                                  lambda conn: self._pause_on_breach(conn))
        self._assigner = Assigner(d, journal, self._clock, self._replay, self._operations)
        self._readout = Readout(d, journal, self._replay, self._outcomes, self._operations,
                                self._guard)
        # assignment at the edge: the published allocation, and the outcomes' bulk feed
        self._allocator = Allocator(d, journal, self._clock, self._replay, self._operations)
        self._ingest = Ingest(d, journal, self._clock, self._replay, self._operations,
                              self._allocator, self._outcomes)

    # -- creating and opening ----------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, *, name: str | None = None, algorithm: str, arms: Any,
               seed: int, horizon: int | None = None, params: Mapping[str, Any] | None = None,
               thresholds: Sequence[float] | None = None, order: str = "shuffled",
               control: str | None = None, guardrails: Sequence[Mapping[str, Any]] | None = None,
               guardrail_alpha: float = 0.05, outcome_window: float | None = None,
               missing: str | None = None, clock: Clock | None = None,
               overflow: str = "design", who: str = "local", reward_type: str | None = None,
               reward_range: Sequence[float] | None = None,
               verdicts: Mapping[str, Any] | None = None) -> Experiment:
        """Create a new experiment: an SQLite file at ``path``, or experiment ``name`` in the
        PostgreSQL database at a ``postgresql://`` URL (:mod:`banditkit.live.store`).

        Parameters
        ----------
        path : str or Path
            The SQLite file to create (it must not exist; its folder must), or a
            ``postgresql://user:password@host:port/database`` URL (libpq's forms, including
            the socket form ``postgresql://user@/database?host=/socket/folder``).
        name : str, optional
            With a URL (required there): the experiment's name in the database, 1 to 60
            letters, digits, '.', '_' or '-', starting with a letter or digit; it must not
            exist. Refused with a path (a file holds one experiment).
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
            The algorithm's parameters (JSON values), e.g. ``{"rho": 0.1}``. Parameters not
            given take the live defaults (:data:`banditkit.live.journal.defaults.LIVE_DEFAULTS`: the
            batched eliminations commit to the empirical best surviving arm, not the paper's
            lowest index), then the algorithm's own; the file stores every parameter in force.
        thresholds : sequence of float, optional
            Cost thresholds α of a constrained policy (its units then record m costs each).
        order : {"shuffled", "batch"}
            The order in which a batch's pulls go to units. ``"shuffled"`` (default): a random
            order, seeded by ``seed`` and the batch, so that whatever drifts during a batch
            (time of day, traffic source) does not line up with the arms, as a randomised
            A/B test requires. ``"batch"``: the algorithm's own pull order (a batched
            elimination asks for all pulls of arm 0, then of arm 1...). The algorithm sees the
            same run sums either way: a batch is observed once all its pulls have rewards. A
            batch drawn i.i.d. from a design (G-BAI, P1-RAGE, P1-Peace, Mixed-Peace) goes out
            in draw order either way: its pulls are independent draws, in a random order
            already, and slot s's arm is computed from ξ's state without listing the batch.
        control : str, optional
            The arm every other arm is compared with in :meth:`status` (``diff``, ``verdict``);
            default: the first arm.
        guardrails : list of dict, optional
            Metrics recorded with every reward that pause the experiment when an arm harms
            them with confidence (:mod:`banditkit.live.readout.guardrails`): each
            ``{"metric": name, "rule": "max_increase" | "max_decrease", "margin": x,
            "range": [lo, hi]}``; ``record`` then takes ``metrics={name: values}``.
        guardrail_alpha : float
            The probability, over all guardrails, arms and looks together, that a guardrail
            which holds in truth ever pauses the experiment; in (0, 1).
        outcome_window : float, optional
            Seconds a unit's outcome is awaited after its assignment (> 0, finite); default
            :data:`~banditkit.live.outcomes.window.DEFAULT_WINDOW`, one day. A unit unanswered
            when its window closes is resolved by ``missing`` on the next call
            (:mod:`banditkit.live.outcomes.window`), so a batch never waits longer.
        missing : {"zero", "expire"}, optional
            ``"zero"``: such a unit scores reward 0 (a conversion that did not happen);
            ``"expire"``: it is withdrawn and its slot handed to another unit. Default:
            ``"zero"`` when the algorithm's rewards lie in [0, 1] and no costs are recorded,
            else ``"expire"``.
        clock : callable, optional
            The time in seconds since the epoch (default :func:`time.time`), read once per
            call for its timestamps and the outcome window; not stored (give it again to
            :meth:`open`). For tests and simulations that replay traffic at their own pace.
        overflow : {"design", "uniform", "control", "off"}
            How ``assign`` serves units beyond the algorithm's pending slots
            (:mod:`banditkit.live.assignment.overflow`): ``"design"`` (default) draws their arms
            from the current design's shares, ``"uniform"`` uniformly over the arms still in play,
            ``"control"`` gives them the control; ``"off"`` returns fewer units instead. Once
            the experiment has finished (or was stopped), every unit is a rollout unit of the
            recommended or committed arm, whatever the rule but ``"off"``.
        who : str
            Who creates it, for the audit log (:meth:`audit`).
        reward_type : {"binary", "bounded", "continuous"}, optional
            What the rewards are, for the statistics of :meth:`status`, independently of the
            algorithm (:mod:`banditkit.live.readout.verdict_spec`); default: ``"bounded"`` on the
            algorithm's reward range, or ``"continuous"`` when it declares none. ``record``
            refuses a reward that is not 0/1 (binary) or outside ``reward_range`` (bounded).
        reward_range : (lo, hi), optional
            The rewards' bounds, with ``reward_type="bounded"``.
        verdicts : dict, optional
            ``sequence`` (``"exact"`` default for bounded rewards: the predictable
            plug-in; ``"mixture"``, ``"asymptotic"``, ``"msprt"``), ``tune_n`` (units per
            arm where the sequences are narrowest, 10,000), ``tau`` (the mSPRT's mixture
            s.d., required with ``"msprt"``), ``control_share`` (share of α on the control's
            own sequence, 0.05).

        Notes
        -----
        A horizon smaller than the algorithm's first batch is accepted with a warning (kept
        with the experiment and shown first by :meth:`status`): the batch is cut to its
        first pulls, which may not reach every arm.
        """
        check_location(path, name)
        meta, first = define(
            algorithm=algorithm, arms=arms, seed=seed, horizon=horizon, params=params,
            thresholds=thresholds, order=order, control=control, guardrails=guardrails,
            guardrail_alpha=guardrail_alpha, outcome_window=outcome_window, missing=missing,
            clock=clock, overflow=overflow, who=who, reward_type=reward_type,
            reward_range=reward_range, verdicts=verdicts, version=__version__)
        experiment = cls(create_store(path, name, meta), clock)
        experiment._replay.adopt(first)  # built from this meta, its first batch asked
        try:
            with experiment._transaction() as conn:
                experiment._operations.audit(conn, who, "create",
                                             {"algorithm": algorithm, "overflow": overflow})
        except BaseException:
            experiment.close()
            raise
        return experiment

    @classmethod
    def open(cls, path: str | Path, readonly: bool = False, *, name: str | None = None,
             clock: Clock | None = None) -> Experiment:
        """Open an existing experiment (in this or any other process, on any machine that
        reaches its database).

        Parameters
        ----------
        path : str or Path
            The experiment file, or the ``postgresql://`` URL of the database holding it.
        readonly : bool
            Open it for reading only (``status``, ``units``, ``decisions``): nothing is
            written, so a read-only file or folder (or a read-only database role) can be read;
            ``assign``, ``record`` and ``expire`` are then refused.
        name : str, optional
            With a URL (required there): the experiment's name in the database. Refused with a
            path.
        clock : callable, optional
            As for :meth:`create` (default :func:`time.time`).

        Notes
        -----
        An experiment of format 5 (before outcome windows) opened for writing is brought to
        format 6 in one transaction: its data unchanged, no outcome window (its units wait
        until recorded or expired, as before), the resolved prefix built from its units.
        """
        check_location(path, name)
        if not isinstance(readonly, bool):
            raise ExperimentError(f"readonly must be True or False, got {readonly!r}")
        check_clock(clock)
        experiment = cls(open_store(path, name, readonly), clock)
        try:
            with experiment._transaction() as conn:
                # replays the stored batches now, so a damaged file is refused at once
                if experiment._store.format in UPGRADABLE:
                    experiment._upgrade(conn)
            if not readonly:
                experiment._store.make_durable()  # writes: only once the file is accepted
        except BaseException:
            experiment.close()
            raise
        return experiment

    def _upgrade(self, conn: Connection) -> None:
        """Bring a format 5 to 10 experiment to :data:`FORMAT` in the caller's transaction (see
        :meth:`open`): the tables (:mod:`banditkit.live.store.upgrade`), then, before format
        9, the resolved prefix rebuilt from the units (format 9 counts every arm to one cursor,
        G: an older file's sums follow each arm's own cursor and are not kept) and the
        plug-in's sums. Format 9 to 10 adds the edge's tables only, 10 to 11 the units'
        segment column."""
        store = self._store
        rebuild = store.format < 9
        upgrade_tables(conn, store, OutcomeWindow(None, None).as_meta())
        if rebuild:
            _rebuild_prefix(conn, store, len(self.arm_names), len(self.guardrails))
        store.format = FORMAT
        self._outcomes.plugin_catch_up(conn)  # the plug-in's sums from the first unit

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Experiment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path | None:
        """The SQLite file; ``None`` for an experiment in PostgreSQL (see :attr:`url`)."""
        return self._store.path

    @property
    def url(self) -> str | None:
        """The PostgreSQL database's URL (without its password); ``None`` for a file."""
        return self._store.url

    @property
    def name(self) -> str | None:
        """The experiment's name in its PostgreSQL database; ``None`` for a file."""
        return self._store.name

    @property
    def readonly(self) -> bool:
        """Opened with ``readonly=True``: it reads, and refuses every call that writes."""
        return self._store.readonly

    @property
    def verdict_spec(self) -> VerdictSpec:
        """The declared rewards and sequences (:mod:`banditkit.live.readout.verdict_spec`)."""
        return self._definition.verdict_spec(self._replay.reward_range)

    @property
    def _journal(self) -> Store:
        """The store (its name from before the parts: tests and tools reach it by it)."""
        return self._store

    @property
    def _algorithm(self) -> Algorithm | None:
        """The journal's in-memory algorithm (``None`` until a call builds it)."""
        return self._replay.algorithm

    def _slot_order(self, batch_id: int, n_pulls: int, start: int = 0,
                    count: int | None = None) -> np.ndarray:
        """The journal's slot order (:meth:`.journal.replay.Journal.slot_order`)."""
        return self._replay.slot_order(batch_id, n_pulls, start, count)

    def _observe_if_complete(self, conn: Connection) -> None:
        """The outcomes' hook when units got outcomes: the journal observes the pending batch
        once every pull has one (:meth:`.journal.replay.Journal.observe_if_complete`)."""
        self._replay.observe_if_complete(conn)

    def _pause_on_breach(self, conn: Connection) -> None:
        """The outcomes' hook when new guardrail values count: store each new breach, which
        pauses the experiment (:meth:`.readout.guard.Guard.pause_on_breach`)."""
        self._guard.pause_on_breach(conn)

    def _check_writable(self, call: str) -> None:
        if self._store.readonly:
            raise ExperimentError(f"{call} writes to the experiment, which was opened "
                                  "read-only (Experiment.open(path, readonly=True)); open it "
                                  "with readonly=False to write")

    # -- one transaction per call, with the journal brought up to date -------------------------
    @contextmanager
    def _transaction(self, resolve: bool = False,
                     read_ahead: Sequence[_reads.Read] = ()) -> Iterator[Connection]:
        """The call's transaction with the algorithm brought up to date
        (:meth:`.journal.replay.Journal.sync`) and the plug-in's sums caught up.

        Its first reads go with the lock in one round trip (:mod:`banditkit.live.store.reads`):
        the stored batches, the outcomes' reads (with ``resolve``, a call that starts with
        :meth:`.outcomes.recorder.Outcomes.resolve`, the units whose window closed by now),
        then ``read_ahead``."""
        journal = self._replay
        journal.begin_call()
        reads = [_reads.batches(0 if journal.algorithm is None else journal.observed),
                 *self._outcomes.reads(resolve)]
        try:
            with self._rolled_back_on_error(self._store.transaction([*reads, *read_ahead])
                                            ) as conn:
                journal.sync(conn)
                self._outcomes.plugin_catch_up(conn)
                yield conn
        finally:
            self._outcomes.end_call()

    @contextmanager
    def _rolled_back_on_error(self, store_block: Any) -> Iterator[Any]:
        """``store_block`` (a transaction or a group of them) entered after the file check; when
        it raises, the store has rolled back and the journal is told
        (:meth:`.journal.replay.Journal.rolled_back`). The driver's errors become one
        ExperimentError."""
        self._store.check_still_there()
        snapshot = self._replay.snapshot()
        try:
            with store_block as inside:
                yield inside
        except BaseException as error:
            self._replay.rolled_back(snapshot, error)
            if isinstance(error, self._store.errors):
                raise ExperimentError(f"{self._store.label} cannot be read or written "
                                      f"({error})") from None
            raise

    @contextmanager
    def group_commit(self) -> Iterator[None]:
        """The calls made inside as one commit (one disk sync for all of them): each call keeps
        its own everything-or-nothing (a savepoint), a call that raises changes nothing, and
        nothing is durable until the block ends; if the commit fails, none of them happened.

        Who needs it: ``banditkit serve``, whose worker thread runs the requests waiting for
        one experiment together and answers none of them before this commit, so a returned
        call is on disk as it is after a call of its own. Read-only: no effect.
        """
        with self._rolled_back_on_error(self._store.group()):
            yield

    # -- the exchange ------------------------------------------------------------------------
    def assign(self, n: int | None = None, keys: Sequence[str | int] | None = None, *,
               covariates: Sequence[float] | None = None,
               segments: Sequence[str] | None = None) -> pd.DataFrame:
        """Arms for the next ``n`` units, in the algorithm's pull order, with their unit ids.

        Slots of expired units are handed out again first. Units beyond the pending batch's
        slots (the algorithm needs its rewards before it can ask for more: a fully sequential
        policy such as UCB1 has one slot at a time) are **overflow** units, and once the
        experiment has finished or was stopped, **rollout** units of the recommended arm
        (:mod:`banditkit.live.assignment.overflow`): n rows come back every call, unless the
        experiment is paused, stopped without rollout or archived (none), or was created
        with ``overflow="off"`` (then fewer, ``attrs["reason"]`` says why). Overflow and
        rollout units are never shown to the algorithm; ``attrs["overflow_units"]`` lists
        their ids. The assignment is on disk before this returns.

        Parameters
        ----------
        n : int, optional
            Units to assign (>= 1); with ``keys``, it may be omitted and must equal
            ``len(keys)`` when given.
        keys : sequence of str or int, optional
            Sticky units: one external key (a user id) per unit, distinct, each a non-empty
            string or an integer (stored as its decimal text, so ``17`` and ``"17"`` are the
            same key) of at most :data:`MAX_KEY_LENGTH` characters. A key whose unit is still
            live (waiting, or recorded, in any batch) gets that unit and arm again and takes
            no slot; a key whose unit expired gets a fresh slot like a new key, and then
            points to the new unit (the expired one stays expired, and keeps its key in
            :meth:`units`). New keys take slots in their order in ``keys``, exactly as ``n``
            units without keys would: keys only route units, the decisions are the same. The
            keys are stored in the same transaction as the units. Cost O(len(keys)).
        covariates : sequence of float, optional
            With ``verdicts={"cuped": True}``: each unit's pre-experiment value (one per unit
            asked for, in order; with ``keys``, one per key), stored with the unit. Required
            when the outcome window may score a unit 0 (``missing="zero"``) before any record.
        segments : sequence of str, optional
            With ``verdicts={"segments": [...]}``: each unit's segment label (one per unit, in
            order; with ``keys``, one per key), one of the declared labels, stored with the
            unit (a unit keeps its first); :meth:`family` compares the arms in each segment.

        Returns
        -------
        DataFrame with columns ``unit`` (int id), ``arm`` (name), ``arm_index``, ``batch``;
        with ``keys``, also ``key`` (as stored: text) and ``repeated`` (``True`` when the unit
        was assigned to the key by an earlier call and no slot was taken), one row per key in
        the order given, less the new keys that found no slot (``attrs["reason"]`` says why).
        """
        return self.assign_rows(n, keys, covariates=covariates, segments=segments).frame()

    def assign_rows(self, n: int | None = None, keys: Sequence[str | int] | None = None, *,
                    covariates: Sequence[float] | None = None,
                    segments: Sequence[str] | None = None) -> Assignment:
        """:meth:`assign`, its units as plain lists (an
        :class:`~banditkit.live.assignment.Assignment`, whose ``.frame()`` is what ``assign``
        returns): the same call, the same units, without building a DataFrame (about 1 ms a
        call), for servers (``banditkit serve``).
        """
        self._check_writable("assign")
        if keys is not None:
            keys = _as_keys(keys, n)
            n = len(keys)
        count = check_count(n)
        covariate_values = check_unit_values(self.verdict_spec, "covariates", covariates,
                                             count, required=self.window.missing == "zero")
        labels = check_unit_segments(self.verdict_spec, segments, count)
        with self._transaction(resolve=True, read_ahead=self._assigner.reads(count, keys)
                               ) as conn:
            self._outcomes.resolve(conn)  # units whose outcome window closed, by the rule
            return self._assigner.assign(conn, count, keys, covariate_values, labels)

    def assign_many(self, counts: Sequence[int]) -> list[Assignment] | None:
        """Several ``assign(n)`` calls without keys, made at once, served in one call: for
        each, the units :meth:`assign_rows` gives it when the calls run one after another in
        this order (the same slots, arms and ids), or ``None`` — and nothing assigned — when
        that is not certain: the pending batch lacks a slot for every unit (some call would
        get overflow or rollout units, or fewer than asked), or the experiment is stopped or
        paused. The caller then makes the calls one by one.

        Who needs it: ``banditkit serve``, whose writer runs the ``assign`` requests waiting
        together (group commit, :mod:`banditkit.service.catalog`): one call's fixed work
        (the transaction's checks, the batch, the totals) instead of one per request.
        A call's units are the next slots in the batch's order, which does not depend on how
        the slots are cut into calls (:mod:`.journal.slots`), so the split is exact.

        Parameters
        ----------
        counts : sequence of int
            Each call's ``n`` (>= 1).
        """
        self._check_writable("assign")
        sizes = [check_count(n) for n in counts]
        with self._transaction(resolve=True,
                               read_ahead=self._assigner.reads(sum(sizes), None)) as conn:
            self._outcomes.resolve(conn)  # as each call would (their windows close at once)
            return self._assigner.assign_many(conn, sizes)

    def record(self, units: Sequence[int], rewards: Sequence[float],
               costs: Sequence[Sequence[float]] | None = None, *,
               metrics: Mapping[str, Sequence[float]] | None = None,
               covariates: Sequence[float] | None = None,
               denominators: Sequence[float] | None = None) -> int:
        """Record the rewards (and costs: shape (units, m); and the guardrail ``metrics``:
        metric name → one value per unit) of assigned units.

        With ``verdicts={"cuped": True}``, each unit's pre-experiment ``covariates`` (one per
        unit) come here unless ``assign`` stored them; with ``verdicts={"ratio": True}``,
        each unit's ``denominators`` (≥ 0) are required (:mod:`banditkit.live.readout.adjusted`).

        Units already assigned are recorded while the experiment is paused. After the rewards,
        the guardrails are evaluated on every value recorded so far; a new breach pauses the
        experiment in this call's transaction (:meth:`resume` lifts it).

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
        inputs = self._outcomes.record_inputs(units, rewards, costs, metrics, covariates,
                                              denominators)
        ids = inputs[0]
        with self._transaction(resolve=True,
                               read_ahead=[_reads.units_by_id(ids[:CHUNK].tolist()),
                                           _reads.PREFIX_MOMENTS]) as conn:
            return len(self._outcomes.record(conn, *inputs))

    def record_many(self, calls: Sequence[tuple[Sequence[int], Sequence[float]]]
                    ) -> list[int]:
        """Several ``record(units, rewards)`` calls (no costs, no metrics), made at once, as one
        call: each call's count of units newly recorded, as when the calls run one after
        another in this order. All or nothing: when any call would be refused, or a unit is
        in two of them, it raises (ExperimentError) and records none; the caller then makes
        the calls one by one, so that each gets its own answer.

        Who needs it: ``banditkit serve``, whose writer runs the ``record`` requests waiting
        together (group commit, :mod:`banditkit.service.catalog`). A unit is recorded once
        whichever call carries it, a batch is observed when its last unit is recorded, and a
        guardrail breach pauses the experiment in the same transaction, so one call gives
        the calls' results.

        Parameters
        ----------
        calls : sequence of (units, rewards)
            Each call's arguments, as :meth:`record` takes them.
        """
        self._check_writable("record")
        check = self._outcomes.record_inputs
        joined = _joined_calls(calls)
        if joined is not None:  # plain calls: their lists checked once, joined (inputs.py)
            ids, values = check(joined[0], joined[1], None, None)[:2]
            sizes = joined[2]
        else:
            inputs = [check(units, rewards, None, None) for units, rewards in calls]
            ids = np.concatenate([i[0] for i in inputs])
            if np.unique(ids).size != ids.size:
                raise ExperimentError("units: each unit may appear once per call")
            values = np.concatenate([i[1] for i in inputs])
            sizes = [i[0].size for i in inputs]
        with self._transaction(resolve=True,
                               read_ahead=[_reads.units_by_id(ids[:CHUNK].tolist()),
                                           _reads.PREFIX_MOMENTS]) as conn:
            new = self._outcomes.record(conn, ids, values, None, None)
        ends = np.cumsum(sizes)
        counts = np.bincount(np.searchsorted(ends, [entry[-1] for entry in new], side="right"),
                             minlength=len(sizes))
        return [int(c) for c in counts]

    def expire(self, units: Sequence[int] | None = None, *, older_than: float | None = None,
               who: str = "local") -> int:
        """Withdraw units that will never be answered; their slots are handed out again.

        Parameters
        ----------
        units : sequence of int, optional
            These units (each assigned and without a reward).
        older_than : float, optional
            Or every unanswered unit assigned more than this many seconds ago.
        who : str
            Who expires them, for the audit log (written when any unit expires).

        Returns
        -------
        int
            Units expired.
        """
        self._check_writable("expire")
        who = check_who(who)
        if (units is None) == (older_than is None):
            raise ExperimentError("expire needs exactly one of units= or older_than=")
        with self._transaction() as conn:
            self._outcomes.resolve(conn)
            count = self._outcomes.expire(conn, units, older_than)
            if count:
                self._operations.audit(conn, who, "expire",
                                       {"units": count, "older_than": older_than})
            return count

    def resolve(self) -> int:
        """Resolve now, by the experiment's rule, every unit whose outcome window has closed
        (what every call that writes does first), and let the algorithm observe a batch they
        complete.

        Who needs it: a process that only reads would otherwise show such units as
        ``overdue`` until the next write; ``banditkit serve`` calls it on its writer, without
        waiting, when a read finds overdue units (so a dashboard watching an experiment that
        gets no traffic sees them resolved). Nothing to do without a window.

        Returns
        -------
        int
            Units resolved.
        """
        self._check_writable("resolve")
        if self.window.seconds is None:
            return 0
        with self._transaction(resolve=True) as conn:
            return self._outcomes.resolve(conn)

    # -- what it knows -------------------------------------------------------------------------
    def status(self, intervals: str = "anytime", alpha: float = 0.05,
               count: str = "resolved", verdicts: Mapping[str, Any] | None = None,
               look: int | None = None) -> ExperimentStatus:
        """Per-arm counts, means, intervals, differences to the control, warnings, and where the
        algorithm stands.

        Parameters
        ----------
        intervals : {"anytime", "fixed"}
            ``"anytime"`` (default): confidence sequences, valid at every look together (arms,
            differences to the control and verdicts: error ≤ ``alpha`` over all of them and all
            looks, however the algorithm allocated). ``"fixed"``: fixed-n intervals, each valid
            only for one look decided in advance (:mod:`banditkit.live.readout.statistics`).
        alpha : float
            Error probability, in (0, 1); also that of the missing-outcome check.
        count : {"resolved", "recorded"}
            ``"resolved"`` (default): intervals, differences, verdicts and guardrails use each
            arm's **resolved prefix** — its units before the one cursor G, the first unit of
            *any* arm still waiting for an outcome (:mod:`banditkit.live.outcomes.resolved_prefix`):
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
        look : int, optional
            With a plan of looks declared at create (``verdicts={"looks": K, "look_every":
            E}``), the planned look ``planned`` shows (default: the latest complete one, look
            k being the first k·E units assigned); refused beyond the plan or before the look
            is complete (:mod:`banditkit.live.readout.looks`).

        Notes
        -----
        On an experiment opened for writing, status first resolves the units whose outcome
        window closed (:mod:`banditkit.live.outcomes.window`); read-only, it says how many
        await the next call that writes.
        """
        args = check_status(intervals, alpha, count, verdicts, self.verdict_spec, look)
        with self._transaction() as conn:
            if not self.readonly and self._outcomes.resolve(conn):
                self._outcomes.plugin_catch_up(conn)  # the window's rule moved some prefixes
            return self._readout.status(conn, *args)

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
        :mod:`banditkit.live.assignment.propensity`), for inverse-propensity re-analysis of the
        log; one row per unit in id order.
        """
        wanted = check_units(ids, unanswered, after, limit)
        with self._transaction() as conn:
            if not self.readonly:
                self._outcomes.resolve(conn)
            rows = self._readout.unit_rows(conn, wanted, unanswered, after, limit)
        return self._readout.unit_frame(*rows)

    def history(self, points: int = 40) -> History:
        """The experiment's course from its running totals, in at most ``points`` groups of
        consecutive batches (see :mod:`banditkit.live.readout.history`): O(points × arms) rows,
        whatever the number of units.

        Parameters
        ----------
        points : int
            Groups at most (>= 1).

        Returns
        -------
        History
        """
        points = check_points(points)
        with self._transaction() as conn:
            return read_history(conn, points, len(self.arm_names), self._store.label)

    def verify(self) -> int:
        """Check every unit against what the file says was observed: O(units), read only.

        :meth:`open` checks in O(arms) per batch that each observed batch's stored run sums
        match the running totals kept with its units (an edit of ``batches.reward_sums`` or of
        ``totals`` is refused there); an edit of the units themselves (``UPDATE units SET
        reward = ...``) changes neither, so only this full pass finds it: it recomputes the
        totals of every (batch, arm) and every observed batch's run sums from the units.

        Returns
        -------
        int
            Units checked. Raises :class:`ExperimentError` naming the first discrepancy.
        """
        with self._transaction() as conn:
            return _verify(conn, self._definition, self._store, self._outcomes.plugin_tuning)

    def family(self, alpha: float | None = None) -> pd.DataFrame:
        """The experiment's metric family on the units :meth:`status` counts: its reward as the
        primary metric and each guardrail's metric (labelled ``guardrail``), every arm against
        the control, with Holm's step-down on anytime-valid p-values across all of them
        (:mod:`banditkit.live.readout.family`): false verdicts anywhere in the family, at any
        look, at most ``alpha``.

        Parameters
        ----------
        alpha : float, optional
            In (0, 1); default the guardrails' ``guardrail_alpha`` when there are guardrails,
            else 0.05.

        Returns
        -------
        DataFrame with ``metric``, ``segment``, ``role``, ``arm``, ``diff``, ``diff_low``,
        ``diff_high``, ``p``, ``p_holm``, ``verdict``; ``attrs["note"]`` states the family.
        """
        alpha = check_alpha(alpha if alpha is not None else
                            (self.guardrail_alpha if self.guardrails else 0.05))
        with self._transaction() as conn:
            return self._readout.family(conn, alpha)

    def quantiles(self, p: float = 0.9, alpha: float = 0.05) -> pd.DataFrame:
        """Each arm's p-quantile of the rewards :meth:`status` counts (its resolved prefix:
        valid however outcomes arrive), with its anytime-valid interval at α/K, and its
        difference to the control with the interval at α/(K − 1)
        (:mod:`banditkit.live.readout.quantiles`). Reads the counted rewards: O(units).
        Corrections (:meth:`correct`) replace the values they correct.

        Parameters
        ----------
        p : float
            The quantile, in (0, 1) (0.9: the 90th percentile).
        alpha : float
            Error probability over every arm, difference and look, in (0, 1).

        Returns
        -------
        DataFrame with ``counted``, ``quantile``, ``low``, ``high``, ``diff``, ``diff_low``,
        ``diff_high`` per arm; ``attrs`` holds ``p`` and ``alpha``.
        """
        p, alpha = check_quantile(p, alpha)
        with self._transaction() as conn:
            return self._readout.quantiles(conn, p, alpha)

    def bayesian(self) -> pd.DataFrame:
        """Chance to beat the control and expected losses per arm, on the units :meth:`status`
        counts: **Bayesian summaries, not verdicts** (flat prior, normal approximation; they
        carry no error guarantee if you stop on them, the verdicts of :meth:`status` do;
        :mod:`banditkit.live.readout.bayes`). The frame says so in ``attrs["label"]``.

        Returns
        -------
        DataFrame with ``counted``, ``chance_to_beat_control``,
        ``expected_loss_choosing_arm``, ``expected_loss_keeping_control`` per arm (NaN for the
        control).
        """
        with self._transaction() as conn:
            return self._readout.bayesian(conn)

    def decisions(self) -> Any:
        """The algorithm's decision log so far (:class:`banditkit.DecisionLog`): the same
        object a simulation's :class:`banditkit.Trial` carries, for comparing the two.
        """
        with self._transaction():
            assert self._replay.algorithm is not None
            return self._replay.algorithm.decisions

    # -- what an operator does -----------------------------------------------------------------
    def pause(self, reason: str = "paused by hand", *, who: str = "local") -> bool:
        """Pause the experiment by hand: ``assign`` hands out nothing until :meth:`resume`.

        Parameters
        ----------
        reason : str
            Why (shown by ``status`` and by ``assign``'s reason).
        who : str
            Who pauses it, for the audit log.

        Returns
        -------
        bool
            ``True`` when it was not paused by hand before.
        """
        self._check_writable("pause")
        who, reason = check_who(who), check_reason(reason)
        with self._transaction() as conn:
            return self._operations.pause(conn, reason, who)

    def resume(self, *, who: str = "local") -> int:
        """Lift the pause (by hand, :meth:`pause`, and by the guardrails): ``assign`` hands out
        units again, the batch in progress continuing where it stopped (pausing never touched
        the algorithm). The breaches resumed stay in :meth:`status` and do not pause the
        experiment again; a new breach (another guardrail or arm) does. To end an experiment
        instead, :meth:`stop` it (:mod:`banditkit.live.assignment.operations`).

        Parameters
        ----------
        who : str
            Who resumes it, for the audit log (:mod:`banditkit.live.assignment.operations`).

        Returns
        -------
        int
            Pauses lifted: the breaches, plus 1 for a pause by hand (0 when the experiment was
            not paused).
        """
        self._check_writable("resume")
        who = check_who(who)
        with self._transaction() as conn:
            lifted = self._operations.resume(conn, who)
            self._outcomes.resolve(conn)  # after: a breach the resolved units cause pauses again
            return lifted

    def stop(self, arm: str | None = None, *, rollout: bool = True, who: str = "local"
             ) -> dict[str, Any]:
        """Conclude the experiment: the algorithm hands out no more slots, and every later
        ``assign`` serves the rollout arm (``rollout=True``) or nothing.

        Parameters
        ----------
        arm : str, optional
            The arm to roll out; default: the algorithm's recommendation or committed arm,
            else the arm leading on the observed means, else the control
            (:mod:`banditkit.live.assignment.overflow`).
        rollout : bool
            Serve the rollout arm to every later unit (default), or no unit at all.
        who : str
            Who stops it, for the audit log.

        Returns
        -------
        dict
            ``{"arm": the decided arm, "why": how it was chosen, "at": time, "rollout": bool}``.
        """
        self._check_writable("stop")
        who = check_who(who)
        check_stop(arm, rollout, self.arm_names)
        with self._transaction() as conn:
            return self._operations.stop(conn, arm, rollout, who)

    def archive(self, *, who: str = "local") -> bool:
        """Stop the experiment for good, without rollout: ``assign`` returns no units, ``record``
        still takes late outcomes, and it may then be deleted. Returns ``False`` when it was
        archived already.
        """
        self._check_writable("archive")
        who = check_who(who)
        with self._transaction() as conn:
            return self._operations.archive(conn, who)

    @classmethod
    def delete(cls, location: str | Path, *, name: str | None = None) -> None:
        """Delete the experiment at ``location`` (a file, or ``name`` in a PostgreSQL
        database), which must be archived (:meth:`archive`): its file (with ``-wal`` and
        ``-shm``) or its schema, whole. Close it everywhere first; an open handle refuses
        every later call (the file or schema is gone).
        """
        from .store import delete_store

        check_location(location, name)
        with cls.open(location, name=name, readonly=True) as experiment:
            if not experiment.status().archived:
                raise ExperimentError(f"delete: {experiment._store.label} is not archived; "
                                      "archive it first (Experiment.archive), then delete it")
        delete_store(location, name)

    def correct(self, units: Sequence[int], rewards: Sequence[float], *, reason: str,
                who: str = "local") -> int:
        """Record the right reward of units whose reward was recorded wrong, beside it
        (:mod:`banditkit.live.outcomes.corrections`): ``status`` counts the corrected value
        from now on; the recorded one, the algorithm's decisions on it and the audit log's row
        saying what replaced it stay.

        Parameters
        ----------
        units : sequence of int
            Units already recorded (not the window's imputed zeros, not expired ones).
        rewards : sequence of float
            Their right rewards, one per unit, checked as ``record`` checks rewards.
        reason : str
            Why (1 to 500 characters), kept in the audit log.
        who : str
            Who corrects, for the audit log.

        Returns
        -------
        int
            Units whose counted reward changed (a retry with the same values changes none).
        """
        self._check_writable("correct")
        who = check_who(who)
        ids, values, reason = check_correction(units, rewards, reason)
        with self._transaction() as conn:
            changed = self._outcomes.correct(conn, ids, values)
            if changed is None:
                return 0
            self._operations.audit(conn, who, "correct", {**changed, "reason": reason})
            self._operations.count_correction(conn)
            return len(changed["units"])

    def corrections(self) -> pd.DataFrame:
        """Every correction (:meth:`correct`), oldest first: a DataFrame with ``at``, ``who``,
        ``unit``, ``arm`` (name), ``recorded`` (the reward recorded), ``previous`` (what was
        counted before this correction), ``reward`` (what is counted after it) and
        ``reason``."""
        with self._transaction() as conn:
            return self._outcomes.corrections(conn, self.arm_names)

    def audit(self) -> pd.DataFrame:
        """The audit log: one row per operator action (``id``, ``at``, ``who``, ``action``,
        ``detail`` as JSON text), oldest first.
        """
        with self._transaction() as conn:
            return self._operations.audit_log(conn)

    # -- assignment at the edge: assignment/allocation.py and outcomes/ingest.py --------------
    def allocation(self, name: str | None = None, *,
                   cache_seconds: float = DEFAULT_CACHE_SECONDS) -> Allocation:
        """What an application downloads to assign its visitors itself
        (:mod:`banditkit.live.assignment.allocation`): arms, weights, salt, version; kept, so
        that :meth:`ingest` accepts the exposures made under it. ``name`` is published with it
        (default: the experiment's name, or its file's stem)."""
        default = self.name if self.name is not None else (
            self.path.stem if self.path is not None else "experiment")
        name, seconds = check_publish(name, cache_seconds, default)
        writable = not self.readonly
        with self._transaction(resolve=writable) as conn:
            if writable:
                self._outcomes.resolve(conn)
            allocation = self._allocator.publish(conn, name, seconds, writable)
        if writable:
            self._allocator.committed(allocation)  # committed: not kept again
        return allocation

    def ingest(self, exposures: Sequence[Mapping[str, Any]] = (),
               outcomes: Sequence[Mapping[str, Any]] = (), *, who: str = "local") -> Ingested:
        """Exposures and outcomes made at the edge, in bulk, idempotent and in any order
        (:mod:`banditkit.live.outcomes.ingest`): an
        :class:`~banditkit.live.outcomes.ingest.Ingested` with the counts of new, repeated and
        refused events and each refusal's reason."""
        self._check_writable("ingest")
        check_who(who)
        now, events = self._ingest.read(exposures, outcomes)
        with self._transaction(resolve=True) as conn:
            return self._ingest.ingest(conn, now, events)
