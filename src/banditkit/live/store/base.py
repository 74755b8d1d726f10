"""The interface a store backend implements (:class:`Store`, and :class:`Connection`, what the
experiment's SQL runs on) and the rule for an experiment's name in a database. Below
:mod:`banditkit.live.store`, which chooses the backend: the backends import this module, never
the one that imports them. See :mod:`banditkit.live.store` for what each method guarantees."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ExperimentError
from .schema import FORMAT

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NAME_PATTERN", "NAME_RULE", "UPGRADABLE", "Connection", "Store", "check_format"]

#: Older formats a writable open brings to :data:`~banditkit.live.store.schema.FORMAT` (their data
#: unchanged: :meth:`banditkit.Experiment.open` adds what the newer format holds).
UPGRADABLE = (5, 6, 7, 8, 9, 10)


def check_format(version: object, readonly: bool, label: str) -> int:
    """The stored format, accepted: this banditkit's, or (opened for writing) one it upgrades;
    anything else is refused, never guessed at."""
    if isinstance(version, bool) or not isinstance(version, int) or (
            version != FORMAT and version not in UPGRADABLE):
        raise ExperimentError(f"{label} has experiment format {version!r}; this banditkit "
                              f"reads format {FORMAT}")
    if version != FORMAT and readonly:
        raise ExperimentError(f"{label} has experiment format {version!r}, which this "
                              f"banditkit reads once it is brought to format {FORMAT} (the "
                              "outcome window's and the covariates' columns, the plug-in's "
                              "sums, the prefix counted to one cursor for all arms, the units' "
                              "segment; its data unchanged): open it once for writing "
                              "(readonly=False), then read it")
    return version

#: An experiment's name in a database: it names the schema ``bk_<name>`` (PostgreSQL's
#: identifiers hold 63 bytes), and the same characters as a service's file names.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}")
NAME_RULE = "1 to 60 letters, digits, '.', '_' or '-', starting with a letter or digit"


class Connection(Protocol):
    """What the experiment's SQL runs on inside a transaction (``sqlite3.Connection``'s
    calls, which the PostgreSQL backend's connection also offers, with ``?`` placeholders)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Any, /) -> Any: ...


