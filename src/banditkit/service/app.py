"""The HTTP routes: each reads its JSON body, makes one call of :class:`banditkit.Experiment`
on the catalog's worker thread, and answers JSON. No experiment logic lives here.

Status codes: 200 (201 for a created experiment); 400 for a request the library or the body's
shape refuses (its one-line message); 401 for a write without the right bearer token when the
server has one; 404 for an unknown experiment or route; 405 for a wrong method; 409 for a
create whose name exists; 413 for a body above the limit; 503 when the experiments' database
cannot be reached (PostgreSQL down: try again); 500 only for a server fault (a bug),
never with a traceback in the answer. Every error is ``{"error": "<one line>"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..live import Experiment, ExperimentError
from . import bodies as body
from .catalog import Catalog, Conflict, NotFound, Unavailable
from .jsonable import frame_records, to_json
from .limits import DEFAULT_MAX_BODY  # 16 MiB: a record call of 100,000 units is about 2 MB
from .openapi import openapi
from .routes_ops import Context, Metrics, ops_routes, who_of

__all__ = ["create_app"]

log = logging.getLogger("banditkit.service")


class Unauthorized(ExperimentError):
    """A write without the server's bearer token (HTTP 401)."""


class TooLarge(ExperimentError):
    """A body above the limit (HTTP 413)."""


_STATUS = ((NotFound, 404), (Conflict, 409), (Unauthorized, 401), (TooLarge, 413),
           (Unavailable, 503), (ExperimentError, 400))


def create_app(catalog: Catalog, *, token: str | None = None,
               max_body: int = DEFAULT_MAX_BODY) -> Starlette:
    """The service over ``catalog``; writes need ``Authorization: Bearer <token>`` when
    ``token`` is set; bodies above ``max_body`` bytes are refused (413)."""
    if token is not None and not token:
        raise ExperimentError("token must not be empty (leave it unset for no token)")

    async def run(call: Callable[[], Any]) -> Any:
        return await asyncio.wrap_future(catalog.submit(call))

    async def on(name: str, action: Callable[[Experiment], Any]) -> Any:
        """``action(experiment)``, committed with the other calls waiting for ``name``."""
        return await asyncio.wrap_future(catalog.submit_call(name, action))

    def check_token(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(),
                                                                 token.encode()):
            raise Unauthorized("this server needs 'Authorization: Bearer <token>' on every "
                               "write" + (" (the token given is wrong)" if given else ""))

    async def read(request: Request) -> dict[str, Any]:
        """The JSON body, after the token (so that no one without it makes us read a body)."""
        check_token(request)
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_body:
            raise TooLarge(f"the body ({int(declared)} bytes) is above this server's limit of "
                           f"{max_body} bytes; send fewer units per call")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body:  # a chunked body without a length: stop reading at the limit
                raise TooLarge(f"the body is above this server's limit of {max_body} bytes; "
                               "send fewer units per call")
            chunks.append(chunk)
        return body.parse_body(b"".join(chunks))

    def answer(handler: Callable[[Request], Awaitable[Response]]
               ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            try:
                return await handler(request)
            except ExperimentError as error:
                code = next(c for kind, c in _STATUS if isinstance(error, kind))
                return JSONResponse({"error": _one_line(error)}, status_code=code)
            except Exception:  # a bug: logged in full here, one line to the client
                log.exception("%s %s failed", request.method, request.url.path)
                return JSONResponse({"error": "internal server error (logged by the server)"},
                                    status_code=500)
        return wrapped

    @answer
    async def health(request: Request) -> Response:
        from .. import __version__

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

    @answer
    async def assign(request: Request) -> Response:
        name = request.path_params["name"]
        n, keys = body.assign_arguments(await read(request))

        def call(experiment: Experiment) -> dict[str, Any]:
            units = experiment.assign(n, keys=keys)
            return {"units": frame_records(units), "reason": to_json(units.attrs.get("reason")),
                    "overflow_units": to_json(units.attrs.get("overflow_units", []))}

        return JSONResponse(await on(name, call))

    @answer
    async def record(request: Request) -> Response:
        name = request.path_params["name"]
        units, rewards, costs, metrics = body.record_arguments(await read(request))
        recorded = await on(name, lambda e: e.record(units, rewards, costs, metrics=metrics))
        return JSONResponse({"recorded": recorded})

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
        units, older_than = body.expire_arguments(await read(request))
        who = who_of(request)
        expired = await on(name, lambda e: e.expire(units, older_than=older_than, who=who))
        return JSONResponse({"expired": expired})

    @answer
    async def units(request: Request) -> Response:
        name = request.path_params["name"]
        unanswered, after, limit, csv = body.units_arguments(
            request.query_params, request.headers.get("accept", ""))

        def call(experiment: Experiment) -> Any:
            frame = experiment.units(unanswered=unanswered, after=after, limit=limit)
            # the next page starts after the last unit of a full one
            last = (int(frame["unit"].iloc[-1]) if limit is not None and len(frame) == limit
                    else None)
            if csv:
                return frame.to_csv(index=False), last
            return {"units": frame_records(frame), "next_after": last}

        result = await on(name, call)
        if csv:
            text, last = result
            headers = {} if last is None else {"X-Next-After": str(last)}
            return Response(text, media_type="text/csv", headers=headers)
        return JSONResponse(result)

    @answer
    async def status(request: Request) -> Response:
        name = request.path_params["name"]
        return JSONResponse(await on(name, lambda e: to_json(e.status())))

    @answer
    async def page(request: Request) -> Response:
        from .page import render_page

        name = request.path_params["name"]
        return HTMLResponse(await on(name, lambda e: render_page(e, title=name, refresh=30)))

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
    routes += ops_routes(Context(catalog, run, on, read, answer, metrics))
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        catalog.close()  # the experiments' connections, on the thread that opened them

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error},
                    lifespan=lifespan)
    app.add_middleware(metrics.middleware)  # type: ignore[arg-type]
    return app


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
