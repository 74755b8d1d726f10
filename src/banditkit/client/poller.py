"""Keeping an assigner's allocation fresh from a banditkit service, in a background thread
(stdlib only: :mod:`urllib.request`).

Every ``interval`` seconds the thread asks ``GET {url}/experiments/{name}/allocation`` with the
last ``ETag`` in ``If-None-Match``: a 304 costs the service almost nothing, a 200 replaces the
allocation (:meth:`Assigner.update`). A failure (the service down, a timeout, a refused or
unreadable answer) keeps the last good allocation, counts in :attr:`Poller.failures` and
:attr:`Poller.last_error`, and is tried again at the next tick: ``assign`` never waits for the
network, and never stops assigning.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

__all__ = ["Poller"]


class Poller:
    """Fetches an experiment's allocation (see the module docstring).

    Parameters
    ----------
    url : str
        The service's base URL, e.g. ``http://127.0.0.1:8000``.
    name : str
        The experiment.
    token : str, optional
        A bearer token (the read-only token suffices).
    interval : float, optional
        Seconds between polls; default: the allocation's ``cache_seconds``.
    timeout : float
        Seconds one request may take.
    """

    def __init__(self, url: str, name: str, token: str | None = None, *,
                 interval: float | None = None, timeout: float = 2.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be the service's http:// or https:// address, got "
                             f"{url!r}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be the experiment's name, got {name!r}")
        if interval is not None and (isinstance(interval, bool)
                                     or not isinstance(interval, (int, float))
                                     or not 0 < interval < 86400):
            raise ValueError(f"interval must be seconds in (0, 86400), got {interval!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout must be seconds > 0, got {timeout!r}")
        self.address = f"{url.rstrip('/')}/experiments/{quote(name, safe='')}/allocation"
        self.token = token
        self.interval = interval
        self.timeout = float(timeout)
        self.etag: str | None = None
        self.polls = 0
        self.not_modified = 0
        self.failures = 0
        self.last_error: str | None = None
        self.last_success: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _get(self) -> dict[str, Any] | None:
        """One request: the new allocation, or ``None`` for 304 (raises on failure)."""
        request = urllib.request.Request(self.address, headers={"Accept": "application/json"})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        if self.etag:
            request.add_header("If-None-Match", self.etag)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                document = json.loads(answer.read().decode())
                self.etag = answer.headers.get("ETag") or self.etag
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return None
            raise
        if not isinstance(document, dict):
            raise ValueError("the allocation is not a JSON object")
        return document

    def fetch_first(self) -> dict[str, Any]:
        """The allocation now (raises ``ConnectionError`` naming the address when it cannot
        be had: an application cannot start assigning without one)."""
        try:
            document = self._get()
        except (OSError, ValueError) as error:
            raise ConnectionError(f"cannot fetch the allocation from {self.address}: "
                                  f"{error}") from None
        assert document is not None  # no ETag sent yet: never a 304
        self.last_success = time.time()
        return document

    def poll_once(self, assigner: Any) -> bool:
        """Ask once; update ``assigner`` on a new allocation. Returns whether it succeeded
        (a 304 is a success)."""
        self.polls += 1
        try:
            document = self._get()
            if document is None:
                self.not_modified += 1
            else:
                assigner.update(document)
        except Exception as error:  # the service down or wrong: keep the last good one
            self.failures += 1
            self.last_error = f"{type(error).__name__}: {error}"
            return False
        self.last_success = time.time()
        self.last_error = None
        return True

    def start(self, assigner: Any) -> None:
        """Poll in a daemon thread until :meth:`stop`."""
        def loop() -> None:
            while True:
                pause = self.interval or float(
                    assigner.allocation.get("cache_seconds", 5.0) or 5.0)
                if self._stop.wait(pause):
                    return
                self.poll_once(assigner)

        self._thread = threading.Thread(target=loop, name="banditkit-allocation",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (returns once it has stopped)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 1)
