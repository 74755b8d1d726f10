"""The SQLite file of a live experiment: its definition, the batches the algorithm asked for,
and every unit (user, session) assigned to an arm with its reward.

Every public call of :class:`banditkit.Experiment` is one ``BEGIN IMMEDIATE`` transaction: the
write lock is taken first, so two processes on one file are serialised, and a process killed at
any point leaves either the whole call or nothing (WAL journal, ``synchronous=FULL``: a commit
is on disk before the call returns).

Tables
------
``meta``
    ``key → JSON value``: format version, algorithm, parameters, seed, arms, horizon.
``batches``
    One row per batch the algorithm asked for, in order (``id`` 0, 1, ...): the SHA-256
    ``digest`` of its runs, ``handed`` (slots handed out so far: the cursor of the batch's slot
    order), and once every unit of it has a reward, the run sums the algorithm observed (JSON).
``runs``
    Each batch's runs, ``arms`` and ``counts`` as little-endian int64 arrays
    (:func:`pack_runs`); a table of their own, so that reading or updating a batch's small
    columns never walks the megabytes of an i.i.d. batch's runs.
``draws``
    Instead of runs, for a batch drawn i.i.d. from a design (G-BAI, P1-RAGE, P1-Peace,
    Mixed-Peace: :class:`banditkit.protocol.IIDBatch`): the design's ``cdf`` (little-endian
    float64), ξ's PCG64 ``state`` at its first pull (JSON) and ``n_pulls`` — O(arms) however
    many pulls, and the digest is that of this description (:func:`pack_draws`).
``units``
    One row per assignment: its batch, its ``slot`` (position in the batch's pull order), the
    arm, the reward and costs once recorded, or the time it expired. A slot holds at most one
    unit that has not expired (a partial unique index).
``totals``
    Running sums per (batch, arm) over the units that have not expired — ``assigned``,
    ``recorded``, ``reward``, ``reward_sq``, ``non_binary`` (rewards other than 0 and 1) — and
    the same per arm over all batches in the rows of batch −1, updated in the transaction that
    changes the units: a call reads O(arms) of them instead of every unit of the batch.
``metric_totals``
    The same for the guardrail metrics (:mod:`banditkit.live.guardrails`): per (batch, arm,
    guardrail index) the values recorded and their sum (a unit's own values are in
    ``units.metrics``, a JSON list in the guardrails' order), batch −1 summing all batches.
``pauses``
    One row per (guardrail, arm) breach: when it was found, what the interval was, and when a
    person resumed the experiment (``resumed_at``; NULL while it pauses the experiment).
``keys``
    External unit keys (user ids, as text) given to ``assign(keys=...)``: one row per unit
    that has a key. A key points to at most one unit at a time (a partial unique index over
    the rows not ``superseded_at``); when its unit expired and the key came back, the old row
    is marked superseded and a new one names the new unit, so the log keeps both.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from ..draws import uniforms_at
from ..protocol import IIDBatch

__all__ = ["ALL_BATCHES", "FORMAT", "ExperimentError", "Journal", "file_identity", "pack_draws",
           "pack_runs", "unpack_draws", "unpack_runs"]

#: Version of the file layout; a file of another version is refused, never guessed at.
#: 2: runs stored as int64 arrays with a digest, per-(batch, arm) running totals.
#: 3: i.i.d. batches stored as their description (``draws``), observed from per-arm sums.
#: 4: the ``keys`` table (sticky units: external keys → units).
#: 5: guardrail metrics (``units.metrics``, ``metric_totals``) and their breaches (``pauses``).
FORMAT = 5

#: The ``batch`` of the ``totals`` rows that sum every batch (per arm).
ALL_BATCHES = -1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE batches (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL,
    strategy TEXT,
    n_pulls INTEGER NOT NULL,
    handed INTEGER NOT NULL DEFAULT 0,
    asked_at TEXT NOT NULL,
    reward_sums TEXT,
    cost_sums TEXT,
    observed_at TEXT
);
CREATE TABLE runs (
    batch INTEGER PRIMARY KEY REFERENCES batches(id),
    arms BLOB NOT NULL,
    counts BLOB NOT NULL
);
CREATE TABLE draws (
    batch INTEGER PRIMARY KEY REFERENCES batches(id),
    cdf BLOB NOT NULL,
    state TEXT NOT NULL,
    n_pulls INTEGER NOT NULL
);
CREATE TABLE units (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    batch INTEGER NOT NULL REFERENCES batches(id),
    slot INTEGER NOT NULL,
    arm INTEGER NOT NULL,
    assigned_at TEXT NOT NULL,
    reward REAL,
    costs TEXT,
    metrics TEXT,
    recorded_at TEXT,
    expired_at TEXT
);
CREATE UNIQUE INDEX units_live_slot ON units(batch, slot) WHERE expired_at IS NULL;
CREATE INDEX units_expired_slot ON units(batch, slot) WHERE expired_at IS NOT NULL;
CREATE INDEX units_waiting ON units(assigned_at) WHERE reward IS NULL AND expired_at IS NULL;
CREATE TABLE totals (
    batch INTEGER NOT NULL,
    arm INTEGER NOT NULL,
    assigned INTEGER NOT NULL DEFAULT 0,
    recorded INTEGER NOT NULL DEFAULT 0,
    reward REAL NOT NULL DEFAULT 0,
    reward_sq REAL NOT NULL DEFAULT 0,
    non_binary INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (batch, arm)
);
CREATE TABLE metric_totals (
    batch INTEGER NOT NULL,
    arm INTEGER NOT NULL,
    guardrail INTEGER NOT NULL,
    n INTEGER NOT NULL DEFAULT 0,
    total REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (batch, arm, guardrail)
);
CREATE TABLE pauses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    guardrail INTEGER NOT NULL,
    arm INTEGER NOT NULL,
    breached_at TEXT NOT NULL,
    detail TEXT NOT NULL,
    resumed_at TEXT,
    UNIQUE (guardrail, arm)
);
CREATE TABLE keys (
    unit INTEGER PRIMARY KEY REFERENCES units(id),
    key TEXT NOT NULL,
    superseded_at TEXT
);
CREATE UNIQUE INDEX keys_current ON keys(key) WHERE superseded_at IS NULL;
"""

