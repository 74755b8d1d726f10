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

Units never answered: every experiment has an outcome window and a rule for a unit unanswered
when it closes (:mod:`banditkit.live.outcome_window`: reward 0, or withdrawn), applied on every
call, so a batch never waits past the window. :meth:`Experiment.expire` withdraws units by hand
(explicitly, or all assigned more than ``older_than`` seconds ago); the slots of withdrawn units
are offered again by the next :meth:`~Experiment.assign`, so the algorithm still gets one reward
per pull it asked for. A reward recorded later for a withdrawn or resolved unit is refused.

What ``status`` counts is each arm's resolved prefix (:mod:`banditkit.live.resolved_prefix`):
its units before the first unit of any arm still waiting (one cursor for all arms).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..protocol import Algorithm, Batch, IIDBatch
from ..registry import get_policy, make_policy
from ..rng import as_generator
from . import overflow as _overflow
from . import reads as _reads
from .assignment import Assignment
from .bayes import Bayesian
from .corrections import Corrections
from .defaults import params_in_force
from .family import Families
from .guardrails import Guardrail, check_guardrails, check_metrics
from .history import Histories
from .horizon import horizon_warnings
from .inputs import MAX_KEY_LENGTH
from .inputs import as_ids as _as_ids
from .inputs import as_keys as _as_keys
from .inputs import joined_calls as _joined_calls
from .inputs import numbers as _numbers
from .journal import (
    ALGORITHM,
    ALL_BATCHES,
    FORMAT,
    OVERFLOW_TOTALS,
    ExperimentError,
    micros,
    pack_draws,
    pack_runs,
    stamp,
    unpack_draws,
    unpack_runs,
)
from .operations import Operations, check_who
from .outcome_window import DEFAULT_WINDOW, OutcomeWindow, Resolving, check_missing, check_window
from .outcome_window import default_missing as _default_missing
from .overflow import Overflowing
from .pausing import Pausing
from .problem import LiveArms, arm_names
from .quantiles import Quantiles
from .reading import Reading
from .resolved_prefix import PLUGIN_UPDATE, PluginTuning, ResolvedPrefix, plugin_catch_up
from .resolved_prefix import advance as _advance_prefix
from .resolved_prefix import rebuild as _rebuild_prefix
from .slots import slot_order
from .statistics import (
    check_alpha,
)
from .status import ExperimentStatus
from .store import CHUNK, Connection, Store, check_location, create_store, open_store
from .store_base import UPGRADABLE
from .unit_values import check_stored, store_covariates
from .value_guard import PREFIX_MOMENTS, check_summable, warn_outliers
from .verdict_spec import VerdictSpec, check_unit_values, check_verdicts, spec_from_meta
from .verify import Verification

__all__ = ["MAX_KEY_LENGTH", "Experiment", "ExperimentError", "ExperimentStatus"]


#: Identifiers that shuffle an epoch's multiset of pulls with ξ (a permutation, which cannot
#: be evaluated slot by slot) and hold the pull sequence of a batch in memory, about 40 bytes
#: a pull while it is drawn and stored: a budget above :data:`MAX_SEQUENCE` is refused at
#: create, naming it, instead of dying on an allocation of gigabytes later. The identifiers
#: that draw i.i.d. (G-BAI, P1-RAGE, P1-Peace, Mixed-Peace) store a batch as its description
#: (:class:`banditkit.protocol.IIDBatch`, O(arms)) and take any budget.
SEQUENCE_IN_MEMORY = ("Peace", "ODLinBAI")
MAX_SEQUENCE = 50_000_000


def _check_clock(clock: object) -> None:
    if clock is not None and not callable(clock):
        raise ExperimentError(f"clock must be a function returning the time in seconds since "
                              f"the epoch (as time.time), got {clock!r}")


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


#: A clock: the time in seconds since the epoch, as :func:`time.time` gives it.
Clock = Callable[[], float]


