"""Who may do what on a server: its tokens and their scopes, the browser's session cookie, the
one-time tickets that open the page, and the ``Host`` names it answers to. Pure rules (no
Starlette): :mod:`.guard` applies them to every request before any route runs.

- **Tokens.** Each token (a :class:`Key`) has a name, a scope and optionally an
  experiment-name prefix. ``read`` may only read (``GET``: status, units, the page, the list)
  — for a dashboard that must not write; ``write`` may also make the experiments' calls
  (create, assign, record, expire, resume); ``admin`` may also stop, pause, archive, correct
  recorded rewards and delete.
  A prefix limits a token to the experiments whose names start with it. ``token`` is an
  ``admin`` key, ``read_token`` a ``read`` one; more come from a file
  (:mod:`.tokens`, reread on ``SIGHUP``: rotation without a restart). A token has at least
  :data:`MIN_TOKEN` characters. With any key, every route needs one, except ``GET /health``
  and ``GET /ready`` (which say nothing about any experiment). Without any the server answers
  everyone, which :mod:`banditkit.cli.serve` allows only on a loopback address. An address
  that sends many wrong tokens is slowed (:class:`Throttle`: 429 with ``Retry-After``).
- **Browsers.** A browser cannot send a bearer header from an address bar, and a token in a URL
  is kept in its history, logs and ``Referer``. So a browser signs in once: the form of
  ``/login`` (the token typed, sent as a form body, answered with a redirect), or a one-time
  ticket (``POST /login/tickets`` with a token gives ``/login?ticket=…``, good once and for
  60 s). Either sets a session cookie that is ``HttpOnly`` (no script reads it),
  ``SameSite=Strict`` (no other site's page sends it), ``Secure`` over TLS, and grants
  **reading only**: writes need the bearer header, which no cross-site request can carry
  without the browser's CORS preflight, which this server never grants. A session expires
  (``session_seconds``, 8 hours by default), ends at ``POST /logout`` (on every server of
  the same ``--db``, and after a restart: :mod:`.revocations`), and ends when its token is
  removed or changed: the cookie names the token and carries an
  HMAC keyed by it, so it never holds the token itself and no other token can make it.
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
from .revocations import MemoryRevocations

__all__ = ["ADMIN", "COOKIE", "MIN_TOKEN", "READ", "SCOPES", "SESSION_SECONDS", "WRITE",
           "Access", "Key", "Throttle", "Tickets", "host_name", "token_id"]

READ, WRITE, ADMIN = "read", "write", "admin"
#: The scopes, each granting what the ones before it grant.
SCOPES = (READ, WRITE, ADMIN)
#: The session cookie's name.
COOKIE = "banditkit_session"
#: Seconds a one-time ticket stays good.
TICKET_SECONDS = 60
#: Seconds a browser session lasts by default.
SESSION_SECONDS = 8 * 3600
#: The fewest characters of a token (``secrets.token_urlsafe(32)`` gives 43).
MIN_TOKEN = 16
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def token_id(token: str) -> str:
    """A short public name of ``token`` for logs and the audit (the first 12 hex digits of its
    SHA-256): tells tokens apart without revealing them."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


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
class Key:
    """One token: its ``name`` (in the audit and the logs), its ``scope`` (:data:`SCOPES`), the
    ``token`` itself and the ``prefix`` of the experiment names it reaches (``""``: all)."""

    name: str
    scope: str
    token: str = field(repr=False)
    prefix: str = ""

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ExperimentError(f"token {self.name!r}: scope must be one of "
                                  f"{', '.join(SCOPES)}, got {self.scope!r}")
        if not isinstance(self.token, str) or not self.token.strip():
            raise ExperimentError(f"token {self.name!r} must not be empty or blank")
        if len(self.token) < MIN_TOKEN or self.token != self.token.strip():
            raise ExperimentError(
                f"token {self.name!r} must have at least {MIN_TOKEN} characters and no "
                f"space around them (got {len(self.token)}); make one with: python -c "
                "'import secrets; print(secrets.token_urlsafe(32))'")

    @property
    def ident(self) -> str:
        return token_id(self.token)

    def grants(self, scope: str) -> bool:
        """Whether this key may do what ``scope`` allows."""
        return SCOPES.index(self.scope) >= SCOPES.index(scope)

    def reaches(self, name: str) -> bool:
        """Whether this key reaches the experiment ``name`` (its prefix)."""
        return name.startswith(self.prefix)


