"""Who may do what on a server: its tokens and their scopes, the browser's session cookie, the
one-time tickets that open the page, and the ``Host`` names it answers to. Pure rules (no
Starlette): :mod:`.guard` applies them to every request before any route runs.

- **Tokens.** ``token`` may do everything; ``read_token`` may only read (``GET``: status,
  units, the page, the list) — for a dashboard that must not write. With either set, every
  route needs one, except ``GET /health`` (which says nothing about any experiment). Without
  any token the server answers everyone, which :mod:`banditkit.cli.serve` allows only on a
  loopback address.
- **Browsers.** A browser cannot send a bearer header from an address bar, and a token in a URL
  is kept in its history, logs and ``Referer``. So a browser signs in once: the form of
  ``/login`` (the token typed, sent as a form body, answered with a redirect), or a one-time
  ticket (``POST /login/tickets`` with a token gives ``/login?ticket=…``, good once and for
  60 s). Either sets a cookie that is ``HttpOnly`` (no script reads it), ``SameSite=Strict``
  (no other site's page sends it) and grants **reading only**: writes need the bearer header,
  which no cross-site request can carry without the browser's CORS preflight, which this
  server never grants. The cookie holds an HMAC of the token, not the token.
- **Hosts.** A page of another site can make a browser's name resolve to 127.0.0.1 (DNS
  rebinding) and read a token-less server as "same origin"; its requests then carry that site's
  name in ``Host``. A request is answered only when its ``Host`` is the bound address, a
  loopback name, or one of ``--allowed-host``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..live import ExperimentError

__all__ = ["COOKIE", "READ", "WRITE", "Access", "Tickets", "host_name", "token_id"]

READ, WRITE = "read", "write"
#: The session cookie's name.
COOKIE = "banditkit_session"
#: Seconds a one-time ticket stays good.
TICKET_SECONDS = 60
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def token_id(token: str) -> str:
    """A short public name of ``token`` for logs and the audit (the first 12 hex digits of its
    SHA-256): tells tokens apart without revealing them."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def _session_value(token: str) -> str:
    # an HMAC keyed by the token: stable across restarts and servers sharing the token, and
    # useless to anyone without the token (it cannot be turned back into the token)
    return hmac.new(token.encode(), b"banditkit read session v1", hashlib.sha256).hexdigest()


def host_name(header: str) -> str:
    """The name of a ``Host`` header, without its port, lower case (``[::1]:8750`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") == 1:
        return header.partition(":")[0]
    return header


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Access:
    """The server's tokens and the host names it answers to.

    Parameters
    ----------
    token : str, optional
        Grants everything (reads and writes).
    read_token : str, optional
        Grants reads only (refused without ``token``: a read token alone would leave writes
        open to all).
    bound : str
        The address the server listens on (``127.0.0.1``, ``0.0.0.0``, ...).
    allowed_hosts : iterable of str
        More ``Host`` names to answer (``--allowed-host``); ``*`` answers any (a proxy in front
        checks it instead).
    """

    token: str | None = None
    read_token: str | None = None
    bound: str = "127.0.0.1"
    allowed_hosts: Iterable[str] = ()
    _hosts: frozenset[str] = field(init=False, repr=False)
    _cookies: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("token", "read_token"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ExperimentError(f"{name} must not be empty or blank (leave it unset for "
                                      "none)")
        if self.read_token is not None and self.token is None:
            raise ExperimentError("read_token needs a token for writes too: a read-only token "
                                  "alone would leave every write open")
        if self.read_token is not None and self.read_token == self.token:
            raise ExperimentError("read_token must differ from token (it grants reads only)")
        hosts = {host_name(h) for h in self.allowed_hosts}
        if "" in hosts:
            raise ExperimentError("allowed_hosts: a host name must not be empty")
        hosts |= _LOOPBACK_NAMES
        if not _wildcard(self.bound):
            hosts.add(host_name(self.bound if ":" not in self.bound else f"[{self.bound}]"))
        object.__setattr__(self, "_hosts", frozenset(hosts))
        cookies = {_session_value(t): token_id(t) for t in (self.token, self.read_token) if t}
        object.__setattr__(self, "_cookies", cookies)

    @property
    def open(self) -> bool:
        """No token: every request is answered (loopback only, see the module docstring)."""
        return self.token is None

    def host_allowed(self, header: str | None) -> bool:
        if "*" in self._hosts:
            return True
        return header is not None and host_name(header) in self._hosts

    def bearer(self, authorization: str) -> tuple[str, str] | None:
        """``(scope, token id)`` of an ``Authorization: Bearer`` header, or ``None``. Every
        token is compared in constant time."""
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return None
        given = value.strip().encode()
        found = None
        for scope, token in ((WRITE, self.token), (READ, self.read_token)):
            if token is not None and hmac.compare_digest(given, token.encode()):
                found = (scope, token_id(token))
        return found

    def session(self, cookie: str | None) -> str | None:
        """The token id of a valid session cookie value (it grants reading only), or ``None``."""
        if not cookie:
            return None
        found = None
        for value, ident in self._cookies.items():
            if hmac.compare_digest(cookie.encode(), value.encode()):
                found = ident
        return found

    def cookie_for(self, token: str) -> str:
        """The session cookie's value for a token checked by :meth:`bearer`."""
        return _session_value(token)


def _wildcard(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_unspecified
    except ValueError:
        return False


class Tickets:
    """One-time tickets that open a browser session: made by a holder of a token, good once
    and for :data:`TICKET_SECONDS` (kept in this process: a ticket is good on the server that
    made it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, tuple[float, str]] = {}

    def make(self, token: str) -> str:
        ticket = secrets.token_urlsafe(24)
        with self._lock:
            now = time.monotonic()
            self._open = {k: v for k, v in self._open.items() if v[0] > now}  # drop old ones
            self._open[ticket] = (now + TICKET_SECONDS, token)
        return ticket

    def redeem(self, ticket: str) -> str | None:
        """The token a ticket was made with, once; ``None`` when unknown, used or expired."""
        with self._lock:
            deadline, token = self._open.pop(ticket, (0.0, ""))
        return token if deadline > time.monotonic() else None