class Experiment(Corrections, Bayesian, Families, Quantiles, Overflowing, Operations, Pausing,
                 Reading, Resolving, Verification, Histories):
    """A durable ask/tell experiment over one registered algorithm (see the module docstring).

    Build one with :meth:`create` and reopen it with :meth:`open`; never call the constructor.
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, journal: Store, clock: Clock | None = None) -> None:
        self._journal = journal
        self._clock: Clock = time.time if clock is None else clock
        meta = journal.meta()
        try:
            self.algorithm_name: str = meta["algorithm"]
            self.params: dict[str, Any] = dict(meta["params"])
            self.live_defaults: list[str] = list(meta.get("live_defaults", []))
            self.seed: int = int(meta["seed"])
            self.horizon: int | None = meta["horizon"]
            self.order: str = meta["order"]
            self.arm_names: list[str] = list(meta["arms"])
            # files written before control= existed compare with the first arm
            self.control: str = str(meta.get("control", self.arm_names[0]))
            self.guardrails: list[Guardrail] = check_guardrails(meta.get("guardrails"))
            self.guardrail_alpha: float = float(meta.get("guardrail_alpha", 0.05))
            #: the outcome window and its rule (:mod:`banditkit.live.outcome_window`)
            self.window: OutcomeWindow = OutcomeWindow.from_meta(meta)
            # the overflow rule (banditkit.live.overflow); experiments created before it
            # existed take the default too
            self.overflow: str = _overflow.check_rule(meta.get("overflow", "design"))
            self.create_warnings: list[str] = list(meta.get("create_warnings", []))
            self._verdict_meta = meta
            features = meta["features"]
            thresholds = meta["thresholds"]
        except (KeyError, TypeError, ValueError) as error:
            raise ExperimentError(f"{journal.label} is damaged: its definition lacks "
                               f"{error}") from None
        self._problem = LiveArms(len(self.arm_names),
                                 None if features is None else np.asarray(features, float),
                                 None if thresholds is None else np.asarray(thresholds, float))
        self._algorithm: Algorithm | None = None
        self._observed = 0  # batches the in-memory algorithm has observed
        # (batch id, digest) of the pending batch once compared with the algorithm's, and its
        # cumulative run ends: later calls compare the digest only and find arms in O(log runs)
        self._checked: tuple[int, str] | None = None
        self._ends: tuple[int, np.ndarray] | None = None

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
            given take the live defaults (:data:`banditkit.live.defaults.LIVE_DEFAULTS`: the
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
            them with confidence (:mod:`banditkit.live.guardrails`): each
            ``{"metric": name, "rule": "max_increase" | "max_decrease", "margin": x,
            "range": [lo, hi]}``; ``record`` then takes ``metrics={name: values}``.
        guardrail_alpha : float
            The probability, over all guardrails, arms and looks together, that a guardrail
            which holds in truth ever pauses the experiment; in (0, 1).
        outcome_window : float, optional
            Seconds a unit's outcome is awaited after its assignment (> 0, finite); default
            :data:`~banditkit.live.outcome_window.DEFAULT_WINDOW`, one day. A unit unanswered
            when its window closes is resolved by ``missing`` on the next call
            (:mod:`banditkit.live.outcome_window`), so a batch never waits longer.
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
            (:mod:`banditkit.live.overflow`): ``"design"`` (default) draws their arms from the
            current design's shares, ``"uniform"`` uniformly over the arms still in play,
            ``"control"`` gives them the control; ``"off"`` returns fewer units instead. Once
            the experiment has finished (or was stopped), every unit is a rollout unit of the
            recommended or committed arm, whatever the rule but ``"off"``.
        who : str
            Who creates it, for the audit log (:meth:`audit`).
        reward_type : {"binary", "bounded", "continuous"}, optional
            What the rewards are, for the statistics of :meth:`status`, independently of the
            algorithm (:mod:`banditkit.live.verdict_spec`); default: ``"bounded"`` on the
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
        from .. import __version__  # the package imports this module first

        check_location(path, name)
        names, X = arm_names(arms)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ExperimentError(f"seed must be a non-negative integer, got {seed!r}")
        if horizon is not None and (isinstance(horizon, bool)
                                    or not isinstance(horizon, (int, np.integer))
                                    or horizon < 1):
            raise ExperimentError(f"horizon must be an integer >= 1, got {horizon!r}")
        if algorithm in SEQUENCE_IN_MEMORY and horizon is not None and horizon > MAX_SEQUENCE:
            raise ExperimentError(
                f"horizon: {algorithm} shuffles each epoch's pulls and a live experiment holds "
                f"a batch's pull sequence in memory (about 40 bytes a pull: {horizon:.3g} pulls "
                f"need about {40 * horizon / 2**30:.0f} GiB); use a horizon of at most "
                f"{MAX_SEQUENCE:.0e}")
        if order not in ("shuffled", "batch"):
            raise ExperimentError(f"order must be 'shuffled' or 'batch', got {order!r}")
        if control is None:
            control = names[0]
        elif not isinstance(control, str) or control not in names:
            raise ExperimentError(f"control must be one of the arm names {names}, got "
                                  f"{control!r}")
        rails = check_guardrails(guardrails)
        guardrail_alpha = check_alpha(guardrail_alpha, "guardrail_alpha")
        defaults = tuple(k for k, v in (("outcome_window", outcome_window),
                                        ("missing", missing)) if v is None)
        window = check_window(DEFAULT_WINDOW if outcome_window is None else outcome_window)
        if missing is not None:
            missing = check_missing(missing)
            if missing == "zero" and thresholds is not None:
                raise ExperimentError("missing: 'zero' records reward 0 for a unit unanswered "
                                      "when its window closes but cannot know its costs; an "
                                      "experiment with cost thresholds needs missing='expire'")
        _check_clock(clock)
        overflow = _overflow.check_rule(overflow)
        who = check_who(who)
        # the declared rewards need the algorithm's range only for their default: checked
        # once here against a None range (names every rule), again below against the range
        check_verdicts(reward_type, reward_range, verdicts, (0.0, 1.0))
        params = dict(params or {})
        try:
            json.dumps(params, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ExperimentError(f"params must be JSON values (numbers, strings, lists) and "
                                  f"finite: {error}") from None
        given = params
        try:
            entry = get_policy(algorithm) if isinstance(algorithm, str) else None
        except ValueError as error:
            raise ExperimentError(f"algorithm {algorithm!r}: {error}") from None
        live_defaults: list[str] = []
        if entry is not None and not [p for p in params if p not in entry.parameters()]:
            # unknown parameters are refused by name when the algorithm is built below
            params, live_defaults = params_in_force(algorithm, params)
            if "control_arm" in params and "control_arm" not in given:
                # the algorithm's control (its floor) is the experiment's control
                params["control_arm"] = names.index(control)
        if thresholds is not None:
            values = _numbers(thresholds)
            if (values is None or values.dtype.kind == "b" or values.ndim != 1
                    or values.size == 0 or not np.all((values >= 0) & (values <= 1))):
                raise ExperimentError(f"thresholds must be a non-empty list of numbers in "
                                      f"[0, 1], one per cost, got {thresholds!r}")
            thresholds = values.astype(float)
        meta = {"algorithm": algorithm, "params": params, "params_given": given,
                "live_defaults": live_defaults, "seed": int(seed),
                "horizon": None if horizon is None else int(horizon), "arms": names,
                "features": None if X is None else X.tolist(),
                "thresholds": None if thresholds is None else thresholds.tolist(),
                "order": order, "control": control,
                "guardrails": [g.as_json() for g in rails], "guardrail_alpha": guardrail_alpha,
                "overflow": overflow, "created": stamp(micros((clock or time.time)())),
                "banditkit": __version__}
        # build the algorithm and ask its first batch before writing anything, so that bad
        # input (or arms the algorithm cannot work with) creates no file
        first = cls._build(meta, LiveArms(len(names), X, thresholds))
        first_batch = _next_batch(first, algorithm)
        meta["create_warnings"] = horizon_warnings(first, first_batch, meta["horizon"],
                                                   names)
        spec = check_verdicts(reward_type, reward_range, verdicts, first.reward_range)
        meta["verdicts"] = spec.as_json()
        if missing is None:
            # a binary metric's unanswered unit did not convert; a continuous one's is unknown
            missing = ("zero" if spec.reward_type == "binary" and not first.n_costs
                       else "expire" if spec.reward_type == "continuous"
                       else _default_missing(first.reward_range, first.n_costs))
        meta.update(OutcomeWindow(window, missing, defaults).as_meta())
        if X is not None:
            try:  # features an algorithm never reads would be silently dropped: refuse them
                cls._build(meta, LiveArms(len(names), None, thresholds))
            except ExperimentError:
                pass
            else:
                raise ExperimentError(f"arms: {algorithm} takes arm names, not features (it "
                                      "would ignore them); pass a list of names")
        experiment = cls(create_store(path, name, meta), clock)
        experiment._algorithm = first  # built from this meta, its first batch asked: reuse it
        try:
            with experiment._transaction() as conn:
                experiment._audit(conn, who, "create", {"algorithm": algorithm,
                                                        "overflow": overflow})
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
        _check_clock(clock)
        experiment = cls(open_store(path, name, readonly), clock)
        try:
            with experiment._transaction() as conn:
                # replays the stored batches now, so a damaged file is refused at once
                if experiment._journal.format in UPGRADABLE:
                    experiment._upgrade(conn)
            if not readonly:
                experiment._journal.make_durable()  # writes: only once the file is accepted
        except BaseException:
            experiment.close()
            raise
        return experiment

    def _upgrade(self, conn: Connection) -> None:
        """Bring a format 5 to 8 experiment to :data:`FORMAT` in the caller's transaction (see
        :meth:`open`): the columns it lacks, then the resolved prefix rebuilt from the units
        (format 9 counts every arm to one cursor, G: an older file's sums follow each arm's
        own cursor and are not kept)."""
        from .journal import upgrade_5_to_6, upgrade_6_to_7, upgrade_7_to_8

        old = self._journal.format
        types = self._journal.types
        statements = []
        if old == 5:  # its prefix tables are created in the newest layout
            statements += upgrade_5_to_6(types)
        if old in (5, 6):
            statements += upgrade_6_to_7(types, prefix_tables=old == 6)
        if old in (6, 7):
            statements += upgrade_7_to_8(types)
        for statement in statements:
            conn.execute(statement)
        if old == 5:
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                             [(k, json.dumps(v)) for k, v in OutcomeWindow(None, None)
                              .as_meta().items()])
        conn.execute("UPDATE meta SET value = ? WHERE key = 'format'", (json.dumps(FORMAT),))
        _rebuild_prefix(conn, self._journal, len(self.arm_names), len(self.guardrails))
        self._journal.format = FORMAT
        self._plugin_catch_up(conn)  # the plug-in's sums from the first unit

    def _micros(self) -> int:
        """The experiment's clock now, in microseconds since the epoch."""
        return micros(self._clock())

    def _stamp(self) -> str:
        """The experiment's clock now, as the tables store times."""
        return stamp(self._micros())

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
    def path(self) -> Path | None:
        """The SQLite file; ``None`` for an experiment in PostgreSQL (see :attr:`url`)."""
        return self._journal.path

    @property
    def url(self) -> str | None:
        """The PostgreSQL database's URL (without its password); ``None`` for a file."""
        return self._journal.url

    @property
    def name(self) -> str | None:
        """The experiment's name in its PostgreSQL database; ``None`` for a file."""
        return self._journal.name

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
    def _transaction(self, resolve: bool = False,
                     read_ahead: Sequence[_reads.Read] = ()) -> Iterator[Connection]:
        """The call's transaction with the algorithm brought up to date (:meth:`_sync`).

        Its first reads go with the lock in one round trip (:mod:`banditkit.live.reads`): the
        stored batches, ``read_ahead``, and with ``resolve`` (a call that starts with
        :meth:`_resolve`) the units whose window closed by now, the clock read here once for
        that ``_resolve``."""
        self._stored_now = None
        reads = [_reads.batches(0 if self._algorithm is None else self._observed)]
        if self._wants_plugin:  # the plug-in's sums one call behind: caught up below
            reads.append(_reads.PLUGIN_BEHIND)
        if resolve and self.window.seconds is not None:
            self._resolve_at = self._micros()
            reads.append(_reads.stale_units(self._journal.indexed_by("units_waiting"),
                                            stamp(self._resolve_at - self.window.micros)))
        try:
            with self._rolled_back_on_error(self._journal.transaction([*reads, *read_ahead])
                                            ) as conn:
                self._sync(conn)
                self._plugin_catch_up(conn)
                yield conn
        finally:
            self._resolve_at = None

    #: the time (µs) the running call's :meth:`_resolve` resolves at, read by _transaction
    _resolve_at: int | None = None
    #: the batch the running call stored (:meth:`_pending`), if any
    _stored_now: int | None = None

    @contextmanager
    def _rolled_back_on_error(self, store_block: Any) -> Iterator[Any]:
        """``store_block`` (a transaction or a group of them) entered after the file check; when
        it raises, the store has rolled back, and the in-memory algorithm may be ahead of it:
        rebuild it next time (and check the stored batches again: a batch stored in the block
        is gone). The driver's errors become one ExperimentError.

        A call refused by the library's own checks (an ExperimentError: a unit never assigned,
        a reward out of range) that observed no batch keeps the algorithm: its state is the
        store's as of the last commit, so the next call need not rebuild and replay it all
        (every such 400 of the service cost a full replay). Only the stored-batch check is
        taken back to where it was (a batch this call stored is rolled back with it)."""
        self._journal.check_still_there()
        algorithm, observed, checked = self._algorithm, self._observed, self._checked
        try:
            with store_block as inside:
                yield inside
        except BaseException as error:
            refused = (type(error) is ExperimentError and algorithm is not None
                       and self._algorithm is algorithm and self._observed == observed)
            if refused:
                self._checked, self._ends = checked, None
            else:
                self._algorithm = None
                self._checked = self._ends = None
            if isinstance(error, self._journal.errors):
                raise ExperimentError(f"{self._journal.label} cannot be read or written "
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
        with self._rolled_back_on_error(self._journal.group()):
            yield

    def _sync(self, conn: Connection) -> None:
        """Bring the in-memory algorithm to the file's state: replay the batches observed since
        (by another process, or all of them after open) and check the pending one."""
        if self._algorithm is None:
            self._algorithm = self._build(self._journal_meta(), self._problem)
            self._observed = 0
            self._checked = self._ends = None
        rows = conn.execute(*_reads.batches(self._observed)).fetchall()
        for batch_id, digest, reward_sums, cost_sums in rows:
            asked = self._ask()
            if batch_id != self._observed or asked is None:
                self._mismatch(batch_id)
            if self._checked != (batch_id, digest) and isinstance(asked, IIDBatch):
                # an i.i.d. batch: its stored description against the algorithm's, O(arms)
                row = conn.execute("SELECT cdf, state, n_pulls FROM draws WHERE batch = ?",
                                   (batch_id,)).fetchone()
                try:
                    stored_draws = unpack_draws(*(row if row is not None else (None,) * 3))
                except ValueError as error:
                    self._algorithm = None
                    raise ExperimentError(f"{self._journal.label} is damaged: stored batch "
                                          f"{batch_id} cannot be read ({error})") from None
                if not (pack_draws(stored_draws)[2] == pack_draws(asked)[2] == digest):
                    self._mismatch(batch_id)
                self._checked = (batch_id, digest)
            if self._checked != (batch_id, digest):
                # once per batch and process: the stored runs against the algorithm's (O(runs)
                # in C); later calls compare the digest alone
                row = conn.execute("SELECT arms, counts FROM runs WHERE batch = ?",
                                   (batch_id,)).fetchone()
                arms, counts = row if row is not None else (None, None)
                try:
                    stored = unpack_runs(arms, counts)
                except ValueError as error:
                    self._algorithm = None
                    raise ExperimentError(f"{self._journal.label} is damaged: stored batch "
                                          f"{batch_id} cannot be read ({error})") from None
                if (not np.array_equal(asked.arms, stored[0])
                        or not np.array_equal(asked.counts, stored[1])
                        or digest != pack_runs(asked.arms, asked.counts)[2]):
                    self._mismatch(batch_id)
                self._checked = (batch_id, digest)
            if reward_sums is None:
                break  # the pending batch
            try:
                costs = (None if cost_sums is None
                         else np.asarray(json.loads(cost_sums), float))
                sums = np.asarray(json.loads(reward_sums), float)
                pulls = self._check_totals(conn, batch_id, asked, sums)
                if isinstance(asked, IIDBatch):
                    self._algorithm.observe_arm_sums(asked, sums, pulls)
                else:
                    self._algorithm.observe(asked, sums, costs)
            except (ValueError, TypeError) as error:
                self._algorithm = None
                raise ExperimentError(f"{self._journal.label} is damaged: the stored outcome of "
                                      f"batch {batch_id} is refused ({error})") from None
            self._observed += 1

    def _mismatch(self, batch_id: int) -> None:
        self._algorithm = None
        raise ExperimentError(
            f"{self._journal.label}: replaying the experiment, {self.algorithm_name} asks "
            f"for other pulls than stored batch {batch_id} (the file was edited, or "
            "written by a banditkit whose algorithm differs); refusing to go on")

    def _check_totals(self, conn: Connection, batch_id: int, batch: Batch,
                      sums: np.ndarray) -> np.ndarray:
        """Refuse an observed batch whose stored run sums disagree with the running totals of
        its units (an edit of ``batches.reward_sums`` or of ``totals``): O(arms). An i.i.d.
        batch stores per-arm sums, and its pulls per arm are the totals' (its runs are never
        computed): they must add up to its size. Returns the pulls per arm."""
        K = len(self.arm_names)
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
            self._check_arm_index(arm)
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

    def _pending(self, conn: Connection) -> tuple[int, Batch] | None:
        """The batch waiting for rewards (asked now and stored if new), or ``None`` once the
        algorithm has stopped."""
        batch = self._ask()
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
                 batch.n_pulls, self._stamp()))
            if lazy:
                conn.execute("INSERT INTO draws (batch, cdf, state, n_pulls) VALUES "
                             "(?, ?, ?, ?)", (batch_id, cdf, state, batch.n_pulls))
            else:
                conn.execute("INSERT INTO runs (batch, arms, counts) VALUES (?, ?, ?)",
                             (batch_id, arms, counts))
            self._checked = (batch_id, digest)
            self._stored_now = batch_id
        return batch_id, batch

    # -- the exchange ------------------------------------------------------------------------
    def assign(self, n: int | None = None, keys: Sequence[str | int] | None = None, *,
               covariates: Sequence[float] | None = None) -> pd.DataFrame:
        """Arms for the next ``n`` units, in the algorithm's pull order, with their unit ids.

        Slots of expired units are handed out again first. Units beyond the pending batch's
        slots (the algorithm needs its rewards before it can ask for more: a fully sequential
        policy such as UCB1 has one slot at a time) are **overflow** units, and once the
        experiment has finished or was stopped, **rollout** units of the recommended arm
        (:mod:`banditkit.live.overflow`): n rows come back every call, unless the
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

        Returns
        -------
        DataFrame with columns ``unit`` (int id), ``arm`` (name), ``arm_index``, ``batch``;
        with ``keys``, also ``key`` (as stored: text) and ``repeated`` (``True`` when the unit
        was assigned to the key by an earlier call and no slot was taken), one row per key in
        the order given, less the new keys that found no slot (``attrs["reason"]`` says why).
        """
        return self.assign_rows(n, keys, covariates=covariates).frame()

    def assign_rows(self, n: int | None = None, keys: Sequence[str | int] | None = None, *,
                    covariates: Sequence[float] | None = None) -> Assignment:
        """:meth:`assign`, its units as plain lists (an
        :class:`~banditkit.live.assignment.Assignment`, whose ``.frame()`` is what ``assign``
        returns): the same call, the same units, without building a DataFrame (about 1 ms a
        call), for servers (``banditkit serve``)."""
        self._check_writable("assign")
        if keys is not None:
            keys = _as_keys(keys, n)
            n = len(keys)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ExperimentError(f"n must be an integer >= 1, got {n!r}")
        covariate_values = check_unit_values(self.verdict_spec, "covariates", covariates,
                                             int(n), required=self.window.missing == "zero")
        with self._transaction(resolve=True, read_ahead=self._assign_reads(int(n), keys)
                               ) as conn:
            self._resolve(conn)  # units whose outcome window closed, by the experiment's rule
            state = self._ops_state(conn)
            stopped = state.get("stopped")
            closed = (self._paused(conn, state)  # guardrails or by hand: nothing while paused
                      or (stopped is not None and not stopped.get("rollout", True)
                          and f"the experiment was "
                          f"{'archived' if 'archived' in state else 'stopped'} by "
                          f"{stopped['by']} at {stopped['at']} (without rollout); no unit "
                          "is assigned"))
            if closed:  # with keys, the columns a keyed call returns, empty
                return Assignment([], [], [], self.arm_names, closed, [],
                                  *(([], []) if keys is not None else ()))
            # sticky units: a key's live unit comes back as it is, without a slot (an
            # overflow or rollout unit too: a key keeps its arm)
            known = {} if keys is None else self._keyed_units(conn, keys)
            wanted = int(n) if keys is None else sum(
                1 for k in keys if k not in known or known[k][3] is not None)
            # a stopped experiment hands out no slot of the algorithm's
            pending = (self._pending(conn) if stopped is None and (wanted or keys is None)
                       else None)
            asked = int(n)  # Python ints: no overflow of a numpy n near 2**64
            ids: list[int] = []
            arms = np.empty(0, dtype=np.int64)
            batch_id = self._observed if pending is not None else max(self._observed - 1, 0)
            if pending is not None:
                batch_id, batch = pending
                handed = self._hand_out(conn, batch_id, batch, min(wanted, batch.n_pulls),
                                        asked, self._stored_now == batch_id)
                assert handed is not None  # not ``whole``: never None
                ids, arms = handed
            if pending is None and self._observed == 0:
                self._pending(conn)  # stopped before any call: file the units under batch 0
            extra_ids, extra_arms, why = self._serve_overflow(conn, pending, batch_id,
                                                              wanted - len(ids),
                                                              stopped is not None)
            batches = [batch_id] * (len(ids) + len(extra_ids))
            ids, arms = ids + extra_ids, np.concatenate([arms, extra_arms])
            if keys is None:
                rows = (ids, arms.tolist(), batches, None, None)
            else:
                rows = self._keyed_rows(conn, keys, known, ids, arms.tolist(), batches)
            if covariate_values is not None:
                store_covariates(conn, rows[0], rows[3], keys, covariate_values)
            got = len(rows[0])
            if got == asked:
                reason = why
            elif pending is None:
                reason = self._finished_reason() if wanted else None
            else:
                reason = self._short_reason(conn, batch_id, batch, asked, got)
        unit, arm, batch_ids, key, repeated = rows
        return Assignment(unit, arm, batch_ids, self.arm_names, reason, extra_ids, key, repeated)

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
        the slots are cut into calls (:mod:`.slots`), so the split is exact.

        Parameters
        ----------
        counts : sequence of int
            Each call's ``n`` (>= 1).
        """
        self._check_writable("assign")
        for n in counts:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ExperimentError(f"n must be an integer >= 1, got {n!r}")
        total = sum(int(n) for n in counts)
        with self._transaction(resolve=True,
                               read_ahead=self._assign_reads(total, None)) as conn:
            self._resolve(conn)  # as each call would (their windows close in the same instant)
            state = self._ops_state(conn)
            if state.get("stopped") is not None or self._paused(conn, state):
                return None
            pending = self._pending(conn)
            if pending is None:
                return None
            batch_id, batch = pending
            handed = self._hand_out(conn, batch_id, batch, total, total,
                                    self._stored_now == batch_id, whole=True)
            if handed is None:
                return None
            ids, arms = handed[0], handed[1].tolist()
        parts, start = [], 0
        for n in counts:
            stop = start + int(n)
            parts.append(Assignment(ids[start:stop], arms[start:stop], [batch_id] * int(n),
                                    self.arm_names, None, []))
            start = stop
        return parts

    def _assign_reads(self, n: int, keys: list[str] | None) -> list[_reads.Read]:
        """The reads ``assign(n, keys)`` makes first, sent with the lock
        (:mod:`banditkit.live.reads`): the operator's state, the keys' units, the pending
        batch's re-offered slots and count handed out (for the batch pending when the call
        starts; another process's progress makes them unused, never wrong), the overflow
        counter."""
        reads = [_reads.ops_state(), _reads.reoffered_slots(self._observed, n),
                 _reads.handed(self._observed)]
        if keys is not None:
            reads.append(_reads.keyed_units(keys[:CHUNK]))
        if self.overflow != "off":
            reads.append(_reads.OVERFLOW_DRAWN)
        return reads

    def _hand_out(self, conn: Connection, batch_id: int, batch: Batch, n: int, asked: int,
                  new: bool, whole: bool = False) -> tuple[list[int], np.ndarray] | None:
        """Insert up to ``n`` new units into the pending batch's next slots (expired units'
        slots first): their ids and arms, in slot-order. ``asked``: the call's ``n`` (≥ n, the
        re-offered slots' read limit, as read ahead); ``new``: the batch was stored by this
        call (none of its slots is handed out or expired: nothing to read). With ``whole``, all
        ``n`` or none: ``None`` (nothing written) when fewer than ``n`` slots are left."""
        if new:
            reoffer: list[int] = []
            handed = 0
        else:
            # slots of expired units first (a partial index holds the expired ones only)
            reoffer = [r[0] for r in conn.execute(
                *_reads.reoffered_slots(batch_id, asked))][:n]
            (handed,) = conn.execute(*_reads.handed(batch_id)).fetchone()
        take = min(batch.n_pulls - handed, n - len(reoffer))
        if whole and len(reoffer) + take < n:
            return None
        if isinstance(batch, IIDBatch):
            # i.i.d. pulls are in a random order already (exchangeable: a drift during the
            # batch cannot line up with the arms), so the slots go out in draw order,
            # whatever ``order`` says, and their arms cost O(units), not O(batch)
            fresh = np.arange(handed, handed + take, dtype=np.int64)
            slots = np.concatenate([np.asarray(reoffer, dtype=np.int64), fresh])
            arms = batch.arms_at(slots)
        else:
            slots = np.concatenate([np.asarray(reoffer, dtype=np.int64),
                                    self._slot_order(batch_id, batch.n_pulls, handed,
                                                     take)])
            arms = batch.arms[np.searchsorted(self._run_ends(batch_id, batch), slots,
                                              side="right")]
        now = self._stamp()
        conn.executemany("INSERT INTO units (batch, slot, arm, assigned_at) "
                         "VALUES (?, ?, ?, ?)",
                         [(batch_id, int(s), int(a), now)
                          for s, a in zip(slots, arms, strict=True)])
        # the write lock is held, so the new ids are consecutive and end at the last one
        # (read before the totals' inserts, which move last_insert_rowid; PostgreSQL's
        # sequence moves only under the lock too, and is read only after an insert)
        ids: list[int] = []
        if slots.size:
            (last,) = conn.execute(self._journal.last_id_sql).fetchone()
            ids = list(range(last - slots.size + 1, last + 1))
        if take:
            conn.execute("UPDATE batches SET handed = handed + ? WHERE id = ?",
                         (take, batch_id))
        per_arm = np.bincount(arms, minlength=len(self.arm_names))
        self._add_totals(conn, batch_id, {int(a): (int(c), 0, 0.0, 0.0, 0)
                                          for a in np.flatnonzero(per_arm)
                                          for c in [per_arm[a]]})
        return ids, np.asarray(arms, dtype=np.int64)

    def _keyed_units(self, conn: Connection, keys: list[str]
                     ) -> dict[str, tuple[int, int, int, str | None]]:
        """The current unit of each key already known: key → (unit, arm, batch, expired_at).
        By the keys' unique index, in chunks: O(len(keys))."""
        found: dict[str, tuple[int, int, int, str | None]] = {}
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start: start + CHUNK]
            for key, unit, arm, batch_id, expired_at in conn.execute(
                    *_reads.keyed_units(chunk)):
                self._check_arm_index(arm)
                found[key] = (unit, arm, batch_id, expired_at)
        return found

    def _keyed_rows(self, conn: Connection, keys: list[str],
                    known: Mapping[str, tuple[int, int, int, str | None]], ids: list[int],
                    arms: list[int], batch_ids: list[int]) -> tuple[list, ...]:
        """Store the keys of the new units (``ids``, given to the keys that need a slot in
        their order) in the caller's transaction; the columns (unit, arm, batch, key,
        repeated) of every key served."""
        rows: list[tuple[int, int, int, str, bool]] = []
        fresh = iter(zip(ids, arms, batch_ids, strict=True))
        stored: list[tuple[int, str]] = []
        superseded: list[str] = []
        for key in keys:
            old = known.get(key)
            if old is not None and old[3] is None:  # its unit is live: the same unit again
                rows.append((old[0], old[1], old[2], key, True))
                continue
            unit_arm = next(fresh, None)
            if unit_arm is None:
                continue  # no slot left for it this call
            if old is not None:  # its unit expired: the key now points to the new unit
                superseded.append(key)
            stored.append((unit_arm[0], key))
            rows.append((unit_arm[0], unit_arm[1], unit_arm[2], key, False))
        now = self._stamp()
        conn.executemany("UPDATE keys SET superseded_at = ? WHERE key = ? AND "
                         "superseded_at IS NULL", [(now, k) for k in superseded])
        conn.executemany("INSERT INTO keys (unit, key) VALUES (?, ?)", stored)
        return tuple([r[i] for r in rows] for i in range(5))

    def _finished_reason(self) -> str:
        algorithm = self._algorithm
        assert algorithm is not None
        if self.horizon is not None and algorithm.t >= self.horizon:
            return (f"the experiment is finished: its horizon of {self.horizon} pulls is "
                    "spent; no more units are assigned")
        return (f"the experiment is finished: {self.algorithm_name} asks for no more pulls "
                "(see status for its decision)")

    def _short_reason(self, conn: Connection, batch_id: int, batch: Batch,
                      asked: int, got: int) -> str:
        """One line: why ``assign`` handed out ``got`` < ``asked`` units."""
        (waiting,) = conn.execute(
            "SELECT COALESCE(SUM(assigned - recorded), 0) FROM totals WHERE batch = ?",
            (batch_id,)).fetchone()
        size = f"batch {batch_id + 1} has {batch.n_pulls} pull(s)"
        algorithm = self._algorithm
        R = getattr(algorithm, "epoch_length", None)
        if R is not None and getattr(algorithm, "update", None) == "periodic":
            size += (f" (an epoch of Xiong et al.'s Algorithm 4: λ is refreshed after pull 1, "
                     f"then every R = {R} pulls, line 8)")
        elif batch.n_pulls == 1 and not algorithm.stops_by_itself:
            size += f" ({self.algorithm_name} chooses one pull at a time)"
        if self.horizon is not None and algorithm.t + batch.n_pulls >= self.horizon:
            size += f" (the last before the horizon of {self.horizon})"
        head = ("no unit assigned" if got == 0 else f"{got} of {asked} units assigned")
        return (f"{head}: {size}, all now assigned; the algorithm needs their rewards "
                f"({waiting} still waiting) before it chooses the next batch")

    def _slot_order(self, batch_id: int, n_pulls: int, start: int = 0,
                    count: int | None = None) -> np.ndarray:
        """Slots ``start .. start + count − 1`` of the order in which the slots of a batch are
        handed out: the algorithm's pull order, or (``order="shuffled"``) a keyed random
        permutation evaluated at those positions only (:func:`.slots.slot_order`), the same
        whatever the sizes of the calls and in any process."""
        count = n_pulls - start if count is None else count
        if self.order == "batch":
            return np.arange(start, start + count, dtype=np.int64)
        return slot_order(self.seed, batch_id, n_pulls, start, count)

    def _run_ends(self, batch_id: int, batch: Batch) -> np.ndarray:
        """Cumulative pulls at the end of each run of the pending batch (computed once)."""
        if self._ends is None or self._ends[0] != batch_id:
            self._ends = (batch_id, np.cumsum(batch.counts))
        return self._ends[1]

    @staticmethod
    def _add_totals(conn: Connection, batch_id: int,
                    deltas: Mapping[int, tuple[int, int, float, float, int]]) -> None:
        """Add (assigned, recorded, reward, reward², non-binary) to the running totals of
        (batch, arm) and of (all batches, arm), in the caller's transaction; with
        ``batch_id`` :data:`~banditkit.live.journal.OVERFLOW_TOTALS`, to the overflow totals
        alone (the algorithm's rows never see overflow and rollout units)."""
        targets = ((OVERFLOW_TOTALS,) if batch_id == OVERFLOW_TOTALS
                   else (batch_id, ALL_BATCHES))
        rows = [(b, arm, *delta) for arm, delta in deltas.items() for b in targets]
        if not rows:
            return
        conn.executemany(
            "INSERT INTO totals (batch, arm, assigned, recorded, reward, reward_sq, non_binary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (batch, arm) DO UPDATE SET "
            "assigned = totals.assigned + excluded.assigned, "
            "recorded = totals.recorded + excluded.recorded, "
            "reward = totals.reward + excluded.reward, "
            "reward_sq = totals.reward_sq + excluded.reward_sq, "
            "non_binary = totals.non_binary + excluded.non_binary", rows)

    def record(self, units: Sequence[int], rewards: Sequence[float],
               costs: Sequence[Sequence[float]] | None = None, *,
               metrics: Mapping[str, Sequence[float]] | None = None,
               covariates: Sequence[float] | None = None,
               denominators: Sequence[float] | None = None) -> int:
        """Record the rewards (and costs: shape (units, m); and the guardrail ``metrics``:
        metric name → one value per unit) of assigned units.

        With ``verdicts={"cuped": True}``, each unit's pre-experiment ``covariates`` (one per
        unit) come here unless ``assign`` stored them; with ``verdicts={"ratio": True}``,
        each unit's ``denominators`` (≥ 0) are required (:mod:`banditkit.live.adjusted`).

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
        inputs = self._record_inputs(units, rewards, costs, metrics, covariates, denominators)
        ids = inputs[0]
        with self._transaction(resolve=True,
                               read_ahead=[_reads.units_by_id(ids[:CHUNK].tolist()),
                                           PREFIX_MOMENTS]) as conn:
            return len(self._record_in(conn, *inputs))

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
        joined = _joined_calls(calls)
        if joined is not None:  # plain calls: their lists checked once, joined (inputs.py)
            ids, values = self._record_inputs(joined[0], joined[1], None, None)[:2]
            sizes = joined[2]
        else:
            inputs = [self._record_inputs(units, rewards, None, None)
                      for units, rewards in calls]
            ids = np.concatenate([i[0] for i in inputs])
            if np.unique(ids).size != ids.size:
                raise ExperimentError("units: each unit may appear once per call")
            values = np.concatenate([i[1] for i in inputs])
            sizes = [i[0].size for i in inputs]
        with self._transaction(resolve=True,
                               read_ahead=[_reads.units_by_id(ids[:CHUNK].tolist()),
                                           PREFIX_MOMENTS]) as conn:
            new = self._record_in(conn, ids, values, None, None)
        ends = np.cumsum(sizes)
        counts = np.bincount(np.searchsorted(ends, [entry[-1] for entry in new], side="right"),
                             minlength=len(sizes))
        return [int(c) for c in counts]

    def _record_inputs(self, units: Sequence[int], rewards: Sequence[float], costs: Any,
                       metrics: Mapping[str, Sequence[float]] | None,
                       covariates: Sequence[float] | None = None,
                       denominators: Sequence[float] | None = None) -> tuple:
        """:meth:`record`'s arguments checked before any work: ids, rewards, costs, metrics,
        covariates, denominators."""
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
        check_summable("rewards", values, ids)
        cost_values = self._check_costs(costs, ids)
        metric_values = check_metrics(self.guardrails, metrics, ids.size)
        spec = self.verdict_spec
        covariate_values = check_unit_values(spec, "covariates", covariates, ids.size,
                                             required=False)
        denominator_values = check_unit_values(spec, "denominators", denominators, ids.size,
                                               required=True)
        return ids, values, cost_values, metric_values, covariate_values, denominator_values

    def _record_in(self, conn: Connection, ids: np.ndarray, values: np.ndarray,
                   cost_values: np.ndarray | None, metric_values: np.ndarray | None,
                   covariate_values: np.ndarray | None = None,
                   denominator_values: np.ndarray | None = None) -> list[tuple]:
        """:meth:`record` in the caller's transaction: the units newly recorded, each as
        (reward, costs, unit, batch, arm, index in ``ids``)."""
        self._resolve(conn)  # first: a unit whose window closed is refused below
        algorithm = self._algorithm
        assert algorithm is not None
        self._check_range(ids, values, algorithm.reward_range, "reward")
        self._check_declared(ids, values)
        if cost_values is not None:
            for j in range(cost_values.shape[1]):
                self._check_range(ids, cost_values[:, j], algorithm.cost_range, "cost")
        known = self._units(conn, ids)
        if algorithm.reward_range is None and self.verdict_spec.reward_range is None:
            self._warn_outliers(conn, ids, values, known)
        new = []
        for i, unit in enumerate(ids.tolist()):
            row = known.get(unit)
            if row is None:
                raise ExperimentError(f"units: unit {unit} was never assigned")
            (batch_id, _, reward, stored_costs, expired_at, arm, stored_metrics, kind,
             imputed, stored_covariate, stored_denominator) = row
            check_stored(unit, i, stored_covariate, covariate_values, stored_denominator,
                         denominator_values, self.verdict_spec.cuped and reward is None)
            if imputed:
                raise ExperimentError(
                    f"units: unit {unit}'s outcome window ({self.window.seconds:g} s) "
                    f"closed before its reward came, and missing='zero' recorded 0 for it; "
                    "an outcome after the window is not recorded")
            if kind != ALGORITHM:  # overflow and rollout: their totals, never the batch's
                batch_id = OVERFLOW_TOTALS
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
                unit_metrics = (None if metric_values is None
                                else metric_values[i].tolist())
                if stored_metrics is not None and json.loads(stored_metrics) != unit_metrics:
                    raise ExperimentError(f"metrics: unit {unit} already has metrics "
                                          f"{json.loads(stored_metrics)} (got "
                                          f"{unit_metrics}); they are recorded once")
                continue
            new.append((float(values[i]), None if unit_costs is None
                        else json.dumps(unit_costs), unit, batch_id, arm, i))
        now = self._stamp()
        conn.executemany("UPDATE units SET reward = ?, costs = ?, metrics = ?, "
                         "recorded_at = ?, covariate = COALESCE(?, covariate), "
                         "denominator = ? WHERE id = ?",
                         [(r, c, None if metric_values is None
                           else json.dumps(metric_values[i].tolist()), now,
                           None if covariate_values is None else covariate_values[i],
                           None if denominator_values is None else denominator_values[i], u)
                          for r, c, u, _, _, i in new])
        if metric_values is not None and new:
            self._add_metric_totals(conn, [(b, a, metric_values[i]) for *_, b, a, i in new])
        deltas: dict[int, dict[int, list]] = {}
        for r, _, _, b, a, _ in new:
            d = deltas.setdefault(b, {}).setdefault(a, [0, 0, 0.0, 0.0, 0])
            d[1] += 1
            d[2] += r
            d[3] += r * r
            d[4] += r not in (0.0, 1.0)
        for b, per_arm in deltas.items():
            self._add_totals(conn, b, {a: tuple(d) for a, d in per_arm.items()})
        # the one cursor G moves on (every arm with it) when the unit holding it got its reward
        _advance_prefix(conn, self._journal, {a for *_, a, _ in new}, len(self.guardrails),
                        report=False)
        self._observe_if_complete(conn)
        if self.guardrails and new:
            self._pause_on_breach(conn)
        return new

    @staticmethod
    def _warn_outliers(conn: Connection, ids: np.ndarray, values: np.ndarray,
                       known: dict[int, tuple]) -> None:
        """Warn about rewards far from their arm's counted ones (:mod:`.value_guard`)."""
        arms = np.array([known[u][5] if u in known else -1 for u in ids.tolist()])
        moments = {int(a): (n, t, q) for a, n, t, q in conn.execute(*PREFIX_MOMENTS)}
        warn_outliers(values, ids, arms, moments)

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
        check_summable("costs", values)
        return values

    @property
    def verdict_spec(self) -> VerdictSpec:
        """The declared rewards and sequences (:mod:`banditkit.live.verdict_spec`)."""
        algorithm_range = None if self._algorithm is None else self._algorithm.reward_range
        return spec_from_meta(self._verdict_meta, algorithm_range)

    @property
    def _wants_plugin(self) -> bool:
        """Whether the experiment keeps the plug-in's sums (bounded or binary rewards), known
        before the algorithm is built (a file without stored verdicts: unless its algorithm,
        once built, declares no range)."""
        if self._journal.format != FORMAT:  # an older file: its upgrade builds them
            return False
        stored = self._verdict_meta.get("verdicts")
        if stored is None:
            return self._algorithm is None or self._algorithm.reward_range is not None
        return stored.get("reward_type") != "continuous"

    #: A read-only call's plug-in sums caught up in memory (arm → (cursor, sums)).
    _plugin_fresh: dict = {}  # noqa: RUF012 (replaced, never mutated)

    def _plugin_catch_up(self, conn: Connection) -> None:
        """Bring the resolved prefix's plug-in sums to its cursor (:mod:`.resolved_prefix`):
        answered by the call's first round trip when it read ahead, stored with the call's
        writes, kept in memory by a read-only call."""
        self._plugin_fresh = {}
        tuning = self._plugin_tuning
        if tuning is None or self._journal.format != FORMAT:
            return
        fresh = plugin_catch_up(conn.execute(*_reads.PLUGIN_BEHIND).fetchall(), tuning)
        if not fresh:
            return
        if self.readonly:
            self._plugin_fresh = fresh
        else:
            conn.executemany(PLUGIN_UPDATE, [(*sums.tolist(), cursor, arm)
                                             for arm, (cursor, sums) in fresh.items()])

    def _fresh_plugin(self, prefix: ResolvedPrefix) -> ResolvedPrefix:
        """``prefix`` with the plug-in sums a read-only call caught up in memory."""
        if not self._plugin_fresh:
            return prefix
        plugin, at = prefix.plugin.copy(), prefix.plugin_cursor.copy()
        for arm, (cursor, sums) in self._plugin_fresh.items():
            if 0 <= arm < plugin.shape[0] and cursor == prefix.cursor[arm]:
                plugin[arm], at[arm] = sums, cursor
        return replace(prefix, plugin=plugin, plugin_cursor=at)

    @property
    def _plugin_tuning(self) -> PluginTuning | None:
        """How the resolved prefix accumulates the plug-in's sums (None: continuous rewards,
        which take no exact sequence)."""
        return PluginTuning.of(self.verdict_spec, len(self.arm_names))

    def _check_declared(self, ids: np.ndarray, values: np.ndarray) -> None:
        """Rewards against the declared ``reward_type`` (0/1, or in ``reward_range``)."""
        spec = self.verdict_spec
        if spec.reward_type == "binary":
            bad = np.flatnonzero((values != 0) & (values != 1))
            if bad.size:
                i = int(bad[0])
                raise ExperimentError(f"rewards must be 0 or 1 (reward_type='binary'): unit "
                                      f"{int(ids[i])} got {values[i]:g}")
        elif spec.reward_type == "bounded":
            self._check_range(ids, values, spec.reward_range, "reward")

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
    def _units(conn: Connection, ids: np.ndarray) -> dict[int, tuple]:
        found: dict[int, tuple] = {}
        for start in range(0, ids.size, CHUNK):
            for row in conn.execute(*_reads.units_by_id(ids[start: start + CHUNK].tolist())):
                found[row[0]] = row[1:]
        return found

    def _observe_if_complete(self, conn: Connection) -> None:
        """Let the algorithm observe the pending batch once every pull has a reward: the count
        comes from the running totals (O(arms)); so do the sums of an i.i.d. batch, which the
        algorithm observes by arm (:meth:`banditkit.Algorithm.observe_arm_sums`), and the run
        sums when every run is a different arm and the rewards are 0/1 (integer sums: exact
        in any order); otherwise they are summed over the batch's units in slot order, once
        per batch."""
        pending = self._pending(conn)
        if pending is None:
            return
        batch_id, batch = pending
        K = len(self.arm_names)
        recorded = np.zeros(K, dtype=np.int64)
        totals = np.zeros(K)
        non_binary = 0
        for arm, n, total, odd in conn.execute(
                "SELECT arm, recorded, reward, non_binary FROM totals WHERE batch = ?",
                (batch_id,)):
            self._check_arm_index(arm)
            recorded[arm], totals[arm] = n, total
            non_binary += odd
        if int(recorded.sum()) < batch.n_pulls:
            return
        cost_sums = None
        assert self._algorithm is not None
        if isinstance(batch, IIDBatch):
            # the IPS identifiers read per-arm sums only: the running totals, O(arms); with
            # 0/1 rewards integers, the simulation's numbers exactly
            self._algorithm.observe_arm_sums(batch, totals, recorded)
            self._observed += 1
            conn.execute("UPDATE batches SET reward_sums = ?, observed_at = ? WHERE id = ?",
                         (json.dumps(totals.tolist()), self._stamp(), batch_id))
            return
        if (not self._problem.n_costs and non_binary == 0
                and np.unique(batch.arms).size == batch.n_runs):
            reward_sums = totals[batch.arms]
        else:
            rows = conn.execute("SELECT slot, reward, costs FROM units WHERE batch = ? AND "
                                "expired_at IS NULL AND reward IS NOT NULL AND kind = 0 "
                                "ORDER BY slot", (batch_id,)).fetchall()
            reward_sums = batch.sum_runs(np.array([r[1] for r in rows], dtype=float))
            if self._problem.n_costs:
                cost_sums = batch.sum_runs(np.array([json.loads(r[2]) for r in rows],
                                                    dtype=float))
        assert self._algorithm is not None
        self._algorithm.observe(batch, reward_sums, cost_sums)
        self._observed += 1
        conn.execute("UPDATE batches SET reward_sums = ?, cost_sums = ?, observed_at = ? "
                     "WHERE id = ?",
                     (json.dumps(reward_sums.tolist()),
                      None if cost_sums is None else json.dumps(cost_sums.tolist()), self._stamp(),
                      batch_id))

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
            self._resolve(conn)
            count = self._expire(conn, units, older_than)
            if count:
                self._audit(conn, who, "expire", {"units": count, "older_than": older_than})
            return count

    def _expire(self, conn: Connection, units: Sequence[int] | None,
                older_than: float | None) -> int:
        """The expiry itself, in the caller's transaction (see :meth:`expire`)."""
        now = self._stamp()
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
            self._withdraw(conn, [(known[u][0], known[u][5], known[u][7]) for u in todo])
            _advance_prefix(conn, self._journal, {known[u][5] for u in todo},
                            len(self.guardrails), report=False)
            return len(todo)
        if (isinstance(older_than, bool)
                or not isinstance(older_than, (int, float, np.integer, np.floating))
                or not np.isfinite(older_than) or older_than < 0):
            raise ExperimentError(f"older_than must be a number of seconds >= 0, got "
                                  f"{older_than!r}")
        now_s = self._clock()  # older than the epoch means every unit: cut the cutoff there
        cutoff = datetime.fromtimestamp(now_s - min(float(older_than), now_s), UTC)
        stale = conn.execute("SELECT id, batch, arm, kind FROM units WHERE reward IS NULL "
                             "AND expired_at IS NULL AND assigned_at < ?",
                             (cutoff.isoformat(timespec="microseconds"),)).fetchall()
        conn.executemany("UPDATE units SET expired_at = ? WHERE id = ?",
                         [(now, u) for u, *_ in stale])
        self._withdraw(conn, [(b, a, k) for _, b, a, k in stale])
        _advance_prefix(conn, self._journal, {a for _, _, a, _ in stale}, len(self.guardrails),
                        report=False)
        return len(stale)

    def _withdraw(self, conn: Connection, units: list[tuple[int, int, int]]) -> None:
        """Take expired units (their (batch, arm, kind)) out of the running totals (an
        overflow or rollout unit out of the overflow totals: its slot is no batch's)."""
        counts: dict[int, dict[int, int]] = {}
        for b, a, kind in units:
            b = b if kind == ALGORITHM else OVERFLOW_TOTALS
            counts.setdefault(b, {})[a] = counts.get(b, {}).get(a, 0) + 1
        for b, per_arm in counts.items():
            self._add_totals(conn, b, {a: (-c, 0, 0.0, 0.0, 0) for a, c in per_arm.items()})

    # -- what it knows -------------------------------------------------------------------------
    def _check_arm_index(self, arm: object) -> None:
        """Refuse a stored unit whose arm is not one of the experiment's (a damaged or edited
        file), instead of an IndexError or a silent count for arm −1."""
        if (isinstance(arm, (bool, np.bool_)) or not isinstance(arm, (int, np.integer))
                or not 0 <= int(arm) < len(self.arm_names)):
            raise ExperimentError(f"{self._journal.label} is damaged: a unit's arm is {arm!r}, not "
                                  f"one of the {len(self.arm_names)} arms")

    def decisions(self) -> Any:
        """The algorithm's decision log so far (:class:`banditkit.DecisionLog`): the same
        object a simulation's :class:`banditkit.Trial` carries, for comparing the two."""
        with self._transaction():
            assert self._algorithm is not None
            return self._algorithm.decisions
