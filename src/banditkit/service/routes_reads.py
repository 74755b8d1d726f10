"""The reads: an experiment's page (``GET /experiments/{name}``), its ``status`` and its
``units``. They run in reader processes (:mod:`.readers`), off the writer's thread and queue,
or on the writer when the server has no readers.

A reader's open is read-only: it resolves no outcome window, and says how many units are
overdue; the writer is then asked to resolve them (:meth:`Reads.resolve_soon`), and the read
answers at once with what it read (the next read shows them resolved).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..live import Experiment
from . import bodies as body
from .catalog import Busy
from .context import Context, one_line
from .jsonable import to_json
from .readers import units_answer

__all__ = ["Reads", "routes"]

log = logging.getLogger("banditkit.service")


class Reads:
    """The reads of one app over ``ctx`` (see the module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.resolving: set[str] = set()  # experiments whose resolve is queued on the writer

    def resolve_soon(self, name: str) -> None:
        """Queue a resolve of ``name``'s overdue units on the writer, without waiting for it
        (one at a time per experiment; a full queue skips it: the next write resolves)."""
        if name in self.resolving:
            return
        try:
            future = self.ctx.catalog.submit_call(name, lambda e: e.resolve())
        except Busy:
            return
        self.resolving.add(name)

        def done(f: Any) -> None:
            self.resolving.discard(name)
            if not f.cancelled() and f.exception() is not None:
                log.warning("resolving the overdue units of %s: %s", name,
                            one_line(f.exception()))

        future.add_done_callback(done)

    async def read(self, kind: str, name: str, args: tuple = ()) -> Any:
        """A read (``units``, ``status`` or ``page``) by a reader process, or on the writer
        without readers."""
        ctx = self.ctx
        ctx.catalog.check_name(name)
        if ctx.readers is not None:
            answer = await ctx.readers.read(kind, name, args)
            if kind == "units":
                return answer
            data, overdue = answer
            if overdue:
                self.resolve_soon(name)
            return data

        def call(e: Experiment) -> Any:
            if kind == "units":
                return units_answer(e, *args)
            if kind == "status":
                return json.dumps(to_json(e.status())).encode()
            from .page import render_page

            return render_page(e, title=name, refresh=30).encode()

        return await ctx.on(name, call)


def routes(ctx: Context) -> list[Route]:
    """The routes of this module (see its docstring)."""
    answer, reads = ctx.answer, Reads(ctx)

    @answer
    async def units(request: Request) -> Response:
        name = request.path_params["name"]
        unanswered, after, limit, csv = body.units_arguments(
            request.query_params, request.headers.get("accept", ""))
        data, last = await reads.read("units", name, (unanswered, after, limit, csv))
        if csv:
            headers = {} if last is None else {"X-Next-After": str(last)}
            return Response(data, media_type="text/csv", headers=headers)
        return Response(data, media_type="application/json")

    @answer
    async def status(request: Request) -> Response:
        data = await reads.read("status", request.path_params["name"])
        return Response(data, media_type="application/json")

    @answer
    async def page(request: Request) -> Response:
        data = await reads.read("page", request.path_params["name"])
        return HTMLResponse(data, headers={"cache-control": "no-store"})

    return [
        Route("/experiments/{name}", page, methods=["GET"]),
        Route("/experiments/{name}/units", units, methods=["GET"]),
        Route("/experiments/{name}/status", status, methods=["GET"]),
    ]