def _keys(token: str | None, read_token: str | None, keys: Iterable[Key]) -> tuple[Key, ...]:
    for name in ("token", "read_token"):
        value = {"token": token, "read_token": read_token}[name]
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ExperimentError(f"{name} must not be empty or blank (leave it unset for "
                                  "none)")
    keys = tuple(keys)
    if read_token is not None and token is None and not keys:
        raise ExperimentError("read_token needs a token for writes too: a read-only token "
                              "alone would leave every write open")
    if read_token is not None and read_token == token:
        raise ExperimentError("read_token must differ from token (it grants reads only)")
    # the command line's tokens are named by their id, as the audit named them before names
    given = [Key(token_id(t), scope, t) for t, scope in ((token, ADMIN), (read_token, READ))
             if t is not None]
    found = (*given, *keys)
    if len({k.token for k in found}) < len(found):
        raise ExperimentError("tokens: two keys have the same token (each must differ)")
    if len({k.name for k in found}) < len(found):
        raise ExperimentError("tokens: two keys have the same name (each must differ)")
    return found


@dataclass(frozen=True)
class Access:
    """The server's keys and the host names it answers to.

    Parameters
    ----------
    token : str, optional
        An ``admin`` key (everything).
    read_token : str, optional
        A ``read`` key (refused without another key: a read token alone would leave writes
        open to all).
    bound : str
        The address the server listens on (``127.0.0.1``, ``0.0.0.0``, ...).
    allowed_hosts : iterable of str
        More ``Host`` names to answer (``--allowed-host``); ``*`` answers any (a proxy in front
        checks it instead).
    keys : iterable of Key
        More keys (a tokens file, :mod:`.tokens`); :meth:`reload` replaces them.
    session_seconds : float
        How long a browser session lasts.
    revocations : MemoryRevocations, optional
        Where the sessions ended at logout are kept (:mod:`.revocations`: the catalog's file
        or table, so that every server of it and the next start honour a logout); this
        process only by default.
    """

    token: str | None = field(default=None, repr=False)
    read_token: str | None = field(default=None, repr=False)
    bound: str = "127.0.0.1"
    allowed_hosts: Iterable[str] = ()
    keys: Iterable[Key] = ()
    session_seconds: float = SESSION_SECONDS
    revocations: MemoryRevocations = field(default_factory=MemoryRevocations, repr=False)
    _hosts: frozenset[str] = field(init=False, repr=False)
    _all: tuple[Key, ...] = field(init=False, repr=False)
    throttle: Throttle = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.session_seconds > 0:
            raise ExperimentError(f"session_seconds must be > 0, got {self.session_seconds!r}")
        hosts = {host_name(h) for h in self.allowed_hosts}
        if "" in hosts:
            raise ExperimentError("allowed_hosts: a host name must not be empty")
        hosts |= _LOOPBACK_NAMES
        if not _wildcard(self.bound):
            hosts.add(host_name(self.bound if ":" not in self.bound else f"[{self.bound}]"))
        object.__setattr__(self, "_hosts", frozenset(hosts))
        object.__setattr__(self, "_all", _keys(self.token, self.read_token, self.keys))
        object.__setattr__(self, "throttle", Throttle())

    def reload(self, keys: Iterable[Key]) -> None:
        """Replace the keys of the file by ``keys`` (the command line's stay): a key removed or
        changed is refused from the next request on, and its browser sessions end."""
        object.__setattr__(self, "_all", _keys(self.token, self.read_token, keys))

    @property
    def all_keys(self) -> tuple[Key, ...]:
        return self._all

    @property
    def open(self) -> bool:
        """No key: every request is answered (loopback only, see the module docstring)."""
        return not self._all

    def host_allowed(self, header: str | None) -> bool:
        if "*" in self._hosts:
            return True
        return header is not None and host_name(header) in self._hosts

    def bearer(self, authorization: str) -> Key | None:
        """The key of an ``Authorization: Bearer`` header, or ``None``. Every key is compared
        in constant time."""
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return None
        given = value.strip().encode()
        found = None
        for key in self._all:
            if hmac.compare_digest(given, key.token.encode()):
                found = key
        return found

    # -- browser sessions -------------------------------------------------------------------
    def new_session(self, key: Key) -> str:
        """A session cookie's value for ``key`` (checked by :meth:`bearer`): its id, expiry,
        a random nonce and an HMAC of the three keyed by the token."""
        expires = int(time.time() + self.session_seconds)
        nonce = secrets.token_urlsafe(16)
        return f"{key.ident}.{expires}.{nonce}.{_mac(key.token, key.ident, expires, nonce)}"

    def session(self, cookie: str | None) -> Key | None:
        """The key of a valid session (unexpired, not revoked, its token still a key), or
        ``None``."""
        parts = (cookie or "").split(".")
        if len(parts) != 4 or not parts[1].isdigit():
            return None
        ident, expires, nonce, mac = parts[0], int(parts[1]), parts[2], parts[3]
        if expires <= time.time() or nonce in self.revocations:
            return None
        for key in self._all:
            if key.ident == ident and hmac.compare_digest(
                    mac.encode(), _mac(key.token, ident, expires, nonce).encode()):
                return key
        return None

    def revoke(self, cookie: str | None) -> None:
        """End the session ``cookie`` (``POST /logout``) on every server that shares
        :attr:`revocations`."""
        if self.session(cookie) is None:
            return
        parts = (cookie or "").split(".")
        self.revocations.add(parts[2], float(parts[1]))


