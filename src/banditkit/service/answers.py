"""The writer's answers back on the event loop, a group at a time.

A call runs on the catalog's worker thread and sets a :class:`concurrent.futures.Future`; the
route awaits it on the event loop. ``asyncio.wait_for(asyncio.shield(asyncio.wrap_future(f)))``
did that with three futures, a task and one ``call_soon_threadsafe`` (a write to the loop's
wake-up socket, and a wake-up) per call, although the worker finishes a whole group of calls
at once (group commit, :mod:`.catalog`). Here each call gets one loop future and a deadline
among the others (:mod:`.deadlines`: one timer for them all), and the worker's results reach
the loop through one queue: the first result of a group wakes the loop, the others join the
same wake-up. Under ``benchmarks/bench_service.py`` (32 clients)
the hand-off was about a sixth of the event loop's time with the interpreter lock held (py-spy
``--gil``).

The queue timeout is the same as before: a call not *started* within ``timeout`` is cancelled
unrun and answered :class:`~.catalog.Busy` (503); one that started is always waited for, since
its answer says what was written.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .deadlines import Deadlines

__all__ = ["Answers"]


class Answers:
    """Awaits worker-thread futures on one event loop (create it on that loop)."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._done: deque[tuple[Future, asyncio.Future]] = deque()
        self._lock = threading.Lock()
        self._woken = False  # a drain is scheduled and has not started
        self._deadlines: dict[float, Deadlines] = {}  # queue timeout -> deadlines

    async def wait(self, future: Future, timeout: float, busy: Callable[[], Exception]) -> Any:
        """The result of ``future`` (set on another thread); if it has not started within
        ``timeout`` seconds, it is cancelled and ``busy()`` raised instead."""
        waiter = self._loop.create_future()

        def too_late() -> None:
            if future.cancel() and not waiter.done():  # not started: it never will be
                waiter.set_exception(busy())

        # one timer for all the calls waiting (deadlines.py), not one each
        deadlines = self._deadlines.get(timeout)
        if deadlines is None:
            deadlines = self._deadlines[timeout] = Deadlines(timeout, self._loop)
        deadlines.add(waiter, too_late)
        future.add_done_callback(lambda f: self._finished(f, waiter))
        try:
            return await waiter
        finally:
            deadlines.discard(waiter)

    def _finished(self, future: Future, waiter: asyncio.Future) -> None:
        """On the worker thread (or here, for a future already done): hand over, waking the
        loop only if no wake-up is pending already."""
        with self._lock:
            self._done.append((future, waiter))
            if self._woken:
                return
            self._woken = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop is closed: the server is stopping
            pass

    def _drain(self) -> None:
        with self._lock:
            ready, self._woken = list(self._done), False
            self._done.clear()
        for future, waiter in ready:
            if waiter.done():  # the request was cancelled (its client went away)
                continue
            if future.cancelled():  # by its timer, which answered it already
                waiter.cancel()
                continue
            error = future.exception()
            if error is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(future.result())
