"""The browser's sign-in (``/login``, ``/login/tickets``, ``/logout``), answered by
:class:`~.guard.Guard` before any route: the rules are :mod:`.auth`'s (sessions that expire,
end at logout and when their token changes; one-time tickets); this module reads the form, sets
and clears the cookie, and sends the browser on to a path of this server only
(:func:`local_target`: ``/login`` is no open redirect).
"""

from __future__ import annotations

from html import escape
from urllib.parse import parse_qs, quote

from .auth import COOKIE, Access, Key, Tickets
from .guard import (
    Answer,
    Receive,
    Scope,
    _unauthenticated,
    client_address,
    cookie_of,
    json_answer,
    too_many,
)

__all__ = ["SignIn", "local_target"]

_LOGIN_BODY = 4096


class SignIn:
    """The sign-in routes over ``access``."""

    def __init__(self, access: Access) -> None:
        self.access = access
        self.tickets = Tickets()

    def _cookie(self, key: Key, scope: Scope) -> bytes:
        seconds = int(self.access.session_seconds)
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        return (f"{COOKIE}={self.access.new_session(key)}; Max-Age={seconds}; Path=/; "
                f"HttpOnly; SameSite=Strict{secure}").encode()

    async def __call__(self, scope: Scope, receive: Receive, headers: dict[str, str]
                       ) -> Answer:
        method, path = scope["method"], scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        target = local_target(query.get("next", ["/experiments"])[0])
        if path == "/logout" and method == "POST":
            self.access.revoke(cookie_of(headers.get("cookie", ""), COOKIE))
            secure = "; Secure" if scope.get("scheme") == "https" else ""
            return 303, [(b"location", b"/login"), (b"content-length", b"0"),
                         (b"set-cookie", f"{COOKIE}=; Max-Age=0; Path=/; HttpOnly; "
                                         f"SameSite=Strict{secure}".encode())], b""
        if path == "/login/tickets" and method == "POST":
            key = self.access.bearer(headers.get("authorization", ""))
            if key is None:
                return _unauthenticated({**scope, "method": "POST"}, headers)
            ticket = self.tickets.make(key)
            return json_answer(201, {"url": f"/login?ticket={ticket}&next={quote(target)}",
                                     "expires_in": 60, "grants": "reading, in a browser"})
        if path != "/login" or method not in ("GET", "POST"):
            return json_answer(405 if path == "/login" else 404,
                               {"error": f"{method} {path}: not allowed"})
        if self.access.open:
            return 303, [(b"location", target.encode()), (b"content-length", b"0")], b""
        return await self._login(scope, receive, method, query, target)

    async def _login(self, scope: Scope, receive: Receive, method: str,
                     query: dict[str, list[str]], target: str) -> Answer:
        key = None
        if method == "GET" and "ticket" in query:
            key = self.tickets.redeem(query["ticket"][0])
            if key is None or key not in self.access.all_keys:  # unknown, or revoked since
                return _form(target, "this ticket is unknown, used or expired; ask for a new "
                                     "one, or sign in with the token", 401)
        elif method == "POST":
            raw = await _small_body(receive)
            if raw is None:
                return _form(target, "the form is too large", 413)
            fields = parse_qs(raw.decode("utf-8", "replace"))
            given = fields.get("token", [""])[0]
            target = local_target(fields.get("next", [target])[0])
            address = client_address(scope)
            wait = self.access.throttle.wait(address)
            if wait > 0:
                return _form(target, f"too many wrong tokens: try again in {wait:.0f} s",
                             too_many(wait)[0])
            key = self.access.bearer(f"Bearer {given}")
            if key is None:
                self.access.throttle.failed(address)
                return _form(target, "wrong token", 401)
        else:
            return _form(target, "", 200)
        # the redirect drops the ticket from the address bar: the page's URL holds no secret
        return 303, [(b"location", target.encode()), (b"content-length", b"0"),
                     (b"set-cookie", self._cookie(key, scope)),
                     (b"cache-control", b"no-store")], b""


def local_target(target: str) -> str:
    """A path of this server to go to after signing in: never another site (``//evil``,
    ``https://evil``, ``/\\evil``, ``/<TAB>/evil``), so ``/login`` is no open redirect.

    Browsers drop tabs and newlines anywhere in a URL and read ``\\`` as ``/``
    (the WHATWG URL standard), so ``/<TAB>/evil.example`` is followed to ``//evil.example``:
    a target with anything but printable ASCII (a control character, a space) or with a
    backslash is refused outright, and what
    is left must be a path (``/`` then anything but a second ``/``)."""
    if (not target.startswith("/") or target.startswith("//")
            or any(not "!" <= c <= "~" or c == "\\" for c in target)):
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


def _form(target: str, message: str, code: int) -> Answer:
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
        "SameSite=Strict) until you sign out or it expires; writes need the token in an "
        "Authorization header.</small></p>"
        "</body></html>").encode()
    return code, [(b"content-type", b"text/html; charset=utf-8"),
                  (b"content-length", str(len(page)).encode()),
                  (b"cache-control", b"no-store")], page
