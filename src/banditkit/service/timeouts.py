"""The header timeout uvicorn lacks: a connection that has begun a request must finish sending
its headers within ``seconds``, or it is answered 408 and closed. Without it, a client feeding a
header one byte every 2 s held its connection (and a file descriptor) for ever, and 300 of them
stayed open. (uvicorn's own ``timeout_keep_alive`` only closes a connection idle *between*
requests; the body has its own timeout in the app, ``--body-timeout``.)

This subclasses uvicorn's h11 protocol: the timer starts at the connection's first byte (and at
the first byte of each next request on a kept-alive connection) and stops when h11 has the
whole head, which is when uvicorn starts a new request cycle.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .writes import OneWrite

__all__ = ["with_header_timeout"]


def with_header_timeout(seconds: float, one_write: bool = True) -> type:
    """uvicorn's h11 protocol class with a header timeout of ``seconds``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    body = json.dumps({"error": f"the request's headers were not sent within {seconds:g} s "
                                "(--header-timeout)"}).encode()
    answer = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
              b"connection: close\r\ncontent-length: " + str(len(body)).encode()
              + b"\r\n\r\n" + body)

    class HeaderTimeoutProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _cycle_at_start: Any = None

        def connection_made(self, transport: Any) -> None:
            # an answer's head and body in one send (writes.py)
            super().connection_made(OneWrite(transport, self.loop)
                                    if one_write else transport)
            # a connection that never sends a byte is cut as well (half-open connections
            # held a descriptor each for ever)
            self._cycle_at_start = self.cycle
            self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and (self.cycle is None
                                               or self.cycle.response_complete):
                # the first byte of a request: its head must be complete in time
                self._cycle_at_start = self.cycle
                self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)
            super().data_received(data)
            if self._header_timer is not None and self.cycle is not self._cycle_at_start:
                self._header_timer.cancel()  # the head is in: a new cycle runs
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.cycle is self._cycle_at_start and not self.transport.is_closing():
                self.transport.write(answer)
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

    return HeaderTimeoutProtocol
