"""A folder of live experiments, ``DIR/NAME.sqlite``, as a server process uses it (the
worker thread and the several-processes argument are those of :mod:`.catalog`)."""

from __future__ import annotations

import errno
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..live import Experiment, ExperimentError
from ..live.store import NAME_PATTERN
from ..live.store.codec import file_identity
from .catalog import Catalog, Conflict, InsufficientStorage, NotFound, service_clock
from .limits import Limits
from .revocations import FileRevocations

__all__ = ["MIN_FREE", "ExperimentFolder"]

T = TypeVar("T")
log = logging.getLogger("banditkit.service")

SUFFIX = ".sqlite"
#: Bytes free on the folder's disk below which ``/ready`` says not ready (a record of 100,000
#: units writes about 10 MB to the WAL).
MIN_FREE = 16 * 2**20
_FULL = ("database or disk is full", "No space left on device")


class ExperimentFolder(Catalog):
    """The experiments of one folder, each opened once per process and kept open while among the
    ``limits.max_open`` most recently used.

    Parameters
    ----------
    root : Path
        The folder (it must exist).
    limits : Limits, optional
        The server's limits (:class:`~banditkit.service.limits.Limits`).
    """

    def __init__(self, root: str | Path, limits: Limits | None = None) -> None:
        root = Path(root)
        if not root.is_dir():
            raise ExperimentError(f"--db: folder {str(root)!r} does not exist")
        self.root = root.resolve()
        super().__init__(limits)
        self.where = f"folder {self.root}"
        # name -> the file's identity when opened: a file deleted or replaced is reopened
        self._identity: dict[str, tuple[int, int]] = {}

    def path(self, name: str) -> Path:
        return self.root / f"{self.check_name(name)}{SUFFIX}"

    def names(self) -> list[str]:
        return sorted(p.name[: -len(SUFFIX)] for p in self.root.glob(f"*{SUFFIX}")
                      if NAME_PATTERN.fullmatch(p.name[: -len(SUFFIX)]))

    def get(self, name: str) -> Experiment:
        path = self.path(name)
        identity = file_identity(path)
        experiment = self._opened(name)
        if experiment is not None:
            if self._identity[name] == identity:
                return experiment
            self.forget(name)  # deleted, or replaced by another file of that name: reopen
        if identity is None:
            raise NotFound(f"no experiment named {name!r}")
        self._room_to_open()
        experiment = Experiment.open(path, clock=service_clock)
        self._identity[name] = identity
        self._keep(name, experiment)
        return experiment

    def call(self, name: str, action: Callable[[Experiment], T]) -> T:
        return self._room(lambda: super(ExperimentFolder, self).call(name, action))

    def _room(self, action: Callable[[], T]) -> T:
        """``action()``, a full disk told apart from a request's mistake: 507, not 400 (the
        call changed nothing: SQLite rolled it back), logged with the path, which the client
        is not told."""
        try:
            return action()
        except (ExperimentError, OSError) as error:
            if not (getattr(error, "errno", None) == errno.ENOSPC
                    or any(text in str(error) for text in _FULL)):
                raise
            self.database_errors += 1
            log.error("the experiments' disk is full: %s", error)
            raise InsufficientStorage("the disk holding the experiments is full; nothing was "
                                      "written: retry once an operator has freed space"
                                      ) from None

    def revocations(self) -> FileRevocations:
        """Ended sessions in a file of the folder, read by every server of it."""
        return FileRevocations(self.root)

    def ping(self) -> str | None:
        try:
            stats = os.statvfs(self.root)
        except OSError as error:
            return f"the experiments' folder cannot be read ({error.strerror})"
        free = stats.f_bavail * stats.f_frsize
        if free < MIN_FREE:
            return f"the experiments' disk is full ({free} bytes free)"
        if not os.access(self.root, os.W_OK):
            return "the experiments' folder is not writable"
        return None

    def _delete(self, name: str) -> None:
        path = self.path(name)
        for leftover in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        self._identity.pop(name, None)


    def forget(self, name: str) -> None:
        super().forget(name)
        self._identity.pop(name, None)

    def public(self, message: str) -> str:
        """No path of the server's disk: the folder is left out (``'m83.sqlite'``)."""
        return message.replace(f"{self.root}/", "").replace(str(self.root), "the folder")

    def create(self, name: str, **definition: Any) -> Experiment:
        """The file is built under a hidden temporary name and linked into place, which fails
        if the name exists, so two servers creating one name at once leave one experiment,
        never a file half-written by both."""
        final = self.path(name)
        if final.exists():
            raise Conflict(f"an experiment named {name!r} exists already")
        self._room_to_open()
        temporary = self.root / f".{name}.{uuid.uuid4().hex}.creating"
        try:
            self._room(lambda: Experiment.create(temporary, **definition).close())  # WAL in
            try:
                os.link(temporary, final)
            except FileExistsError:
                raise Conflict(f"an experiment named {name!r} exists already") from None
        finally:
            for leftover in (temporary, *(temporary.with_name(temporary.name + s)
                                          for s in ("-wal", "-shm"))):
                leftover.unlink(missing_ok=True)
        return self.get(name)
