"""What an operator who puts the service on the internet needs (issue 34), against real
``banditkit serve`` processes on 127.0.0.1: the defects found (an open redirect, a page that
stayed 500, a CLI that printed a traceback into a closed pipe, a full disk answered 400),
readiness, sessions that expire and end, named and scoped tokens reread on ``SIGHUP``, the
security headers, CSV cells a spreadsheet does not run, the refused ambiguous requests, the
files' modes, ``GET /units`` in pages, and slowed wrong tokens. One server serves most tests
(a server takes seconds to start on the shared machine)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from service_support import Server, app_server, call

ADMIN = "admin-token-0123456789"
WRITER = "writer-token-0123456789"
READER = "reader-token-0123456789"
PREFIXED = "prefixed-token-0123456789"
DEFINITION = {"algorithm": "ThompsonSampling", "arms": ["a", "b"], "seed": 3}
SESSION = 8  # seconds a browser session of the shared server lasts


def _tokens(path: Path, lines: list[str]) -> None:
    path.write_text("# name scope token [prefix]\n" + "\n".join(lines) + "\n")
    path.chmod(0o600)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server over a folder with a tokens file (admin, write, read, and a write token for
    the experiments named ``shop-*``), browser sessions of 8 s; experiments ``ab`` and
    ``shop-1``."""
    root = tmp_path_factory.mktemp("operator")
    folder = root / "exps"
    folder.mkdir()
    tokens = root / "tokens"
    _tokens(tokens, [f"ops admin {ADMIN}", f"web write {WRITER}", f"board read {READER}",
                     f"shop write {PREFIXED} shop-"])
    server = Server(folder, options=("--tokens", str(tokens), "--session-timeout", str(SESSION)))
    for name in ("ab", "shop-1"):
        assert call(server.port, "POST", "/experiments", {"name": name, **DEFINITION},
                    token=ADMIN)[0] == 201
    yield server, folder, tokens
    server.stop()


