"""The operator's routes: stop (and roll out), pause, archive, delete, the audit log, CSV exports,
the HTML list of experiments at ``/``, the interactive API page at ``/docs`` and Prometheus
metrics at ``/metrics`` (:mod:`.metrics`). A route module of
:data:`banditkit.service.app.ROUTE_MODULES`; each route makes one call of
:class:`banditkit.Experiment` (:mod:`banditkit.live.assignment.operations`) through the same
worker thread, token check and error answers as the other routes (:class:`~.context.Context`).

Who acts, in the audit log: :func:`~.context.who_of`.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..live import ExperimentError
from .bodies import BadRequest, _fields
from .context import Context, who_of
from .csvcells import to_csv
from .jsonable import frame_records

__all__ = ["ops_routes", "routes"]

def _csv(text: str, name: str) -> Response:
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def routes(ctx: Context) -> list[Route]:
    """The routes of this module (see its docstring)."""
    return _lifecycle(ctx) + _views(ctx)


def _lifecycle(ctx: Context) -> list[Route]:
    """Stop, pause, archive, delete (admin) and correct recorded rewards."""
    answer, on = ctx.answer, ctx.on

    @answer
    async def stop(request: Request) -> Response:
        name = request.path_params["name"]
        fields = _fields(await ctx.read(request), (), ("arm", "rollout"), "stop")
        who = who_of(request)
        done = await on(name, lambda e: e.stop(fields.get("arm"),
                                                rollout=fields.get("rollout", True), who=who))
        return JSONResponse({"stopped": done})

    @answer
    async def pause(request: Request) -> Response:
        name = request.path_params["name"]
        fields = _fields(await ctx.read(request), (), ("reason",), "pause")
        who = who_of(request)
        paused = await on(name, lambda e: e.pause(fields.get("reason", "paused by hand"),
                                                  who=who))
        return JSONResponse({"paused": paused})

    @answer
    async def correct(request: Request) -> Response:
        name = request.path_params["name"]
        fields = _fields(await ctx.read(request), ("units", "rewards", "reason"), (), "correct")
        who = who_of(request)
        corrected = await on(name, lambda e: e.correct(fields["units"], fields["rewards"],
                                                       reason=fields["reason"], who=who))
        return JSONResponse({"corrected": corrected})

    @answer
    async def archive(request: Request) -> Response:
        name = request.path_params["name"]
        _fields(await ctx.read(request), (), (), "archive")
        who = who_of(request)
        return JSONResponse({"archived": await on(name, lambda e: e.archive(who=who))})

    @answer
    async def delete(request: Request) -> Response:
        name = request.path_params["name"]
        _fields(await ctx.read(request), (), (), "delete")
        who = who_of(request)
        await ctx.run(lambda: ctx.catalog.delete(name, who=who))
        return JSONResponse({"deleted": name})

    return [
        Route("/experiments/{name}", delete, methods=["DELETE"]),
        Route("/experiments/{name}/stop", stop, methods=["POST"]),
        Route("/experiments/{name}/pause", pause, methods=["POST"]),
        Route("/experiments/{name}/archive", archive, methods=["POST"]),
        Route("/experiments/{name}/correct", correct, methods=["POST"]),
    ]


def _views(ctx: Context) -> list[Route]:
    """The audit, the CSV exports, the list at ``/``, ``/docs`` and ``/metrics``."""
    answer, on = ctx.answer, ctx.on

    @answer
    async def audit(request: Request) -> Response:
        name = request.path_params["name"]
        return JSONResponse({"audit": await on(name, lambda e: frame_records(e.audit()))})

    @answer
    async def units_csv(request: Request) -> Response:
        name = request.path_params["name"]
        unanswered = request.query_params.get("unanswered", "false").lower()
        if unanswered not in ("true", "false"):
            raise BadRequest(f"unanswered must be true or false, got {unanswered!r}")
        text = await on(name, lambda e: to_csv(e.units(unanswered=unanswered == "true")))
        return _csv(text, f"{name}-units.csv")

    @answer
    async def status_csv(request: Request) -> Response:
        name = request.path_params["name"]
        text = await on(name, lambda e: to_csv(e.status().arms, index=True))
        return _csv(text, f"{name}-status.csv")

    @answer
    async def home(request: Request) -> Response:
        def rows() -> list[tuple[str, str, str, str]]:
            out = []
            for name in ctx.catalog.names():
                try:
                    status = ctx.catalog.call(name, lambda e: e.status())
                except ExperimentError as error:  # one broken experiment keeps the list
                    out.append((name, "unreadable", "", " ".join(str(error).split())))
                    continue
                out.append((name, _state(status), status.algorithm,
                            status.decision_line() or (
                                f"leader: {status.leader or '(none)'} ({status.reason})")))
            return out

        return HTMLResponse(_home_page(await ctx.run(rows)))

    @answer
    async def docs(request: Request) -> Response:
        return HTMLResponse(_API_PAGE)

    @answer
    async def metrics(request: Request) -> Response:
        return Response(ctx.metrics.render(), media_type="text/plain; version=0.0.4")

    return [
        Route("/", home, methods=["GET"]),
        Route("/docs", docs, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/experiments/{name}/audit", audit, methods=["GET"]),
        Route("/experiments/{name}/units.csv", units_csv, methods=["GET"]),
        Route("/experiments/{name}/status.csv", status_csv, methods=["GET"]),
    ]


def _state(status: Any) -> str:
    if status.archived:
        return "archived"
    if status.stopped is not None:
        return "stopped" + (f" (rollout: {status.stopped['arm']})"
                            if status.stopped.get("rollout", True) else "")
    if status.paused is not None:
        return "paused"
    return "finished (rollout)" if status.finished else "running"


def _home_page(rows: list[tuple[str, str, str, str]]) -> str:
    e = html.escape
    body = "".join(
        f"<tr><td><a href='/experiments/{e(name)}'>{e(name)}</a></td><td class='state'>"
        f"{e(state)}</td><td>{e(algorithm)}</td><td>{e(leader)}</td></tr>"
        for name, state, algorithm, leader in rows) or (
        "<tr><td colspan='4'>no experiment yet (POST /experiments creates one; see "
        "<a href='/docs'>the API page</a>)</td></tr>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>experiments · banditkit"
            "</title><style>body{font:15px system-ui,sans-serif;margin:2em;color:#222}"
            "table{border-collapse:collapse}td,th{border-bottom:1px solid #ccc;padding:.4em .8em;"
            "text-align:left;vertical-align:top}th{background:#f0f0f0}.state{font-weight:600}"
            "</style></head><body><h1>Experiments</h1>"
            "<table><tr><th>experiment</th><th>state</th><th>algorithm</th>"
            f"<th>decision / leader</th></tr>{body}</table>"
            "<p><a href='/docs'>API page</a> · <a href='/openapi.json'>OpenAPI description</a> · "
            "<a href='/metrics'>metrics</a></p></body></html>")


_API_PAGE = (Path(__file__).with_name("api_page.html")).read_text(encoding="utf-8")


#: The earlier name of :func:`routes`.
ops_routes = routes