_BUSY_MS = 30_000


class ExperimentError(ValueError):
    """A call a live experiment refuses: bad input, a unit it does not know, or a file that is
    not an experiment, is damaged, or is locked."""


class Journal:
    """An open experiment file (one SQLite connection)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, readonly: bool = False) -> None:
        self.path = path
        self.conn = conn
        #: opened for reading only (``Journal.open(path, readonly=True)``)
        self.readonly = readonly
        self._identity = file_identity(path)

    def check_still_there(self) -> None:
        """Refuse to go on when the file was deleted, moved or replaced since it was opened:
        SQLite would keep writing into the unlinked file, and every call would be lost."""
        if file_identity(self.path) != self._identity:
            raise ExperimentError(f"{str(self.path)!r} was deleted, moved or replaced since it "
                                  "was opened; nothing more is written to it (open it again)")

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any]) -> Journal:
        """Create the file at ``path`` (which must not exist) holding ``meta``."""
        path = Path(path)
        if path.exists():
            raise ExperimentError(f"path {str(path)!r} already exists: open it with "
                                  "Experiment.open, or choose a new path")
        if not path.parent.is_dir():
            raise ExperimentError(f"path: folder {str(path.parent)!r} does not exist")
        try:
            conn = _connect(path)
            _durable(conn, path)
            conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
        except sqlite3.Error as error:
            path.unlink(missing_ok=True)
            raise ExperimentError(f"could not create {str(path)!r}: {error}") from None
        journal = cls(path, conn)
        with journal.transaction():
            conn.executemany("INSERT INTO meta VALUES (?, ?)",
                             [(k, json.dumps(v)) for k, v in {**meta, "format": FORMAT}.items()])
        return journal

    @classmethod
    def open(cls, path: str | Path, readonly: bool = False) -> Journal:
        """Open an existing experiment file; ``readonly`` opens it for reading only (SQLite's
        ``mode=ro``), which works on a read-only file or in a read-only folder."""
        path = Path(path)
        if not path.is_file():
            raise ExperimentError(f"no experiment at {str(path)!r} (create one with "
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
        if version != FORMAT or isinstance(version, bool):
            conn.close()
            raise ExperimentError(f"{str(path)!r} has experiment format {version!r}; this "
                                  f"banditkit reads format {FORMAT}")
        return journal

    def make_durable(self) -> None:
        """Switch an opened file to WAL and full sync: only once it has been accepted (format,
        meta and replay), since the switch writes to the file."""
        _durable(self.conn, self.path)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: the write lock first, then everything or nothing. On a
        read-only journal, a read transaction (one consistent snapshot, no lock taken)."""
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


