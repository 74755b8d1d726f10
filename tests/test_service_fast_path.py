"""The fast path of ``assign`` and ``record`` (banditkit/service/fast.py) skips none of the
service's checks: every hostile request to either route gets, from a real server on 127.0.0.1,
the refusal the service promises (status, one JSON line, ``WWW-Authenticate`` / ``Retry-After``
where due), changes nothing in the store, and gets byte for byte the answer the same app gives
with the two routes served through Starlette like every other route (``create_app(fast=False)``).
Good calls get the same answers on both, and ``/metrics`` counts the fast path's requests."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from service_support import app_server, folder_snapshot

TOKEN, READ = "w-s3cret-long-enough", "r-s3cret-long-enough"
MAX_BODY, MAX_UNITS, MAX_DEPTH = 2048, 50, 8
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


@contextmanager
def _serving(folder: Path, fast: bool) -> Iterator[tuple[int, object]]:
    """``create_app`` on a folder, with or without the fast path, served in a thread of this
    process (so that the test can hold the writer); ``(port, catalog)``."""
    from banditkit.service.app import create_app
    from banditkit.service.folder import ExperimentFolder
    from banditkit.service.limits import Limits

    limits = Limits(max_body=MAX_BODY, max_units=MAX_UNITS, max_depth=MAX_DEPTH, max_queue=1,
                    body_timeout=1.0, queue_timeout=2.0, readers=0)
    catalog = ExperimentFolder(folder, limits)
    app = create_app(catalog, token=TOKEN, read_token=READ, limits=limits, readers=False,
                     fast=fast)
    with app_server(app) as port:
        yield port, catalog


def _send(port: int, raw: bytes, *, timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw`` as it is (head and body) and read one answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read())


def _request(path: str, body: bytes, headers: dict[str, str] | None = None,
             method: str = "POST") -> bytes:
    """A request with the token, JSON content type and loopback Host, unless ``headers``
    replace them (a value of ``None`` drops the header)."""
    sent = {"Host": "127.0.0.1", "Authorization": f"Bearer {TOKEN}",
            "Content-Type": "application/json", "Content-Length": str(len(body)),
            **(headers or {})}
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in sent.items() if v is not None) + "\r\n"
    return head.encode() + body


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Two servers of the same app, one with the fast path and one without, each on its own
    folder with experiment ``ab`` (the same definition and seed)."""
    with _serving(tmp_path_factory.mktemp("fast"), True) as fast, \
            _serving(tmp_path_factory.mktemp("slow"), False) as slow:
        for port, _ in (fast, slow):
            code, _, data = _send(port, _request("/experiments", json.dumps(
                {"name": "ab", **DEFINITION}).encode()))
            assert code == 201, data
        yield {"fast": fast, "slow": slow}


GOOD = {"assign": b'{"n": 1}', "record": b'{"units": [1], "rewards": [1]}'}
CHUNKED = {"Content-Length": None, "Transfer-Encoding": "chunked"}


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


