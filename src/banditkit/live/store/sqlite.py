"""The SQLite backend of a live experiment's store: one file per experiment (the embedded
default, :class:`banditkit.Experiment` given a path).

Every call is one ``BEGIN IMMEDIATE`` transaction: SQLite's write lock is taken first, so two
processes on one file are serialised, and a process killed at any point leaves either the whole
call or nothing (WAL journal, ``synchronous=FULL``: a commit is on disk before the call
returns). The tables are :mod:`banditkit.live.store.schema`'s, in SQLite's types.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..errors import ExperimentError, ExperimentExists, ExperimentNotFound
from .base import Store, check_format
from .codec import file_identity
from .schema import FORMAT, SQLITE_TYPES, schema

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SQLiteStore"]

_BUSY_MS = 30_000


class SQLiteStore(Store):
    """An open experiment file (one SQLite connection)."""

    errors = (sqlite3.DatabaseError,)
    types = SQLITE_TYPES
    last_id_sql = "SELECT last_insert_rowid()"

    def __init__(self, path: Path, conn: sqlite3.Connection, readonly: bool = False) -> None:
        self.path = path
        self.conn = conn
        #: opened for reading only (``SQLiteStore.open(path, readonly=True)``)
        self.readonly = readonly
        self._identity = file_identity(path)
        self.label = repr(str(path))

    def check_still_there(self) -> None:
        """Refuse to go on when the file was deleted, moved or replaced since it was opened:
        SQLite would keep writing into the unlinked file, and every call would be lost."""
        if file_identity(self.path) != self._identity:
            raise ExperimentError(f"{str(self.path)!r} was deleted, moved or replaced since it "
                                  "was opened; nothing more is written to it (open it again)")

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any]) -> SQLiteStore:
        """Create the file at ``path`` (which must not exist) holding ``meta``."""
        path = Path(path)
        if path.exists():
            raise ExperimentExists(f"path {str(path)!r} already exists: open it with "
                                  "Experiment.open, or choose a new path")
        if not path.parent.is_dir():
            raise ExperimentError(f"path: folder {str(path.parent)!r} does not exist")
        try:
            # made here, for this user only (it holds the users' keys): SQLite opens an empty
            # file as a new database and gives its -wal and -shm files the same mode
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            raise ExperimentExists(f"path {str(path)!r} already exists: open it with "
                                   "Experiment.open, or choose a new path") from None
        except OSError as error:
            raise ExperimentError(f"could not create {str(path)!r}: {error.strerror}"
                                  ) from None
        try:
            conn = _connect(path)
            _durable(conn, path)
            conn.executescript("BEGIN IMMEDIATE;" + schema(SQLITE_TYPES) + "COMMIT;")
        except sqlite3.Error as error:
            path.unlink(missing_ok=True)
            raise ExperimentError(f"could not create {str(path)!r}: {error}") from None
        journal = cls(path, conn)
        with journal.transaction():
            conn.executemany("INSERT INTO meta VALUES (?, ?)",
                             [(k, json.dumps(v)) for k, v in {**meta, "format": FORMAT}.items()])
        return journal

    @classmethod
    def open(cls, path: str | Path, readonly: bool = False) -> SQLiteStore:
        """Open an existing experiment file; ``readonly`` opens it for reading only (SQLite's
        ``mode=ro``), which works on a read-only file or in a read-only folder."""
        path = Path(path)
        if not path.is_file():
            raise ExperimentNotFound(f"no experiment at {str(path)!r} (create one with "
                                  "Experiment.create)")
        try:
            # read before writing anything (the WAL switch writes): a file that is refused
            # must be left exactly as it was
            conn = _connect_read_only(path) if readonly else _connect(path)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as error:
            if "readonly" in str(error) and readonly:
                raise ExperimentError(f"{str(path)!r} cannot be read: its -wal file holds "
                                      "commits not yet in the file, and the folder is "
                                      "read-only (SQLite needs to write its -shm index "
                                      "beside it); open it once where the folder is writable"
                                      ) from None
            if "readonly" in str(error):  # a WAL file in a read-only folder cannot be read
                raise ExperimentError(_READ_ONLY.format(path=str(path))) from None
            raise ExperimentError(f"{str(path)!r} is not a banditkit experiment file ({error})"
                                  ) from None
        if not {"meta", "batches", "units"} <= tables:
            conn.close()
            raise ExperimentError(f"{str(path)!r} is not a banditkit experiment file (it lacks "
                                  "the meta, batches and units tables)")
        journal = cls(path, conn, readonly)
        try:
            version = journal.meta().get("format")
        except ExperimentError:
            conn.close()
            raise
        try:
            journal.format = check_format(version, readonly, repr(str(path)))
        except ExperimentError:
            conn.close()
            raise
        return journal

    def make_durable(self) -> None:
        """Switch an opened file to WAL and full sync: only once it has been accepted (format,
        meta and replay), since the switch writes to the file."""
        _durable(self.conn, self.path)

    def close(self) -> None:
        self.conn.close()

    def read_frame(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        import pandas as pd

        return pd.read_sql_query(sql, conn, params=list(params) or None)

    @contextmanager
    def _one_transaction(self, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()
                         ) -> Iterator[sqlite3.Connection]:
        """One write transaction: the write lock first, then everything or nothing. On a
        read-only journal, a read transaction (one consistent snapshot, no lock taken).
        ``read_ahead`` is ignored: a read in the process costs no round trip."""
        try:
            self.conn.execute("BEGIN" if self.readonly else "BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise ExperimentError(f"{str(self.path)!r} is locked by another process for more "
                                  f"than {_BUSY_MS // 1000} s ({error})") from None
        try:
            yield self.conn
        except BaseException:
            self.conn.rollback()
            raise
        else:
            self.conn.commit()

    def meta(self) -> dict[str, Any]:
        try:
            return {k: json.loads(v) for k, v in self.conn.execute("SELECT key, value FROM meta")}
        except (sqlite3.DatabaseError, ValueError, TypeError) as error:  # JSON, text, type
            raise ExperimentError(f"{str(self.path)!r} is damaged: its meta table cannot be read "
                                  f"({error})") from None


_READ_ONLY = ("{path!r} cannot be written (a read-only file or folder): a live experiment "
              "writes every call, so it needs both writable")


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: transactions are opened explicitly (BEGIN IMMEDIATE), never
    # implicitly by the sqlite3 module.
    return sqlite3.connect(path, timeout=_BUSY_MS / 1000, isolation_level=None)


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``: SQLite refuses every write on it).

    A WAL file needs its ``-shm`` index, which SQLite creates beside it: in a read-only folder
    it cannot, and ``mode=ro`` fails (SQLITE_READONLY_DIRECTORY). When no ``-wal`` file holds
    commits the main file lacks, the file alone is the whole experiment, so it is opened
    ``immutable`` (no locks, no ``-shm``); no writer can be at work in a folder it cannot
    create its ``-wal`` in. A non-empty ``-wal`` left there is refused rather than ignored.
    """
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_MS / 1000, isolation_level=None)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError as error:
        conn.close()
        wal = path.with_name(path.name + "-wal")
        if "readonly" not in str(error) or (wal.exists() and wal.stat().st_size > 0):
            raise
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)


def _durable(conn: sqlite3.Connection, path: Path) -> None:
    """WAL journal, a commit on disk before it returns, foreign keys checked."""
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.OperationalError as error:
        conn.close()
        if "readonly" in str(error):
            raise ExperimentError(_READ_ONLY.format(path=str(path))) from None
        raise ExperimentError(f"{str(path)!r} cannot be opened ({error})") from None


