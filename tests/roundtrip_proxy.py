"""Round trips between a client and PostgreSQL, counted on the wire (issue 26: ≤ 4 per call).

:class:`RoundTripProxy` is a TCP relay on 127.0.0.1 in front of a real server: a client
connects to ``proxy.url(...)`` instead of the server, and every byte goes through unchanged.
It counts a **round trip** each time the server answers after the client has sent since
the server's last answer: the client sent its request(s) and the server's reply came back, which
a client that must read the reply waits for. Bytes the client sends one after another without
an answer in between (psycopg's pipeline mode, the simple query protocol's several statements)
are one round trip; a message the server does not answer (a trailing protocol Flush with
nothing left to flush) is none. A server that answers part of a pipeline early only makes the
count larger, never smaller, so the count is an upper bound on the waits a call costs. Counted
per proxy (all its connections), read with :attr:`count`, and per connection.

Used by ``tests/test_pg_round_trips.py`` and ``benchmarks/count_statements.py``.
"""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class RoundTripProxy:
    """A counting TCP relay to ``host:port`` (see the module docstring). Use as a context
    manager, or call :meth:`close`."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self.count = 0
        #: round trips per connection, in the order the connections were made
        self.per_connection: list[int] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, server_url: str) -> str:
        """``server_url`` (a ``postgresql://...@127.0.0.1:PORT/db`` URL) through the proxy."""
        parts = urlsplit(server_url)
        user = parts.netloc.rsplit("@", 1)[0]
        return urlunsplit(parts._replace(netloc=f"{user}@127.0.0.1:{self.port}"))

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                state = {"client_spoke": False, "index": len(self.per_connection)}
                self.per_connection.append(0)
            threading.Thread(target=self._relay, args=(client, server, state, True),
                             daemon=True).start()
            threading.Thread(target=self._relay, args=(server, client, state, False),
                             daemon=True).start()

    def _relay(self, source: socket.socket, sink: socket.socket, state: dict,
               from_client: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                with self._lock:
                    if from_client:
                        state["client_spoke"] = True
                    elif state["client_spoke"]:
                        # an answer: counted before the client can see it, so a call's count
                        # is complete when the call returns
                        self.count += 1
                        self.per_connection[state["index"]] += 1
                        state["client_spoke"] = False
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def __enter__(self) -> RoundTripProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
