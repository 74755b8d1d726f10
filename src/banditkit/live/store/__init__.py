"""Where a live experiment is kept: one interface, two backends.

An experiment lives in an SQLite file (a path: :mod:`banditkit.live.store.sqlite`, the embedded
default) or in a PostgreSQL database (a ``postgresql://`` URL and a ``name``, one schema per
experiment: :mod:`banditkit.live.store.postgres`). Both hold the tables of
:mod:`banditkit.live.store.schema`, and :class:`banditkit.Experiment` runs the same SQL on either
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

from pathlib import Path
from typing import Any

from ..errors import ExperimentError

# the interface lives below this module so that the backends, which implement it, never import
# the module that chooses between them (no import cycle: tests/test_import_layers.py)
from .base import NAME_PATTERN, NAME_RULE, Connection, Store

__all__ = ["CHUNK", "NAME_RULE", "Connection", "Store", "check_location", "create_store",
           "delete_store",
           "experiment_exists", "is_url", "list_experiments", "open_store"]

#: Ids and keys of one statement's ``IN (...)`` list, at most: SQLite's default limit on the
#: variables of one statement is 999 (older builds).
CHUNK = 900

#: The URL schemes that name a PostgreSQL database (libpq's two spellings).
URL_SCHEMES = ("postgresql://", "postgres://")


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
        from ..inputs import brief

        raise ExperimentError(f"path must be a file name (str or pathlib.Path), got "
                              f"{brief(location)} (or a postgresql:// URL, with name=)")
    if name is not None:
        raise ExperimentError(f"name chooses an experiment in a PostgreSQL database (a "
                              f"postgresql:// URL); an SQLite file holds one experiment: omit "
                              f"name for a path, got name={name!r}")


def create_store(location: str | Path, name: str | None, meta: dict[str, Any]) -> Store:
    """A new experiment holding ``meta`` at ``location`` (refused when one exists there)."""
    if is_url(location):
        from .postgres import PostgresStore

        return PostgresStore.create(str(location), str(name), meta)
    from .sqlite import SQLiteStore

    return SQLiteStore.create(location, meta)


def open_store(location: str | Path, name: str | None, readonly: bool) -> Store:
    """The existing experiment at ``location`` (ExperimentNotFound when there is none)."""
    if is_url(location):
        from .postgres import PostgresStore

        return PostgresStore.open(str(location), str(name), readonly=readonly)
    from .sqlite import SQLiteStore

    return SQLiteStore.open(location, readonly=readonly)


def list_experiments(url: str) -> list[str]:
    """The names of the experiments a PostgreSQL database holds, sorted."""
    if not is_url(url):
        raise ExperimentError(f"url must be a postgresql:// URL, got {url!r}")
    from .postgres import list_names

    return list_names(url)


def experiment_exists(url: str, name: str) -> bool:
    """Whether the PostgreSQL database at ``url`` holds an experiment named ``name``."""
    check_location(url, name)
    from .postgres import list_names

    return name in list_names(url, only=name)


def delete_store(location: str | Path, name: str | None) -> None:
    """Delete what holds an experiment: its file (with ``-wal`` and ``-shm``) or its schema,
    whole (``Experiment.delete`` checks first that it is archived)."""
    if is_url(location):
        from .postgres import drop

        drop(str(location), str(name))
        return
    path = Path(location)
    for leftover in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
        leftover.unlink(missing_ok=True)