def pack_runs(arms: np.ndarray, counts: np.ndarray) -> tuple[bytes, bytes, str]:
    """A batch's runs as stored: little-endian int64 bytes of ``arms`` and ``counts``, and the
    SHA-256 digest of both (compared on every call instead of the runs themselves)."""
    a = np.ascontiguousarray(arms, dtype="<i8").tobytes()
    c = np.ascontiguousarray(counts, dtype="<i8").tobytes()
    digest = hashlib.sha256(len(a).to_bytes(8, "little") + a + c).hexdigest()
    return a, c, digest


def unpack_runs(arms: object, counts: object) -> tuple[np.ndarray, np.ndarray]:
    """The runs :func:`pack_runs` stored; ``ValueError`` for anything else (an edited file)."""
    if not isinstance(arms, bytes) or not isinstance(counts, bytes) or len(arms) % 8 \
            or len(arms) != len(counts):
        raise ValueError("runs must be two int64 arrays of one length")
    a, c = np.frombuffer(arms, dtype="<i8"), np.frombuffer(counts, dtype="<i8")
    if c.size and (c.min() < 1 or a.min() < 0):
        raise ValueError("runs need arms >= 0 and counts >= 1")
    return a.astype(np.int64), c.astype(np.int64)


def pack_draws(batch: IIDBatch) -> tuple[bytes, str, str]:
    """An i.i.d. batch as stored: its cdf (little-endian float64 bytes), ξ's state (JSON with
    sorted keys) and the SHA-256 digest of both with the number of pulls."""
    cdf = np.ascontiguousarray(batch.cdf, dtype="<f8").tobytes()
    state = json.dumps(batch.state, sort_keys=True)
    digest = hashlib.sha256(b"iid" + batch.n_pulls.to_bytes(8, "little") + cdf
                            + state.encode()).hexdigest()
    return cdf, state, digest


def unpack_draws(cdf: object, state: object, n_pulls: object) -> IIDBatch:
    """The batch :func:`pack_draws` stored; ``ValueError`` for anything else (an edited file)."""
    if not isinstance(cdf, bytes) or not cdf or len(cdf) % 8 or not isinstance(state, str) \
            or isinstance(n_pulls, bool) or not isinstance(n_pulls, int):
        raise ValueError("an i.i.d. batch needs a float64 cdf, a JSON state and a pull count")
    try:
        batch = IIDBatch(np.frombuffer(cdf, dtype="<f8").astype(float), json.loads(state),
                         n_pulls)
        uniforms_at(batch.state, 0, 1)  # a state numpy refuses is refused here, by name
        return batch
    except (TypeError, KeyError, OverflowError) as error:  # JSONDecodeError: a ValueError
        raise ValueError(f"its state cannot be read ({error})") from None


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


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path``, or ``None`` when it is gone: a file replaced or moved has
    another identity (the journal and the service's folder both check it)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino
