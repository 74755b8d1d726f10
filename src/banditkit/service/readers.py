"""Reads off the write path: ``GET .../status``, ``GET .../units`` and the page run in reader
processes of their own, each with its own read-only experiments, so a client reloading the page
or pulling 7 MB of units never waits in the writer's queue, and never holds the writer's
interpreter lock (threads would: rendering the page is Python and matplotlib, seconds of it).

Each reader process opens the experiments it reads with ``Experiment.open(..., readonly=True)``
(SQLite's ``mode=ro``; PostgreSQL's ``READ ONLY`` transactions, one pooled connection per
process), keeps at most ``max_open`` of them (least recently used closed first), and answers
JSON or HTML already encoded, so the server process only copies bytes. Every read is one
snapshot of the store, replaying first what was observed since, as any process of
:class:`~banditkit.Experiment` does: a read is never staler than the last commit before it.

The page is cached per experiment and *version*: the status the reader computes anyway (from the
running totals) is its fingerprint, and the page (which reads every unit and draws three plots)
is drawn again only when that status changed, and at most once every :data:`PAGE_MIN_AGE`
seconds (an experiment under load changes on every call; the page says when it was made and
reloads itself every 30 s). Reader processes run at a lower CPU priority (``nice``
:data:`READER_NICE`): on a machine short of cores, the writer's calls go first, and reads
take what is left. Reads in flight are bounded (``max_reads``: one
more is 503 with ``Retry-After``), and a read still waiting for a reader after ``queue_timeout``
seconds is dropped unrun (503).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..live import Experiment, ExperimentError
from .catalog import Busy, NotFound, Unavailable
from .limits import Limits

__all__ = ["KINDS", "ReadSpec", "Readers", "read_bytes", "units_answer"]

#: What a reader answers: the status (JSON), the units (JSON), the page (HTML).
KINDS = ("status", "units", "page")
#: Seconds a drawn page is served before it is drawn again for a newer version.
PAGE_MIN_AGE = 2.0
#: How much lower the reader processes' CPU priority is than the server's.
READER_NICE = 10


@dataclass(frozen=True)
class ReadSpec:
    """Where a reader finds the experiments: a folder (``root``) or a database (``url``)."""

    root: str | None = None
    url: str | None = None
    max_open: int = 64


class _Reader:
    """The read-only experiments of one reader (process or thread) and its page cache."""

    def __init__(self, spec: ReadSpec) -> None:
        self.spec = spec
        self.open: OrderedDict[str, Experiment] = OrderedDict()
        # name -> (status it was drawn from, when, html)
        self.pages: OrderedDict[str, tuple[str, float, str]] = OrderedDict()
        self.identity: dict[str, Any] = {}  # name -> the file's identity when opened
        if spec.url is not None:
            from ..live.store.postgres import use_pool

            use_pool(spec.url, 1)  # one session per reader, whatever it reads

    def experiment(self, name: str) -> Experiment:
        experiment = self.open.get(name)
        if experiment is not None:
            if self._current(name, experiment):
                self.open.move_to_end(name)
                return experiment
            self._forget(name)
        from ..live.errors import ExperimentNotFound

        try:
            if self.spec.root is not None:
                from pathlib import Path

                from ..live.store.codec import file_identity
                from .folder import SUFFIX

                path = Path(self.spec.root) / f"{name}{SUFFIX}"
                if not path.is_file():
                    raise NotFound(f"no experiment named {name!r}")
                self.identity[name] = file_identity(path)
                experiment = Experiment.open(path, readonly=True)
            else:
                experiment = Experiment.open(self.spec.url, readonly=True, name=name)
        except ExperimentNotFound:
            raise NotFound(f"no experiment named {name!r}") from None
        self.open[name] = experiment
        while len(self.open) > self.spec.max_open:
            self._forget(next(iter(self.open)))
        return experiment

    def _current(self, name: str, experiment: Experiment) -> bool:
        """False when the file was deleted or replaced since it was opened (reopen it)."""
        if experiment.path is None:
            return True
        from ..live.store.codec import file_identity

        return self.identity.get(name) == file_identity(experiment.path)

    def _forget(self, name: str) -> None:
        experiment = self.open.pop(name, None)
        self.pages.pop(name, None)
        self.identity.pop(name, None)
        if experiment is not None:
            experiment.close()

    def read(self, kind: str, name: str, args: tuple = ()) -> Any:
        """The answer: for ``units``, :func:`units_answer`'s; for ``status`` and ``page``,
        (bytes, units overdue): a read-only open resolves nothing, and the server asks its
        writer to resolve them (:meth:`banditkit.Experiment.resolve`) without waiting.

        An experiment this reader had open that fails (deleted or replaced since, a database
        back after a restart) is opened again once before the error is answered: a deleted
        one is then "not found" (404), as for a reader that never had it open, not a 400."""
        was_open = name in self.open
        try:
            return self._read(kind, name, args)
        except (NotFound, Unavailable):
            raise
        except ExperimentError:
            if not was_open:
                raise
            return self._read(kind, name, args)  # _read forgot it: opened afresh

    def _read(self, kind: str, name: str, args: tuple = ()) -> Any:
        from .jsonable import to_json

        experiment = self.experiment(name)
        try:
            if kind == "units":
                return units_answer(experiment, *args)
            status = experiment.status()
            overdue = int(status.waiting_units.overdue)
            text = json.dumps(to_json(status))
            if kind == "status":
                return text.encode(), overdue
            cached = self.pages.get(name)
            if cached is not None and (cached[0] == text
                                       or time.monotonic() - cached[1] < PAGE_MIN_AGE):
                self.pages.move_to_end(name)
                return cached[2].encode(), overdue
            from .page import render_page

            page = render_page(experiment, title=name, refresh=30, status=status)
            self.pages[name] = (text, time.monotonic(), page)
            while len(self.pages) > self.spec.max_open:
                self.pages.popitem(last=False)
            return page.encode(), overdue
        except ExperimentError:
            self._forget(name)  # reopened next time (a database back, a file replaced)
            raise

    def checked(self, kind: str, name: str, args: tuple = ()) -> Any:
        """:meth:`read`, with a database that cannot be reached told apart from the request's
        own mistakes (503, without saying where it is), as the writer's catalog does."""
        try:
            return self.read(kind, name, args)
        except (NotFound, Unavailable):
            raise
        except ExperimentError as error:
            if self.spec.url is not None:
                from ..live.store import list_experiments
                from ..live.store.postgres import DatabaseUnreachable

                if isinstance(error, DatabaseUnreachable):
                    raise Unavailable("the experiments' database cannot be reached now "
                                      "(logged by the server); try again") from None

                try:
                    list_experiments(self.spec.url)
                except ExperimentError:
                    raise Unavailable("the experiments' database cannot be reached now "
                                      "(logged by the server); try again") from None
            raise


