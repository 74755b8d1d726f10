"""Prometheus text-format metrics of one server process (``GET /metrics``, :mod:`.routes_ops`):
requests by method, route and status, their latency (histogram), refusals by status, the
store's errors, the writer's queue (depth, and the age of its oldest call), the experiments
open. What each one means for an operator: docs/service.md, "Operating banditkit".
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Receive, Scope, Send

from .catalog import Catalog

__all__ = ["Metrics"]


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
        refusals: dict[int, int] = {}
        for (_, _, code), n in self.requests.items():
            if 400 <= code < 600 and code != 500:
                refusals[code] = refusals.get(code, 0) + n
        lines += ["# HELP banditkit_refusals_total Requests refused, by status (401 no or a "
                  "wrong token, 403 scope, 429 too many wrong tokens, 503 busy or store down, "
                  "507 disk full, ...; 500s, bugs, are not refusals).",
                  "# TYPE banditkit_refusals_total counter"]
        lines += [f"banditkit_refusals_total{{code=\"{code}\"}} {n}"
                  for code, n in sorted(refusals.items())]
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
                  "# HELP banditkit_writer_queue_age_seconds How long the oldest call waiting "
                  "for the writer has waited (0: none waits).",
                  "# TYPE banditkit_writer_queue_age_seconds gauge",
                  f"banditkit_writer_queue_age_seconds {self.catalog.queue_age():.3f}",
                  "# HELP banditkit_writer_busy_seconds How long the writer has been on its "
                  "current calls (0: idle).",
                  "# TYPE banditkit_writer_busy_seconds gauge",
                  f"banditkit_writer_busy_seconds {self.catalog.running_for():.3f}",
                  "# HELP banditkit_database_errors_total Calls refused because the store "
                  "could not be reached or its disk was full.",
                  "# TYPE banditkit_database_errors_total counter",
                  f"banditkit_database_errors_total {self.catalog.database_errors}",
                  "# HELP banditkit_open_experiments Experiments this process holds open.",
                  "# TYPE banditkit_open_experiments gauge",
                  f"banditkit_open_experiments {self.catalog.open_count()}"]
        return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
