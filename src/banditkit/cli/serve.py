"""``banditkit serve``: the command that runs the service with uvicorn.

    banditkit serve --db experiments/ [--host 127.0.0.1] [--port 8750] [--token T]
    banditkit serve --db postgresql://app@db.internal/experiments
    banditkit serve --db 'postgresql://app@/experiments?host=/run/postgresql'

It binds 127.0.0.1 (this machine only) unless ``--host`` says otherwise, and refuses any other
address without a token and ``--allowed-host``; with a token (``--token`` or the environment
variable ``BANDITKIT_TOKEN``) every route but ``GET /health`` needs ``Authorization: Bearer
<token>``, and ``--read-token`` (``BANDITKIT_READ_TOKEN``) may read only. Port 0 picks a free
port; the line ``banditkit serve: listening on http://HOST:PORT`` on standard error gives it.
The limits (``--max-units``, ``--max-open``, timeouts, ...) are
:class:`banditkit.service.limits.Limits`.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from .args import non_negative_int, positive_int
from .output import refuse

__all__ = ["READ_TOKEN_VARIABLE", "TOKEN_VARIABLE", "add_arguments", "run"]

TOKEN_VARIABLE = "BANDITKIT_TOKEN"
READ_TOKEN_VARIABLE = "BANDITKIT_READ_TOKEN"


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}"
                                         ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import dataclasses

    from ..service.limits import DEFAULT_MAX_BODY, Limits

    # the class's defaults, without building one (which imports the library: --help stays
    # light, tests/test_startup.py)
    defaults = argparse.Namespace(**{f.name: f.default for f in dataclasses.fields(Limits)})

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
                        help=f"bearer token required on every route but GET /health "
                             f"(default: the environment variable {TOKEN_VARIABLE}; none if "
                             "unset, which only a loopback --host allows)")
    parser.add_argument("--read-token", default=None,
                        help="a second token that may only read (status, units, the page): "
                             f"for dashboards (default: {READ_TOKEN_VARIABLE})")
    parser.add_argument("--tokens", default=None, metavar="FILE",
                        help="a file of named tokens, one 'NAME SCOPE TOKEN [PREFIX]' a line "
                             "(scope read, write or admin; prefix: only the experiments whose "
                             "names start with it), reread on SIGHUP; mode 600")
    parser.add_argument("--session-timeout", type=_seconds, default=8 * 3600.0,
                        metavar="SECONDS", help="how long a browser's sign-in lasts "
                                                "(default 28800: 8 hours)")
    parser.add_argument("--certfile", default=None, metavar="PEM",
                        help="serve HTTPS with this certificate (chain) file, with --keyfile")
    parser.add_argument("--keyfile", default=None, metavar="PEM",
                        help="the private key of --certfile")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a Host name clients use to reach this server, beyond its address "
                             "and localhost (repeat for several; '*' for any, when a proxy in "
                             "front checks Host); required with a non-loopback --host")
    parser.add_argument("--max-body", type=positive_int, default=DEFAULT_MAX_BODY,
                        metavar="BYTES", help="largest request body accepted "
                        f"(default {DEFAULT_MAX_BODY})")
    limit = [("--max-units", "max_units", "most units one call may ask for or name"),
             ("--max-depth", "max_depth", "deepest nesting of a JSON body"),
             ("--max-open", "max_open", "experiments kept open per process (LRU; 3 file "
                                        "descriptors each on SQLite)"),
             ("--max-queue", "max_queue", "calls waiting for the writer before 503"),
             ("--max-reads", "max_reads", "reads in flight before 503"),
             ("--pool-size", "pool_size", "PostgreSQL connections shared by the experiments")]
    for option, field, text in limit:
        parser.add_argument(option, type=positive_int, default=getattr(defaults, field),
                            help=f"{text} (default {getattr(defaults, field)})")
    parser.add_argument("--readers", type=non_negative_int, default=defaults.readers,
                        help="reader processes serving status, units and the page off the "
                             f"write path (default {defaults.readers}; 0: one reader thread)")
    for option, field, text in [
            ("--header-timeout", "header_timeout", "seconds to send a request's headers"),
            ("--body-timeout", "body_timeout", "seconds to send a request's body"),
            ("--queue-timeout", "queue_timeout", "seconds a call may wait to start")]:
        parser.add_argument(option, type=_seconds, default=getattr(defaults, field),
                            metavar="SECONDS",
                            help=f"{text} (default {getattr(defaults, field):g})")
    parser.add_argument("--log-level", default="warning",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn's log level (default warning; info logs each request)")


def run(args: argparse.Namespace) -> int:
    from ..live import ExperimentError
    from ..service.auth import is_loopback
    from ..service.limits import Limits

    try:
        import uvicorn

        from ..service.app import create_app
        from ..service.timeouts import with_header_timeout
        from ..service.tokens import load_keys, reload_keys
    except ImportError as error:
        return _refuse(f"the service needs the 'serve' extra: pip install 'banditkit[serve]' "
                       f"({error})")
    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE) or None
    if token is not None and not token.strip():
        return _refuse("argument --token: must not be empty or blank")
    read_token = (args.read_token if args.read_token is not None
                  else os.environ.get(READ_TOKEN_VARIABLE) or None)
    if read_token is not None and not read_token.strip():
        return _refuse("argument --read-token: must not be empty or blank")
    from ..service.auth import MIN_TOKEN

    for option, value in (("--token", token), ("--read-token", read_token)):
        if value is not None and len(value.strip()) < MIN_TOKEN:
            return _refuse(f"argument {option}: must have at least {MIN_TOKEN} characters "
                           f"(got {len(value.strip())}); make one with: python -c 'import "
                           "secrets; print(secrets.token_urlsafe(32))'")
    if (args.certfile is None) != (args.keyfile is None):
        return _refuse("argument --certfile/--keyfile: give both (the certificate and its key)")
    if not is_loopback(args.host):
        if token is None and args.tokens is None:
            return _refuse(f"argument --host: {args.host} is reachable from other machines; "
                           "give a --token (or BANDITKIT_TOKEN) or --tokens, or bind "
                           "127.0.0.1")
        if not args.allowed_host:
            return _refuse(f"argument --allowed-host: with --host {args.host}, name the host "
                           "names clients use to reach this server (or '*' behind a proxy "
                           "that checks them): other names are refused (DNS rebinding)")
    try:
        limits = Limits(max_body=args.max_body, max_units=args.max_units,
                        max_depth=args.max_depth, max_open=args.max_open,
                        max_queue=args.max_queue, readers=args.readers,
                        max_reads=args.max_reads, pool_size=args.pool_size,
                        header_timeout=args.header_timeout, body_timeout=args.body_timeout,
                        queue_timeout=args.queue_timeout)
        keys = () if args.tokens is None else load_keys(args.tokens)
        # the experiments' files (they hold the users' keys) and folders: this user's only
        os.umask(0o077)
        catalog = _catalog(args.db, limits)
        app = create_app(catalog, token=token, read_token=read_token, limits=limits,
                         bound=args.host, allowed_hosts=tuple(args.allowed_host),
                         readers=limits.readers > 0, keys=keys,
                         session_seconds=args.session_timeout)
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
    scheme = "https" if args.certfile else "http"
    print(f"banditkit serve: listening on {scheme}://{host}:{port} "
          f"({'token required' if token or args.tokens else 'no token'}"
          f"{'; read token' if read_token else ''}; {catalog.where})",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level=args.log_level, access_log=False,
                            timeout_graceful_shutdown=5,
                            http=with_header_timeout(limits.header_timeout),
                            ssl_certfile=args.certfile, ssl_keyfile=args.keyfile)
    if args.tokens is not None:  # rotation without a restart (uvicorn leaves SIGHUP alone)
        tokens = args.tokens
        signal.signal(signal.SIGHUP, lambda *_: reload_keys(app.state.access, tokens))
    # what start-up made (modules, the app, numpy's and pandas' tables: about 66,000 objects)
    # lives as long as the process: out of the collector's sight, a full collection no longer
    # walks it (over 3,000 round trips, full collections took 0.067 s of the server's CPU on
    # main, 0.001 s with this; docs/service.md, "Fewer timers")
    gc.collect()
    gc.freeze()
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _catalog(db: str, limits: Any = None) -> Any:
    """The experiments of ``--db``: a PostgreSQL database for a ``postgresql://`` URL, else a
    folder of SQLite files."""
    from ..live import ExperimentError
    from ..live.store import is_url

    if is_url(db):
        from ..service.database import ExperimentDatabase

        return ExperimentDatabase(db, limits)
    from ..service.folder import ExperimentFolder

    if not db.strip():
        raise ExperimentError("argument --db: give a folder or a postgresql:// URL")
    return ExperimentFolder(Path(db), limits)


def _refuse(message: str) -> int:
    # one line: the driver's messages (a refused connection) span several
    return refuse(" ".join(message.split()), "banditkit serve")