# (what, headers, body (None: the route's good body), status, part of the message)
HOSTILE = [
    ("no token", {"Authorization": None}, None, 401, "needs 'Authorization: Bearer <token>'"),
    ("a wrong token", {"Authorization": "Bearer guess"}, None, 401, "the token given is wrong"),
    ("the read token", {"Authorization": f"Bearer {READ}"}, None, 403, "this token reads only"),
    ("text/plain", {"Content-Type": "text/plain"}, None, 415, "got 'text/plain'"),
    ("no content type", {"Content-Type": None}, None, 415, "no Content-Type given"),
    ("a foreign Host", {"Host": "evil.example:8750"}, None, 400,
     "Host 'evil.example:8750' is not a name this server answers to"),
    ("a declared length above the limit", {}, b"{" + b" " * MAX_BODY + b"}", 413,
     f"({MAX_BODY + 2} bytes) is above this server's limit of {MAX_BODY} bytes"),
    ("a chunked body above the limit", CHUNKED, b"{" + b" " * MAX_BODY + b"}", 413,
     f"the body is above this server's limit of {MAX_BODY} bytes"),
    ("not JSON", {}, b'{"n": 1', 400, "the body is not valid JSON"),
    ("NaN", {}, b'{"n": NaN}', 400, "NaN is not a JSON number"),
    ("nested deeper than the limit", {}, b'{"n": 1, "keys": ' + b"[" * 8 + b"]" * 8 + b"}",
     400, f"nests 9 levels, deeper than {MAX_DEPTH}"),
    ("nested 1,020 deep", {}, b"[" * 1020 + b"]" * 1020, 400, f"deeper than {MAX_DEPTH}"),
    ("a list, not an object", {}, b"[1, 2]", 400, "the body must be a JSON object, got list"),
    ("an unknown field", {}, b'{"units": [1], "rewards": [1], "n": 1, "x": 2}', 400,
     "unknown field(s)"),
]
ROUTE_HOSTILE = [
    ("assign", "n above --max-units", b'{"n": 51}', 400,
     f"n must be at most {MAX_UNITS} per call on this server (--max-units), got 51"),
    ("assign", "n = 10**30", b'{"n": 1000000000000000000000000000000}', 400,
     f"n must be at most {MAX_UNITS} per call"),
    ("assign", "no n and no keys", b"{}", 400, "assign: missing field(s) ['n']"),
    ("record", "units above --max-units", json.dumps(
        {"units": list(range(1, 52)), "rewards": [0] * 51}).encode(), 400,
     f"units must be at most {MAX_UNITS} per call"),
    ("record", "units of true/false", b'{"units": [true], "rewards": [1]}', 400,
     "units must be integer unit ids"),
    ("record", "a unit never assigned", b'{"units": [999], "rewards": [1]}', 400, "999"),
]


def _hostile_cases() -> list[tuple]:
    cases = []
    for route in ("assign", "record"):
        for what, headers, body, code, message in HOSTILE:
            if what == "an unknown field" and route == "assign":
                body = b'{"n": 1, "x": 2}'
            cases.append((route, what, headers, body, code, message))
    cases += [(route, what, {}, body, code, message)
              for route, what, body, code, message in ROUTE_HOSTILE]
    return cases


CASES = _hostile_cases()


def _refused_alike(servers: dict, route: str, path: str, raw: bytes, code: int,
                   message: str) -> None:
    """Both servers refuse ``raw`` with ``code`` and ``message``, with the same answer, and
    neither store changes."""
    answers = {}
    for kind, (port, catalog) in servers.items():
        before = folder_snapshot(Path(catalog.root))
        got, headers, data = _send(port, raw)
        assert got == code, (kind, route, data)
        answer = json.loads(data)
        assert list(answer) == ["error"] and "\n" not in answer["error"], answer
        assert message in answer["error"], (kind, answer)
        assert headers["content-type"] == "application/json"
        if code == 401:
            assert headers["www-authenticate"].startswith("Bearer")
        if code == 503:
            assert headers["retry-after"] == "1"
        assert folder_snapshot(Path(catalog.root)) == before, (kind, route)
        answers[kind] = (got, data, headers.get("www-authenticate"),
                         headers.get("retry-after"))
    assert answers["fast"] == answers["slow"], path


