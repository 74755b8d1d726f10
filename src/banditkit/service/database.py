"""The experiments of one PostgreSQL database, as a server process uses them: each is
``Experiment.open(url, name=NAME)`` (the worker thread and the several-servers argument are
those of :mod:`.catalog`). Several servers, on one machine or several, may serve one database:
the store serialises each experiment's writers with a row lock and every call replays what the
others observed, so no server keeps state another could make stale."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from ..live import Experiment, ExperimentError
from ..live.errors import ExperimentExists, ExperimentNotFound
from ..live.store import list_experiments
from .catalog import Busy, Catalog, Conflict, NotFound, Unavailable, service_clock
from .limits import Limits
from .revocations import TableRevocations

__all__ = ["ExperimentDatabase"]

T = TypeVar("T")

log = logging.getLogger("banditkit.service")


class ExperimentDatabase(Catalog):
    """The experiments of the PostgreSQL database at ``url`` (``postgresql://...``, libpq's
    forms, the socket form ``postgresql://user@/db?host=/run/postgresql`` included); refused
    at once when the database cannot be reached.

    Every experiment of the process shares one pool of at most ``limits.pool_size``
    connections (psycopg_pool, :func:`banditkit.live.store.postgres.use_pool`): a call borrows
    one for its transaction, so 1,000 experiments cost ``pool_size`` sessions, not 1,000; at
    most ``limits.max_open`` experiments (their replayed algorithms) stay in memory."""

    def __init__(self, url: str, limits: Limits | None = None) -> None:
        from ..live.store.postgres import use_pool

        try:
            list_experiments(url)  # reach it now: a wrong URL is refused at start-up
        except ExperimentError as error:
            raise ExperimentError(f"--db: {error}") from None
        limits = limits or Limits()
        use_pool(url, limits.pool_size)
        super().__init__(limits)
        self.url = url
        self.where = f"database {_without_password(url)}"

    def names(self) -> list[str]:
        return self._reachable(lambda: list_experiments(self.url))

    def get(self, name: str) -> Experiment:
        self.check_name(name)
        experiment = self._opened(name)
        if experiment is None:
            self._room_to_open()
            try:
                experiment = self._reachable(lambda: Experiment.open(self.url, name=name,
                                                              clock=service_clock))
            except ExperimentNotFound:
                raise NotFound(f"no experiment named {name!r}") from None
            self._keep(name, experiment)
        return experiment

    def _delete(self, name: str) -> None:
        self._reachable(lambda: Experiment.delete(self.url, name=name))

    def create(self, name: str, **definition: Any) -> Experiment:
        self.check_name(name)
        self._room_to_open()
        try:
            experiment = self._reachable(
                lambda: Experiment.create(self.url, name=name, clock=service_clock,
                                          **definition))
        except ExperimentExists:
            raise Conflict(f"an experiment named {name!r} exists already") from None
        self.forget(name)
        self._keep(name, experiment)
        return experiment

    def call(self, name: str, action: Callable[[Experiment], T]) -> T:
        experiment = self.get(name)
        try:
            return self._reachable(lambda: action(experiment))
        except Busy:
            raise
        except (Unavailable, ExperimentNotFound):
            # the next call opens it afresh: the database went away (the pool drops broken
            # connections by itself), or the experiment was dropped
            self.forget(name)
            raise
        except ExperimentError as error:
            # a client's mistake (a 400) keeps the experiment open: the store rolled the call
            # back and the experiment rebuilds what it must; only an experiment deleted or
            # replaced since it was opened is opened afresh
            if "since it was opened" in str(error):
                self.forget(name)
            raise
        except BaseException:
            self.forget(name)  # a bug: start from the store again
            raise

    def _reachable(self, action: Any) -> Any:
        """``action()``, with a failure to reach the database told apart from the request's
        own mistakes: it is 503 (try again), not 400, and the client is not told where the
        database is."""
        from ..live.store.postgres import DatabaseUnreachable

        try:
            return action()
        except (ExperimentNotFound, ExperimentExists):
            raise
        except DatabaseUnreachable as error:
            self.database_errors += 1
            log.error("the database cannot be reached: %s", error)
            raise Unavailable("the experiments' database cannot be reached now (logged by "
                              "the server); try again") from None
        except ExperimentError as error:
            try:
                list_experiments(self.url)
            except ExperimentError as unreachable:
                self.database_errors += 1
                log.error("the database cannot be reached: %s (the call failed with: %s)",
                          unreachable, error)
                raise Unavailable("the experiments' database cannot be reached now (logged by "
                                  "the server); try again") from None
            raise


    def public(self, message: str) -> str:
        """No user, host, port or database name: the URL (as messages print it, without its
        password) becomes "the database"."""
        return message.replace(f"'{_without_password(self.url)}'", "the database").replace(
            _without_password(self.url), "the database")

    def revocations(self) -> TableRevocations:
        """Ended sessions in a table of the database, read by every server of it."""
        return TableRevocations(self.url)

    def ping(self) -> str | None:
        try:
            list_experiments(self.url)
        except ExperimentError as error:
            log.error("readiness: the database cannot be reached: %s", error)
            return "the experiments' database does not answer"
        return None


def _without_password(url: str) -> str:
    from ..live.store.postgres import safe_url

    return safe_url(url)
