"""The experiments one server serves, whatever holds them: the interface the routes use
(:class:`Catalog`) and its two errors. :mod:`.folder` keeps them as SQLite files in a folder,
:mod:`.database` as experiments of one PostgreSQL database; both only open and create
:class:`~banditkit.Experiment` objects, whose calls do all the work.

Every call to an experiment runs on one worker thread per server process, which owns the
experiments it has opened (and so their connections): an SQLite connection may only be used
from the thread that opened it (``check_same_thread``), and a psycopg connection runs one
statement at a time anyway. Writers of one experiment are serialised by its store (SQLite's
write lock, PostgreSQL's row lock on the experiment), so more threads on one experiment would
only wait; more throughput comes from more server processes, which stay correct because every
call is one transaction and :class:`~banditkit.Experiment` replays, at the start of each call,
the batches another process observed since. Nothing here keeps state another process could make
stale.

Group commit: a call's cost is mostly its commit's disk sync (SQLite's WAL with
``synchronous=FULL``, PostgreSQL's ``synchronous_commit``). The worker takes every request
waiting when it becomes free (up to :data:`GROUP_MAX`) and runs the consecutive ones for one
experiment inside :meth:`banditkit.Experiment.group_commit`: each call is its own savepoint
(a call that fails changes nothing and gets its own error), the group is one commit, and no
request of the group is answered before that commit, so a returned call is as durable as
before. A request alone in the queue runs alone, as it did. Within a group, the plain records
(:meth:`submit_record`) and then the plain assigns (:meth:`submit_assign`) run after the other
calls, each kind as one call (:meth:`banditkit.Experiment.record_many`,
:meth:`banditkit.Experiment.assign_many`): the calls of a group are concurrent, so any order is
one they could have run in, and each request gets what it would get alone in that order; when
the one call cannot promise that, they run one by one.

Bounds (:class:`~banditkit.service.limits.Limits`): at most ``max_open`` experiments stay open
(the least recently used is closed first: 3 file descriptors each on SQLite), at most
``max_queue`` calls wait for the worker (one more is :class:`Busy`, 503 with ``Retry-After``),
and a call still waiting after ``queue_timeout`` seconds is cancelled unrun (503). Opening an
experiment with fewer than :data:`~banditkit.service.limits.RESERVE` file descriptors left
closes the older half of the open ones first, and is :class:`Unavailable` (503, and ``/health``
says so) when that is not enough.
"""

from __future__ import annotations

import queue
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..live import Experiment, ExperimentError
from ..live.assignment import Assignment
from ..live.store import NAME_PATTERN, NAME_RULE
from .limits import RESERVE, Limits, descriptors_left
from .revocations import MemoryRevocations

__all__ = ["GROUP_MAX", "Busy", "Catalog", "Conflict", "InsufficientStorage", "NotFound",
           "Unavailable", "pinned", "service_clock"]

T = TypeVar("T")

#: The most requests one commit answers (a bound on how long the first of them waits).
GROUP_MAX = 64

_PINNED = threading.local()


def service_clock() -> float:
    """The clock of every experiment a server opens (``clock=`` of ``Experiment.open``):
    :func:`time.time`, unless the worker runs a call under :func:`pinned`."""
    at = getattr(_PINNED, "at", None)
    return time.time() if at is None else at


@contextmanager
def pinned(at: float) -> Iterator[None]:
    """Within, :func:`service_clock` on this thread says ``at``: the parts of one large record
    (:mod:`.routes_calls`) are each checked at the time the request arrived, as the one call
    would have been (an outcome window closing while the parts run refuses nothing)."""
    _PINNED.at = at
    try:
        yield
    finally:
        _PINNED.at = None


@dataclass
class _Job:
    """A request for the worker: ``action(experiment name)`` when ``name`` is set, else
    ``action()`` alone. A plain assign (``n`` units, no keys) also says so, ``assign = n``
    and ``answer(assignment)``, and a plain record (no costs, no metrics) its ``record =
    (units, rewards)``, so that those of a group can be served in one call each."""

    name: str | None
    action: Callable[..., Any]
    future: Future = field(default_factory=Future)
    queued: float = field(default_factory=time.monotonic)  # when it was submitted
    assign: int | None = None
    answer: Callable[[Assignment], Any] | None = None
    record: tuple[Any, Any] | None = None  # a plain record's (units, rewards)


