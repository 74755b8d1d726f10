"""Nothing leaks (issue 26, section 4), against a real ``banditkit serve`` on 127.0.0.1: every
route needs the token but ``/health``; a read token reads and never writes; a browser signs in
without a token in its address bar; a body must be declared JSON; a foreign ``Host`` is refused;
bodies nested deep, calls of too many units, slow headers and slow bodies are refused; no answer
holds a path of the server's disk; running out of file descriptors is a 503 that ``/health``
reports. Each hostile request gets a 4xx/503 with one JSON line and changes nothing."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from browser_support import chromium
from service_support import Server, call
from service_support import folder_snapshot as _snapshot

TOKEN, READ = "w-s3cret-long-enough", "r-s3cret-long-enough"
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A server with a token and a read token, one experiment ``ab`` with 3 units (1 and 2
    recorded)."""
    folder = tmp_path_factory.mktemp("guarded")
    server = Server(folder, token=TOKEN, options=("--read-token", READ, "--max-units", "50",
                                                  "--allowed-host", "app.example"))
    assert call(server.port, "POST", "/experiments", {"name": "ab", **DEFINITION},
                token=TOKEN)[0] == 201
    assert len(call(server.port, "POST", "/experiments/ab/assign", {"n": 3},
                    token=TOKEN)[1]["units"]) == 3
    assert call(server.port, "POST", "/experiments/ab/record",
                {"units": [1, 2], "rewards": [1, 0]}, token=TOKEN)[0] == 200
    yield server, folder
    server.stop()


def _routes() -> list[tuple[str, str]]:
    """Every (method, path) the app serves, read from the app itself: a route added later is
    checked without a change here."""
    import tempfile

    from banditkit.service.app import create_app
    from banditkit.service.folder import ExperimentFolder

    with tempfile.TemporaryDirectory() as folder:
        catalog = ExperimentFolder(folder)
        try:
            app = create_app(catalog, readers=False)
            found = []
            for route in app.routes:
                for method in sorted(getattr(route, "methods", None) or ()):
                    if method != "HEAD":
                        found.append((method, route.path.replace("{name}", "ab")))
            return found
        finally:
            catalog.close()


ROUTES = _routes()


