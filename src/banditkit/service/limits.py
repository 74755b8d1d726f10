"""Limits of the service, in one place, importable without Starlette: ``banditkit serve
--help`` and every other CLI call stay light (tests/test_startup.py), and the command line shows
each default.

Every limit bounds a resource one client (or one mistake) could otherwise take whole: the
writer's queue, the readers' slots, the experiments kept open (3 file descriptors each on
SQLite, a session each on PostgreSQL before the pool), the time a connection may take to send
its headers and its body, the units of one call, how deep a body nests. Values come from
measurements on the shared 2-core development machine (docs/service.md, "Limits").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_BODY", "Limits", "descriptors_left"]

#: Largest request body accepted by default (bytes); larger bodies get 413.
DEFAULT_MAX_BODY = 16 * 2**20


@dataclass(frozen=True)
class Limits:
    """What one server process allows (``banditkit serve``'s options of the same names).

    Attributes
    ----------
    max_body : int
        Largest request body, bytes (413 above; a record call of 100,000 units is ~2 MB).
    max_units : int
        Most units one call may ask for or name (``n``, ``keys``, ``units``): 400 above, by
        name. ``n`` = 10**30 once took a whole batch.
    max_depth : int
        Deepest nesting of a JSON body (no route takes more than 3 levels); 400 above, before
        Python's recursion limit turns it into a 500.
    max_open : int
        Experiments kept open per process (least recently used closed first): bounds the file
        descriptors (3 per SQLite experiment) and memory.
    max_queue : int
        Calls waiting for the writer thread; one more is answered 503 with ``Retry-After``.
    readers : int
        Reader processes serving ``status``, ``units`` and the page off the write path.
    max_reads : int
        Reads in flight (waiting or running) over all readers; one more is 503.
    pool_size : int
        PostgreSQL connections of the process's writer pool, shared by every experiment (each
        reader process holds one more).
    header_timeout : float
        Seconds a connection may take to send a request's headers (slow-loris): then 408 and
        closed.
    body_timeout : float
        Seconds a request may take to send its body: then 408.
    queue_timeout : float
        Seconds a call may wait for the writer (or a read for a reader) before it starts: then
        503 and it never runs (a call that started is always waited for: its answer says
        what was written).
    """

    max_body: int = DEFAULT_MAX_BODY
    max_units: int = 100_000
    max_depth: int = 32
    max_open: int = 64
    max_queue: int = 1024
    readers: int = 2
    max_reads: int = 64
    pool_size: int = 4
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    queue_timeout: float = 30.0

    def __post_init__(self) -> None:
        from ..live import ExperimentError

        for name in ("max_body", "max_units", "max_depth", "max_open", "max_queue", "max_reads",
                     "pool_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ExperimentError(f"{name} must be an integer >= 1, got {value!r}")
        if isinstance(self.readers, bool) or not isinstance(self.readers, int) \
                or self.readers < 0:
            raise ExperimentError(f"readers must be an integer >= 0, got {self.readers!r}")
        for name in ("header_timeout", "body_timeout", "queue_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ExperimentError(f"{name} must be a number of seconds > 0, got {value!r}")


#: Descriptors kept free for the server's own needs (accepting, logging, a health check).
RESERVE = 16


def descriptors_left() -> int | None:
    """File descriptors this process may still open (its soft ``RLIMIT_NOFILE`` less those open),
    or ``None`` where the system does not tell (no ``/proc/self/fd``)."""
    import errno
    import resource

    try:
        used = len(os.listdir("/proc/self/fd"))  # this listing takes one descriptor itself
    except OSError as error:
        # not even one left to list them with: none left
        return 0 if error.errno in (errno.EMFILE, errno.ENFILE) else None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft - used