@pytest.mark.parametrize(("route", "what", "headers", "body", "code", "message"), CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_the_fast_path_refuses_what_the_service_refuses(servers, route, what, headers, body,
                                                       code, message):
    body = GOOD[route] if body is None else body
    sent = {"Content-Length": str(len(body)), **headers}
    path = f"/experiments/ab/{route}"
    raw = _request(path, _chunked(body) if "Transfer-Encoding" in sent else body, sent)
    _refused_alike(servers, route, path, raw, code, message)


@pytest.mark.parametrize("route", ["assign", "record"])
def test_an_unknown_experiment_or_a_bad_name_is_refused_alike(servers, route):
    _refused_alike(servers, route, "nope", _request(f"/experiments/nope/{route}", GOOD[route]),
                   404, "no experiment named 'nope'")
    _refused_alike(servers, route, ".x", _request(f"/experiments/.x/{route}", GOOD[route]),
                   400, "name must be")


@pytest.mark.parametrize("route", ["assign", "record"])
def test_other_methods_and_paths_go_to_the_router(servers, route):
    answers = {}
    for kind, (port, _) in servers.items():
        got = []
        for raw in (_request(f"/experiments/ab/{route}", b"", method="GET"),
                    _request(f"/experiments/ab/x/{route}", GOOD[route]),
                    _request(f"/experiments//{route}", GOOD[route])):
            code, _, data = _send(port, raw)
            got.append((code, data))
        assert [c for c, _ in got] == [405, 404, 404], (kind, got)
        answers[kind] = got
    assert answers["fast"] == answers["slow"]


def test_a_body_that_never_comes_is_cut_on_both_routes(servers):
    for route in ("assign", "record"):
        for kind, (port, catalog) in servers.items():
            before = folder_snapshot(Path(catalog.root))
            start = time.monotonic()
            code, _, data = _send(port, _request(f"/experiments/ab/{route}", b"{",
                                                 {"Content-Length": "100"}))
            assert code == 408 and b"--body-timeout" in data, (kind, route, data)
            assert time.monotonic() - start < 20
            assert folder_snapshot(Path(catalog.root)) == before


def _held(catalog: object) -> threading.Event:
    """Hold the writer on a call until the event is set; returns the event once it runs."""
    release, started = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait(60)

    catalog.submit(hold)  # type: ignore[attr-defined]
    assert started.wait(30)
    return release


@pytest.mark.parametrize("route", ["assign", "record"])
def test_a_full_queue_and_a_call_the_writer_never_reached_are_503_on_both(servers, route):
    for kind, (port, catalog) in servers.items():
        release = _held(catalog)
        try:
            catalog.submit(lambda: None)  # --max-queue 1: the queue is full
            code, headers, data = _send(port, _request(f"/experiments/ab/{route}",
                                                       GOOD[route]))
            assert code == 503 and headers["retry-after"] == "1", (kind, data)
            assert "--max-queue 1" in json.loads(data)["error"]
        finally:
            release.set()
        deadline = time.monotonic() + 30
        while catalog.waiting and time.monotonic() < deadline:  # the queued call runs
            time.sleep(0.01)
        release = _held(catalog)
        try:  # the queue has room, but the writer does not reach the call in 2 s
            start = time.monotonic()
            code, headers, data = _send(port, _request(f"/experiments/ab/{route}",
                                                       GOOD[route]))
            assert code == 503 and headers["retry-after"] == "1", (kind, data)
            assert "did not reach the call within 2 s" in json.loads(data)["error"]
            assert time.monotonic() - start >= 1.9
        finally:
            release.set()


def test_good_calls_get_the_same_answers_and_the_metrics_count_them(servers):
    calls = [("assign", b'{"n": 2}'), ("record", b'{"units": [1, 2], "rewards": [1, 0]}'),
             ("assign", b'{"keys": ["k1", "k2"]}'), ("assign", b'{"keys": ["k1"]}'),
             ("record", b'{"units": [3, 4], "rewards": [0.5, 1]}'),
             ("record", b'{"units": [1, 2], "rewards": [1, 0]}')]  # again: counts none
    answers: dict[str, list] = {"fast": [], "slow": []}
    for kind, (port, _) in servers.items():
        for route, body in calls:
            code, headers, data = _send(port, _request(f"/experiments/ab/{route}", body))
            assert code == 200 and headers["content-type"] == "application/json", data
            answers[kind].append(data)
    assert answers["fast"] == answers["slow"]
    units = json.loads(answers["fast"][0])["units"]
    assert [u["unit"] for u in units] == [1, 2]
    assert [json.loads(a)["recorded"] for a in answers["fast"][4:]] == [2, 0]
    port = servers["fast"][0]
    # two refused by the fast path in this test (the module's other tests may run on another
    # xdist worker, with its own servers)
    for token in (None, "Bearer guess"):
        code, _, _ = _send(port, _request("/experiments/ab/assign", b'{"n": 1}',
                                          {"Authorization": token}))
        assert code == 401
    _, _, metrics = _send(port, _request("/metrics", b"", method="GET"))
    counted = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
               for line in metrics.decode().splitlines() if line.startswith("banditkit_")}
    assigns = counted['banditkit_requests_total{method="POST",'
                      'route="/experiments/{name}/assign",code="200"}']
    assert assigns >= 3
    assert counted['banditkit_request_seconds_count{route="/experiments/{name}/record"}'] >= 3
    assert counted['banditkit_requests_total{method="POST",route="(no route)",code="401"}'] >= 2


