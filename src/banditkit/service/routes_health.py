"""The probes and the description, none of which needs a token (they say nothing about any
experiment):

- ``GET /health``, liveness: the process answers (503 only when it is out of file
  descriptors); an orchestrator restarts a process that fails it;
- ``GET /ready``, readiness: the store answers (PostgreSQL: a query; a folder: its disk has
  room and it is writable) and the writer is not stuck (no call waiting or running longer than
  ``--queue-timeout``); 503 with ``Retry-After`` and the reason otherwise. An orchestrator or a
  load balancer sends no traffic to a server that is not ready. Cheap: one query or one
  ``statvfs``, off the writer, bounded by :data:`READY_TIMEOUT`;
- ``GET /openapi.json``: the API's description.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .context import Context
from .openapi import openapi

__all__ = ["READY_TIMEOUT", "routes"]

#: Seconds ``/ready`` waits for the store to answer.
READY_TIMEOUT = 2.0


async def not_ready(ctx: Context) -> str | None:
    """Why the server should get no traffic now (``/ready``), or ``None``."""
    why = ctx.degraded()
    if why is not None:
        return why
    catalog, limit = ctx.catalog, ctx.limits.queue_timeout
    if catalog.running_for() > limit:
        return f"the writer has been on one call for {catalog.running_for():.0f} s"
    if catalog.queue_age() > limit:
        return f"the oldest call has waited {catalog.queue_age():.0f} s for the writer"
    try:
        return await asyncio.wait_for(asyncio.to_thread(catalog.ping), READY_TIMEOUT)
    except TimeoutError:
        return f"the experiments' store did not answer within {READY_TIMEOUT:g} s"


def routes(ctx: Context) -> list[Route]:
    """The routes of this module (see its docstring)."""
    answer = ctx.answer

    @answer
    async def health(request: Request) -> Response:
        from .. import __version__

        why = ctx.degraded()
        if why is not None:
            return JSONResponse({"status": "degraded", "reason": why, "banditkit": __version__},
                                status_code=503, headers={"retry-after": "5"})
        return JSONResponse({"status": "ok", "banditkit": __version__})

    @answer
    async def ready(request: Request) -> Response:
        why = await not_ready(ctx)
        if why is not None:
            return JSONResponse({"ready": False, "reason": why}, status_code=503,
                                headers={"retry-after": "5"})
        return JSONResponse({"ready": True})

    @answer
    async def describe(request: Request) -> Response:
        return JSONResponse(openapi())

    return [
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/openapi.json", describe, methods=["GET"]),
    ]
