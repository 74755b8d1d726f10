"""The operator's routes: stop (and roll out), pause, archive, delete, the audit log, CSV exports,
the HTML list of experiments at ``/``, the interactive API page at ``/docs`` and Prometheus
metrics at ``/metrics``. Registered by :func:`banditkit.service.app.create_app`; each route makes
one call of :class:`banditkit.Experiment` (:mod:`banditkit.live.assignment.operations`) through the
same worker thread, token check and error answers as the other routes (:class:`Context`).

Who acts, in the audit log: ``token:<first 12 hex digits of the token's SHA-256>`` when the
request carries a bearer token (never the token itself), else ``anonymous``.
"""

from __future__ import annotations

import hashlib
import html
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..live import Experiment, ExperimentError
from .bodies import BadRequest, _fields
from .catalog import Catalog
from .jsonable import frame_records

__all__ = ["Context", "Metrics", "ops_routes", "who_of"]

Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Context:
    """What the routes share with :func:`banditkit.service.app.create_app`: the catalog, its
    worker (``run``: a call alone; ``on``: a call on one experiment), the body reader (token
    first), and the wrapper that turns refusals into JSON errors."""

    catalog: Catalog
    run: Callable[[Callable[[], Any]], Awaitable[Any]]
    on: Callable[[str, Callable[[Experiment], Any]], Awaitable[Any]]
    read: Callable[[Request], Awaitable[dict[str, Any]]]
    answer: Callable[[Handler], Handler]
    metrics: Metrics


def who_of(request: Request) -> str:
    """The audit log's name for whoever sent ``request`` (see the module docstring)."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return "token:" + hashlib.sha256(value.strip().encode()).hexdigest()[:12]
    return "anonymous"


def _csv(text: str, name: str) -> Response:
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def ops_routes(ctx: Context) -> list[Route]:
    """The routes of this module (see its docstring)."""
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
        text = await on(name, lambda e: e.units(unanswered=unanswered == "true")
                        .to_csv(index=False))
        return _csv(text, f"{name}-units.csv")

    @answer
    async def status_csv(request: Request) -> Response:
        name = request.path_params["name"]
        text = await on(name, lambda e: e.status().arms.to_csv())
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
        Route("/experiments/{name}", delete, methods=["DELETE"]),
        Route("/experiments/{name}/stop", stop, methods=["POST"]),
        Route("/experiments/{name}/pause", pause, methods=["POST"]),
        Route("/experiments/{name}/archive", archive, methods=["POST"]),
        Route("/experiments/{name}/correct", correct, methods=["POST"]),
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


class Metrics:
    """Prometheus text-format counters of one server process: requests by method, route and
    status, their latency (histogram), the worker's queue depth and the experiments open."""

    BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.requests: dict[tuple[str, str, int], int] = {}
        self.latency: dict[str, list[float]] = {}  # route -> [count per bucket..., sum, n]

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """An ASGI middleware counting every HTTP request (the route's template, not its
        path: one series per route, not per experiment)."""
        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            start = time.perf_counter()
            code = [500]

            async def sending(message: dict) -> None:
                if message["type"] == "http.response.start":
                    code[0] = int(message["status"])
                await send(message)

            try:
                await app(scope, receive, sending)
            finally:
                route = scope.get("route")
                template = getattr(route, "path", None) or "(no route)"
                self.observe(scope.get("method", "?"), template, code[0],
                             time.perf_counter() - start)
        return counted

    def observe(self, method: str, route: str, code: int, seconds: float) -> None:
        key = (method, route, code)
        self.requests[key] = self.requests.get(key, 0) + 1
        row = self.latency.setdefault(route, [0.0] * (len(self.BUCKETS) + 2))
        for i, bound in enumerate(self.BUCKETS):
            if seconds <= bound:
                row[i] += 1
        row[-2] += seconds
        row[-1] += 1

    def render(self) -> str:
        q = _label
        lines = ["# HELP banditkit_requests_total HTTP requests answered, by method, route "
                 "and status.", "# TYPE banditkit_requests_total counter"]
        for (method, route, code), n in sorted(self.requests.items()):
            lines.append(f"banditkit_requests_total{{method={q(method)},route={q(route)},"
                         f"code=\"{code}\"}} {n}")
        lines += ["# HELP banditkit_request_seconds Time to answer a request, by route.",
                  "# TYPE banditkit_request_seconds histogram"]
        for route, row in sorted(self.latency.items()):
            for bound, n in zip(self.BUCKETS, row, strict=False):
                lines.append(f"banditkit_request_seconds_bucket{{route={q(route)},"
                             f"le=\"{bound}\"}} {int(n)}")
            lines.append(f"banditkit_request_seconds_bucket{{route={q(route)},le=\"+Inf\"}} "
                         f"{int(row[-1])}")
            lines.append(f"banditkit_request_seconds_sum{{route={q(route)}}} {row[-2]:.6f}")
            lines.append(f"banditkit_request_seconds_count{{route={q(route)}}} {int(row[-1])}")
        lines += ["# HELP banditkit_queue_depth Calls waiting for the worker thread.",
                  "# TYPE banditkit_queue_depth gauge",
                  f"banditkit_queue_depth {self.catalog.queue_depth()}",
                  "# HELP banditkit_open_experiments Experiments this process holds open.",
                  "# TYPE banditkit_open_experiments gauge",
                  f"banditkit_open_experiments {self.catalog.open_count()}"]
        return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