class Store(ABC):
    """An open experiment in one backend (see the module docstring).

    Attributes
    ----------
    label : str
        How messages name the experiment: ``'path'``, or ``experiment 'name' in URL`` (the URL
        without its password).
    readonly : bool
        Opened for reading only: every transaction reads, and the backend refuses writes.
    path : Path or None
        The SQLite file; ``None`` on PostgreSQL.
    url, name : str or None
        The database URL (without password) and the experiment's name; ``None`` on SQLite.
    errors : tuple of exception types
        The driver's errors, which :class:`banditkit.Experiment` reports as ExperimentError.
    last_id_sql : str
        A query for the id of the last unit inserted in this transaction.
    """

    label: str
    readonly: bool
    path: Path | None = None
    url: str | None = None
    name: str | None = None
    errors: tuple[type[BaseException], ...] = ()
    last_id_sql: str
    #: the dialect's column types (:data:`banditkit.live.store.schema.SQLITE_TYPES`, ...)
    types: dict[str, str]
    #: the stored layout's version when opened (older ones are upgraded by the experiment)
    format: int = FORMAT

    #: inside :meth:`group`: the group's connection, and whether a call's rollback failed
    _group: Connection | None = None
    _group_damaged: bool = False

    def transaction(self, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()
                    ) -> AbstractContextManager[Connection]:
        """One transaction: writing, the experiment's write lock first, then everything or
        nothing; on a read-only store, one consistent snapshot and no lock. Inside
        :meth:`group`, a savepoint of the group's transaction: everything or nothing of this
        call, and durable only when the group commits.

        ``read_ahead``: (sql, parameters) of reads the call will make first. A backend where
        each statement is a round trip to a server (PostgreSQL) sends them with the lock and
        answers the call's own ``execute`` of them from there; SQLite, in the process, ignores
        them. Either way the call's statements and what they see are the same."""
        if self._group is not None:
            return self._savepoint(self._group, read_ahead)
        return self._one_transaction(read_ahead)

    @abstractmethod
    def _one_transaction(self, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()
                         ) -> AbstractContextManager[Connection]:
        """The backend's transaction (see :meth:`transaction`)."""

    def _read_ahead(self, conn: Connection, read_ahead: Sequence[tuple[str, Sequence[Any]]]
                    ) -> None:
        """Send ``read_ahead`` now, where the backend gains by it (see :meth:`transaction`)."""
        return None

    def _confirm(self) -> None:
        """Wait until every statement sent has run, raising the error of one that failed (a
        backend that sends statements without waiting for each)."""
        return None

    def _recover(self) -> None:
        """After a failed statement, make the connection take statements again (the
        transaction itself stays to be rolled back)."""
        return None

    @contextmanager
    def group(self) -> Iterator[None]:
        """Every :meth:`transaction` opened inside is one savepoint of a single transaction,
        committed (one disk sync) when the block ends, or rolled back whole if the block
        raises or a savepoint could not be rolled back. Who needs it: the service, which runs
        the requests waiting for one experiment together and answers none of them before this
        commit (:meth:`banditkit.Experiment.group_commit`). Nested or read-only: no effect."""
        if self._group is not None or self.readonly:
            yield
            return
        with self._one_transaction() as conn:
            self._group, self._group_damaged = conn, False
            try:
                yield
                if self._group_damaged:
                    raise ExperimentError(f"{self.label}: a call of a group could not be rolled "
                                          "back alone, so the whole group is rolled back")
            finally:
                self._group = None

    @contextmanager
    def _savepoint(self, conn: Connection, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()
                   ) -> Iterator[Connection]:
        conn.execute("SAVEPOINT banditkit_call")
        self._read_ahead(conn, read_ahead)
        try:
            yield conn
            # every statement of this call has run before it counts as done: an error found
            # later (at the group's COMMIT) would otherwise roll back calls already answered
            self._confirm()
        except BaseException:
            try:
                self._recover()
                conn.execute("ROLLBACK TO SAVEPOINT banditkit_call")
                conn.execute("RELEASE SAVEPOINT banditkit_call")
                self._confirm()
            except self.errors:
                self._group_damaged = True  # never commit what this call half-wrote
            raise
        else:
            conn.execute("RELEASE SAVEPOINT banditkit_call")

    @abstractmethod
    def meta(self) -> dict[str, Any]:
        """The ``meta`` table, JSON values decoded (ExperimentError when it cannot be read)."""

    @abstractmethod
    def close(self) -> None: ...

    def check_still_there(self) -> None:
        """Refuse to go on when the experiment was deleted or replaced since it was opened
        (PostgreSQL checks it inside each transaction instead)."""
        return None

    def make_durable(self) -> None:
        """Settings that write, applied once an opened experiment has been accepted (SQLite's
        WAL switch; nothing on PostgreSQL)."""
        return None

    # -- dialect -----------------------------------------------------------------------------
    def total(self, expression: str) -> str:
        """The sum of ``expression`` over a group, 0.0 when every value is NULL (a number
        expression, or a comparison counted as 0/1)."""
        return f"TOTAL({expression})"

    def count_if(self, condition: str) -> str:
        """The number of rows of a group where ``condition`` holds, as a float (like
        :meth:`total`)."""
        return f"TOTAL({condition})"

    def json_item(self, column: str, index: int) -> str:
        """Item ``index`` of the JSON list of numbers in ``column``, as a number."""
        return f"json_extract({column}, '$[{index}]')"

    def indexed_by(self, index: str) -> str:
        """The clause that makes the planner use ``index`` (empty where it needs no hint)."""
        return f"INDEXED BY {index}"

    def read_frame(self, conn: Connection, sql: str, params: Sequence[Any] = ()
                   ) -> pd.DataFrame:
        """The rows of a query as a DataFrame (as ``pandas.read_sql_query`` builds it)."""
        import pandas as pd

        cursor = conn.execute(sql, list(params))
        rows = cursor.fetchall()  # first: a pipelined cursor describes its columns once read
        columns = [d[0] for d in cursor.description]
        if not rows:
            return pd.DataFrame(columns=columns)
        return pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)
