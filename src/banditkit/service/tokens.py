"""A file of named tokens (``banditkit serve --tokens FILE``), reread when the server gets
``SIGHUP``: a key is added, rotated or revoked without a restart.

One key a line, four fields separated by spaces (``#`` starts a comment)::

    # name       scope   token                                         [prefix]
    shop-web     write   2N1tYh0...43 characters from secrets...       checkout-
    dashboard    read    9fQe...
    ops          admin   kL3s...

``scope`` is ``read``, ``write`` or ``admin`` (:mod:`.auth`); the optional ``prefix`` limits
the key to the experiments whose names start with it. A name appears in the audit log
(``token:shop-web``) and the server's log, never the token. A token has at least
:data:`~.auth.MIN_TOKEN` characters. The file should be readable by the server's user only
(``chmod 600``); a file others may read is refused.

Rotation: add the new key beside the old one (another name), send ``SIGHUP``, move the clients
to it, remove the old line, send ``SIGHUP`` again. A file that no longer parses keeps the keys
the server had (the error is logged): a typo never opens or closes the server.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from ..live import ExperimentError
from .auth import Access, Key

__all__ = ["load_keys", "reload_keys"]

log = logging.getLogger("banditkit.service")


def load_keys(path: str | Path) -> tuple[Key, ...]:
    """The keys of the file at ``path`` (see the module docstring); refused, naming the line,
    when a line is wrong."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ExperimentError(f"--tokens: cannot read {str(path)!r} ({error.strerror})"
                              ) from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ExperimentError(f"--tokens: {str(path)!r} may be read by others (mode "
                              f"{stat.S_IMODE(mode):o}); chmod 600 it")
    keys = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.partition("#")[0].split()
        if not fields:
            continue
        if len(fields) not in (3, 4):
            raise ExperimentError(f"--tokens: line {number} of {str(path)!r} must be 'NAME "
                                  f"SCOPE TOKEN [PREFIX]', got {len(fields)} field(s)")
        try:
            keys.append(Key(*fields))
        except ExperimentError as error:
            raise ExperimentError(f"--tokens: line {number} of {str(path)!r}: {error}"
                                  ) from None
    if not keys:
        raise ExperimentError(f"--tokens: {str(path)!r} holds no key")
    return tuple(keys)


def reload_keys(access: Access, path: str | Path) -> bool:
    """Reread ``path`` into ``access`` (on ``SIGHUP``); on an error the keys stay as they were
    and the error is logged. Whether the keys were replaced."""
    try:
        keys = load_keys(path)
        access.reload(keys)
    except ExperimentError as error:
        log.error("tokens not reloaded, the old ones stay: %s", error)
        return False
    log.warning("tokens reloaded from %s: %s", os.fspath(path),
                ", ".join(f"{k.name} ({k.scope})" for k in keys))
    return True
