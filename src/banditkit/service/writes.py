"""One socket write per answer: the writes of one turn of the event loop go out as one.

uvicorn writes an answer's head and its body in two calls of ``transport.write``, and asyncio
sends each at once when nothing is buffered: two ``send`` system calls, each a trip through the
kernel's TCP stack (on loopback the receiver's side of it too) and, without delayed ACKs on the
client, two packets. :class:`OneWrite` stands between the protocol and its transport: the first
write of a turn is held and a flush is scheduled with ``call_soon``; the writes that follow in
the same turn (the body, right after the head: Starlette and the fast path send both without
waiting) join it; the flush sends them together. Nothing waits longer than the rest of the
current turn (an answer streamed in parts, or a ``100 Continue``, goes out as soon as the code
that wrote it yields), and ``close`` sends what is held first.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["OneWrite"]


class OneWrite:
    """``transport`` with its writes of one event-loop turn sent as one (module docstring);
    every other attribute is the transport's own."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if self._held is None:
            self._held = [bytes(data)]
            self._loop.call_soon(self.flush)
        else:
            self._held.append(bytes(data))

    def flush(self) -> None:
        """Send what is held now."""
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
