"""One socket write per answer (banditkit/service/writes.py), against a real server on 127.0.0.1:
an answer's head and body reach the client in one TCP segment (counted by the client's kernel,
``TCP_INFO``), where uvicorn alone sends two; and nothing is held back that a client waits for
before it goes on (``Expect: 100-continue``), on the fast path and on Starlette's routes."""

from __future__ import annotations

import json
import socket
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from service_support import app_server

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


@contextmanager
def _served(folder: Path, one_write: bool = True) -> Iterator[int]:
    """The app on a folder of experiments, served in a thread (its lifespan closes the
    catalog)."""
    from banditkit.service.app import create_app
    from banditkit.service.folder import ExperimentFolder

    with app_server(create_app(ExperimentFolder(folder), readers=False),
                    one_write=one_write) as port:
        yield port


def _data_segments_in(sock: socket.socket) -> int:
    # struct tcp_info's tcpi_data_segs_in (Linux >= 4.6): segments received that held data
    return struct.unpack_from("I", sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232),
                              152)[0]


def _answer(sock: socket.socket) -> bytes:
    got = b""
    while not got.endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    return got


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_INFO is Linux's")
@pytest.mark.parametrize("one_write", [True, False])
def test_an_answer_is_one_segment_where_uvicorn_alone_sends_two(tmp_path, one_write):
    with _served(tmp_path, one_write) as port, \
            socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        before, n = _data_segments_in(sock), 40
        for _ in range(n):
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _answer(sock).startswith(b"HTTP/1.1 200")
        per_answer = (_data_segments_in(sock) - before) / n
    # uvicorn's two writes are two segments (now and then one more: 2.05 seen)
    assert per_answer <= 1.1 if one_write else per_answer >= 1.9, per_answer


def test_a_100_continue_is_sent_before_the_body_comes(tmp_path):
    """A client that asks ``Expect: 100-continue`` (curl does for large bodies) sends its body
    only once told to: a write held until the answer would hang it until the body timeout."""
    with _served(tmp_path) as port:
        for path, body in (("/experiments", {"name": "ab", **DEFINITION}),  # Starlette's route
                           ("/experiments/ab/assign", {"n": 2})):  # the fast path
            data = json.dumps(body).encode()
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                             f"application/json\r\nContent-Length: {len(data)}\r\nExpect: "
                             "100-continue\r\n\r\n".encode())
                assert sock.recv(4096).startswith(b"HTTP/1.1 100"), path  # within 5 s
                sock.sendall(data)
                answer = _answer(sock)
            assert answer.split(b" ", 2)[1] in (b"200", b"201"), answer
