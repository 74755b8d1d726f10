"""A folder of live experiments, ``DIR/NAME.sqlite``, as a server process uses it.

Every call to an :class:`~banditkit.Experiment` runs on one worker thread per server process:
an experiment holds one ``sqlite3`` connection, which may only be used from the thread that
opened it (``check_same_thread``), and SQLite serialises writers anyway (each call takes the
write lock with ``BEGIN IMMEDIATE``), so a second thread would only wait for the lock. Several
server processes on one folder stay correct because every call is one transaction and
:class:`~banditkit.Experiment` replays, at the start of each call, the batches another process
observed since (its ``_sync``); nothing here keeps state that another process could make stale.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ..live import Experiment, ExperimentError
from ..live.journal import file_identity

__all__ = ["NAME_RULE", "Conflict", "ExperimentFolder", "NotFound", "check_name"]

T = TypeVar("T")

#: An experiment's name: a file name without a path (no ``/``, no leading dot, so no ``..``).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
NAME_RULE = ("1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit")
SUFFIX = ".sqlite"


class NotFound(ExperimentError):
    """No experiment of that name in the folder (HTTP 404)."""


class Conflict(ExperimentError):
    """An experiment of that name exists already (HTTP 409)."""


def check_name(name: Any) -> str:
    """``name`` if it can name a file in the folder and nothing outside it, else refuse."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ExperimentError(f"name must be {NAME_RULE}, got {name!r}")
    return name


class ExperimentFolder:
    """The experiments of one folder, opened once per process and kept open.

    Parameters
    ----------
    root : Path
        The folder (it must exist).
    """

    def __init__(self, root: str | Path) -> None:
        root = Path(root)
        if not root.is_dir():
            raise ExperimentError(f"--db: folder {str(root)!r} does not exist")
        self.root = root.resolve()
        # name -> (experiment, the file's identity when opened)
        self._open: dict[str, tuple[Experiment, tuple[int, int]]] = {}
        # one thread owns every connection (see the module docstring)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="banditkit-db")

    def path(self, name: str) -> Path:
        return self.root / f"{check_name(name)}{SUFFIX}"

    def submit(self, call: Callable[[], T]) -> Any:
        """Run ``call`` on the worker thread (returns a concurrent future)."""
        return self._worker.submit(call)

    def names(self) -> list[str]:
        return sorted(p.name[: -len(SUFFIX)] for p in self.root.glob(f"*{SUFFIX}")
                      if NAME_PATTERN.fullmatch(p.name[: -len(SUFFIX)]))

    def get(self, name: str) -> Experiment:
        """The open experiment ``name`` (worker thread only)."""
        path = self.path(name)
        identity = file_identity(path)
        known = self._open.get(name)
        if known is not None:
            if known[1] == identity:
                return known[0]
            known[0].close()  # deleted, or replaced by another file of that name: reopen
            del self._open[name]
        if identity is None:
            raise NotFound(f"no experiment named {name!r}")
        experiment = Experiment.open(path)
        self._open[name] = (experiment, identity)
        return experiment

    def create(self, name: str, **definition: Any) -> Experiment:
        """Create ``name`` atomically (worker thread only): the file is built under a hidden
        temporary name and linked into place, which fails if the name exists, so two servers
        creating one name at once leave one experiment, never a file half-written by both."""
        final = self.path(name)
        if final.exists():
            raise Conflict(f"an experiment named {name!r} exists already")
        temporary = self.root / f".{name}.{uuid.uuid4().hex}.creating"
        try:
            Experiment.create(temporary, **definition).close()  # close: WAL folded in
            try:
                os.link(temporary, final)
            except FileExistsError:
                raise Conflict(f"an experiment named {name!r} exists already") from None
        finally:
            for leftover in (temporary, *(temporary.with_name(temporary.name + s)
                                          for s in ("-wal", "-shm"))):
                leftover.unlink(missing_ok=True)
        return self.get(name)

    def close(self) -> None:
        def close_all() -> None:
            for experiment, _ in self._open.values():
                experiment.close()
            self._open.clear()

        self._worker.submit(close_all).result()
        self._worker.shutdown()
