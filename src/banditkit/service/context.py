"""What every route module shares (:class:`Context`): the catalog and its writer (``run`` a
call alone, ``on`` a call on one experiment, both bounded by the queue timeout), the body
reader, the limits, the reader processes, the metrics, and :meth:`Context.answer`, the
wrapper that turns a refusal into its JSON error. :func:`banditkit.service.app.create_app`
makes one and hands it to each route module (:data:`banditkit.service.app.ROUTE_MODULES`).

Status of a refusal (:data:`STATUS`): 404 unknown experiment, 409 a name taken, 413 a body
too large, 408 a body too slow, 507 (with ``Retry-After``) the experiments' disk full, 503
(with ``Retry-After``) the store unreachable or the writer busy, 400 any other refusal of the
library; 500 only for a bug (logged in full, one line to the client).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..live import Experiment, ExperimentError
from . import bodies as body
from .answers import Answers
from .bodies import Forbidden, TooLarge, TooSlow
from .catalog import Busy, Catalog, Conflict, InsufficientStorage, NotFound, Unavailable
from .deadlines import Deadlines
from .limits import RESERVE, Limits, descriptors_left
from .readers import Readers

__all__ = ["DEGRADED_FOR", "STATUS", "Context", "Handler", "one_line", "who_of"]

log = logging.getLogger("banditkit.service")

Handler = Callable[[Request], Awaitable[Response]]

#: A refusal's HTTP status, by kind (the first that matches).
STATUS = ((NotFound, 404), (Conflict, 409), (Forbidden, 403), (TooLarge, 413), (TooSlow, 408),
          (InsufficientStorage, 507), (Unavailable, 503), (ExperimentError, 400))
#: Seconds ``/health`` keeps saying "degraded" after the process ran out of descriptors.
DEGRADED_FOR = 30.0


def one_line(error: BaseException) -> str:
    """``error``'s message on one line."""
    return " ".join(str(error).split())


def who_of(request: Request) -> str:
    """The audit log's name for whoever sent ``request``: the token's name when the server
    gave the token one (``scope["state"]["token_name"]``, :mod:`.tokens`), else
    ``token:<first 12 hex digits of its SHA-256>`` (never the token itself), else
    ``anonymous``."""
    state = request.scope.get("state") or {}
    if state.get("token_name"):
        return f"token:{state['token_name']}"
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return "token:" + hashlib.sha256(value.strip().encode()).hexdigest()[:12]
    return "anonymous"


class Context:
    """The state the routes of one app share (see the module docstring).

    Parameters
    ----------
    catalog : Catalog
        The experiments.
    limits : Limits
        The server's bounds and timeouts.
    readers : Readers, optional
        The reader processes (``None``: reads run on the writer).
    metrics : Any
        The app's :class:`~banditkit.service.metrics.Metrics`.
    """

    def __init__(self, catalog: Catalog, limits: Limits, readers: Readers | None,
                 metrics: Any) -> None:
        self.catalog = catalog
        self.limits = limits
        self.readers = readers
        self.metrics = metrics
        self.body_deadlines = Deadlines(limits.body_timeout)  # every body's timeout, one timer
        self._answers: Answers | None = None  # made on the event loop, at the first call

    # -- the writer ------------------------------------------------------------------------
    def _busy(self) -> Busy:
        return Busy(f"this server's writer did not reach the call within "
                    f"{self.limits.queue_timeout:g} s; nothing was done: retry")

    async def waited(self, future: Any) -> Any:
        """A queued call's result; one not started within ``queue_timeout`` is cancelled
        unrun (503). One that started is waited for: its answer says what was written."""
        if self._answers is None:
            self._answers = Answers()
        return await self._answers.wait(future, self.limits.queue_timeout, self._busy)

    async def run(self, call: Callable[[], Any]) -> Any:
        """``call()`` alone on the writer."""
        return await self.waited(self.catalog.submit(call))

    async def on(self, name: str, action: Callable[[Experiment], Any]) -> Any:
        """``action(experiment)``, committed with the other calls waiting for ``name``."""
        return await self.waited(self.catalog.submit_call(name, action))

    async def read_raw(self, request: Request) -> bytes:
        """The body's bytes, within the server's size limit and body timeout (the guard has
        checked the token and the content type first, so that no one without the token makes
        us read a body)."""
        limits = self.limits
        return await body.read_body(request.receive, request.headers.get("content-length"),
                                    limits.max_body, limits.body_timeout, self.body_deadlines)

    async def read(self, request: Request) -> dict[str, Any]:
        """The JSON body (:meth:`read_raw`, parsed)."""
        return body.parse_body(await self.read_raw(request), self.limits.max_depth)

    # -- answers ---------------------------------------------------------------------------
    def degraded(self) -> str | None:
        """Why this process cannot serve now, or ``None``."""
        left = descriptors_left()
        exhausted = self.catalog.exhausted_at
        recent = exhausted is not None and time.monotonic() - exhausted < DEGRADED_FOR
        if (left is not None and left < RESERVE) or recent:
            return (f"out of file descriptors ({left} left"
                    + (f"; a call was refused for want of them in the last "
                       f"{DEGRADED_FOR:g} s" if recent else "") + ")")
        return None

    def refused(self, error: ExperimentError) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``(status, JSON answer, headers)`` of a refusal: the library's one-line message."""
        code = next(c for kind, c in STATUS if isinstance(error, kind))
        headers = {"retry-after": "1"} if code in (503, 507) else {}
        return code, {"error": self.catalog.public(one_line(error))}, headers

    def answer(self, handler: Handler) -> Handler:
        """``handler`` with a refusal answered as its JSON error and a bug as a logged 500."""
        async def wrapped(request: Request) -> Response:
            try:
                return await handler(request)
            except ExperimentError as error:
                code, message, headers = self.refused(error)
                return JSONResponse(message, status_code=code, headers=headers or None)
            except body.Gone:  # the client went away: nobody reads this
                return Response(status_code=400)
            except Exception:  # a bug: logged in full here, one line to the client
                log.exception("%s %s failed", request.method, request.url.path)
                return JSONResponse({"error": "internal server error (logged by the server)"},
                                    status_code=500)
        return wrapped
