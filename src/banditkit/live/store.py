"""Where a live experiment is kept: one interface, two backends.

An experiment lives in an SQLite file (a path: :mod:`banditkit.live.sqlite_store`, the embedded
default) or in a PostgreSQL database (a ``postgresql://`` URL and a ``name``, one schema per
experiment: :mod:`banditkit.live.postgres_store`). Both hold the tables of
:mod:`banditkit.live.journal`, and :class:`banditkit.Experiment` runs the same SQL on either
through a :class:`Store`:

- :meth:`Store.transaction`: one transaction per call. Writing, it takes the experiment's write
  lock first (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: the row lock of the experiment's
  ``meta`` row, ``SELECT ... FOR UPDATE``, in a READ COMMITTED transaction, so every statement
  after it sees every call committed before), so the writers of one experiment, in any process
  or on any machine, run one after another; reading only, one consistent snapshot and no lock.
  A process killed mid-call leaves nothing of it (the database rolls the open transaction back).
- The few differences of dialect, as methods: the ``?`` placeholders (PostgreSQL's connection
  rewrites them), :meth:`Store.total`, :meth:`Store.count_if`, :meth:`Store.json_item`,
  :meth:`Store.indexed_by`, :attr:`Store.last_id_sql`, :meth:`Store.read_frame`,
  and the driver's :attr:`Store.errors`.

:func:`create_store` and :func:`open_store` choose the backend from the location;
:func:`list_experiments` and :func:`experiment_exists` let a service see which experiments a
database holds. psycopg is imported only when a URL is used.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .journal import ExperimentError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CHUNK", "NAME_RULE", "Connection", "Store", "check_location", "create_store",
           "experiment_exists", "is_url", "list_experiments", "open_store"]

#: Ids and keys of one statement's ``IN (...)`` list, at most: SQLite's default limit on the
#: variables of one statement is 999 (older builds).
CHUNK = 900

#: The URL schemes that name a PostgreSQL database (libpq's two spellings).
URL_SCHEMES = ("postgresql://", "postgres://")

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

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Connection]:
        """One transaction: writing, the experiment's write lock first, then everything or
        nothing; on a read-only store, one consistent snapshot and no lock."""

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
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        if not rows:
            return pd.DataFrame(columns=columns)
        return pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)


def is_url(location: object) -> bool:
    """Whether ``location`` names a PostgreSQL database (rather than an SQLite file)."""
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


def check_location(location: object, name: object) -> None:
    """Refuse, in one message naming the parameter and its rule, a location that is neither a
    path nor a URL, a URL without a valid ``name``, or a path with one."""
    if is_url(location):
        if name is None:
            raise ExperimentError(f"name is required with a postgresql:// URL (a database "
                                  f"holds several experiments): {NAME_RULE}")
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise ExperimentError(f"name must be {NAME_RULE}, got {name!r}")
        return
    if not isinstance(location, (str, Path)) or not str(location).strip():
        from .inputs import brief

        raise ExperimentError(f"path must be a file name (str or pathlib.Path), got "
                              f"{brief(location)} (or a postgresql:// URL, with name=)")
    if name is not None:
        raise ExperimentError(f"name chooses an experiment in a PostgreSQL database (a "
                              f"postgresql:// URL); an SQLite file holds one experiment: omit "
                              f"name for a path, got name={name!r}")


def create_store(location: str | Path, name: str | None, meta: dict[str, Any]) -> Store:
    """A new experiment holding ``meta`` at ``location`` (refused when one exists there)."""
    if is_url(location):
        from .postgres_store import PostgresStore

        return PostgresStore.create(str(location), str(name), meta)
    from .sqlite_store import SQLiteStore

    return SQLiteStore.create(location, meta)


def open_store(location: str | Path, name: str | None, readonly: bool) -> Store:
    """The existing experiment at ``location`` (ExperimentNotFound when there is none)."""
    if is_url(location):
        from .postgres_store import PostgresStore

        return PostgresStore.open(str(location), str(name), readonly=readonly)
    from .sqlite_store import SQLiteStore

    return SQLiteStore.open(location, readonly=readonly)


def list_experiments(url: str) -> list[str]:
    """The names of the experiments a PostgreSQL database holds, sorted."""
    if not is_url(url):
        raise ExperimentError(f"url must be a postgresql:// URL, got {url!r}")
    from .postgres_store import list_names

    return list_names(url)


def experiment_exists(url: str, name: str) -> bool:
    """Whether the PostgreSQL database at ``url`` holds an experiment named ``name``."""
    check_location(url, name)
    from .postgres_store import list_names

    return name in list_names(url, only=name)
