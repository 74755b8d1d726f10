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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from ..live import Experiment, ExperimentError
from ..live.store import NAME_PATTERN, NAME_RULE

__all__ = ["Catalog", "Conflict", "NotFound", "Unavailable"]

T = TypeVar("T")


class NotFound(ExperimentError):
    """No experiment of that name (HTTP 404)."""


class Conflict(ExperimentError):
    """An experiment of that name exists already (HTTP 409)."""


class Unavailable(ExperimentError):
    """The store cannot be reached now (HTTP 503): the database is down or unreachable."""


class Catalog(ABC):
    """Experiments by name, opened once per process and kept open (worker thread only, except
    :meth:`submit` and :meth:`close`)."""

    #: Where the experiments are, as the server's start-up line shows it (no password).
    where: str

    def __init__(self) -> None:
        self._open: dict[str, Experiment] = {}
        # one thread owns every connection (see the module docstring)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="banditkit-db")

    def submit(self, call: Callable[[], T]) -> Future[T]:
        """Run ``call`` on the worker thread (returns a concurrent future)."""
        return self._worker.submit(call)

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

        self._worker.submit(close_all).result()
        self._worker.shutdown()