def _request(port: int, method: str, path: str, *, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _json_error(data: bytes) -> str:
    answer = json.loads(data)
    assert list(answer) == ["error"] and "\n" not in answer["error"], answer
    assert "Traceback" not in answer["error"]
    return answer["error"]


def test_the_app_has_the_routes_the_checks_below_name():
    assert ("GET", "/experiments/ab/status") in ROUTES and ("POST", "/experiments") in ROUTES
    assert ("GET", "/health") in ROUTES and len(ROUTES) >= 10


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_route_but_health_needs_a_token_and_the_read_token_never_writes(guarded, method,
                                                                             path):
    server, folder = guarded
    before = _snapshot(folder)
    body = b"{}" if method != "GET" else None
    headers = {"Content-Type": "application/json"}
    code, answer, data = _request(server.port, method, path, body=body, headers=headers)
    if path in ("/health", "/ready"):  # the probes say nothing about any experiment
        assert code == 200
        return
    assert code == 401, (method, path, data)
    assert "Bearer" in _json_error(data) and answer["www-authenticate"].startswith("Bearer")
    code, _, data = _request(server.port, method, path, body=body,
                             headers={**headers, "Authorization": "Bearer guess"})
    assert code == 401 and "the token given is wrong" in _json_error(data)
    code, _, data = _request(server.port, method, path, body=body,
                             headers={**headers, "Authorization": f"Bearer {READ}"})
    if method == "GET":
        assert code == 200, (path, data)  # a dashboard reads everything
    else:
        assert code == 403 and "reads only" in _json_error(data)
    assert _snapshot(folder) == before


def test_a_browser_signs_in_by_form_or_one_time_ticket_and_its_cookie_reads_only(guarded):
    server, folder = guarded
    port = server.port
    # a browser asking for the page without a session is sent to the sign-in form
    code, headers, _ = _request(port, "GET", "/experiments/ab", headers={"Accept": "text/html"})
    assert code == 303 and headers["location"] == "/login?next=%2Fexperiments%2Fab"
    code, _, page = _request(port, "GET", "/login?next=%2Fexperiments%2Fab")
    assert code == 200 and b"type='password'" in page and TOKEN.encode() not in page
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    code, headers, _ = _request(port, "POST", "/login", body=b"token=nope&next=/experiments/ab",
                                headers=form)
    assert code == 401 and "set-cookie" not in headers
    for token in (TOKEN, READ):
        code, headers, _ = _request(port, "POST", "/login",
                                    body=f"token={token}&next=/experiments/ab".encode(),
                                    headers=form)
        assert code == 303 and headers["location"] == "/experiments/ab"
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
        session = {"Cookie": cookie.split(";")[0]}
        code, _, page = _request(port, "GET", "/experiments/ab", headers=session)
        assert code == 200 and page.startswith(b"<!DOCTYPE html>")
        assert _request(port, "GET", "/experiments/ab/status", headers=session)[0] == 200
        # the cookie never writes, even the write token's: a write needs the header
        before = _snapshot(folder)
        code, _, data = _request(port, "POST", "/experiments/ab/assign", body=b'{"n": 1}',
                                 headers={**session, "Content-Type": "application/json"})
        assert code == 401 and _snapshot(folder) == before
    # never a redirect to another site
    for target in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
        code, headers, _ = _request(port, "POST", "/login",
                                    body=f"token={READ}&next={target}".encode(), headers=form)
        assert code == 303 and headers["location"] == "/experiments"
    # a one-time ticket, made with a token, opens a session once
    code, _, data = _request(port, "POST", "/login/tickets?next=/experiments/ab",
                             headers={"Authorization": f"Bearer {READ}"})
    assert code == 201
    url = json.loads(data)["url"]
    code, headers, _ = _request(port, "GET", url)
    assert code == 303 and headers["location"] == "/experiments/ab"
    assert "HttpOnly" in headers["set-cookie"] and "ticket" not in headers["location"]
    assert _request(port, "GET", url)[0] == 401  # used
    assert _request(port, "POST", "/login/tickets")[0] == 401


def test_a_browser_opens_the_page_with_a_ticket_and_its_address_holds_no_secret(guarded,
                                                                             tmp_path):
    """Headless Chromium follows the ticket's link: it shows the page, and the address it ends
    on is the page's, without the ticket or a token."""
    server, _ = guarded
    _, _, data = _request(server.port, "POST", "/login/tickets?next=/experiments/ab",
                             headers={"Authorization": f"Bearer {READ}"})
    url = f"http://127.0.0.1:{server.port}{json.loads(data)['url']}"
    dom = chromium(tmp_path, "--dump-dom", url)
    assert "<h1>ab</h1>" in dom and "ReplicableElimination" in dom
    assert TOKEN not in dom and READ not in dom


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    """A token-less server (loopback only), one experiment ``ab``."""
    folder = tmp_path_factory.mktemp("open")
    server = Server(folder, options=("--max-units", "50", "--max-depth", "8"))
    assert call(server.port, "POST", "/experiments", {"name": "ab", **DEFINITION})[0] == 201
    yield server, folder
    server.stop()


HOSTILE = [
    # (what, headers, body, status, part of the message)
    ("a cross-site text/plain POST", {"Content-Type": "text/plain"}, b'{"n": 1}', 415,
     "Content-Type: application/json"),
    ("a form POST", {"Content-Type": "application/x-www-form-urlencoded"}, b'{"n": 1}', 415,
     "got 'application/x-www-form-urlencoded'"),
    ("no content type", {}, b'{"n": 1}', 415, "no Content-Type given"),
    ("a foreign Host (DNS rebinding)", {"Host": "evil.example:8750"}, b'{"n": 1}', 400,
     "Host 'evil.example:8750' is not a name this server answers to"),
    ("a body nested 100,000 deep", {}, b"[" * 100_000 + b"]" * 100_000, 400,
     "nests deeper than 8 levels"),
    ("a body nested 9 deep", {}, b'{"n": 1, "keys": ' + b"[" * 8 + b"]" * 8 + b"}", 400,
     "nests 9 levels, deeper than 8"),
    ("n = 10**30", {}, b'{"n": 1000000000000000000000000000000}', 400,
     "n must be at most 50 per call on this server (--max-units), got 10000000000000"),
    ("51 keys", {}, json.dumps({"keys": [f"k{i}" for i in range(51)]}).encode(), 400,
     "keys must be at most 50 per call"),
]


@pytest.mark.parametrize(("what", "headers", "body", "code", "message"), HOSTILE,
                         ids=[h[0] for h in HOSTILE])
def test_a_hostile_request_gets_a_json_error_and_changes_nothing(open_server, what, headers,
                                                                body, code, message):
    server, folder = open_server
    before = _snapshot(folder)
    sent = {"Content-Type": "application/json", **headers}
    if "Content-Type" not in headers and what == "no content type":
        sent.pop("Content-Type")
    got, _, data = _request(server.port, "POST", "/experiments/ab/assign", body=body,
                            headers=sent)
    assert got == code, data
    assert message in _json_error(data)
    assert _snapshot(folder) == before


def test_json_with_a_charset_loopback_names_and_allowed_hosts_are_answered(open_server,
                                                                          guarded):
    server, _ = open_server
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost"):
        code, _, data = _request(server.port, "POST", "/experiments/ab/assign",
                                 body=b'{"n": 1}', headers={
                                     "Host": host,
                                     "Content-Type": "application/json; charset=utf-8"})
        assert code == 200, data
    assert _request(server.port, "GET", "/health", headers={"Host": "evil.example"})[0] == 400
    served, _ = guarded
    code, _, _ = _request(served.port, "GET", "/experiments/ab/status", headers={
        "Host": "app.example", "Authorization": f"Bearer {READ}"})
    assert code == 200


def test_serve_refuses_an_address_other_machines_reach_without_a_token_and_host_names(
        tmp_path):
    def serve(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "banditkit", "serve", "--db",
                               str(tmp_path), "--port", "0", *args],
                              capture_output=True, text=True, timeout=60)

    done = serve("--host", "0.0.0.0")
    assert done.returncode == 2 and "give a --token" in done.stderr
    assert "Traceback" not in done.stderr
    done = serve("--host", "0.0.0.0", "--token", TOKEN)
    assert done.returncode == 2 and "argument --allowed-host" in done.stderr
    done = serve("--read-token", READ)
    assert done.returncode == 2 and "read_token needs a token" in done.stderr


