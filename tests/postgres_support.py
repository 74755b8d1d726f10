"""A real PostgreSQL server for the tests: started by the suite itself, no mock database.

API (fixtures registered in ``tests/conftest.py``)
--------------------------------------------------
``postgres_server`` (session scope) -> :class:`PostgresServer`
    One throwaway cluster per pytest process (so each ``pytest -n 2`` worker has its own):
    ``initdb`` + ``pg_ctl start`` in a fresh directory under ``/tmp``, listening on a unix
    socket in that directory and on 127.0.0.1 at a free port, user ``postgres`` with ``trust``
    authentication; stopped (``pg_ctl stop -m immediate``) and deleted at the end of the session.
    Under root (CI), where ``initdb`` refuses to run, the server runs as ``nobody``.
    Start-up takes about 1 s. Attributes and methods:

    - ``socket_dir``, ``port``, ``user``;
    - ``url(database="postgres", socket=False)``: ``postgresql://postgres@127.0.0.1:PORT/DB``,
      or with ``socket=True`` libpq's socket form ``postgresql://postgres@/DB?host=DIR&port=PORT``;
    - ``create_database(socket=False)``: a new, empty database (unique name) and its URL;
    - ``new_name(prefix="e")``: a fresh experiment name, unique in this cluster.

``pg_url`` (function scope) -> str
    A fresh empty database's TCP URL for one test (``create_database()``).

``pg_experiment`` (function scope) -> tuple[str, str]
    ``(url, name)``: the shared ``postgres`` database's URL and a fresh experiment name, the
    cheap way for a test to get an experiment of its own.

``where`` (function scope, in ``tests/conftest.py``) -> ``live_support.Where``
    Parametrised over both backends: an SQLite path, or ``(url, fresh name)`` on this server;
    ``where.create(**kw)`` / ``where.open(**kw)`` call ``Experiment.create/open`` with the
    right ``name=``, ``where.connect()`` is a plain connection to the experiment's tables
    (``?`` placeholders on both), ``where.argv()`` the arguments naming it for a child process.

The binaries are looked up in ``$BANDITKIT_PG_BIN``, then ``/usr/lib/postgresql/*/bin`` (highest
version), then ``PATH``; when none is found the fixture fails (``make postgresql`` installs
Debian's package, and ``make test`` runs it), rather than skipping the PostgreSQL tests.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_USER = "postgres"


def postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    env = os.environ.get("BANDITKIT_PG_BIN")
    if env:
        return Path(env)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name) if
                   Path(p).parent.parent.name.isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return None if initdb is None else Path(initdb).parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user() -> tuple[list[str], int | None, int | None]:
    """The command prefix (and uid/gid to chown to) that runs the server unprivileged: initdb
    refuses root, so under root (CI) the cluster belongs to ``nobody``."""
    if os.getuid() != 0:
        return [], None, None
    nobody = pwd.getpwnam("nobody")
    return (["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
             "--clear-groups"], nobody.pw_uid, nobody.pw_gid)


@dataclass
class PostgresServer:
    """A running throwaway cluster (see the module docstring)."""

    socket_dir: Path
    port: int
    user: str = _USER
    _names: Iterator[int] = field(default_factory=itertools.count, repr=False)

    def url(self, database: str = "postgres", *, socket: bool = False) -> str:
        if socket:
            return f"postgresql://{self.user}@/{database}?host={self.socket_dir}&port={self.port}"
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def new_name(self, prefix: str = "e") -> str:
        return f"{prefix}{os.getpid()}_{next(self._names)}"

    def create_database(self, *, socket: bool = False) -> str:
        import psycopg

        name = self.new_name("db")
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name, socket=socket)


def start_server() -> tuple[PostgresServer, callable]:
    """Start a cluster; returns it and the function that stops and deletes it."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.fail("no PostgreSQL (initdb): `make postgresql` installs Debian's package "
                    "(make test runs it), or set BANDITKIT_PG_BIN")
    prefix, uid, gid = _as_server_user()
    # Directly under /tmp (not pytest's 0700 tmp tree, which `nobody` cannot enter), and short:
    # a unix socket's path is limited to about 100 bytes.
    root = Path(tempfile.mkdtemp(prefix="bk-pg-", dir="/tmp"))
    if uid is not None:
        os.chown(root, uid, gid)
    data = root / "data"
    env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, env=env,
                              cwd=root, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    # --no-sync: the cluster is thrown away; the server itself keeps fsync on (what the
    # kill -9 tests rest on).
    run(str(bindir / "initdb"), "-D", str(data), "-U", _USER, "-A", "trust", "-E", "UTF8",
        "--no-locale", "--no-sync")
    for attempt in range(5):
        port = _free_port()
        options = (f"-k {root} -h 127.0.0.1 -p {port} -c max_connections=100 "
                   "-c shared_buffers=32MB")
        try:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w",
                "-t", "30", "-o", options, "start")
            break
        except RuntimeError:
            if attempt == 4:  # a port taken between _free_port and the bind, five times
                raise

    def stop() -> None:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "-w", "stop"], capture_output=True, env=env, cwd=root, check=False)
        shutil.rmtree(root, ignore_errors=True)

    return PostgresServer(root, port), stop


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server, stop = start_server()
    try:
        yield server
    finally:
        stop()


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> str:
    return postgres_server.create_database()


@pytest.fixture
def pg_experiment(postgres_server: PostgresServer) -> tuple[str, str]:
    return postgres_server.url(), postgres_server.new_name()
