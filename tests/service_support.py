"""A real ``banditkit serve`` process on 127.0.0.1 for the service tests and the load test,
and a small HTTP client (``http.client``: no dependency, no mock)."""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class Server:
    """``banditkit serve --db DB --port 0`` in a child process; ``port`` once it listens."""

    def __init__(self, db: Path, *, token: str | None = None, max_body: int | None = None,
                 env: dict[str, str] | None = None, wait: bool = True,
                 options: tuple[str, ...] = (), fd_limit: int | None = None) -> None:
        command = [sys.executable, "-m", "banditkit", "serve", "--db", str(db), "--port", "0",
                   *options]
        if token is not None:
            command += ["--token", token]
        if max_body is not None:
            command += ["--max-body", str(max_body)]

        def limit_fds() -> None:  # in the child, before it runs: its RLIMIT_NOFILE
            import resource

            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, **(env or {})},
                                        preexec_fn=None if fd_limit is None else limit_fds)
        if wait:
            self.wait()

    def wait(self) -> Server:
        """Until it answers (servers started with ``wait=False`` start side by side)."""
        self.port = self._port()
        # from now on its standard error is read as it comes: a server that logs much (its
        # accept loop out of descriptors logs every second) would otherwise block on a full
        # pipe and answer nothing
        self.log: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self._wait_healthy()
        return self

    def _drain(self) -> None:
        try:
            for line in self.process.stderr:
                self.log.append(line)
                del self.log[:-200]
        except (OSError, ValueError):  # closed by stop() or kill()
            pass

    def _port(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stderr], [], [], 1)
            if ready:
                line = self.process.stderr.readline()
                found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
                if found:
                    return int(found.group(1))
                if not line and self.process.poll() is not None:
                    break
        self.kill()
        raise RuntimeError(f"the server did not start: {self.process.stderr.read()}")

    def _wait_healthy(self) -> None:
        for _ in range(200):
            try:
                if call(self.port, "GET", "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the server never answered /health")

    def descriptors(self) -> int:
        """File descriptors the server process holds now, its reader processes included."""
        total = 0
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                total += len(os.listdir(f"/proc/{pid}/fd"))
            except OSError:
                pass
        return total

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, as a crash."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process.stderr.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stderr.close()


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (Linux ``/proc``), whichever of its threads started them
    (the server's reader processes are started from a thread other than its main one)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def call(port: int, method: str, path: str, body: Any = None, *, token: str | None = None,
         raw: bytes | None = None, connection: http.client.HTTPConnection | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One request; ``(status, decoded JSON or text)``. ``raw`` sends bytes as they are."""
    own = connection is None
    conn = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
    finally:
        if own:
            conn.close()
    kind = response.getheader("content-type", "")
    return response.status, json.loads(text) if kind.startswith("application/json") else text


def folder_snapshot(folder: Path) -> tuple:
    """Everything a request could change in a folder of SQLite experiments, read behind the
    server's back."""
    import sqlite3

    # the -wal and -shm files come and go as SQLite opens and closes a file: not a change
    files = sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))
    rows = []
    for path in sorted(folder.glob("*.sqlite")):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows.append(conn.execute("SELECT * FROM units ORDER BY id").fetchall())
            rows.append(conn.execute("SELECT * FROM batches ORDER BY id").fetchall())
        except sqlite3.DatabaseError:
            rows.append(path.read_bytes()[:100])
        finally:
            conn.close()
    return files, rows


@contextmanager
def app_server(app: Any, *, one_write: bool = True) -> Iterator[int]:
    """``app`` served by uvicorn with ``banditkit serve``'s protocol (header timeout, one write
    per answer) on 127.0.0.1, in a thread of this process; yields its port."""
    import uvicorn

    from banditkit.service.timeouts import with_header_timeout

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error",
                                           # serve's default unless told otherwise
                                           http=with_header_timeout(10.0) if one_write
                                           else with_header_timeout(10.0, one_write=False)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
