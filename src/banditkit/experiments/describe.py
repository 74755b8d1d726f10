"""Titles, labels and notes generated from the configuration a run actually used.

A figure's title, axis labels and notes may name the run's own numbers through placeholders,
``{T}`` or ``{trials}``, which :func:`fill` replaces from the spec being run (the ``--quick``
variant when quick), so a quick run never quotes the full run's trial count, horizon or sweep
(issue 17, §4). :func:`run_line` is the generated line under every plot title.

Placeholders (``{name}``, an identifier between braces; any other brace, such as
``U{0, 1}``, is text):

* ``{trials}`` — trials per (point, algorithm); ``{pairs}`` — replicability pairs (trials // 2);
* ``{horizon}`` — the horizon (pull budget) of the points, one value or their range;
* ``{points}`` — the number of sweep points;
* any parameter of the sweep points (``{T}``, ``{n}``, ``{lambda_min}``...), looked up in the
  environment's parameters and then in ``algorithm_params``: one value, or the range (or list)
  of the values the points take.

An unknown name is refused (``ValueError`` naming it), so a typo cannot print as ``{T}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["fill", "format_number", "run_line", "values_text"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def format_number(v: Any) -> str:
    """A number as written in titles: an integer a·10ᵏ (one digit a, k ≥ 4) as ``10⁴`` or
    ``5·10⁸``, other integers as digits, floats in ``%g``."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) >= 1e4:
        v = int(v)
    if isinstance(v, (int, np.integer)):
        v = int(v)
        digits = str(abs(v))
        k = len(digits) - 1
        if k >= 4 and digits[1:] == "0" * k:
            a = int(digits[0])
            power = "10" + str(k).translate(_SUPERSCRIPT)
            return ("-" if v < 0 else "") + (power if a == 1 else f"{a}·{power}")
        return str(v)
    if isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
    return str(v)


def values_text(values: Sequence[Any]) -> str:
    """The distinct values a parameter takes over the points: one value; up to four as a list
    (``0.05, 0.1, 0.2``); more numbers as their range (``300–3000``)."""
    distinct = list(dict.fromkeys(_hashable(v) for v in values if v is not None))
    if not distinct:
        return "–"
    if len(distinct) == 1:
        return format_number(distinct[0])
    numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                  and not isinstance(v, bool) for v in distinct)
    if numeric and len(distinct) > 4:
        return f"{format_number(min(distinct))}–{format_number(max(distinct))}"
    if numeric:
        distinct = sorted(distinct)
    return ", ".join(format_number(v) for v in distinct)


def _hashable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(np.asarray(v).tolist())
    return v


def _point_values(points: Sequence[Mapping[str, Any]], name: str) -> list[Any] | None:
    """The values of parameter ``name`` over the points (``None`` if no point has it)."""
    found, values = False, []
    for p in points:
        params = {**dict(p.get("algorithm_params", {}) or {}),
                  **{k: v for k, v in p.items() if k != "algorithm_params"}}
        if name in params:
            found = True
            values.append(params[name])
    return values if found else None


def _values(name: str, *, trials: int, points: Sequence[Mapping[str, Any]],
            horizons: Sequence[Any]) -> str | None:
    if name == "trials":
        return str(int(trials))
    if name == "pairs":
        return str(int(trials) // 2)
    if name == "points":
        return str(len(points))
    if name == "horizon":
        return values_text(list(horizons))
    values = _point_values(points, name)
    return None if values is None else values_text(values)


def fill(text: str, *, trials: int, points: Sequence[Mapping[str, Any]],
         horizons: Sequence[Any], what: str = "text") -> str:
    """``text`` with every placeholder replaced by the run's own values (see the module).

    Raises
    ------
    ValueError
        A placeholder names neither a run quantity nor a parameter of the points.
    """
    def replace(match: re.Match) -> str:
        value = _values(match.group(1), trials=trials, points=points, horizons=horizons)
        if value is None:
            raise ValueError(f"{what}: placeholder {{{match.group(1)}}} names neither trials, "
                             "pairs, points, horizon nor a parameter of the sweep points")
        return value
    return _PLACEHOLDER.sub(replace, text or "")


def run_line(config: Mapping[str, Any]) -> str:
    """What was run, for the line under a plot's title: mode, trials (pairs), points and
    horizon, from the stored configuration."""
    trials = int(config["trials"])
    mode = "quick run" if config.get("quick") else "full run"
    pairs = f" ({trials // 2} pairs)" if config.get("paired") else ""
    n_points = len(config.get("points") or ())
    horizons = [h for h in config.get("horizons") or () if h is not None]
    parts = [f"{config['figure']}: {mode}, {trials} trials{pairs} per point and algorithm",
             f"{n_points} point{'s' if n_points != 1 else ''}"]
    if horizons:
        parts.append(f"horizon {values_text(horizons)}")
    return ", ".join(parts)
