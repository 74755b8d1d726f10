"""The HTTP service, assembled from its route modules (:data:`ROUTE_MODULES`): each route reads
its JSON body, makes one call of :class:`banditkit.Experiment` on the catalog's worker thread,
and answers JSON. No experiment logic lives here. What the routes share is one
:class:`~.context.Context` (the writer, the body reader, the error answers).

Reads (``status``, ``units``, the page) run in reader processes (:mod:`.readers`), off the
writer's thread and queue. Every request first passes :mod:`.guard` (Host, token, scope, JSON
content type). ``POST .../assign`` and ``POST .../record``, the calls of every visit, are
answered by :mod:`.fast` before Starlette, through the same checks and the same route
functions (:func:`.routes_calls.assigned`, :func:`.routes_calls.recorded`).

Status codes: 200 (201 for a created experiment); 400 for a request the library or the body's
shape refuses (its one-line message), a body nested too deep or more units than ``--max-units``
in one call, a ``Host`` the server does not answer to; 401 for a request without the right
bearer token when the server has one (every route but ``GET /health``); 403 for a read-only
token on a write; 404 for an unknown experiment or route; 405 for a wrong method; 408 for a
body not sent within ``--body-timeout``; 409 for a create whose name exists; 413 for a body
above the limit; 415 for a body not declared ``application/json``; 503 (with ``Retry-After``)
when the experiments' database cannot be reached (PostgreSQL down: try again), the server is out
of file descriptors, or its queue is full; 500 only for a server fault (a bug), never with a
traceback in the answer. Every error is ``{"error": "<one line>"}``, and no message holds a path
of the server's disk.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import routes_calls, routes_health, routes_ops, routes_reads
from .auth import SESSION_SECONDS, Access, Key
from .catalog import Catalog
from .context import Context
from .fast import FastPath
from .guard import Guard, send_answer
from .limits import Limits
from .metrics import Metrics
from .readers import Readers, ReadSpec
from .routes_edge import EdgeRoutes
from .signin import SignIn

__all__ = ["ROUTE_MODULES", "create_app"]

#: The route modules, each ``routes(ctx: Context) -> list[Route]``, one concern each: a new
#: concern is one module and one line here. Every route passes the guard (Host, token, scope,
#: JSON content type) before routing, so a module adds no check of its own.
ROUTE_MODULES: tuple[Callable[[Context], list[Route]], ...] = (
    routes_health.routes,  # /health, /openapi.json
    routes_calls.routes,  # the list, create, assign, record, expire, resume
    routes_reads.routes,  # the page, status, units (reader processes)
    routes_ops.routes,  # stop, pause, archive, delete, audit, CSV, /, /docs, /metrics
)


def create_app(catalog: Catalog, *, token: str | None = None, read_token: str | None = None,
               limits: Limits | None = None, max_body: int | None = None,
               bound: str = "127.0.0.1", allowed_hosts: tuple[str, ...] = (),
               readers: bool = True, fast: bool = True, keys: tuple[Key, ...] = (),
               session_seconds: float = SESSION_SECONDS) -> Starlette:
    """The service over ``catalog``.

    Parameters
    ----------
    catalog : Catalog
        The experiments (a folder or a database).
    token, read_token : str, optional
        With ``token``, every route but ``GET /health`` needs ``Authorization: Bearer
        <token>``; ``read_token`` may only read (:mod:`.auth`).
    keys : tuple of Key
        More tokens, named and scoped (a tokens file, :mod:`.tokens`); the app's
        ``state.access.reload`` replaces them.
    session_seconds : float
        How long a browser session lasts.
    limits : Limits, optional
        Bounds and timeouts (:class:`~banditkit.service.limits.Limits`); ``max_body``, when
        given, replaces ``limits.max_body``.
    bound, allowed_hosts :
        The address the server listens on and the further ``Host`` names it answers to.
    readers : bool
        Serve reads from reader processes (``limits.readers`` of them) rather than the writer.
    fast : bool
        Answer ``assign`` and ``record`` by the fast path (:mod:`.fast`: the same checks and
        answers, without Starlette's layers); ``False`` routes them through Starlette like the
        other routes.
    """
    limits = limits or catalog.limits
    if max_body is not None:
        limits = replace(limits, max_body=max_body)
    access = Access(token=token, read_token=read_token, bound=bound,
                    allowed_hosts=allowed_hosts, keys=keys, session_seconds=session_seconds,
                    revocations=catalog.revocations())
    spec = ReadSpec(root=str(getattr(catalog, "root", "")) or None,
                    url=getattr(catalog, "url", None), max_open=limits.max_open)
    reader_pool = Readers(spec, limits) if readers else None
    metrics = Metrics(catalog)
    ctx = Context(catalog, limits, reader_pool, metrics)
    routes = [route for module in ROUTE_MODULES for route in module(ctx)]

    edge = EdgeRoutes(ctx, access)  # routes_edge.py: its routes and the polled 304
    routes += edge.routes

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if reader_pool is not None:
            await asyncio.get_running_loop().run_in_executor(None, reader_pool.warm)
        yield
        if reader_pool is not None:
            reader_pool.close()
        catalog.close()  # the experiments' connections, on the thread that opened them

    app = _App(routes=routes, exception_handlers={HTTPException: _http_error},
               lifespan=lifespan,
               middleware=[Middleware(Guard, access=access, sign_in=SignIn(access))])
    app.add_middleware(metrics.middleware)  # type: ignore[arg-type]
    app.state.access = access  # the tokens, reloaded on SIGHUP (cli/serve.py)
    app.not_modified = edge.not_modified
    if fast:
        app.fast = FastPath({"assign": partial(routes_calls.assigned, ctx),
                             "record": partial(routes_calls.recorded, ctx)},
                            access, limits, ctx.refused, metrics.observe, ctx.body_deadlines)
    return app


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return JSONResponse({"error": f"{request.method} {request.url.path}: {error.detail}"},
                        status_code=error.status_code, headers=error.headers)


class _App(Starlette):
    """Starlette, with the fast path of ``assign`` and ``record`` (:mod:`.fast`) in front."""

    fast: FastPath | None = None
    not_modified: Callable[[Any], Any] | None = None  # routes_edge.py: a polled 304

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.not_modified is not None:
            answer = self.not_modified(scope)
            if answer is not None:
                await send_answer(send, answer)
                return
        if self.fast is not None:
            found = self.fast.match(scope)
            if found is not None:
                await self.fast(scope, receive, send, *found)
                return
        await super().__call__(scope, receive, send)
