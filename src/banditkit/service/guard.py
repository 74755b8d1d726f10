"""The gate in front of every route (an ASGI middleware): the ``Host`` check, the token or
session, the scope, and the JSON content type of a body, applied before routing, so a route
added later is covered without a line of its own. The checks are one function,
:func:`refusal`, which the fast path of ``assign`` and ``record`` (:mod:`.fast`, in front of
Starlette) calls too. The rules are :mod:`.auth`'s; this module
also answers the browser's sign-in (``/login``, ``/login/tickets``, ``/logout``).

Answers, each one JSON line (``{"error": ...}``) and nothing run:

- 400: a ``Host`` this server does not answer to (DNS rebinding; ``--allowed-host``);
- 401 (``WWW-Authenticate: Bearer``): no token, or a wrong one, when the server has one; a
  browser asking for a page is sent to ``/login`` instead (303);
- 403: a read-only token (or a browser session) on a route that writes;
- 415: a ``POST``/``PUT``/``PATCH`` whose body is not declared ``application/json`` (a
  cross-site form or ``text/plain`` request, which a browser sends without asking, cannot
  reach a route).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from html import escape
from typing import Any
from urllib.parse import parse_qs, quote

from .auth import COOKIE, READ, WRITE, Access, Tickets

__all__ = ["Answer", "Guard", "json_answer", "refusal", "request_headers", "send_answer"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_READING = frozenset({"GET", "HEAD"})
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
#: Paths answered without a token (nothing about any experiment).
_PUBLIC = frozenset({"/health"})
_LOGIN_BODY = 4096


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


def refusal(access: Access, scope: Scope, headers: dict[str, str]) -> Answer | None:
    """The answer refusing an HTTP request (400 Host, 401, 403, 415: the module docstring), or
    ``None`` when it may go on; a granted token's scope and id go to ``scope["state"]``.

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
    if path in _PUBLIC and method in _READING:
        return None
    if not access.open:
        granted = _granted(access, headers, method)
        if granted is None:
            return _unauthenticated(scope, headers)
        state = scope.setdefault("state", {})
        state["scope"], state["token_id"] = granted
        if method not in _READING and granted[0] != WRITE:
            return json_answer(403, {"error": (
                "this token reads only (the server's read token, or a browser session); "
                f"{method} {path} writes: send 'Authorization: Bearer <token>' with the "
                "server's write token")})
    if method in _WITH_BODY and not _is_json(headers.get("content-type")) and not (
            path.endswith("/events") and _is_ndjson(headers.get("content-type"))):
        given = headers.get("content-type")
        return json_answer(415, {"error": (
            f"{method} {path}: the body must be JSON, sent with 'Content-Type: "
            f"application/json' (got {given[:100]!r})" if given else
            f"{method} {path}: the body must be JSON, sent with 'Content-Type: "
            "application/json' (no Content-Type given)")})
    return None