def _mac(token: str, ident: str, expires: int, nonce: str) -> str:
    message = f"banditkit session v2|{ident}|{expires}|{nonce}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def _wildcard(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_unspecified
    except ValueError:
        return False


class Throttle:
    """Wrong tokens per client address, as a bucket: :attr:`BURST` failures at once, then one
    per :attr:`EVERY` seconds; an address past that is refused (429) before its token is even
    compared, right or wrong, so guessing gains nothing by going faster (2,000 wrong tokens
    were tried in 4.3 s before; now 5 a second after the first 50). The burst leaves room for
    a client with an old token to retry a while. Behind a proxy every client shares its
    address: the proxy should limit them itself."""

    BURST = 50
    EVERY = 0.2

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._level: dict[str, tuple[float, float]] = {}  # address -> (failures, when)

    def _now_level(self, address: str, now: float) -> float:
        level, when = self._level.get(address, (0.0, now))
        return max(0.0, level - (now - when) / self.EVERY)

    def wait(self, address: str) -> float:
        """Seconds ``address`` must wait before its next try (0: it may try now)."""
        with self._lock:
            level = self._now_level(address, time.monotonic())
        return max(0.0, (level - self.BURST + 1) * self.EVERY)

    def failed(self, address: str) -> None:
        """One more wrong token from ``address``."""
        with self._lock:
            now = time.monotonic()
            self._level[address] = (self._now_level(address, now) + 1.0, now)
            if len(self._level) > 10_000:  # forget the addresses that have drained
                self._level = {a: v for a, v in self._level.items()
                               if self._now_level(a, now) > 0}


class Tickets:
    """One-time tickets that open a browser session: made by a holder of a token, good once
    and for :data:`TICKET_SECONDS` (kept in this process: a ticket is good on the server that
    made it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, tuple[float, Key | None]] = {}

    def make(self, token: Key) -> str:
        ticket = secrets.token_urlsafe(24)
        with self._lock:
            now = time.monotonic()
            self._open = {k: v for k, v in self._open.items() if v[0] > now}  # drop old ones
            self._open[ticket] = (now + TICKET_SECONDS, token)
        return ticket

    def redeem(self, ticket: str) -> Key | None:
        """The key a ticket was made with, once; ``None`` when unknown, used or expired."""
        with self._lock:
            deadline, key = self._open.pop(ticket, (0.0, None))
        return key if deadline > time.monotonic() else None
