"""How the experiment reports write a number: one rule for the run reports
(:mod:`.report`), the reproduction report (:mod:`.reproduce_report`) and the papers'
reference values (:mod:`.reference`), so a value reads the same in every table."""

from __future__ import annotations

from typing import Any

__all__ = ["short_number"]


def short_number(x: Any) -> str:
    """``x`` with at most four significant digits: integers as integers, 3 significant digits
    in exponent form outside [1e-3, 1e5), NaN as "–" and ±inf as "inf"/"-inf" (the open end
    of a one-sided interval)."""
    x = float(x)
    if x != x:
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.3g}"
    if x.is_integer():
        return str(int(x))
    return f"{x:.4g}"
