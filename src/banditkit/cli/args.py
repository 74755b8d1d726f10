"""Argument types shared by the commands: each turns one command-line string into a value or
raises :class:`argparse.ArgumentTypeError`, which argparse reports as ``argument --trials:
...``, naming the option (exit status 2). The bottom layer of :mod:`banditkit.cli`: it imports
nothing of banditkit, and every command module may import it."""

from __future__ import annotations

import argparse
import ast
import re
from typing import Any

__all__ = ["key_value", "non_negative_int", "positive_int", "unique_params"]


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}"
                                         ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {value}")
    return value


def key_value(text: str) -> tuple[str, Any]:
    """``k=v`` with ``v`` read as a Python literal (number, tuple, True/None...) or a string;
    ``true``/``false`` in any case are the booleans (``beta_floor=false``)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"must look like name=value, got {text!r}")
    if raw.strip().lower() in ("true", "false"):
        return key, raw.strip().lower() == "true"
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        if re.search(r"(?<![a-z])(nan|inf|infinity)(?![a-z])", raw, re.IGNORECASE):
            raise argparse.ArgumentTypeError(
                f"{key}: NaN and infinity are not valid values, got {raw!r}") from None
        value = raw
    return key, value


def unique_params(pairs: list[tuple[str, Any]], option: str = "--param") -> dict[str, Any]:
    """``k=v`` pairs as a dict, refusing a name given twice (the last would silently win)."""
    names = [k for k, _ in pairs]
    twice = sorted({k for k in names if names.count(k) > 1})
    if twice:
        raise ValueError(f"argument {option}: {', '.join(twice)} given more than once")
    return dict(pairs)
