"""The probes and the description: ``GET /health`` (the process answers: needs no token) and
``GET /openapi.json``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .context import Context
from .openapi import openapi

__all__ = ["routes"]


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
    async def describe(request: Request) -> Response:
        return JSONResponse(openapi())

    return [
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", describe, methods=["GET"]),
    ]