_READER: _Reader | None = None


def _start(spec: ReadSpec, server: int) -> None:
    """A reader process's start: lower priority, the watch on its server (``server``: the
    server's pid, given by the server itself — read here with ``getppid``, a reader started
    while its server was stopping took its new parent, init, for the server, and waited for
    it for ever, holding the server's stderr open), its reader."""
    global _READER
    try:
        os.nice(READER_NICE)
    except OSError:  # not allowed here: same priority
        pass
    threading.Thread(target=_exit_with_parent, args=(server,), daemon=True,
                     name="banditkit-orphan-watch").start()
    _READER = _Reader(spec)


def _exit_with_parent(parent: int) -> None:
    """End this reader once its server is gone. A server killed with SIGKILL (a crash, the
    kill tests) cannot stop its readers, and they would otherwise wait for work for ever
    (54 of them were left on the development machine before this)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def units_answer(experiment: Experiment, unanswered: bool = False, after: int | None = None,
                 limit: int | None = None, csv: bool = False) -> tuple[bytes, int | None]:
    """``GET /experiments/NAME/units``'s body (JSON, or CSV with ``csv``) and the id the next
    page starts after (``None`` unless a full page of ``limit`` units came back)."""
    from .jsonable import frame_records

    frame = experiment.units(unanswered=unanswered, after=after, limit=limit)
    last = (int(frame["unit"].iloc[-1]) if limit is not None and len(frame) == limit
            else None)
    if csv:
        from .csvcells import to_csv

        return to_csv(frame).encode(), last
    return json.dumps({"units": frame_records(frame), "next_after": last}).encode(), last


def _read_in_process(kind: str, name: str, args: tuple = ()) -> Any:
    assert _READER is not None
    try:
        return _READER.checked(kind, name, args)
    except ExperimentError as error:  # a plain error of its kind, to pickle (the app's answer
        raise type(error)(str(error)) from None  # leaves paths out, as for the writer's)


def read_bytes(reader: _Reader, kind: str, name: str, args: tuple = ()) -> Any:
    """One read on ``reader`` (the thread fallback)."""
    return reader.checked(kind, name, args)


class Readers:
    """The reader processes of one server (``limits.readers`` of them; with 0, reads run on one
    reader thread of the server process instead, still off the writer's thread and queue)."""

    def __init__(self, spec: ReadSpec, limits: Limits) -> None:
        self.spec, self.limits = spec, limits
        self._in_flight = 0
        self._lock = threading.Lock()
        if limits.readers > 0:
            # spawn: a fork of a process running threads (the writer, the event loop) may copy
            # a lock held by one of them
            self._pool: Any = ProcessPoolExecutor(
                max_workers=limits.readers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_start, initargs=(spec, os.getpid()))
            self._local = None
        else:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="banditkit-read")
            self._local = _Reader(spec)

    def warm(self) -> None:
        """Start every reader process now rather than on the first read (each imports numpy,
        pandas and banditkit: about a second)."""
        if self._local is None:
            for future in [self._pool.submit(_noop) for _ in range(self.limits.readers)]:
                future.result()

    def _submit(self, kind: str, name: str, args: tuple) -> Future:
        if self._local is not None:
            return self._pool.submit(read_bytes, self._local, kind, name, args)
        return self._pool.submit(_read_in_process, kind, name, args)

    async def read(self, kind: str, name: str, args: tuple = ()) -> Any:
        """The answer's bytes (for ``units``: the bytes and the next page's start, see
        :func:`units_answer`); :class:`Busy` when ``max_reads`` are in flight or none started
        within ``queue_timeout``."""
        with self._lock:
            if self._in_flight >= self.limits.max_reads:
                raise Busy(f"{self._in_flight} reads are in flight on this server (its limit, "
                           f"--max-reads {self.limits.max_reads}); retry in a moment")
            self._in_flight += 1
        try:
            future = self._submit(kind, name, args)
            try:
                return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)),
                                              self.limits.queue_timeout)
            except TimeoutError:
                if future.cancel():
                    raise Busy(f"no reader was free within {self.limits.queue_timeout:g} s; "
                               "retry in a moment") from None
                return await asyncio.wrap_future(future)
        except Exception as error:
            if isinstance(error, ExperimentError):
                raise
            from concurrent.futures.process import BrokenProcessPool

            if isinstance(error, BrokenProcessPool):
                self._restart()
                raise Unavailable("a reader process of this server died; retry (it is "
                                  "started again)") from None
            raise
        finally:
            with self._lock:
                self._in_flight -= 1

    def _restart(self) -> None:
        """A pool whose process died refuses every later read: start a new one."""
        old, self._pool = self._pool, ProcessPoolExecutor(
            max_workers=self.limits.readers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start, initargs=(self.spec, os.getpid()))
        old.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _noop() -> None:
    return None
