"""The fast path of the two calls a live site makes on every visit: ``POST
/experiments/{name}/assign`` and ``POST /experiments/{name}/record``, answered straight from the
ASGI scope, before Starlette.

Why: under ``benchmarks/bench_service.py`` (32 keep-alive clients, one server) the event loop is
three quarters of the server's CPU, and a ``POST`` of ``assign`` or ``record`` cost it about
0.35 ms against 0.21 ms for a whole ``GET /health``; about a fifth of the loop's Python
(py-spy ``--gil``: 18% in the middleware and routing frames, 4% in ``JSONResponse``) ran in
Starlette's layers (its error and exception middlewares, the metrics and guard middlewares
calling each other, the router trying each route's pattern, a ``Request`` object, the
``JSONResponse`` with a new JSON encoder per answer, and every ``send`` passing through three
wrappers). Here a request for one of the two routes costs one dictionary of headers, the
guard's checks, the body, one call of the route and one JSON encoding.

Nothing is skipped: the checks are the same functions the other routes go through, not copies —
:func:`.guard.refusal` (Host, token, read-only token, JSON content type), :func:`.bodies.read_body`
(the declared and the sent size, the body timeout), :func:`.bodies.parse_body` (valid JSON,
nesting depth, an object), the route's own function (fields, ``--max-units``, the call on the
writer with its bounded queue and queue timeout) and the error answer (status by refusal, JSON
message, ``Retry-After`` on 503, no path of the server's disk, a 500 logged and never shown).
Each request is counted in ``/metrics`` as the middleware counts the others. Any other method or
path (``GET .../assign`` is a 405) goes to Starlette untouched. ``create_app(fast=False)``
serves the two routes through Starlette instead; ``tests/test_service_fast_path.py`` checks that
both give every hostile request the same answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..live import ExperimentError
from . import bodies
from .deadlines import Deadlines
from .guard import Answer, refusal, request_headers, send_answer
from .limits import Limits

__all__ = ["FastPath"]

log = logging.getLogger("banditkit.service")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
#: ``route(name, body) -> answer``: the route's own function, shared with its Starlette route
Route = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

_PREFIX = "/experiments/"
# Starlette's JSONResponse encodes so (compact, UTF-8, no NaN), with a new encoder each time
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class FastPath:
    """The fast path of ``routes`` (last path segment → route function), over ``access``
    (:class:`~.auth.Access`) and ``limits``; ``error`` turns a refusal into ``(status, JSON,
    headers)`` and ``observe(method, route, status, seconds)`` counts the request;
    ``body_deadlines`` keeps the body timeouts (:mod:`.deadlines`)."""

    def __init__(self, routes: dict[str, Route], access: Any, limits: Limits,
                 error: Callable[[ExperimentError], tuple[int, dict[str, Any], dict[str, str]]],
                 observe: Callable[[str, str, int, float], None],
                 body_deadlines: Deadlines | None = None) -> None:
        self.routes = routes
        # the body timeout's deadlines, shared with the other routes (deadlines.py)
        self.body_deadlines = (Deadlines(limits.body_timeout) if body_deadlines is None
                               else body_deadlines)
        self.access = access
        self.limits = limits
        self.error = error
        self.observe = observe
        self.templates = {action: f"{_PREFIX}{{name}}/{action}" for action in routes}

    def match(self, scope: Scope) -> tuple[str, str] | None:
        """``(experiment name, action)`` when this path serves the request, else ``None``. The
        name is what Starlette's ``{name}`` would match: one path segment, not empty."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
            return None
        path = scope["path"]
        if not path.startswith(_PREFIX):
            return None
        name, slash, action = path[len(_PREFIX):].partition("/")
        if not name or not slash or action not in self.routes:
            return None
        return name, action

    async def __call__(self, scope: Scope, receive: Receive, send: Send, name: str,
                        action: str) -> None:
        """Answer the request :meth:`match` gave ``(name, action)``."""
        start = time.perf_counter()
        headers = request_headers(scope)
        answer = refusal(self.access, scope, headers)
        template = "(no route)"  # as the metrics middleware counts a request the guard refused
        if answer is None:
            template = self.templates[action]
            answer = await self._answer(scope, receive, headers, name, action)
            if answer is None:  # the client went away: nobody to answer
                return
        await send_answer(send, answer)
        self.observe("POST", template, answer[0], time.perf_counter() - start)

    async def _answer(self, scope: Scope, receive: Receive, headers: dict[str, str],
                      name: str, action: str) -> Answer | None:
        limits = self.limits
        extra: dict[str, str] = {}
        try:
            raw = await bodies.read_body(receive, headers.get("content-length"),
                                         limits.max_body, limits.body_timeout,
                                         self.body_deadlines)
            code, payload = 200, await self.routes[action](
                name, bodies.parse_body(raw, limits.max_depth))
            data = _ENCODER.encode(payload).encode()
        except bodies.Gone:
            return None
        except ExperimentError as refused:
            code, message, extra = self.error(refused)
            data = _ENCODER.encode(message).encode()
        except Exception:  # a bug: logged in full here, one line to the client
            log.exception("POST %s failed", scope["path"])
            code, data = 500, _ENCODER.encode(
                {"error": "internal server error (logged by the server)"}).encode()
        # the headers of Starlette's JSONResponse, in its order
        return code, [*((k.encode(), v.encode()) for k, v in extra.items()),
                      (b"content-length", str(len(data)).encode()),
                      (b"content-type", b"application/json")], data
