"""Many deadlines of one length on one event loop, kept by one timer.

Each ``assign`` and ``record`` request had two timers of its own: the queue timeout (a call the
writer has not started within ``--queue-timeout`` is cancelled unrun, 503) and the body timeout
(``asyncio.timeout``, 408). A timer is a ``TimerHandle`` pushed on the loop's heap, and, once
cancelled, a heap entry until the loop sweeps it out; under ``benchmarks/bench_service.py`` (32
keep-alive clients) ``call_at``/``call_later`` and ``TimerHandle`` were about 12% of the event
loop's time with the interpreter lock held (py-spy ``--gil``), for two requests out of three
that finish in milliseconds.

Every deadline of one :class:`Deadlines` is ``seconds`` after it was added, so the order they
are added in is the order they fall due: they wait in an insertion-ordered ``dict``, and one
timer is armed for the oldest. When it fires, the deadlines past are expired (their callback
runs, at the same moment a timer of their own would have run it) and the timer is armed again
for the oldest left. A deadline whose request finished first is removed (``discard``) and
costs nothing more. The timer then fires about once per ``seconds`` while requests come.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable

__all__ = ["Deadlines"]


class Deadlines:
    """Deadlines ``seconds`` after each :meth:`add`, on ``loop`` (by default the loop running
    :meth:`add`: an app served by one loop after another, as tests do, follows it), with one
    timer (module docstring). Event-loop thread only."""

    __slots__ = ("_due", "_follow", "_loop", "_timer", "seconds")

    def __init__(self, seconds: float, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.seconds = seconds
        self._loop = loop
        self._follow = loop is None
        # key -> (loop time it falls due, what to run then); oldest first
        self._due: dict[Hashable, tuple[float, Callable[[], None]]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, key: Hashable, expire: Callable[[], None]) -> None:
        """Run ``expire()`` ``seconds`` from now unless :meth:`discard` (``key``) comes
        first."""
        if self._follow and self._loop is not (running := asyncio.get_running_loop()):
            # a new loop: the old one's deadlines went with it
            self._loop, self._due, self._timer = running, {}, None
        assert self._loop is not None
        when = self._loop.time() + self.seconds
        self._due[key] = (when, expire)
        if self._timer is None:
            self._timer = self._loop.call_at(when, self._fire)

    def discard(self, key: Hashable) -> None:
        """Forget ``key``'s deadline (nothing if it expired already)."""
        self._due.pop(key, None)

    def __len__(self) -> int:
        return len(self._due)

    def _fire(self) -> None:
        assert self._loop is not None
        self._timer = None
        now = self._loop.time()
        past = []
        for key, (when, _) in self._due.items():
            if when > now:
                self._timer = self._loop.call_at(when, self._fire)
                break
            past.append(key)
        for expire in [self._due.pop(key)[1] for key in past]:
            try:  # one failing must not leave the others unexpired
                expire()
            except Exception as error:
                self._loop.call_exception_handler({
                    "message": "a deadline's callback failed", "exception": error})