class NotFound(ExperimentError):
    """No experiment of that name (HTTP 404)."""


class Conflict(ExperimentError):
    """An experiment of that name exists already (HTTP 409)."""


class Unavailable(ExperimentError):
    """The store cannot be reached now (HTTP 503): the database is down or unreachable, or
    the process is out of file descriptors."""


class InsufficientStorage(Unavailable):
    """The disk holding the experiments is full (HTTP 507 with ``Retry-After``): nothing of
    the call was written (SQLite rolled it back); ``/ready`` says not ready until space is
    freed."""


class Busy(Unavailable):
    """Too many calls waiting (HTTP 503 with ``Retry-After``): nothing was done."""

    retry_after = 1


class Catalog(ABC):
    """Experiments by name, opened once per process and kept open (worker thread only, except
    :meth:`submit` and :meth:`close`)."""

    #: Where the experiments are, as the server's start-up line shows it (no password).
    where: str

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        # least recently used first; at most limits.max_open
        self._open: OrderedDict[str, Experiment] = OrderedDict()
        #: when this process last ran out of file descriptors (``time.monotonic()``)
        self.exhausted_at: float | None = None
        self._waiting = 0  # calls submitted and not yet started (the bounded queue)
        #: database errors (the store unreachable, a full disk) since the start, for /metrics
        self.database_errors = 0
        self._queued: deque[float] = deque()  # when each call waiting was submitted, FIFO
        self._running_since: float | None = None  # when the writer began what it runs now
        self._count = threading.Lock()
        # one thread owns every connection (see the module docstring)
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="banditkit-db", daemon=True)
        self._worker.start()

    def submit(self, call: Callable[[], T]) -> Future[T]:
        """Run ``call`` alone on the worker thread (returns a concurrent future)."""
        return self._enqueue(_Job(None, call))

    def _enqueue(self, job: _Job) -> Future:
        with self._count:
            if self._waiting >= self.limits.max_queue:
                raise Busy(f"{self._waiting} calls are waiting for this server's writer (its "
                           f"limit, --max-queue {self.limits.max_queue}); nothing was done: "
                           "retry in a moment")
            self._waiting += 1
            self._queued.append(job.queued)
        self._jobs.put(job)
        return job.future

    def _started(self, count: int) -> None:
        with self._count:
            self._waiting -= count
            for _ in range(min(count, len(self._queued))):
                self._queued.popleft()

    @property
    def waiting(self) -> int:
        """Calls waiting for the worker now."""
        return self._waiting

    def queue_age(self) -> float:
        """Seconds the oldest call still waiting for the writer has waited (0 when none)."""
        try:
            return time.monotonic() - self._queued[0]
        except IndexError:  # none waiting (or taken meanwhile)
            return 0.0

    def running_for(self) -> float:
        """Seconds the writer has been on its current group of calls (0 when idle): a writer
        stuck on one call (a lock held elsewhere, a disk that stalls) shows here."""
        since = self._running_since
        return 0.0 if since is None else time.monotonic() - since

    def submit_call(self, name: str, action: Callable[[Experiment], T]) -> Future[T]:
        """Run ``action(experiment)`` on the experiment ``name`` on the worker thread, in one
        commit with the other calls for ``name`` waiting at that moment (see the module
        docstring); the future is set only once its commit is done."""
        return self._enqueue(_Job(name, action))

    def submit_assign(self, name: str, n: int, answer: Callable[[Assignment], T]
                      ) -> Future[T]:
        """``answer(experiment.assign_rows(n))`` as :meth:`submit_call` runs it; with other
        plain assigns of the same group, served by one
        :meth:`~banditkit.Experiment.assign_many` when the batch has a slot for every unit
        (the same units each call would get; see the module docstring)."""
        return self._enqueue(_Job(name, lambda e: answer(e.assign_rows(n)), assign=n,
                                  answer=answer))

    def submit_record(self, name: str, units: Any, rewards: Any) -> Future[int]:
        """``experiment.record(units, rewards)`` as :meth:`submit_call` runs it; with the
        other plain records of the same group, served by one
        :meth:`~banditkit.Experiment.record_many` (each call's count as alone), or one by
        one when that refuses."""
        return self._enqueue(_Job(name, lambda e: e.record(units, rewards),
                                  record=(units, rewards)))

    # -- the worker thread -------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            first = self._jobs.get()
            if first is None:
                return
            jobs, stop = [first], False
            while len(jobs) < GROUP_MAX:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stop = True
                    break
                jobs.append(job)
            self._started(len(jobs))
            self._running_since = time.monotonic()
            start = 0
            while start < len(jobs):  # consecutive calls for one experiment form a group
                end = start + 1
                while (end < len(jobs) and jobs[start].name is not None
                       and jobs[end].name == jobs[start].name):
                    end += 1
                self._run([j for j in jobs[start:end] if j.future.set_running_or_notify_cancel()])
                start = end
            self._running_since = None
            if stop:
                return

    def _run(self, jobs: list[_Job]) -> None:
        if len(jobs) == 1:
            (job,) = jobs
            try:
                job.future.set_result(job.action() if job.name is None
                                      else self.call(job.name, job.action))
            except BaseException as error:
                job.future.set_exception(error)
            return
        if not jobs:
            return

        def alone(job: _Job, experiment: Experiment) -> tuple[bool, Any]:
            try:
                return True, job.action(experiment)
            except Exception as error:  # this call changed nothing: its own answer
                return False, error

        def together(experiment: Experiment) -> list[tuple[bool, Any]]:
            plain = [i for i, job in enumerate(jobs) if job.assign is not None]
            records = [i for i, job in enumerate(jobs) if job.record is not None]
            if len(plain) < 2 and len(records) < 2:
                with experiment.group_commit():
                    return [alone(job, experiment) for job in jobs]
            # the calls of a group are concurrent (none is answered yet), so any order is
            # one they could have run in: the others first, then the records as one call (a
            # record may complete the batch and give the assigns its successor's slots),
            # then the assigns as one call
            outcomes: list[tuple[bool, Any] | None] = [None] * len(jobs)
            with experiment.group_commit():
                for i, job in enumerate(jobs):
                    if job.assign is None and job.record is None:
                        outcomes[i] = alone(job, experiment)
                try:
                    counts = (experiment.record_many([jobs[i].record  # type: ignore[misc]
                                                      for i in records])
                              if len(records) > 1 else None)
                except Exception:  # some call is refused: each then gets its own answer
                    counts = None
                for k, i in enumerate(records):
                    outcomes[i] = ((True, counts[k]) if counts is not None
                                   else alone(jobs[i], experiment))
                if len(plain) < 2:
                    for i in plain:
                        outcomes[i] = alone(jobs[i], experiment)
                    return outcomes  # type: ignore[return-value]
                try:
                    parts = experiment.assign_many([jobs[i].assign for i in plain])
                except Exception:  # each call then gets its own answer, or its own error
                    parts = None
                for k, i in enumerate(plain):
                    job = jobs[i]
                    if parts is None:
                        outcomes[i] = alone(job, experiment)
                        continue
                    try:
                        outcomes[i] = (True, job.answer(parts[k]))  # type: ignore[misc]
                    except Exception as error:
                        outcomes[i] = (False, error)
            return outcomes  # type: ignore[return-value]

        try:
            outcomes = self.call(jobs[0].name, together)  # type: ignore[arg-type]
        except BaseException as error:  # not committed: none of the calls happened
            for job in jobs:
                job.future.set_exception(error)
            return
        for job, (ok, value) in zip(jobs, outcomes, strict=True):
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(value)

    def check_name(self, name: Any) -> str:
        """``name`` if it can name an experiment, else refuse (ExperimentError, 400). One rule
        on both backends, the library's for a name in a database (a file name without a path
        in a folder: no ``/``, no leading dot), so names carry over from one to the other."""
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise ExperimentError(f"name must be {NAME_RULE}, got {name!r}")
        return name

    @abstractmethod
    def names(self) -> list[str]:
        """The experiments' names, sorted."""

    @abstractmethod
    def get(self, name: str) -> Experiment:
        """The open experiment ``name``; :class:`NotFound` when there is none."""

    @abstractmethod
    def create(self, name: str, **definition: Any) -> Experiment:
        """Create experiment ``name`` (the keyword arguments of ``Experiment.create``) and
        return it open; :class:`Conflict` when the name is taken, even by a server creating
        it at the same moment."""

    def call(self, name: str, action: Callable[[Experiment], T]) -> T:
        """``action(experiment)`` on the open experiment ``name`` (worker thread only)."""
        return action(self.get(name))

    def delete(self, name: str, *, who: str) -> None:
        """Delete experiment ``name`` (worker thread only): refused unless it is archived
        (:meth:`banditkit.Experiment.archive`), so that a running experiment is never deleted
        by one call. The audit row of the deletion goes to the server's log (the experiment's
        own audit table goes with it)."""
        experiment = self.get(name)
        if not experiment.status().archived:
            raise ExperimentError(f"delete: experiment {name!r} is not archived; archive it "
                                  "first (POST /experiments/{name}/archive), then delete it")
        self.forget(name)
        self._delete(name)
        import logging

        logging.getLogger("banditkit.service").warning("audit: %s deleted experiment %r",
                                                       who, name)

    @abstractmethod
    def _delete(self, name: str) -> None:
        """Remove the closed experiment ``name`` from the store."""

    def queue_depth(self) -> int:
        """Calls waiting for the worker thread (approximate, for metrics)."""
        return self._jobs.qsize()

    def open_count(self) -> int:
        """Experiments this process holds open."""
        return len(self._open)

    # -- the experiments kept open (worker thread only) ---------------------------------------
    def _opened(self, name: str) -> Experiment | None:
        """The open experiment ``name``, now the most recently used, or ``None``."""
        experiment = self._open.get(name)
        if experiment is not None:
            self._open.move_to_end(name)
        return experiment

    def _keep(self, name: str, experiment: Experiment) -> None:
        """Keep ``experiment`` open as the most recently used; close the least recently used
        beyond ``max_open``."""
        self._open[name] = experiment
        self._open.move_to_end(name)
        while len(self._open) > self.limits.max_open:
            self.forget(next(iter(self._open)))

    def _room_to_open(self) -> None:
        """Before opening one more experiment: with fewer than RESERVE descriptors left, close
        the least recently used half of the open ones; refuse (503) if that is not enough."""
        left = descriptors_left()
        if left is None or left >= RESERVE:
            return
        for name in list(self._open)[: max(1, len(self._open) // 2)]:
            self.forget(name)
        left = descriptors_left()
        if left is not None and left < RESERVE:
            self.exhausted_at = time.monotonic()
            raise Unavailable(f"this server is out of file descriptors ({left} left of its "
                              "limit); nothing was done: retry later (an operator raises "
                              "ulimit -n or lowers --max-open)")

    def ping(self) -> str | None:
        """Why the store cannot take writes now (``/ready``), or ``None``; cheap (a probe
        calls it every few seconds), and off the writer's thread."""
        return None

    def revocations(self) -> MemoryRevocations:
        """Where this catalog's servers keep the browser sessions ended at logout
        (:mod:`.revocations`): here, this process only."""
        return MemoryRevocations()

    def public(self, message: str) -> str:
        """``message`` as a client may see it: no path of the server's disk in it."""
        return message

    def forget(self, name: str) -> None:
        """Close ``name`` if it is open, so that the next :meth:`get` opens it afresh."""
        experiment = self._open.pop(name, None)
        if experiment is not None:
            experiment.close()

    def close(self) -> None:
        """Close every experiment on the thread that opened it, then stop the thread."""
        def close_all() -> None:
            for name in list(self._open):
                self.forget(name)

        job = _Job(None, close_all)  # past the queue's bound: closing must not be refused
        with self._count:
            self._waiting += 1
            self._queued.append(job.queued)
        self._jobs.put(job)
        job.future.result()
        self._jobs.put(None)
        self._worker.join()
