"""The gate in front of every route (an ASGI middleware): the ``Host`` check, the token or
session, the scope, and the JSON content type of a body, applied before routing, so a route
added later is covered without a line of its own. The checks are one function,
:func:`refusal`, which the fast path of ``assign`` and ``record`` (:mod:`.fast`, in front of
Starlette) calls too. The rules are :mod:`.auth`'s; this module
also adds the security headers to every answer (:mod:`.headers`) and hands the browser's
sign-in (``/login``, ``/login/tickets``, ``/logout``) to :mod:`.signin`.

Answers, each one JSON line (``{"error": ...}``) and nothing run:

- 400: a ``Host`` this server does not answer to (DNS rebinding; ``--allowed-host``), or a
  request with both ``Content-Length`` and ``Transfer-Encoding`` (request smuggling: a proxy
  in front and this server could read its body differently);
- 401 (``WWW-Authenticate: Bearer``): no token, or a wrong one, when the server has one; a
  browser asking for a page is sent to ``/login`` instead (303);
- 403: a read-only token (or a browser session) on a route that writes, a ``write`` token on
  an ``admin`` route (stop, pause, archive, correct, delete), a token with a prefix on an experiment
  outside it (or on ``/``, ``/metrics``);
- 429 (``Retry-After``): an address that sent too many wrong tokens (:class:`.auth.Throttle`);
- 415: a ``POST``/``PUT``/``PATCH`` whose body is not declared ``application/json`` (a
  cross-site form or ``text/plain`` request, which a browser sends without asking, cannot
  reach a route).
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

from .auth import ADMIN, COOKIE, READ, WRITE, Access, Key
from .headers import with_headers

__all__ = ["Answer", "Guard", "client_address", "json_answer", "needed_scope", "refusal",
           "request_headers", "send_answer"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_READING = frozenset({"GET", "HEAD"})
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
#: Paths answered without a token (nothing about any experiment).
_PUBLIC = frozenset({"/health", "/ready"})
#: The last path segments of the routes that need an ``admin`` token (and ``DELETE``).
_ADMIN_ACTIONS = frozenset({"stop", "pause", "archive", "correct"})
#: Paths a token with a prefix may use beside its experiments' (nothing of another's).
_ANY_KEY = frozenset({"/experiments", "/openapi.json", "/docs"})
_SIGN_IN = frozenset({"/login", "/logout", "/login/tickets"})


#: An answer: status, headers, body.
Answer = tuple[int, list[tuple[bytes, bytes]], bytes]


def json_answer(code: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None
                ) -> Answer:
    body = json.dumps(payload).encode()
    return code, [(b"content-type", b"application/json"),
                  (b"content-length", str(len(body)).encode()), *(headers or [])], body


async def send_answer(send: Send, answer: Answer) -> None:
    code, headers, body = answer
    await send({"type": "http.response.start", "status": code, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def client_address(scope: Scope) -> str:
    """The client's address (the proxy's, behind one)."""
    client = scope.get("client")
    return str(client[0]) if client else "?"


def needed_scope(method: str, path: str) -> str:
    """The scope a request needs: ``read`` to read, ``admin`` to stop, pause, archive or
    delete an experiment, ``write`` for any other write."""
    if method in _READING:
        return READ
    parts = path.strip("/").split("/")
    if parts[0] == "experiments" and (
            (len(parts) == 2 and method == "DELETE")
            or (len(parts) == 3 and parts[2] in _ADMIN_ACTIONS)):
        return ADMIN
    return WRITE


def _experiment_of(path: str) -> str | None:
    parts = path.strip("/").split("/")
    return parts[1] if len(parts) >= 2 and parts[0] == "experiments" else None


def refusal(access: Access, scope: Scope, headers: dict[str, str]) -> Answer | None:
    """The answer refusing an HTTP request (400, 401, 403, 415, 429: the module docstring),
    or ``None`` when it may go on; the granted key's scope, id, name and prefix go to
    ``scope["state"]``.

    The one implementation of these checks: :class:`Guard` applies it to every request before
    routing, and the fast path of ``assign`` and ``record`` (:mod:`.fast`) before it reads a
    body."""
    method, path = scope["method"], scope["path"]
    if not access.host_allowed(headers.get("host")):
        host = headers.get("host", "")[:100]
        return json_answer(400, {"error": (
            f"Host {host!r} is not a name this server answers to (it answers to its "
            "address, localhost and --allowed-host)" if host else
            "a request must name its Host")})
    if "transfer-encoding" in headers and "content-length" in headers:
        return json_answer(400, {"error": (
            "a request must not have both Content-Length and Transfer-Encoding (which one "
            "frames the body is ambiguous)")}, [(b"connection", b"close")])
    if path in _PUBLIC and method in _READING:
        return None
    if not access.open:
        refused = _key_refusal(access, scope, headers, method, path)
        if refused is not None:
            return refused
    if method in _WITH_BODY and not _is_json(headers.get("content-type")) and not (
            path.endswith("/events") and _is_ndjson(headers.get("content-type"))):
        given = headers.get("content-type")
        return json_answer(415, {"error": (
            f"{method} {path}: the body must be JSON, sent with 'Content-Type: "
            f"application/json' (got {given[:100]!r})" if given else
            f"{method} {path}: the body must be JSON, sent with 'Content-Type: "
            "application/json' (no Content-Type given)")})
    return None


def _key_refusal(access: Access, scope: Scope, headers: dict[str, str], method: str,
                 path: str) -> Answer | None:
    """:func:`refusal`'s token checks (a server with keys)."""
    address = client_address(scope)
    wait = access.throttle.wait(address)
    if wait > 0 and ("authorization" in headers or "cookie" in headers):
        return too_many(wait)
    key = _granted(access, headers, method)
    if key is None:
        if "authorization" in headers:
            access.throttle.failed(address)
        return _unauthenticated(scope, headers)
    state = scope.setdefault("state", {})
    state.update(scope=key.scope, token_id=key.ident, token_name=key.name, prefix=key.prefix)
    needed = needed_scope(method, path)
    if not key.grants(needed):
        what = ("this token reads only (a read token, or a browser session)" if key.scope == READ
                else f"this token's scope is {key.scope}")
        return json_answer(403, {"error": (
            f"{what}; {method} {path} needs a {needed} token: send 'Authorization: Bearer "
            "<token>' with one")})
    if key.prefix:
        name = _experiment_of(path)
        if (name is None and path not in _ANY_KEY) or (name is not None
                                                       and not key.reaches(name)):
            return json_answer(403, {"error": (
                f"this token reaches only the experiments whose names start with "
                f"{key.prefix!r}; {method} {path} is outside them")})
    return None


