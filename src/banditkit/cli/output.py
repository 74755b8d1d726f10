"""What the commands print besides their results: the one-line refusal on standard error and
the JSON encoding of numpy and pandas values. Below the command modules, like
:mod:`.args`; it imports nothing of banditkit."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["json_default", "refuse"]


def refuse(message: str, command: str = "banditkit") -> int:
    """Print ``<command>: error: <message>`` on standard error; return the exit status 2 (a
    user's mistake, as argparse's own refusals)."""
    print(f"{command}: error: {message}", file=sys.stderr)
    return 2


def json_default(value: Any) -> Any:
    """``json.dump(default=...)``: numpy scalars as Python numbers, tuples and sets as lists,
    anything else as its text."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (tuple, set)):
        return list(value)
    return str(value)