def _request(port: int, method: str, path: str, *, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _sign_in(port: int, token: str, target: str = "/experiments") -> tuple[int, dict, str]:
    """The browser's form: ``(status, headers, session cookie)``."""
    code, headers, _ = _request(port, "POST", "/login",
                                body=f"token={token}&next={target}".encode(),
                                headers={"Content-Type": "application/x-www-form-urlencoded"})
    cookie = headers.get("set-cookie", "").partition(";")[0]
    return code, headers, cookie


def test_login_sends_only_to_paths_of_this_server(served):
    """``/login?next=%2F%09%2Fevil.example`` once answered ``Location: /<TAB>/evil.example``,
    which browsers follow to ``//evil.example``."""
    server, _, _ = served
    for target in ("%2F%09%2Fevil.example", "%2F%0A%2Fevil.example", "%2F%5Cevil.example",
                   "%2F%2Fevil.example", "https%3A%2F%2Fevil.example", "%09%2F%2Fevil.example"):
        code, _, page = _request(server.port, "GET", f"/login?next={target}")
        assert code == 200 and b"value='/experiments'" in page, (target, page[-600:])
        code, headers, _ = _sign_in(server.port, READER, target)
        assert code == 303 and headers["location"] == "/experiments", (target, headers)
    code, headers, _ = _sign_in(server.port, READER, "%2Fexperiments%2Fab")
    assert headers["location"] == "/experiments/ab"


def test_a_token_less_server_redirects_to_its_own_paths_only(tmp_path):
    from banditkit.service.app import create_app
    from banditkit.service.folder import ExperimentFolder

    with app_server(create_app(ExperimentFolder(tmp_path), readers=False)) as port:
        code, headers, _ = _request(port, "GET", "/login?next=%2F%09%2Fevil.example")
        assert code == 303 and headers["location"] == "/experiments"


def test_every_arm_name_renders_on_the_page(served):
    """An arm named ``$x^{$`` made every ``GET /experiments/NAME`` answer 500 (matplotlib read
    it as mathematics)."""
    server, _, _ = served
    arms = ["$x^{$", "_hidden", "$5 off", r"a\b"]
    assert call(server.port, "POST", "/experiments",
                {"name": "math", **DEFINITION, "arms": arms}, token=ADMIN)[0] == 201
    units = call(server.port, "POST", "/experiments/math/assign", {"n": 8}, token=ADMIN)[1]
    call(server.port, "POST", "/experiments/math/record",
         {"units": [u["unit"] for u in units["units"]], "rewards": [1.0] * 8}, token=ADMIN)
    code, _, page = _request(server.port, "GET", "/experiments/math",
                                   headers={"Authorization": f"Bearer {READER}"})
    assert code == 200, page[-300:]
    assert b"$x^{$" in page and b"_hidden" in page


def test_every_html_answer_carries_the_security_headers(served):
    server, _, _ = served
    for path in ("/experiments/ab", "/", "/docs", "/login"):
        code, headers, _ = _request(server.port, "GET", path,
                                    headers={"Authorization": f"Bearer {ADMIN}"})
        assert code == 200 and headers["content-type"].startswith("text/html"), path
        csp = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp, path
        assert headers["x-frame-options"] == "DENY", path
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["referrer-policy"] == "no-referrer", path
    # a refusal and a JSON answer: never sniffed as a page
    code, headers, _ = _request(server.port, "GET", "/experiments/ab/status")
    assert code == 401 and headers["x-content-type-options"] == "nosniff"


def test_sessions_expire_end_at_logout_and_are_http_only(served):
    server, _, _ = served
    signed = time.monotonic()
    code, headers, cookie = _sign_in(server.port, READER)
    assert code == 303
    flags = headers["set-cookie"]
    assert "HttpOnly" in flags and "SameSite=Strict" in flags and f"Max-Age={SESSION}" in flags
    assert "Secure" not in flags  # plain HTTP (over TLS: test_tls_serves_https_and_secure_cookies)
    page = "/experiments/ab/status"
    assert _request(server.port, "GET", page, headers={"Cookie": cookie})[0] == 200
    code, _, _ = _request(server.port, "POST", "/logout", headers={"Cookie": cookie})
    assert code == 303
    assert _request(server.port, "GET", page, headers={"Cookie": cookie})[0] == 401
    # refused for the logout, not for its age
    assert time.monotonic() - signed < SESSION, "too slow to tell revocation from expiry"
    signed = time.monotonic()
    _, _, other = _sign_in(server.port, READER)
    assert _request(server.port, "GET", page, headers={"Cookie": other})[0] == 200
    time.sleep(max(0.0, signed + SESSION + 0.2 - time.monotonic()))
    assert _request(server.port, "GET", page, headers={"Cookie": other})[0] == 401
    # a forged cookie (another expiry, the same MAC) is no session
    ident, expires, nonce, mac = other.partition("=")[2].split(".")
    forged = f"banditkit_session={ident}.{int(expires) + 3600}.{nonce}.{mac}"
    assert _request(server.port, "GET", page, headers={"Cookie": forged})[0] == 401


def test_a_logout_ends_the_session_on_every_server_of_the_folder(served):
    """A cookie carries an HMAC keyed by its token, so it is good on any server holding the
    token, and after a restart: a logout on one server must end it on the others (a second
    process over the same folder, as a restart or a second server behind a proxy is)."""
    server, folder, tokens = served
    other = Server(folder, options=("--tokens", str(tokens), "--session-timeout", str(SESSION)))
    try:
        _, _, cookie = _sign_in(server.port, READER)
        page = "/experiments/ab/status"
        assert _request(other.port, "GET", page, headers={"Cookie": cookie})[0] == 200
        assert _request(server.port, "POST", "/logout", headers={"Cookie": cookie})[0] == 303
        assert _request(other.port, "GET", page, headers={"Cookie": cookie})[0] == 401
        ended = folder / ".banditkit-sessions-ended"
        assert stat.S_IMODE(ended.stat().st_mode) == 0o600  # it names live sessions
    finally:
        other.stop()


def test_ended_sessions_are_shared_through_the_database(pg_url):
    """Two servers of one PostgreSQL database: a logout on one is refused by the other within
    REFRESH seconds, and an expired entry is not kept."""
    from banditkit.service.revocations import REFRESH, TableRevocations

    first, second = TableRevocations(pg_url), TableRevocations(pg_url)
    assert "n-1" not in second  # reads (and creates) the table
    first.add("n-1", time.time() + 60)
    first.add("n-old", time.time() - 1)  # expired: pruned, never read back
    assert "n-1" in first
    time.sleep(REFRESH)
    assert "n-1" in second and "n-old" not in second
    assert "n-2" not in TableRevocations(pg_url)


def test_scopes_and_prefixes(served):
    server, _, _ = served
    port = server.port
    assert call(port, "POST", "/experiments/ab/assign", {"n": 1}, token=READER)[0] == 403
    assert call(port, "POST", "/experiments/ab/assign", {"n": 1}, token=WRITER)[0] == 200
    code, answer = call(port, "POST", "/experiments/ab/pause", {}, token=WRITER)
    assert code == 403 and "needs a admin token" in answer["error"]
    # a correction rewrites what status counts: an admin's, not an application's write token
    code, answer = call(port, "POST", "/experiments/ab/correct",
                        {"units": [1], "rewards": [1], "reason": "typo"}, token=WRITER)
    assert code == 403 and "needs a admin token" in answer["error"]
    # the prefixed token: its experiments only, the list filtered, create inside its prefix
    assert call(port, "POST", "/experiments/shop-1/assign", {"n": 1}, token=PREFIXED)[0] == 200
    assert call(port, "POST", "/experiments/ab/assign", {"n": 1}, token=PREFIXED)[0] == 403
    assert call(port, "GET", "/experiments/ab/status", token=PREFIXED)[0] == 403
    assert call(port, "GET", "/experiments", token=PREFIXED)[1] == {"experiments": ["shop-1"]}
    code, answer = call(port, "POST", "/experiments", {"name": "other", **DEFINITION},
                        token=PREFIXED)
    assert code == 403 and "'shop-'" in answer["error"]
    assert call(port, "GET", "/metrics", token=PREFIXED)[0] == 403
    # the audit names the token by its name, never the token
    call(port, "POST", "/experiments/shop-1/pause", {"reason": "x"}, token=ADMIN)
    audit = call(port, "GET", "/experiments/shop-1/audit", token=ADMIN)[1]["audit"]
    assert audit[-1]["who"] == "token:ops", audit[-1]


def test_sighup_rereads_the_tokens(served):
    """Rotation: a new key added, the old one removed, by SIGHUP, without a restart; the old
    key's sessions end with it; a file that no longer parses keeps the keys."""
    server, _, tokens = served
    port, rotated = server.port, "rotated-token-0123456789"
    _, _, cookie = _sign_in(port, READER)
    assert call(port, "GET", "/experiments", token=rotated)[0] == 401
    _tokens(tokens, [f"ops admin {ADMIN}", f"web write {WRITER}", f"board2 read {rotated}",
                     f"shop write {PREFIXED} shop-"])
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while call(port, "GET", "/experiments", token=rotated)[0] != 200:
        assert time.monotonic() < deadline, "the tokens were not reread"
        time.sleep(0.05)
    assert call(port, "GET", "/experiments", token=READER)[0] == 401
    assert _request(port, "GET", "/experiments", headers={"Cookie": cookie})[0] == 401
    tokens.write_text("ops admin short\n")  # refused: the keys stay
    server.process.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert call(port, "GET", "/experiments", token=rotated)[0] == 200
    assert any("tokens not reloaded" in line for line in server.log)
    _tokens(tokens, [f"ops admin {ADMIN}", f"web write {WRITER}", f"board read {READER}",
                     f"shop write {PREFIXED} shop-"])
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while call(port, "GET", "/experiments", token=READER)[0] != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_short_tokens_and_open_token_files_are_refused(tmp_path):
    loose = tmp_path / "tokens"
    loose.write_text(f"ops admin {ADMIN}\n")
    loose.chmod(0o644)
    for options, message in ((["--token", "s3cret"], "at least 16 characters"),
                             (["--tokens", str(loose)], "chmod 600")):
        done = subprocess.run([sys.executable, "-m", "banditkit", "serve", "--db",
                               str(tmp_path), "--port", "0", *options],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_csv_exports_neutralise_formulas(served):
    import csv
    import io

    server, _, _ = served
    port = server.port
    keys = ['=HYPERLINK("http://evil.example")', "+1", "-x", "@SUM(A1)", "plain"]
    assert call(port, "POST", "/experiments/ab/assign", {"keys": keys}, token=ADMIN)[0] == 200
    for path in ("/experiments/ab/units.csv", "/experiments/ab/units?format=csv"):
        code, text = call(port, "GET", path, token=ADMIN)
        assert code == 200
        cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
        assert not any(c.startswith(("=", "+", "@")) for c in cells), text[:500]
        for key in keys[:4]:
            assert "'" + key in cells, (key, text[:500])
        assert "plain" in cells


def test_ambiguous_requests_are_refused(served):
    server, _, _ = served
    # both Content-Length and Transfer-Encoding: which frames the body is ambiguous
    raw = (b"POST /experiments/ab/assign HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Authorization: Bearer " + ADMIN.encode() + b"\r\nContent-Type: application/json"
           b"\r\nContent-Length: 8\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"8\r\n{\"n\": 1}\r\n0\r\n\r\n")
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(raw)
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"Content-Length and Transfer-Encoding" in answer
    code, answer = call(server.port, "POST", "/experiments/ab/assign",
                        raw=b'{"n": 1, "n": 1000}', token=ADMIN)
    assert code == 400 and "repeats the key 'n'" in answer["error"], answer


def test_files_are_for_the_servers_user_only(served, tmp_path):
    _, folder, _ = served
    for path in folder.glob("ab.sqlite*"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    # the library's own files too, whatever the umask (they hold the users' keys)
    from banditkit import Experiment

    old = os.umask(0o022)
    try:
        with Experiment.create(tmp_path / "lib.sqlite", **DEFINITION) as exp:
            exp.assign(2)
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    finally:
        os.umask(old)
    assert modes and set(modes.values()) == {0o600}, modes


def test_units_come_in_pages(served):
    server, _, _ = served
    port = server.port
    assert call(port, "POST", "/experiments", {"name": "many", **DEFINITION},
                token=ADMIN)[0] == 201
    assert call(port, "POST", "/experiments/many/assign", {"n": 1001}, token=ADMIN)[0] == 200
    _, first = call(port, "GET", "/experiments/many/units", token=ADMIN)
    assert len(first["units"]) == 1000 and first["next_after"] == 1000
    _, rest = call(port, "GET", "/experiments/many/units?after=1000", token=ADMIN)
    assert [u["unit"] for u in rest["units"]] == [1001] and rest["next_after"] is None


def test_ready_and_the_metrics_an_operator_reads(served):
    server, _, _ = served
    code, answer = call(server.port, "GET", "/ready")
    assert code == 200 and answer == {"ready": True}
    call(server.port, "GET", "/experiments/ab/status")  # a refusal: 401
    code, text = call(server.port, "GET", "/metrics", token=ADMIN)
    assert code == 200
    values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
              for line in text.splitlines() if line.startswith("banditkit_")}
    assert values['banditkit_refusals_total{code="401"}'] >= 1
    assert values["banditkit_database_errors_total"] == 0
    assert values["banditkit_writer_queue_age_seconds"] >= 0
    assert "banditkit_writer_busy_seconds" in values


def test_wrong_tokens_are_slowed_per_address(tmp_path):
    """Past a burst of wrong tokens an address gets 429 with Retry-After, even for the right
    token (else the one non-429 answer would tell the guess was right)."""
    from banditkit.service.app import create_app
    from banditkit.service.auth import Throttle
    from banditkit.service.folder import ExperimentFolder

    bucket = Throttle()  # the rule itself: BURST failures at once, not one more
    for _ in range(Throttle.BURST - 1):
        bucket.failed("a")
    assert bucket.wait("a") == 0 and bucket.wait("b") == 0
    bucket.failed("a")
    assert 0 < bucket.wait("a") <= Throttle.EVERY and bucket.wait("b") == 0
    with app_server(create_app(ExperimentFolder(tmp_path), token=ADMIN,
                               readers=False)) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        codes = []
        for i in range(Throttle.BURST + 5):
            codes.append(call(port, "GET", "/experiments", token=f"guess-{i:020d}",
                              connection=conn)[0])
        assert codes[:Throttle.BURST] == [401] * Throttle.BURST and codes[-1] == 429, codes
        code, headers, _ = _request(port, "GET", "/experiments",
                                    headers={"Authorization": f"Bearer {ADMIN}"})
        assert code == 429 and int(headers["retry-after"]) >= 1
        time.sleep(Throttle.EVERY * 6)  # the bucket drains: the right token gets in again
        assert call(port, "GET", "/experiments", token=ADMIN)[0] == 200
        conn.close()


def test_behind_a_local_proxy_wrong_tokens_are_slowed_per_forwarded_client(served):
    """A reverse proxy on 127.0.0.1 that sets ``X-Forwarded-For`` (docs/service.md's nginx
    block): uvicorn trusts it from 127.0.0.1, so one client's wrong tokens slow that client,
    not every client of the proxy; on the fast path and on Starlette's alike."""
    from banditkit.service.auth import Throttle

    server, _, _ = served
    guessing = {"X-Forwarded-For": "203.0.113.7"}
    codes = [_request(server.port, "POST", "/experiments/ab/assign", body=b'{"n": 1}',
                      headers={**guessing, "Authorization": f"Bearer guess-{i:020d}",
                               "Content-Type": "application/json"})[0]
             for i in range(Throttle.BURST + 2)]
    assert codes[-1] == 429, codes
    assert _request(server.port, "GET", "/experiments", headers={
        **guessing, "Authorization": f"Bearer {ADMIN}"})[0] == 429
    # another client behind the same proxy, and the proxy's own address, are not held
    for other in ({"X-Forwarded-For": "203.0.113.8"}, {}):
        assert _request(server.port, "GET", "/experiments", headers={
            **other, "Authorization": f"Bearer {ADMIN}"})[0] == 200, other


def test_status_into_a_closed_pipe_ends_quietly(tmp_path):
    """``banditkit experiment status x.sqlite | head -1`` printed a BrokenPipeError traceback
    about half the time; here the reader is gone before the first write, every time."""
    from banditkit import Experiment

    Experiment.create(tmp_path / "x.sqlite", **DEFINITION).close()
    read, write = os.pipe()
    os.close(read)  # the reader went away
    done = subprocess.run([sys.executable, "-m", "banditkit", "experiment", "status",
                           str(tmp_path / "x.sqlite")], stdout=write, stderr=subprocess.PIPE,
                          text=True, timeout=60)
    os.close(write)
    assert done.stderr == "" and done.returncode == 141, done.stderr


def test_tls_serves_https_and_secure_cookies(tmp_path):
    import ssl

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    folder = tmp_path / "exps"
    folder.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "banditkit", "serve", "--db", str(folder),
                                "--port", "0", "--token", ADMIN, "--readers", "0",
                                "--certfile", str(cert), "--keyfile", str(key)],
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        assert "listening on https://127.0.0.1:" in line, line
        port = int(line.split("https://127.0.0.1:")[1].split()[0])
        context = ssl.create_default_context(cafile=str(cert))
        deadline = time.monotonic() + 60
        while True:
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
            try:
                conn.request("GET", "/ready")
                response = conn.getresponse()
                assert response.status == 200 and json.loads(response.read()) == {"ready": True}
                break
            except (ConnectionError, http.client.RemoteDisconnected):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            finally:
                conn.close()
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
        conn.request("POST", "/login", body=f"token={ADMIN}&next=/".encode(),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        assert response.status == 303 and "; Secure" in response.getheader("set-cookie")
        conn.close()
        # plain HTTP on the TLS port is no answer
        with pytest.raises((http.client.HTTPException, ConnectionError)):
            call(port, "GET", "/health")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        process.stderr.close()


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MiB tmpfs (root only: skipped elsewhere)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_507_and_not_ready(small_disk):
    folder = small_disk / "exps"
    folder.mkdir()
    server = Server(folder, token=ADMIN, options=("--readers", "0"))
    try:
        port = server.port
        assert call(port, "POST", "/experiments", {"name": "ab", **DEFINITION},
                    token=ADMIN)[0] == 201
        assert call(port, "GET", "/ready")[0] == 200
        filler = small_disk / "filler"
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 2**20)
                    f.flush()
            except OSError:
                pass
        for _ in range(200):  # until SQLite's WAL finds no room
            code, answer = call(port, "POST", "/experiments/ab/assign", {"n": 500},
                                token=ADMIN)
            if code != 200:
                break
        assert code == 507, answer
        assert "disk" in answer["error"] and str(small_disk) not in answer["error"]
        code, answer = call(port, "POST", "/experiments", {"name": "cd", **DEFINITION},
                            token=ADMIN)
        assert code == 507, answer
        code, answer = call(port, "GET", "/ready")
        assert code == 503 and "full" in answer["reason"], answer
        assert call(port, "GET", "/health")[0] == 200  # alive: not to be restarted
        filler.unlink()
        assert call(port, "GET", "/ready")[0] == 200
        assert call(port, "POST", "/experiments/ab/assign", {"n": 1}, token=ADMIN)[0] == 200
        metrics = call(port, "GET", "/metrics", token=ADMIN)[1]
        assert "banditkit_database_errors_total 0" not in metrics
    finally:
        server.stop()


def test_a_large_record_runs_in_parts_and_a_refused_part_says_what_was_recorded(served):
    """A record above RECORD_PART units runs as parts (each its own call on the writer, so
    other experiments' writes run between them: benchmarks/bench_fair_writes.py); recording is
    idempotent, so a refused part says how far the call got and the whole call may be resent."""
    from banditkit.service.routes_calls import RECORD_PART

    server, _, _ = served
    port, n = server.port, 2 * RECORD_PART + 100
    assert call(port, "POST", "/experiments", {"name": "parts", **DEFINITION},
                token=ADMIN)[0] == 201
    units = [u["unit"] for u in call(port, "POST", "/experiments/parts/assign", {"n": n},
                                     token=ADMIN)[1]["units"]]
    wrong = [*units[:-1], 10**9]  # the last part names a unit that does not exist
    code, answer = call(port, "POST", "/experiments/parts/record",
                        {"units": wrong, "rewards": [1.0] * n}, token=ADMIN)
    assert code == 400, answer
    assert (f"units {2 * RECORD_PART + 1} to {n} of this call" in answer["error"]
            and f"the first {2 * RECORD_PART} units of the call are recorded" in answer["error"])
    status = call(port, "GET", "/experiments/parts/status", token=ADMIN)[1]
    assert sum(arm["counted"] for arm in status["arms"]) == 2 * RECORD_PART
    code, answer = call(port, "POST", "/experiments/parts/record",
                        {"units": units, "rewards": [1.0] * n}, token=ADMIN)
    assert code == 200 and answer == {"recorded": 100}, answer


def test_the_parts_of_a_record_are_checked_when_the_request_arrived(tmp_path):
    """Each part of a large record runs at the time the request arrived (the server's clock,
    pinned), so an outcome window that closes while the parts run refuses nothing; the same
    record made later, unpinned, is refused."""
    from banditkit import Experiment, ExperimentError
    from banditkit.service.catalog import service_clock
    from banditkit.service.routes_calls import _record_at

    Experiment.create(tmp_path / "w.sqlite", **DEFINITION, outcome_window=1.0).close()
    with Experiment.open(tmp_path / "w.sqlite", clock=service_clock) as exp:
        units = exp.assign(4)["unit"].tolist()
        arrived = time.time()
        time.sleep(1.3)  # the window closes "while the parts run"
        assert _record_at(exp, arrived, units[:2], [1.0, 0.0], None, None, None, None) == 2
        with pytest.raises(ExperimentError, match="window"):
            exp.record(units[2:], [1.0, 1.0])


def test_the_ended_sessions_file_drops_expired_lines_once_they_are_most(tmp_path):
    """A folder's file of ended sessions does not grow for ever: at 1,000 lines or more, mostly
    expired, a logout rewrites it with the live ones; below that it is only appended to."""
    from banditkit.service.revocations import FileRevocations

    ended = tmp_path / ".banditkit-sessions-ended"
    past = int(time.time()) - 10
    ended.write_text("".join(f"{'x' * 22}{i:04d} {past}\n" for i in range(1500)))
    store = FileRevocations(tmp_path)
    store.add("a" * 22, time.time() + 60)
    (line,) = ended.read_text().splitlines()  # the 1,500 expired lines are gone
    assert line.startswith(f"{'a' * 22} ")
    assert "a" * 22 in FileRevocations(tmp_path)
    few = tmp_path / "few"
    few.mkdir()
    (few / ".banditkit-sessions-ended").write_text(f"{'y' * 22} {past}\n" * 10)
    FileRevocations(few).add("b" * 22, time.time() + 60)
    assert len((few / ".banditkit-sessions-ended").read_text().splitlines()) == 11
