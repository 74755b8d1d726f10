"""The run store: an embedded SQLite database in a run folder (``<out>/results.sqlite``).

One row per trial, primary key ``(point, algorithm, trial)``, written and committed by the parent
process as each trial (or lock-step group) finishes, so a run killed at any moment keeps every
trial that finished and a restarted run does only the missing ones. The database is in WAL mode:
a commit survives the process being killed, and readers (``banditkit report`` on a running
run) never block the writer.

Tables
------
``meta``
    The run's configuration (key/value, JSON values): the identity of the run — figure name,
    quick, trials, seed, spec fingerprint and package version — which a restarted run must match,
    and a description of the spec (title, paper, points, algorithms, plot, paper values, notes)
    so plots and reports are regenerated from the database alone.
``trials``
    Scalar metrics as columns; arrays (checkpoints, regret and violation curves, pulls per arm,
    decision runs, batch sizes) as ``np.save`` bytes; ``info`` as JSON.
``sessions``
    One row per invocation of the runner: backend, workers, wall time, trials run, command.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import pickle
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .records import TrialRecord
from .spec import AlgorithmSpec, FigureSpec

__all__ = ["DB_NAME", "IDENTITY_KEYS", "LOCK_NAME", "ConfigurationMismatch", "FolderBusy",
           "RunLock", "RunStore", "StoreError", "spec_fingerprint"]

DB_NAME = "results.sqlite"

#: Configuration keys a restarted run must match exactly.
IDENTITY_KEYS = ("figure", "quick", "trials", "seed", "fingerprint", "version")

_ARRAY_FIELDS = ("checkpoints", "regret", "violation", "counts", "decision_arms",
                 "decision_counts", "batch_sizes")
_SCALAR_FIELDS = ("status", "error", "traceback", "n_pulls", "final_regret", "final_violation",
                  "correct", "recommendation", "stopped", "n_batches", "seconds")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    point INTEGER NOT NULL,
    algorithm TEXT NOT NULL,
    trial INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    traceback TEXT,
    n_pulls INTEGER,
    final_regret REAL,
    final_violation REAL,
    correct INTEGER,
    recommendation INTEGER,
    stopped INTEGER,
    n_batches INTEGER,
    seconds REAL,
    {", ".join(f"{name} BLOB" for name in _ARRAY_FIELDS)},
    info TEXT,
    PRIMARY KEY (point, algorithm, trial)
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    finished REAL,
    wall_seconds REAL,
    backend TEXT,
    workers INTEGER,
    command TEXT,
    trials_run INTEGER,
    completed INTEGER NOT NULL DEFAULT 0
);
"""


class StoreError(ValueError):
    """A run database that cannot be opened: not SQLite, truncated, unwritable."""


class FolderBusy(StoreError):
    """Another live process is running into the same run folder."""


LOCK_NAME = "run.lock"


class RunLock:
    """An exclusive claim on a run folder while a run writes into it: ``run.lock`` holds the
    owner's process id, created atomically; a lock whose process has died (a killed run) is
    taken over, so an interrupted run can always be resumed.

    Two ``banditkit run`` on one folder would each compute every missing trial; the second is
    refused with :class:`FolderBusy` instead.
    """

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / LOCK_NAME
        self._held = False

    def acquire(self) -> None:
        import os

        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                owner = self._owner()
                if owner is not None and owner != os.getpid() and _alive(owner):
                    raise FolderBusy(f"run folder {self.path.parent} is in use by another "
                                     f"banditkit run (process {owner}); wait for it to finish, "
                                     "or choose another --out") from None
                self.path.unlink(missing_ok=True)  # a dead run's lock: take it over
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            self._held = True
            return
        raise FolderBusy(f"could not lock the run folder {self.path.parent}")

    def _owner(self) -> int | None:
        try:
            return int(self.path.read_text().strip())
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if self._held:
            self.path.unlink(missing_ok=True)
            self._held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class ConfigurationMismatch(ValueError):
    """A run folder holds a run of a different configuration."""