class Guard:
    """The ASGI middleware around the app (see the module docstring)."""

    def __init__(self, app: Callable[..., Awaitable[None]], access: Access) -> None:
        self.app = app
        self.access = access
        self.tickets = Tickets()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = request_headers(scope)
        if scope["path"] in ("/login", "/logout", "/login/tickets") and \
                self.access.host_allowed(headers.get("host")):
            await send_answer(send, await self._login(scope, receive, headers))
            return
        refused = refusal(self.access, scope, headers)
        if refused is not None:
            await send_answer(send, refused)
            return
        await self.app(scope, receive, send)

    # -- the browser's sign-in -----------------------------------------------------------
    async def _login(self, scope: Scope, receive: Receive, headers: dict[str, str]
                     ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        method, path = scope["method"], scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        target = _local(query.get("next", ["/experiments"])[0])
        if path == "/logout" and method == "POST":
            return 303, [(b"location", b"/login"), (b"content-length", b"0"),
                         (b"set-cookie", f"{COOKIE}=; Max-Age=0; Path=/; HttpOnly; "
                                         "SameSite=Strict".encode())], b""
        if path == "/login/tickets" and method == "POST":
            granted = self._bearer_token(headers)
            if granted is None:
                return _unauthenticated({**scope, "method": "POST"}, headers)
            ticket = self.tickets.make(granted)
            return json_answer(201, {"url": f"/login?ticket={ticket}&next={quote(target)}",
                                     "expires_in": 60, "grants": "reading, in a browser"})
        if path != "/login" or method not in ("GET", "POST"):
            return json_answer(405 if path == "/login" else 404,
                               {"error": f"{method} {path}: not allowed"})
        if self.access.open:
            return 303, [(b"location", target.encode()), (b"content-length", b"0")], b""
        token = None
        if method == "GET" and "ticket" in query:
            token = self.tickets.redeem(query["ticket"][0])
            if token is None:
                return _form(target, "this ticket is unknown, used or expired; ask for a new "
                                     "one, or sign in with the token", 401)
        elif method == "POST":
            raw = await _small_body(receive)
            if raw is None:
                return _form(target, "the form is too large", 413)
            fields = parse_qs(raw.decode("utf-8", "replace"))
            given = fields.get("token", [""])[0]
            target = _local(fields.get("next", [target])[0])
            if self.access.bearer(f"Bearer {given}") is None:
                return _form(target, "wrong token", 401)
            token = given
        else:
            return _form(target, "", 200)
        # the redirect drops the ticket from the address bar: the page's URL holds no secret
        cookie = (f"{COOKIE}={self.access.cookie_for(token)}; Path=/; HttpOnly; "
                  "SameSite=Strict")
        return 303, [(b"location", target.encode()), (b"content-length", b"0"),
                     (b"set-cookie", cookie.encode()), (b"cache-control", b"no-store")], b""

    def _bearer_token(self, headers: dict[str, str]) -> str | None:
        authorization = headers.get("authorization", "")
        if self.access.bearer(authorization) is None:
            return None
        return authorization.partition(" ")[2].strip()


def _granted(access: Access, headers: dict[str, str], method: str) -> tuple[str, str] | None:
    authorization = headers.get("authorization")
    if authorization is not None:
        return access.bearer(authorization)
    if method in _READING:  # a browser's session reads only
        ident = access.session(_cookie(headers.get("cookie", ""), COOKIE))
        if ident is not None:
            return READ, ident
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
        f"/health{wrong}")}, [(b"www-authenticate", b'Bearer realm="banditkit"')])


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


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _local(target: str) -> str:
    """A path of this server to go to after signing in: never another site (``//evil``,
    ``https://evil``, ``/\\evil``), so ``/login`` is no open redirect."""
    if not target.startswith("/") or target.startswith(("//", "/\\")) or any(
            c in target for c in "\r\n"):
        return "/experiments"
    return target


async def _small_body(receive: Receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _LOGIN_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _form(target: str, message: str, code: int
          ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    note = f"<p class='error'>{escape(message)}</p>" if message else ""
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Sign in · banditkit"
        "</title><style>body{font-family:system-ui,sans-serif;max-width:28em;margin:4em auto}"
        "input{font-size:1em;padding:.3em;width:100%;box-sizing:border-box;margin:.4em 0}"
        ".error{color:#b00}</style></head><body><h1>banditkit</h1>"
        f"<p>This server needs its token (or its read token) to show its experiments.</p>{note}"
        "<form method='post' action='/login'>"
        f"<input type='hidden' name='next' value='{escape(target, quote=True)}'>"
        "<label>Token <input type='password' name='token' autocomplete='current-password' "
        "autofocus></label><input type='submit' value='Sign in'></form>"
        "<p><small>The browser keeps a session cookie that reads only (HttpOnly, "
        "SameSite=Strict); writes need the token in an Authorization header.</small></p>"
        "</body></html>").encode()
    return code, [(b"content-type", b"text/html; charset=utf-8"),
                  (b"content-length", str(len(page)).encode()),
                  (b"cache-control", b"no-store")], page
