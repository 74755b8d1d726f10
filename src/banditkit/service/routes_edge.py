"""The routes of assignment at the edge: ``GET /experiments/{name}/allocation`` (what an
application downloads to assign its visitors itself,
:mod:`banditkit.live.assignment.allocation`) and
``POST /experiments/{name}/events`` (its exposures and outcomes in bulk,
:mod:`banditkit.live.outcomes.ingest`). Built by :func:`banditkit.service.app.create_app`
(its 304 answers before Starlette).

- ``GET .../allocation`` answers the allocation's JSON with ``ETag: "<version>"`` and
  ``Cache-Control: max-age=<cache_seconds>``; a request whose ``If-None-Match`` names the
  current version gets ``304 Not Modified`` without a body. The allocation is computed on the
  writer (it keeps each version it publishes, so that ``events`` accepts the exposures made
  under it) and then kept in this process for :data:`FRESH_FOR` seconds (and dropped at once
  when this server ingests events for the experiment): polling applications cost a dictionary
  lookup, and another server sharing the database is seen within a second. A 304 of a fresh
  allocation is answered before Starlette (:meth:`EdgeRoutes.not_modified`, after the guard's
  own checks, counted in ``/metrics``), as :mod:`.fast` answers ``assign`` and ``record``.
  The read-only token may read it.
- ``POST .../events`` takes ``{"exposures": [...], "outcomes": [...]}`` as JSON, or the same
  events as newline-delimited JSON (``Content-Type: application/x-ndjson``), one object per
  line with ``"type": "exposure"`` or ``"outcome"`` (a line that is not such an object is
  refused alone, as an exposure at its place among the exposures: :func:`_ndjson`). It
  answers the counts of new, repeated and refused events and each refusal's reason (200 even
  when some are refused: a bulk feed is never all-or-nothing).
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .bodies import BadRequest
from .context import Context, who_of
from .guard import Answer, refusal, request_headers

__all__ = ["FRESH_FOR", "EdgeRoutes"]

#: Seconds a computed allocation is answered from this process's memory.
FRESH_FOR = 1.0

#: The fields of an events body (JSON).
_FIELDS = ("exposures", "outcomes")


def _ndjson(raw: bytes) -> tuple[list[Any], list[Any]]:
    """Exposures and outcomes of a newline-delimited JSON body: one event per line, with
    ``"type"``. A line that is not such an object becomes an event the ingest refuses with
    the reason (an exposure named by its line), so the rest of the feed is kept."""
    exposures: list[Any] = []
    outcomes: list[Any] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict) or event.get("type") not in ("exposure", "outcome"):
            exposures.append(f"line {number} is not an event: a JSON object with "
                             "\"type\": \"exposure\" or \"outcome\"")
            continue
        kind = event.pop("type")
        (exposures if kind == "exposure" else outcomes).append(event)
    return exposures, outcomes


class EdgeRoutes:
    """The routes of this module (:attr:`routes`) and the 304 answered before Starlette
    (:meth:`not_modified`); ``access`` is the guard's (the tokens), and the 304s answered
    before Starlette are counted in ``ctx.metrics``."""

    def __init__(self, ctx: Context, access: Any) -> None:
        self.access, self.observe = access, ctx.metrics.observe
        # name → (etag, JSON bytes, cache seconds, when computed: monotonic)
        self.cache: dict[str, tuple[str, bytes, float, float]] = {}
        self.routes = _routes(ctx, self.cache)

    def not_modified(self, scope: Any) -> Answer | None:
        """The 304 of ``GET /experiments/{name}/allocation`` whose ``If-None-Match`` names the
        fresh cached version (or the guard's refusal of it); ``None``: Starlette answers."""
        if scope["type"] != "http" or scope["method"] != "GET" or scope.get("root_path") \
                or scope.get("query_string"):
            return None
        path = scope["path"]
        if not (path.startswith("/experiments/") and path.endswith("/allocation")):
            return None
        name = path[len("/experiments/"):-len("/allocation")]
        found = self.cache.get(name)
        if not name or "/" in name or found is None \
                or time.monotonic() - found[3] >= FRESH_FOR:
            return None
        start = time.perf_counter()
        headers = request_headers(scope)
        asked = headers.get("if-none-match")
        if asked is None or found[0] not in [t.strip() for t in asked.split(",")]:
            return None
        answer = refusal(self.access, scope, headers) or (
            304, [(b"etag", found[0].encode()),
                  (b"cache-control", f"max-age={int(found[2])}".encode())], b"")
        self.observe("GET", "/experiments/{name}/allocation", answer[0],
                     time.perf_counter() - start)
        return answer


def _routes(ctx: Context, cache: dict[str, tuple[str, bytes, float, float]]) -> list[Route]:
    """The two routes (see the module docstring), sharing ``cache``."""
    answer, on = ctx.answer, ctx.on

    async def allocation_of(name: str) -> tuple[str, bytes, float]:
        found = cache.get(name)
        if found is not None and time.monotonic() - found[3] < FRESH_FOR:
            return found[0], found[1], found[2]
        ctx.catalog.check_name(name)
        document = await on(name, lambda e: e.allocation(name).as_json())
        etag = f'"{document["version"]}"'
        data = json.dumps(document).encode()
        cache[name] = (etag, data, float(document["cache_seconds"]), time.monotonic())
        if len(cache) > 4096:  # bounded: drop the oldest
            del cache[next(iter(cache))]
        return etag, data, float(document["cache_seconds"])

    @answer
    async def allocation(request: Request) -> Response:
        name = request.path_params["name"]
        if request.query_params:
            raise BadRequest(f"GET allocation takes no query parameters, got "
                             f"{sorted(request.query_params)}")
        etag, data, seconds = await allocation_of(name)
        headers = {"etag": etag, "cache-control": f"max-age={int(seconds)}"}
        asked = request.headers.get("if-none-match")
        if asked is not None and etag in [t.strip() for t in asked.split(",")]:
            return Response(status_code=304, headers=headers)
        return Response(data, media_type="application/json", headers=headers)

    @answer
    async def events(request: Request) -> Response:
        name = request.path_params["name"]
        kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind == "application/x-ndjson":
            exposures, outcomes = _ndjson(await ctx.read_raw(request))
        else:
            fields = await ctx.read(request)
            unknown = sorted(set(fields) - set(_FIELDS))
            if unknown:
                raise BadRequest(f"events: unknown field(s) {unknown}; the body has "
                                 f"{list(_FIELDS)}")
            exposures, outcomes = fields.get("exposures", []), fields.get("outcomes", [])
        who = who_of(request)
        ctx.catalog.check_name(name)
        try:
            result = await on(name, lambda e: e.ingest(exposures, outcomes, who=who).as_json())
        finally:
            cache.pop(name, None)  # the weights may have moved: computed again when asked
        return JSONResponse(result)

    return [Route("/experiments/{name}/allocation", allocation, methods=["GET"]),
            Route("/experiments/{name}/events", events, methods=["POST"])]
