"""The browser sessions ended at ``POST /logout``, kept where every server of one ``--db`` and
the next start of this one read them: a session cookie carries an HMAC keyed by its token
(:mod:`.auth`), so it stays valid on any server that holds the token, and across restarts,
until it expires; logging out must end it there too, not only in the process that answered.

- :class:`FileRevocations`, for a folder of experiments: one line per ended session (its
  nonce and expiry) appended to ``.banditkit-sessions-ended`` in the folder (mode 0600),
  reread when the file changes (one ``stat`` per check), rewritten without the expired lines
  when they are most of it.
- :class:`TableRevocations`, for a PostgreSQL database: the table
  ``banditkit_sessions_ended`` (outside every experiment's schema), read again at most every
  :data:`REFRESH` seconds, so another server honours a logout within that time.
- :class:`MemoryRevocations`, for an app built without a catalog that can hold them (the
  tests' in-process apps): this process only.

An ended session's entry is dropped once the session would have expired anyway.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["REFRESH", "FileRevocations", "MemoryRevocations", "TableRevocations"]

log = logging.getLogger("banditkit.service")

#: Seconds a server may honour a session another server of its database has ended.
REFRESH = 1.0

_FILE = ".banditkit-sessions-ended"
#: A file of at least this many lines is rewritten without its expired ones (when they are most).
_COMPACT_LINES = 1000
#: Bytes of the shortest line this module writes: a 22-character nonce, a space, a 10-digit
#: expiry, a newline.
_LINE_BYTES = 34
_TABLE = "banditkit_sessions_ended"


class MemoryRevocations:
    """Ended sessions known to this process only."""

    def __init__(self) -> None:
        self._ended: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, nonce: str, expires: float) -> None:
        """End the session ``nonce`` (which expires at ``expires``, seconds since the epoch)."""
        with self._lock:
            now = time.time()
            self._ended = {n: t for n, t in self._ended.items() if t > now}
            self._ended[nonce] = expires

    def __contains__(self, nonce: str) -> bool:
        return nonce in self._ended


class FileRevocations(MemoryRevocations):
    """Ended sessions in ``folder/.banditkit-sessions-ended``, shared by every server of the
    folder."""

    def __init__(self, folder: str | Path) -> None:
        super().__init__()
        self.path = Path(folder) / _FILE
        self._seen: tuple[int, int] | None = None

    def add(self, nonce: str, expires: float) -> None:
        super().add(nonce, expires)
        line = f"{nonce} {int(expires)}\n".encode()
        try:
            # O_APPEND: lines of two servers never interleave (one write of a few bytes each)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._compact()
        except OSError as error:  # a full disk: the logout still ends the session here
            log.error("could not store a logout in %s: %s", self.path, error.strerror)

    def __contains__(self, nonce: str) -> bool:
        self._reload()
        return super().__contains__(nonce)

    def _reload(self) -> None:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return
        seen = (info.st_mtime_ns, info.st_size)
        if seen == self._seen:
            return
        now = time.time()
        ended = dict(self._ended)
        for nonce, expires in _lines(self.path.read_bytes()):
            if expires > now:
                ended[nonce] = expires
        with self._lock:
            self._ended, self._seen = ended, seen

    def _compact(self) -> None:
        """Rewrite the file without expired lines once they are most of a long file (atomic:
        a reader sees the old file or the new one)."""
        try:
            if os.stat(self.path).st_size < _COMPACT_LINES * _LINE_BYTES:
                return  # too short to hold _COMPACT_LINES lines: not read at every logout
            lines = list(_lines(self.path.read_bytes()))
        except FileNotFoundError:
            return
        now = time.time()
        live = [(n, t) for n, t in lines if t > now]
        if len(lines) < _COMPACT_LINES or len(live) * 2 > len(lines):
            return
        spare = self.path.with_name(f"{_FILE}.{os.getpid()}")
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, "".join(f"{n} {int(t)}\n" for n, t in live).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(spare, self.path)


def _lines(data: bytes) -> Any:
    for raw in data.decode("ascii", "replace").splitlines():
        nonce, _, expires = raw.partition(" ")
        if nonce and expires.isdigit():
            yield nonce, float(expires)


class TableRevocations(MemoryRevocations):
    """Ended sessions in the table ``banditkit_sessions_ended`` of the PostgreSQL database at
    ``url``, shared by every server of the database."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._read_at = -float("inf")
        self._created = False

    def _run(self, *statements: tuple[str, tuple]) -> list[Any]:
        from ..live.store.postgres import run_statements

        table = [] if self._created else [
            f"CREATE TABLE IF NOT EXISTS {_TABLE} (nonce TEXT PRIMARY KEY, "
            "expires DOUBLE PRECISION NOT NULL)"]
        rows = run_statements(self.url, [*table, *statements])
        self._created = True
        return rows

    def add(self, nonce: str, expires: float) -> None:
        super().add(nonce, expires)  # this process honours it even if the database is away
        try:
            self._run((f"INSERT INTO {_TABLE} VALUES (%s, %s) ON CONFLICT DO NOTHING",
                       (nonce, float(expires))),
                      (f"DELETE FROM {_TABLE} WHERE expires < %s", (time.time(),)))
        except Exception as error:  # the logout still ends the session here
            log.error("could not store a logout in the database: %s", error)
        self._read_at = -float("inf")

    def __contains__(self, nonce: str) -> bool:
        now = time.monotonic()
        if now - self._read_at >= REFRESH:
            try:
                rows = self._run((f"SELECT nonce, expires FROM {_TABLE} WHERE expires > %s",
                                  (time.time(),)))
            except Exception as error:  # keep what is known; say so in the log
                log.error("could not read the ended sessions from the database: %s", error)
            else:
                with self._lock:
                    self._ended = {**self._ended, **{n: float(t) for n, t in rows}}
            self._read_at = now
        return super().__contains__(nonce)
