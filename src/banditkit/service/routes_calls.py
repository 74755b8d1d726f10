"""The experiments' calls: the list, create, and the calls of every visit (``assign``,
``record``) with ``expire`` and ``resume``. Each reads its JSON body, makes one call of
:class:`banditkit.Experiment` on the writer (:class:`~.context.Context`) and answers JSON.

``assign`` and ``record`` have one implementation each (:func:`assigned`, :func:`recorded`),
which both their Starlette route and the fast path (:mod:`.fast`) call.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..live import Experiment, ExperimentError
from ..live.assignment import Assignment
from . import bodies as body
from .catalog import pinned
from .context import Context, who_of
from .jsonable import to_json

__all__ = ["RECORD_PART", "assigned", "recorded", "routes"]


def _assign_answer(units: Assignment) -> dict[str, Any]:
    # plain lists, no DataFrame: the frame and its records were 1.4 ms of each call
    return {"units": units.records(), "reason": units.reason,
            "overflow_units": to_json(units.overflow_units)}


async def assigned(ctx: Context, name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``POST /experiments/{name}/assign``'s answer to the body ``fields`` (the route's one
    implementation: Starlette's route and the fast path both call it)."""
    n, keys, covariates, segments = body.assign_arguments(fields, ctx.limits.max_units)
    # a plain assign is served with the other plain assigns waiting
    if keys is None and covariates is None and segments is None:
        return await ctx.waited(ctx.catalog.submit_assign(name, n, _assign_answer))
    return await ctx.on(name, lambda e: _assign_answer(
        e.assign_rows(n, keys=keys, covariates=covariates, segments=segments)))


async def recorded(ctx: Context, name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``POST /experiments/{name}/record``'s answer (as :func:`assigned`).

    A record of more than :data:`RECORD_PART` units runs as parts of that many, each its own
    call on the writer, so that the other experiments' calls run between them: one call of
    100,000 units held the writer 6.2 s, and every other experiment's writes waited
    (``benchmarks/bench_fair_writes.py``). Recording is idempotent (a unit recorded again with
    the same values is skipped), so a part that is refused leaves the parts before it
    recorded, says so, and the whole call may be sent again."""
    arguments = body.record_arguments(fields, ctx.limits.max_units)
    parts = _parts(arguments)
    if len(parts) == 1:
        return {"recorded": await _record(ctx, name, *arguments)}
    count, arrived = 0, time.time()
    for start, end in parts:
        part = tuple(_cut(a, start, end) for a in arguments)
        try:
            # each part at the time the request arrived, as the one call would have run
            count += await ctx.on(name, lambda e, part=part: _record_at(e, arrived, *part))
        except ExperimentError as error:
            if start == 0:
                raise
            raise type(error)(
                f"units {start + 1} to {end} of this call: {error} (the first {start} units "
                f"of the call are recorded, {count} of them newly; sending the whole call "
                "again records the rest: units recorded with the same values are skipped)"
                ) from None
    return {"recorded": count}


#: Units of one part of a large record (:func:`recorded`): about 40 to 70 ms of the writer on the
#: shared 2-core machine, so another experiment's call waits at most about that long.
RECORD_PART = 500


def _parts(arguments: tuple[Any, ...]) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` of a record's parts: one part unless it has more than
    :data:`RECORD_PART` units, distinct, with every per-unit list as long as ``units`` (any
    other record runs as one call, which the library then accepts or refuses whole)."""
    units = arguments[0]
    n = len(units)
    if n <= RECORD_PART:
        return [(0, n)]
    lists = [a for a in arguments[1:] if isinstance(a, list)]
    metrics = arguments[3]
    if isinstance(metrics, dict):
        lists += list(metrics.values())
    if not isinstance(arguments[1], list) or any(len(a) != n for a in lists) or (
            arguments[2] is not None and not isinstance(arguments[2], list)):
        return [(0, n)]
    try:
        if len(set(units)) != n:
            return [(0, n)]
    except TypeError:  # not unit ids: the library says so
        return [(0, n)]
    return [(start, min(n, start + RECORD_PART)) for start in range(0, n, RECORD_PART)]


def _cut(argument: Any, start: int, end: int) -> Any:
    if isinstance(argument, list):
        return argument[start:end]
    if isinstance(argument, dict):
        return {k: v[start:end] for k, v in argument.items()}
    return argument


def _record_at(experiment: Experiment, at: float, units: Any, rewards: Any, costs: Any,
               metrics: Any, covariates: Any, denominators: Any) -> int:
    """``experiment.record(...)`` with the server's clock at ``at`` (:func:`.catalog.pinned`)."""
    with pinned(at):
        return experiment.record(units, rewards, costs, metrics=metrics, covariates=covariates,
                                 denominators=denominators)


async def _record(ctx: Context, name: str, units: Any, rewards: Any, costs: Any,
                  metrics: Any, covariates: Any, denominators: Any) -> int:
    """One ``Experiment.record`` call on the writer: the count of units newly recorded."""
    if costs is None and metrics is None and covariates is None and denominators is None:
        # served with the other plain records waiting (catalog.py)
        return await ctx.waited(ctx.catalog.submit_record(name, units, rewards))
    return await ctx.on(name, lambda e: e.record(units, rewards, costs, metrics=metrics,
                                                 covariates=covariates,
                                                 denominators=denominators))


def _prefix(request: Request) -> str:
    """The experiment-name prefix of the request's token (``""``: every experiment)."""
    return (request.scope.get("state") or {}).get("prefix") or ""


def routes(ctx: Context) -> list[Route]:
    """The routes of this module (see its docstring)."""
    answer, on, catalog = ctx.answer, ctx.on, ctx.catalog

    @answer
    async def list_experiments(request: Request) -> Response:
        prefix = _prefix(request)
        names = await ctx.run(catalog.names)
        return JSONResponse({"experiments": [n for n in names if n.startswith(prefix)]})

    @answer
    async def create(request: Request) -> Response:
        name, arguments = body.create_arguments(await ctx.read(request))
        catalog.check_name(name)
        prefix = _prefix(request)
        if not name.startswith(prefix):
            raise body.Forbidden(f"this token creates only experiments whose names start "
                                 f"with {prefix!r}, got {name!r}")
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
