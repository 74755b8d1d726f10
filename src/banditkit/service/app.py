"""The HTTP routes: each reads its JSON body, makes one call of :class:`banditkit.Experiment`
on the catalog's worker thread, and answers JSON. No experiment logic lives here.

Reads (``status``, ``units``, the page) run in reader processes (:mod:`.readers`), off the
writer's thread and queue. Every request first passes :mod:`.guard` (Host, token, scope, JSON
content type). ``POST .../assign`` and ``POST .../record``, the calls of every visit, are
answered by :mod:`.fast` before Starlette, through the same checks and the same route
functions (:func:`create_app`'s ``fast``).

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
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..live import Experiment, ExperimentError
from ..live.assignment import Assignment
from . import bodies as body
from .answers import Answers
from .auth import Access
from .bodies import TooLarge, TooSlow
from .catalog import Busy, Catalog, Conflict, NotFound, Unavailable
from .deadlines import Deadlines
from .fast import FastPath
from .guard import Guard, send_answer
from .jsonable import to_json
from .limits import RESERVE, Limits, descriptors_left
from .openapi import openapi
from .readers import Readers, ReadSpec, units_answer
from .routes_edge import EdgeRoutes
from .routes_ops import Context, Metrics, ops_routes, who_of

__all__ = ["create_app"]

log = logging.getLogger("banditkit.service")


_STATUS = ((NotFound, 404), (Conflict, 409), (TooLarge, 413), (TooSlow, 408),
           (Unavailable, 503), (ExperimentError, 400))
#: Seconds ``/health`` keeps saying "degraded" after the process ran out of descriptors.
DEGRADED_FOR = 30.0


def create_app(catalog: Catalog, *, token: str | None = None, read_token: str | None = None,
               limits: Limits | None = None, max_body: int | None = None,
               bound: str = "127.0.0.1", allowed_hosts: tuple[str, ...] = (),
               readers: bool = True, fast: bool = True) -> Starlette:
    """The service over ``catalog``.

    Parameters
    ----------
    catalog : Catalog
        The experiments (a folder or a database).
    token, read_token : str, optional
        With ``token``, every route but ``GET /health`` needs ``Authorization: Bearer
        <token>``; ``read_token`` may only read (:mod:`.auth`).
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
        from dataclasses import replace

        limits = replace(limits, max_body=max_body)
    access = Access(token=token, read_token=read_token, bound=bound,
                    allowed_hosts=allowed_hosts)
    max_body = limits.max_body
    spec = ReadSpec(root=str(getattr(catalog, "root", "")) or None,
                    url=getattr(catalog, "url", None), max_open=limits.max_open)
    reader_pool = Readers(spec, limits) if readers else None

    answers: list[Answers] = []  # made on the event loop, at the first call
    body_deadlines = Deadlines(limits.body_timeout)  # every body's timeout, one timer

    def busy() -> Busy:
        return Busy(f"this server's writer did not reach the call within "
                    f"{limits.queue_timeout:g} s; nothing was done: retry")

    async def waited(future: Any) -> Any:
        """A queued call's result; one not started within ``queue_timeout`` is cancelled
        unrun (503). One that started is waited for: its answer says what was written."""
        if not answers:
            answers.append(Answers())
        return await answers[0].wait(future, limits.queue_timeout, busy)

    async def run(call: Callable[[], Any]) -> Any:
        return await waited(catalog.submit(call))

    async def on(name: str, action: Callable[[Experiment], Any]) -> Any:
        """``action(experiment)``, committed with the other calls waiting for ``name``."""
        return await waited(catalog.submit_call(name, action))

    async def read(request: Request) -> dict[str, Any]:
        """The JSON body (the guard has checked the token and the content type first, so
        that no one without the token makes us read a body)."""
        raw = await body.read_body(request.receive, request.headers.get("content-length"),
                                   max_body, limits.body_timeout, body_deadlines)
        return body.parse_body(raw, limits.max_depth)

    def degraded() -> str | None:
        """Why this process cannot serve now, or ``None``."""
        left = descriptors_left()
        recent = (catalog.exhausted_at is not None
                  and time.monotonic() - catalog.exhausted_at < DEGRADED_FOR)
        if (left is not None and left < RESERVE) or recent:
            return (f"out of file descriptors ({left} left"
                    + (f"; a call was refused for want of them in the last "
                       f"{DEGRADED_FOR:g} s" if recent else "") + ")")
        return None

    def refused(error: ExperimentError) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``(status, JSON answer, headers)`` of a refusal: the library's one-line message."""
        code = next(c for kind, c in _STATUS if isinstance(error, kind))
        headers = {"retry-after": "1"} if code == 503 else {}
        return code, {"error": catalog.public(_one_line(error))}, headers

    def answer(handler: Callable[[Request], Awaitable[Response]]
               ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            try:
                return await handler(request)
            except ExperimentError as error:
                code, message, headers = refused(error)
                return JSONResponse(message, status_code=code, headers=headers or None)
            except body.Gone:  # the client went away: nobody reads this
                return Response(status_code=400)
            except Exception:  # a bug: logged in full here, one line to the client
                log.exception("%s %s failed", request.method, request.url.path)
                return JSONResponse({"error": "internal server error (logged by the server)"},
                                    status_code=500)
        return wrapped

    @answer
    async def health(request: Request) -> Response:
        from .. import __version__

        why = degraded()
        if why is not None:
            return JSONResponse({"status": "degraded", "reason": why, "banditkit": __version__},
                                status_code=503, headers={"retry-after": "5"})
        return JSONResponse({"status": "ok", "banditkit": __version__})

    @answer
    async def describe(request: Request) -> Response:
        return JSONResponse(openapi())

    @answer
    async def list_experiments(request: Request) -> Response:
        return JSONResponse({"experiments": await run(catalog.names)})

    @answer
    async def create(request: Request) -> Response:
        name, arguments = body.create_arguments(await read(request))
        catalog.check_name(name)

        who = who_of(request)

        def call() -> dict[str, Any]:
            experiment = catalog.create(name, **arguments, who=who)
            return {"name": name, "algorithm": experiment.algorithm_name,
                    "arms": experiment.arm_names}

        return JSONResponse(await run(call), status_code=201)

    def assign_answer(units: Assignment) -> dict[str, Any]:
        # plain lists, no DataFrame: the frame and its records were 1.4 ms of each call
        return {"units": units.records(), "reason": units.reason,
                "overflow_units": to_json(units.overflow_units)}

    async def assigned(name: str, fields: dict[str, Any]) -> dict[str, Any]:
        """``POST /experiments/{name}/assign``'s answer to the body ``fields`` (the route's
        one implementation: Starlette's route and the fast path both call it)."""
        n, keys, covariates = body.assign_arguments(fields, limits.max_units)
        if keys is None and covariates is None:  # served with the other plain assigns waiting
            return await waited(catalog.submit_assign(name, n, assign_answer))
        return await on(name, lambda e: assign_answer(
            e.assign_rows(n, keys=keys, covariates=covariates)))

    async def recorded(name: str, fields: dict[str, Any]) -> dict[str, Any]:
        """``POST /experiments/{name}/record``'s answer (as :func:`assigned`)."""
        units, rewards, costs, metrics, covariates, denominators = body.record_arguments(
            fields, limits.max_units)
        if costs is None and metrics is None and covariates is None and denominators is None:
            # served with the other plain records waiting (catalog.py)
            count = await waited(catalog.submit_record(name, units, rewards))
        else:
            count = await on(name, lambda e: e.record(units, rewards, costs, metrics=metrics,
                                                      covariates=covariates,
                                                      denominators=denominators))
        return {"recorded": count}

    @answer
    async def assign(request: Request) -> Response:
        return JSONResponse(await assigned(request.path_params["name"], await read(request)))

    @answer
    async def record(request: Request) -> Response:
        return JSONResponse(await recorded(request.path_params["name"], await read(request)))

    @answer
    async def resume(request: Request) -> Response:
        name = request.path_params["name"]
        body.resume_arguments(await read(request))
        who = who_of(request)
        resumed = await on(name, lambda e: e.resume(who=who))
        return JSONResponse({"resumed": resumed})

    @answer
    async def expire(request: Request) -> Response:
        name = request.path_params["name"]
        units, older_than = body.expire_arguments(await read(request), limits.max_units)
        who = who_of(request)
        expired = await on(name, lambda e: e.expire(units, older_than=older_than, who=who))
        return JSONResponse({"expired": expired})

    resolving: set[str] = set()  # experiments whose resolve is queued on the writer

    def resolve_soon(name: str) -> None:
        """Queue a resolve of ``name``'s overdue units on the writer, without waiting for it
        (one at a time per experiment; a full queue skips it: the next write resolves)."""
        if name in resolving:
            return
        try:
            future = catalog.submit_call(name, lambda e: e.resolve())
        except Busy:
            return
        resolving.add(name)

        def done(f: Any) -> None:
            resolving.discard(name)
            if not f.cancelled() and f.exception() is not None:
                log.warning("resolving the overdue units of %s: %s", name,
                            _one_line(f.exception()))

        future.add_done_callback(done)

    async def reading(kind: str, name: str, args: tuple = ()) -> Any:
        """A read by a reader process (off the writer), or on the writer without readers.

        A reader's open is read-only: it resolves no outcome window, and says how many units
        are overdue; the writer is then asked to resolve them (:func:`resolve_soon`), and the
        read answers at once with what it read (the next read shows them resolved)."""
        catalog.check_name(name)
        if reader_pool is not None:
            answer = await reader_pool.read(kind, name, args)
            if kind == "units":
                return answer
            data, overdue = answer
            if overdue:
                resolve_soon(name)
            return data
        import json

        def call(e: Experiment) -> Any:
            if kind == "units":
                return units_answer(e, *args)
            if kind == "status":
                return json.dumps(to_json(e.status())).encode()
            from .page import render_page

            return render_page(e, title=name, refresh=30).encode()

        return await on(name, call)

    @answer
    async def units(request: Request) -> Response:
        name = request.path_params["name"]
        unanswered, after, limit, csv = body.units_arguments(
            request.query_params, request.headers.get("accept", ""))
        data, last = await reading("units", name, (unanswered, after, limit, csv))
        if csv:
            headers = {} if last is None else {"X-Next-After": str(last)}
            return Response(data, media_type="text/csv", headers=headers)
        return Response(data, media_type="application/json")

    @answer
    async def status(request: Request) -> Response:
        data = await reading("status", request.path_params["name"])
        return Response(data, media_type="application/json")

    @answer
    async def page(request: Request) -> Response:
        data = await reading("page", request.path_params["name"])
        return HTMLResponse(data, headers={"cache-control": "no-store"})

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        return JSONResponse({"error": f"{request.method} {request.url.path}: {error.detail}"},
                            status_code=error.status_code, headers=error.headers)

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", describe, methods=["GET"]),
        Route("/experiments", list_experiments, methods=["GET"]),
        Route("/experiments", create, methods=["POST"]),
        Route("/experiments/{name}", page, methods=["GET"]),
        Route("/experiments/{name}/assign", assign, methods=["POST"]),
        Route("/experiments/{name}/record", record, methods=["POST"]),
        Route("/experiments/{name}/expire", expire, methods=["POST"]),
        Route("/experiments/{name}/resume", resume, methods=["POST"]),
        Route("/experiments/{name}/units", units, methods=["GET"]),
        Route("/experiments/{name}/status", status, methods=["GET"]),
    ]
    metrics = Metrics(catalog)  # the operator's routes, /metrics among them: routes_ops.py
    context = Context(catalog, run, on, read, answer, metrics)
    routes += ops_routes(context)
    edge = EdgeRoutes(context, lambda request: body.read_body(  # routes_edge.py
        request.receive, request.headers.get("content-length"), max_body,
        limits.body_timeout, body_deadlines), access, metrics.observe)
    routes += edge.routes
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if reader_pool is not None:
            await asyncio.get_running_loop().run_in_executor(None, reader_pool.warm)
        yield
        if reader_pool is not None:
            reader_pool.close()
        catalog.close()  # the experiments' connections, on the thread that opened them

    app = _App(routes=routes, exception_handlers={HTTPException: http_error},
               lifespan=lifespan, middleware=[Middleware(Guard, access=access)])
    app.add_middleware(metrics.middleware)  # type: ignore[arg-type]
    app.not_modified = edge.not_modified
    if fast:
        app.fast = FastPath({"assign": assigned, "record": recorded}, access, limits,
                            refused, metrics.observe, body_deadlines)
    return app


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


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