def too_many(wait: float) -> Answer:
    """429: too many wrong tokens from this address."""
    return json_answer(429, {"error": (
        "too many wrong tokens from this address: try again in "
        f"{math.ceil(wait)} s")}, [(b"retry-after", str(math.ceil(wait)).encode())])


class Guard:
    """The ASGI middleware around the app (see the module docstring)."""

    def __init__(self, app: Callable[..., Awaitable[None]], access: Access,
                 sign_in: Callable[[Scope, Receive, dict[str, str]], Awaitable[Answer]]
                 ) -> None:
        self.app = app
        self.access = access
        self.sign_in = sign_in  # signin.SignIn (which imports this module)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": with_headers(list(message.get("headers",
                                                                                 [])))}
            await send(message)

        headers = request_headers(scope)
        if scope["path"] in _SIGN_IN and self.access.host_allowed(headers.get("host")):
            await send_answer(sending, await self.sign_in(scope, receive, headers))
            return
        refused = refusal(self.access, scope, headers)
        if refused is not None:
            await send_answer(sending, refused)
            return
        await self.app(scope, receive, sending)


def _granted(access: Access, headers: dict[str, str], method: str) -> Key | None:
    authorization = headers.get("authorization")
    if authorization is not None:
        return access.bearer(authorization)
    if method in _READING:  # a browser's session reads only
        key = access.session(_cookie(headers.get("cookie", ""), COOKIE))
        if key is not None:
            return Key(key.name, READ, key.token, key.prefix)
    return None


def _unauthenticated(scope: Scope, headers: dict[str, str]) -> Answer:
    if scope["method"] == "GET" and "text/html" in headers.get("accept", ""):
        target = scope["path"] + (("?" + scope["query_string"].decode("latin-1"))
                                  if scope.get("query_string") else "")
        return 303, [(b"location", f"/login?next={quote(target, safe='')}".encode()),
                     (b"content-length", b"0")], b""
    wrong = " (the token given is wrong)" if "authorization" in headers else ""
    return json_answer(401, {"error": (
        "this server needs 'Authorization: Bearer <token>' on every request but GET "
        f"/health and /ready{wrong}")}, [(b"www-authenticate", b'Bearer realm="banditkit"')])


def request_headers(scope: Scope) -> dict[str, str]:
    # a repeated header keeps its first value: the one a proxy in front would have checked
    found: dict[str, str] = {}
    for key, value in scope["headers"]:
        found.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return found


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return False
    kind = content_type.partition(";")[0].strip().lower()
    return kind == "application/json"


def _is_ndjson(content_type: str | None) -> bool:
    """Newline-delimited JSON, which ``POST .../events`` also takes (:mod:`.routes_edge`)."""
    return content_type is not None and \
        content_type.partition(";")[0].strip().lower() == "application/x-ndjson"


def cookie_of(header: str, name: str) -> str | None:
    """The value of cookie ``name`` in a ``Cookie`` header."""
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


_cookie = cookie_of