def test_no_answer_holds_a_path_of_the_servers_disk(open_server):
    server, folder = open_server
    (folder / "junk.sqlite").write_bytes(b"not an experiment at all" * 100)
    try:
        for method, path, body in (("GET", "/experiments/junk/status", None),
                                   ("GET", "/experiments/junk/units", None),
                                   ("GET", "/experiments/junk", None),
                                   ("POST", "/experiments/junk/assign", {"n": 1})):
            code, answer = call(server.port, method, path, body)
            assert code == 400, answer
            assert "junk.sqlite" in answer["error"], answer
            assert str(folder) not in answer["error"] and "/tmp" not in answer["error"]
    finally:
        (folder / "junk.sqlite").unlink()


def test_headers_sent_one_byte_every_2_s_are_cut_by_the_header_timeout(tmp_path):
    server = Server(tmp_path, options=("--header-timeout", "3"))
    try:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        start = time.monotonic()
        answer = b""
        try:
            for byte in b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 50:
                sock.sendall(bytes([byte]))
                time.sleep(2)
                if time.monotonic() - start > 20:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(5)
        try:
            answer = sock.recv(4096)
        except OSError:
            pass
        elapsed = time.monotonic() - start
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"--header-timeout" in answer and elapsed < 12
        assert call(server.port, "GET", "/health")[0] == 200  # the server goes on
    finally:
        server.stop()