def test_the_guard_still_checks_the_host_before_the_sign_in(servers):
    """The guard's checks moved into one function (guard.refusal) that the fast path shares;
    the browser's sign-in, which the guard answers itself, still comes after the Host check."""
    for port, _ in servers.values():
        for path in ("/login", "/login/tickets", "/logout"):
            code, _, data = _send(port, _request(path, b"", {"Host": "evil.example"}))
            assert code == 400 and b"is not a name this server answers to" in data, path
        code, _, _ = _send(port, _request("/login", b"", method="GET"))
        assert code == 200


def _answers(stream: Any, count: int) -> list[tuple[int, bytes]]:
    """``count`` answers (status, body) read from ``stream``, one buffered reader of a
    kept-alive connection (an ``http.client.HTTPResponse`` each would make a reader each, and
    the first would swallow the answers behind its own)."""
    got = []
    for _ in range(count):
        status, length = int(stream.readline().split()[1]), 0
        while (line := stream.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        got.append((status, stream.read(length)))
    return got


@pytest.mark.parametrize("route", ["assign", "record"])
def test_a_refused_body_left_unread_never_becomes_the_next_request(servers, route):
    """An answer given before the body is read (401, 403, 415, 400 Host, 413) leaves that body
    on a kept-alive connection; the server must skip it, not read it as a request, and must
    read the next request's headers whole: a good call right behind each refusal, on the same
    connection (sent together, and sent after the refusal came back), gets its 200. (Once, a
    restarted server answered a POST that carried ``Content-Type: application/json`` with 415
    "no Content-Type given"; this is the path that could lose a request's headers.)"""
    good = _request(f"/experiments/ab/{route}", GOOD[route])
    for kind, (port, _) in servers.items():
        code, _, _ = _send(port, _request("/experiments/ab/assign", b'{"n": 1}'))
        assert code == 200  # unit 1 is assigned (recording it again counts 0, a 200)
        # the first seven are answered from the head alone; the eighth (chunked, too large)
        # after part of its body
        for n, (what, headers, body, status, _) in enumerate(HOSTILE[:8]):
            body = GOOD[route] if body is None else body
            refused = _request(f"/experiments/ab/{route}",
                               _chunked(body) if "Transfer-Encoding" in headers else body,
                               headers)
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock, \
                    sock.makefile("rb") as stream:
                sock.sendall(refused + good)  # pipelined
                got = _answers(stream, 2)
                if n < 7:
                    head, _, rest = refused.partition(b"\r\n\r\n")
                    sock.sendall(head + b"\r\n\r\n")  # the body after the refusal
                    got += _answers(stream, 1)
                    sock.sendall(rest + good)
                    got += _answers(stream, 1)
            assert [c for c, _ in got] == [status, 200] * (2 if n < 7 else 1), (kind, what, got)
            for code, data in got:
                if code == 200:
                    assert ("units" if route == "assign" else "recorded") in json.loads(data)
