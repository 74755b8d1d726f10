"""The experiments' calls: the list, create, and the calls of every visit (``assign``,
``record``) with ``expire`` and ``resume``. Each reads its JSON body, makes one call of
:class:`banditkit.Experiment` on the writer (:class:`~.context.Context`) and answers JSON.

``assign`` and ``record`` have one implementation each (:func:`assigned`, :func:`recorded`),
which both their Starlette route and the fast path (:mod:`.fast`) call.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..live.assignment import Assignment
from . import bodies as body
from .context import Context, who_of
from .jsonable import to_json

__all__ = ["assigned", "recorded", "routes"]


def _assign_answer(units: Assignment) -> dict[str, Any]:
    # plain lists, no DataFrame: the frame and its records were 1.4 ms of each call
    return {"units": units.records(), "reason": units.reason,
            "overflow_units": to_json(units.overflow_units)}


async def assigned(ctx: Context, name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``POST /experiments/{name}/assign``'s answer to the body ``fields`` (the route's one
    implementation: Starlette's route and the fast path both call it)."""
    n, keys, covariates = body.assign_arguments(fields, ctx.limits.max_units)
    if keys is None and covariates is None:  # served with the other plain assigns waiting
        return await ctx.waited(ctx.catalog.submit_assign(name, n, _assign_answer))
    return await ctx.on(name, lambda e: _assign_answer(
        e.assign_rows(n, keys=keys, covariates=covariates)))


async def recorded(ctx: Context, name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``POST /experiments/{name}/record``'s answer (as :func:`assigned`)."""
    units, rewards, costs, metrics, covariates, denominators = body.record_arguments(
        fields, ctx.limits.max_units)
    if costs is None and metrics is None and covariates is None and denominators is None:
        # served with the other plain records waiting (catalog.py)
        count = await ctx.waited(ctx.catalog.submit_record(name, units, rewards))
    else:
        count = await ctx.on(name, lambda e: e.record(units, rewards, costs, metrics=metrics,
                                                      covariates=covariates,
                                                      denominators=denominators))
    return {"recorded": count}


def routes(ctx: Context) -> list[Route]:
    """The routes of this module (see its docstring)."""
    answer, on, catalog = ctx.answer, ctx.on, ctx.catalog

    @answer
    async def list_experiments(request: Request) -> Response:
        return JSONResponse({"experiments": await ctx.run(catalog.names)})

    @answer
    async def create(request: Request) -> Response:
        name, arguments = body.create_arguments(await ctx.read(request))
        catalog.check_name(name)
        who = who_of(request)

        def call() -> dict[str, Any]:
            experiment = catalog.create(name, **arguments, who=who)
            return {"name": name, "algorithm": experiment.algorithm_name,
                    "arms": experiment.arm_names}

        return JSONResponse(await ctx.run(call), status_code=201)

    @answer
    async def assign(request: Request) -> Response:
        return JSONResponse(await assigned(ctx, request.path_params["name"],
                                           await ctx.read(request)))

    @answer
    async def record(request: Request) -> Response:
        return JSONResponse(await recorded(ctx, request.path_params["name"],
                                           await ctx.read(request)))

    @answer
    async def resume(request: Request) -> Response:
        name = request.path_params["name"]
        body.resume_arguments(await ctx.read(request))
        who = who_of(request)
        return JSONResponse({"resumed": await on(name, lambda e: e.resume(who=who))})

    @answer
    async def expire(request: Request) -> Response:
        name = request.path_params["name"]
        units, older_than = body.expire_arguments(await ctx.read(request),
                                                  ctx.limits.max_units)
        who = who_of(request)
        expired = await on(name, lambda e: e.expire(units, older_than=older_than, who=who))
        return JSONResponse({"expired": expired})

    return [
        Route("/experiments", list_experiments, methods=["GET"]),
        Route("/experiments", create, methods=["POST"]),
        Route("/experiments/{name}/assign", assign, methods=["POST"]),
        Route("/experiments/{name}/record", record, methods=["POST"]),
        Route("/experiments/{name}/expire", expire, methods=["POST"]),
        Route("/experiments/{name}/resume", resume, methods=["POST"]),
    ]