def test_a_body_that_never_comes_is_cut_by_the_body_timeout(tmp_path):
    server = Server(tmp_path, options=("--body-timeout", "2"))
    try:
        assert call(server.port, "POST", "/experiments", {"name": "ab", **DEFINITION})[0] == 201
        before = _snapshot(tmp_path)
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        sock.sendall(b"POST /experiments/ab/assign HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"n\"")
        answer = b""
        while b"}" not in answer:  # the head and the JSON body may come in two packets
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"--body-timeout" in answer
        assert _snapshot(tmp_path) == before
    finally:
        server.stop()


def test_a_full_queue_answers_503_with_retry_after_and_loses_nothing(tmp_path):
    """``--max-queue 2``: of 24 assign calls sent at once, those beyond the queue get 503 with
    ``Retry-After``; every 200 is in the store, and nothing else is."""
    server = Server(tmp_path, options=("--max-queue", "2"))
    try:
        assert call(server.port, "POST", "/experiments", {"name": "ab", **DEFINITION})[0] == 201
        answers: list[tuple[int, dict, bytes]] = []

        def one() -> None:
            answers.append(_request(server.port, "POST", "/experiments/ab/assign",
                                    body=b'{"n": 1}',
                                    headers={"Content-Type": "application/json"}))

        threads = [threading.Thread(target=one) for _ in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(a[0] for a in answers)
        assert set(codes) <= {200, 503} and 503 in codes and 200 in codes, codes
        for code, headers, data in answers:
            if code == 503:
                assert headers["retry-after"] == "1" and "--max-queue 2" in _json_error(data)
        given = sorted(u["unit"] for code, _, data in answers if code == 200
                       for u in json.loads(data)["units"])
        _, units = call(server.port, "GET", "/experiments/ab/units")
        assert sorted(u["unit"] for u in units["units"]) == given
    finally:
        server.stop()


def test_out_of_file_descriptors_is_a_503_that_health_reports_and_it_recovers(tmp_path):
    """The server's RLIMIT_NOFILE set to 96: idle connections take its descriptors, then a call
    that must open an experiment is a 503 (no path in it, nothing written) and ``/health``
    says why; once they close, both are answered again."""
    server = Server(tmp_path, options=("--readers", "0"), fd_limit=96)
    idle: list[socket.socket] = []
    try:
        kept = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        assert call(server.port, "POST", "/experiments", {"name": "ab", **DEFINITION},
                    connection=kept)[0] == 201
        # restart-free way to make it open ab again: a second experiment, then many idle
        # connections until the process is at its limit
        for _ in range(120):
            try:
                idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            except OSError:
                break
        time.sleep(1.5)  # the server accepts what it can
        before = _snapshot(tmp_path)
        code, answer = call(server.port, "POST", "/experiments",
                            {"name": "cd", **DEFINITION}, connection=kept)
        assert code == 503, answer
        assert "out of file descriptors" in answer["error"] and str(tmp_path) not in answer[
            "error"]
        code, health = call(server.port, "GET", "/health", connection=kept)
        assert code == 503 and health["status"] == "degraded"
        assert "file descriptors" in health["reason"]
        assert _snapshot(tmp_path) == before
        for s in idle:
            s.close()
        idle.clear()
        time.sleep(1.0)
        assert call(server.port, "POST", "/experiments/ab/assign", {"n": 1},
                    connection=kept)[0] == 200
    finally:
        for s in idle:
            s.close()
        server.stop()
