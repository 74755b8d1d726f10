"""``banditkit serve``: the command that runs the service with uvicorn.

    banditkit serve --db experiments/ [--host 127.0.0.1] [--port 8750] [--token T]
    banditkit serve --db postgresql://app@db.internal/experiments
    banditkit serve --db 'postgresql://app@/experiments?host=/run/postgresql'

It binds 127.0.0.1 (this machine only) unless ``--host`` says otherwise; with a token
(``--token`` or the environment variable ``BANDITKIT_TOKEN``) every write needs
``Authorization: Bearer <token>``. Port 0 picks a free port; the line
``banditkit serve: listening on http://HOST:PORT`` on standard error gives it.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import Any

from .args import non_negative_int, positive_int
from .output import refuse

__all__ = ["TOKEN_VARIABLE", "add_arguments", "run"]

TOKEN_VARIABLE = "BANDITKIT_TOKEN"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..service.limits import DEFAULT_MAX_BODY

    parser.add_argument("--db", required=True, metavar="DIR_OR_URL",
                        help="a folder of SQLite experiments (DIR/NAME.sqlite; it must exist), "
                             "or a PostgreSQL database: postgresql://USER@HOST:PORT/DB, or "
                             "libpq's socket form postgresql://USER@/DB?host=/SOCKET/DIR (the "
                             "experiment NAME of the routes is Experiment.open(URL, name=NAME))")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this machine only; "
                             "0.0.0.0 for every interface)")
    parser.add_argument("--port", type=non_negative_int, default=8750,
                        help="port (default 8750; 0 picks a free one)")
    parser.add_argument("--token", default=None,
                        help=f"bearer token required on every write (default: the "
                             f"environment variable {TOKEN_VARIABLE}; none if unset)")
    parser.add_argument("--max-body", type=positive_int, default=DEFAULT_MAX_BODY,
                        metavar="BYTES", help="largest request body accepted "
                        f"(default {DEFAULT_MAX_BODY})")
    parser.add_argument("--log-level", default="warning",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn's log level (default warning; info logs each request)")


def run(args: argparse.Namespace) -> int:
    from ..live import ExperimentError

    try:
        import uvicorn

        from ..service.app import create_app
    except ImportError as error:
        return _refuse(f"the service needs the 'serve' extra: pip install 'banditkit[serve]' "
                       f"({error})")
    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE) or None
    if token is not None and not token.strip():
        return _refuse("argument --token: must not be empty or blank")
    try:
        catalog = _catalog(args.db)
        app = create_app(catalog, token=token, max_body=args.max_body)
    except ExperimentError as error:
        return _refuse(str(error))
    try:
        # bound here rather than by uvicorn, so that port 0 can be reported
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on sockets whose proto
        # says TCP, and without it each keep-alive answer waited out the client's delayed ACK
        # (40 ms a request, whatever the request; measured with curl on /health)
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
    except (OSError, OverflowError) as error:
        return _refuse(f"cannot listen on {args.host}:{args.port} ({error})")
    host, port = sock.getsockname()[:2]
    print(f"banditkit serve: listening on http://{host}:{port} "
          f"({'token required on writes' if token else 'no token'}; {catalog.where})",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level=args.log_level, access_log=False,
                            timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _catalog(db: str) -> Any:
    """The experiments of ``--db``: a PostgreSQL database for a ``postgresql://`` URL, else a
    folder of SQLite files."""
    from ..live import ExperimentError
    from ..live.store import is_url

    if is_url(db):
        from ..service.database import ExperimentDatabase

        return ExperimentDatabase(db)
    from ..service.folder import ExperimentFolder

    if not db.strip():
        raise ExperimentError("argument --db: give a folder or a postgresql:// URL")
    return ExperimentFolder(Path(db))


def _refuse(message: str) -> int:
    # one line: the driver's messages (a refused connection) span several
    return refuse(" ".join(message.split()), "banditkit serve")
