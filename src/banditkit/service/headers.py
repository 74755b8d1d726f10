"""The headers every HTML answer carries, whatever route made it (:class:`~.guard.Guard`
adds them as the answer starts):

- ``Content-Security-Policy``: nothing loaded from elsewhere; the one inline script (the API
  page's, allowed by its hash), inline styles, the page's inline SVG plots and ``data:``
  images; requests only to this server; no framing (``frame-ancestors 'none'``), no
  ``<base>``, forms posted here only;
- ``X-Frame-Options: DENY`` (the same, for browsers without ``frame-ancestors``);
- ``X-Content-Type-Options: nosniff`` (on every answer: a JSON or CSV answer is never run
  as a page or a script);
- ``Referrer-Policy: no-referrer`` (an experiment's address never leaves in a ``Referer``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

__all__ = ["ALWAYS", "CSP", "HTML", "with_headers"]


def _script_hashes() -> str:
    page = (Path(__file__).with_name("api_page.html")).read_text(encoding="utf-8")
    found = re.findall(r"<script>(.*?)</script>", page, re.S)
    return " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
                    + "'" for s in found)


#: The policy of every HTML answer (see the module docstring).
CSP = ("default-src 'none'; script-src " + (_script_hashes() or "'none'")
       + "; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
#: Headers of every answer.
ALWAYS = [(b"x-content-type-options", b"nosniff")]
#: Headers of every HTML answer, beside :data:`ALWAYS`.
HTML = [(b"content-security-policy", CSP.encode()), (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"no-referrer")]


def with_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` (an answer's) with :data:`ALWAYS`, and :data:`HTML` when it is a page."""
    html = any(k.lower() == b"content-type" and v.lower().startswith(b"text/html")
               for k, v in headers)
    return [*headers, *ALWAYS, *(HTML if html else ())]