class RunStore:
    """The SQLite store of one run.

    Parameters
    ----------
    path : str or Path or None
        A run folder (the database is ``path / "results.sqlite"``), a ``.sqlite`` file, or
        ``None`` for an in-memory store (nothing is kept after the process ends).
    create : bool
        Create the folder and database if missing; with ``False`` a missing database raises
        ``FileNotFoundError`` (for commands that only read a finished run).
    """

    def __init__(self, path: str | Path | None, *, create: bool = True) -> None:
        if path is None:
            self.path: Path | None = None
            target = ":memory:"
        else:
            p = Path(path)
            if str(path) == "":
                raise ValueError("the run folder must be a non-empty path")
            if p.suffix != ".sqlite" and p.exists() and not p.is_dir():
                raise ValueError(f"run folder {p} is a file, not a folder")
            self.path = p if p.suffix == ".sqlite" else p / DB_NAME
            if not self.path.exists():
                if not create:
                    raise FileNotFoundError(f"no run database at {self.path}")
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    raise ValueError(f"cannot create the run folder {self.path.parent}: "
                                     f"{error.strerror or error}") from None
            target = str(self.path)
        try:
            self._conn = sqlite3.connect(target)
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a commit survives the process being killed (not a power
                # cut).
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            self._conn.commit()
        except sqlite3.Error as error:
            raise StoreError(f"{self.path} is not a banditkit run database, or it is damaged "
                             f"({error}); move it away, or choose another folder") from None

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def folder(self) -> Path | None:
        return None if self.path is None else self.path.parent

    # -- configuration --------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """The stored configuration (empty for a new store)."""
        rows = self._conn.execute("SELECT key, value FROM meta").fetchall()
        return {key: json.loads(value) for key, value in rows}

    def claim(self, config: Mapping[str, Any]) -> None:
        """Record ``config`` in a new store, or check that it matches the stored one.

        Raises
        ------
        ConfigurationMismatch
            When the store holds a run whose identity (:data:`IDENTITY_KEYS`) differs.
        """
        stored = self.config()
        if not stored:
            with self._conn:
                self._conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [(k, json.dumps(v)) for k, v in config.items()])
            return
        diffs = [f"{k}: stored {stored.get(k)!r}, requested {config.get(k)!r}"
                 for k in IDENTITY_KEYS if stored.get(k) != config.get(k)]
        if diffs:
            where = self.folder if self.folder is not None else "this store"
            raise ConfigurationMismatch(
                f"run folder {where} holds a run of a different configuration "
                f"({'; '.join(diffs)}); resume only with the same figure, --quick, --trials, "
                "--seed and banditkit version, or choose another --out")
        # Descriptive entries (title, notes, plot...) may be refreshed without changing identity.
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in config.items() if k not in IDENTITY_KEYS])

    # -- trials ---------------------------------------------------------------------------------
    def keys(self, status: str | None = None) -> set[tuple[int, str, int]]:
        """``(point, algorithm, trial)`` of stored trials (of one ``status`` if given)."""
        if status is None:
            rows = self._conn.execute("SELECT point, algorithm, trial FROM trials")
        else:
            rows = self._conn.execute(
                "SELECT point, algorithm, trial FROM trials WHERE status = ?", (status,))
        return {(int(p), str(a), int(i)) for p, a, i in rows}

    def add(self, records: Iterable[TrialRecord]) -> int:
        """Store records and commit. A stored successful trial is never overwritten; a stored
        failed trial is replaced (a retry). Returns the number of rows written."""
        rows = [_to_row(r) for r in records]
        columns = ["point", "algorithm", "trial", *_SCALAR_FIELDS, *_ARRAY_FIELDS, "info"]
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[3:])
        sql = (f"INSERT INTO trials ({', '.join(columns)}) "
               f"VALUES ({', '.join('?' * len(columns))}) "
               f"ON CONFLICT (point, algorithm, trial) DO UPDATE SET {updates} "
               "WHERE trials.status = 'failed'")
        with self._conn:
            before = self._conn.total_changes
            self._conn.executemany(sql, rows)
            return self._conn.total_changes - before

    def records(self) -> list[TrialRecord]:
        """Every stored trial, in (point, algorithm, trial) order."""
        columns = ["point", "algorithm", "trial", *_SCALAR_FIELDS, *_ARRAY_FIELDS, "info"]
        cur = self._conn.execute(
            f"SELECT {', '.join(columns)} FROM trials ORDER BY point, algorithm, trial")
        return [_from_row(dict(zip(columns, row, strict=True))) for row in cur]

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0])

    # -- sessions -------------------------------------------------------------------------------
    def start_session(self, *, backend: str, workers: int | None, command: str) -> int:
        with self._conn:
            cur = self._conn.execute(
                "INSERT INTO sessions (started, backend, workers, command) VALUES (?, ?, ?, ?)",
                (time.time(), backend, workers, command))
        return int(cur.lastrowid)

    def finish_session(self, session: int, *, wall_seconds: float, trials_run: int,
                       completed: bool) -> None:
        with self._conn:
            self._conn.execute(
                "UPDATE sessions SET finished = ?, wall_seconds = ?, trials_run = ?, "
                "completed = ? WHERE id = ?",
                (time.time(), wall_seconds, trials_run, int(completed), session))

    def sessions(self) -> list[dict[str, Any]]:
        cur = self._conn.execute("SELECT * FROM sessions ORDER BY id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]


def _to_row(r: TrialRecord) -> tuple:
    scalars = []
    for name in _SCALAR_FIELDS:
        value = getattr(r, name)
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        elif isinstance(value, np.integer):
            value = int(value)
        elif isinstance(value, np.floating):
            value = float(value)
        scalars.append(value)
    arrays = [_array_bytes(getattr(r, name)) for name in _ARRAY_FIELDS]
    return (int(r.point), str(r.algorithm), int(r.trial), *scalars, *arrays,
            json.dumps(r.info))


def _from_row(row: dict[str, Any]) -> TrialRecord:
    kwargs: dict[str, Any] = {k: row[k] for k in ("point", "algorithm", "trial",
                                                  *_SCALAR_FIELDS)}
    for name in ("correct", "stopped"):
        if kwargs[name] is not None:
            kwargs[name] = bool(kwargs[name])
    for name in _ARRAY_FIELDS:
        kwargs[name] = _array_from(row[name])
    kwargs["info"] = json.loads(row["info"]) if row["info"] else {}
    return TrialRecord(**kwargs)


def _array_bytes(value: np.ndarray | None) -> bytes | None:
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.dtype.kind in "iu" and arr.size:
        # Decision runs of sequential algorithms are millions of small integers (arms, ones):
        # stored in the narrowest type that holds them, 8x smaller; loaded back as int64.
        lo, hi = int(arr.min()), int(arr.max())
        narrow = next(t for t in (np.uint8, np.int8, np.int16, np.int32, np.int64, arr.dtype)
                      if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
        arr = arr.astype(narrow, copy=False)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _array_from(blob: bytes | None) -> np.ndarray | None:
    if blob is None:
        return None
    arr = np.load(io.BytesIO(blob), allow_pickle=False)
    return arr.astype(np.int64) if arr.dtype.kind in "iu" else arr


# ---------------------------------------------------------------------------------------------
# Spec identity

def spec_fingerprint(spec: FigureSpec) -> str:
    """SHA-256 of what determines a figure's numbers: instances, sweep points, algorithms
    (factories by qualified name, parameters), horizons, checkpoints and instance draws.

    Presentation (title, notes, plot, paper values) and the trial count (a separate part of a
    run's identity) are left out, so editing a note does not orphan a finished run. Changes
    inside a factory's code are not seen; the package version in the run's identity covers
    releases.
    """
    content = {
        "name": spec.name,
        "make_env": _canonical(spec.make_env),
        "points": _canonical(list(spec.points)),
        "algorithms": [_algorithm_content(a) for a in spec.algorithms],
        "horizons": [spec.horizon_at(p) for p in spec.points],
        "instance_per_trial": bool(spec.instance_per_trial),
        "checkpoints": int(spec.checkpoints),
    }
    if spec.paired:  # only when set, so that unpaired specs keep their fingerprints
        content["paired"] = True
    if spec.shared_instance:  # likewise
        content["shared_instance"] = True
    if spec.instance_of is not None:  # likewise
        content["instance_of"] = spec.instance_of
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _algorithm_content(a: AlgorithmSpec) -> dict:
    content = {"name": a.name, "factory": _canonical(a.factory),
               "params": _canonical(dict(a.params)), "lockstep": _canonical(a.lockstep)}
    if a.simulator is not None:  # only when set, so older run folders keep their fingerprint
        content["simulator"] = _canonical(a.simulator)
    return content


def _canonical(obj: Any) -> Any:
    """A JSON-able, process-independent description of ``obj`` (no memory addresses)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        return {"array": str(arr.dtype), "shape": list(arr.shape),
                "sha256": hashlib.sha256(arr.tobytes()).hexdigest()}
    if isinstance(obj, Mapping):
        return {"mapping": sorted([str(k), _canonical(v)] for k, v in obj.items())}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(json.dumps(_canonical(v), sort_keys=True) for v in obj)
    if isinstance(obj, functools.partial):
        return {"partial": _canonical(obj.func), "args": _canonical(list(obj.args)),
                "keywords": _canonical(dict(obj.keywords))}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"dataclass": f"{type(obj).__module__}.{type(obj).__qualname__}",
                "fields": {f.name: _canonical(getattr(obj, f.name))
                           for f in dataclasses.fields(obj)}}
    if callable(obj) and hasattr(obj, "__qualname__"):
        return f"{getattr(obj, '__module__', '?')}.{obj.__qualname__}"
    try:
        return {"pickle": hashlib.sha256(pickle.dumps(obj)).hexdigest()}
    except Exception:  # unpicklable: the type is the best stable description left
        return {"object": f"{type(obj).__module__}.{type(obj).__qualname__}"}
