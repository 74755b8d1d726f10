"""Input checks shared by every layer: each raises before any work, naming parameter and rule."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np

__all__ = [
    "as_numbers",
    "check_arms",
    "check_distribution",
    "check_in_unit_interval",
    "check_integer",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "check_range",
    "check_spans",
]


def check_arms(X: object, name: str = "X") -> np.ndarray:
    """A finite, non-empty 2-D float array of arms (rows)."""
    arr = np.asarray(X, dtype=float)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (rows are vectors), got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (found NaN or inf)")
    return arr


def check_spans(X: np.ndarray, name: str = "X", rtol: float = 1e-10) -> None:
    """Refuse arm sets whose rows do not span R^d (the designs would be singular)."""
    d = X.shape[1]
    s = np.linalg.svd(X, compute_uv=False)
    if s.size < d or s[-1] <= rtol * max(s[0], 1.0) * max(X.shape):
        rank = int(np.sum(s > rtol * max(s[0], 1.0) * max(X.shape)))
        raise ValueError(f"{name} must span R^{d}: its rows have rank {rank} < {d}")


#: The largest count (a horizon, a number of pulls) accepted anywhere.
MAX_COUNT = 2**62


def _below_max_count(v: int, name: str) -> int:
    if v > MAX_COUNT:
        raise ValueError(f"{name} must be at most 2**62 (counts are 64-bit integers, and a "
                         f"doubled count must still fit), got {v}")
    return v


def check_integer(value: object, name: str, low: int = 1) -> int:
    """An integer ≥ ``low``; integral floats (``1e4``) are accepted, anything else is refused
    with a ValueError naming ``name``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if isinstance(value, Integral):
        v = int(value)
    elif isinstance(value, Real) and np.isfinite(float(value)) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return _below_max_count(v, name)


def check_positive_int(value: object, name: str, *, allow_zero: bool = False) -> int:
    """An integer ≥ 1 (or ≥ 0 with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    low = 0 if allow_zero else 1
    if value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value}")
    return _below_max_count(int(value), name)


def check_positive(value: object, name: str, *, above: float = 0.0) -> float:
    """A finite float strictly greater than ``above`` (default 0); strings and booleans are
    refused."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not (np.isfinite(v) and v > above):
        raise ValueError(f"{name} must be a finite number > {above:g}, got {value!r}")
    return v


def check_probability(value: object, name: str, *, open_low: bool = True,
                      open_high: bool = True) -> float:
    """A float in (0, 1), with either end closed on request. Strings and booleans are refused
    (``rho='0.3'`` is a mistake, not a number)."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    lo_ok = v > 0 if open_low else v >= 0
    hi_ok = v < 1 if open_high else v <= 1
    if not (np.isfinite(v) and lo_ok and hi_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value}")
    return v


def as_numbers(values: object, name: str) -> np.ndarray:
    """``values`` as a float array, refusing text, booleans and None, which numpy would
    convert (``'0.5'`` → 0.5, ``True`` → 1.0, ``None`` → nan) or fail on with a message that
    does not name ``name``."""
    try:
        raw = np.asarray(values)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} must be a rectangular array of numbers, got {values!r}"
                         ) from None
    if isinstance(values, (list, tuple)) and raw.dtype.kind in "iuf":
        # numpy reads [True, 2] as integers: look for flags among the numbers
        flat = np.asarray(values, dtype=object).reshape(-1)
        if any(isinstance(v, (bool, np.bool_)) for v in flat):
            raise ValueError(f"{name} must be numbers, got {values!r}")
    if raw.dtype.kind == "O":
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (Real, np.number))
               for v in raw.reshape(-1)):
            raise ValueError(f"{name} must be numbers, got {values!r}")
    elif raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numbers, got {values!r}")
    return np.asarray(raw, dtype=float)


def check_distribution(values: object, n: int, name: str) -> np.ndarray:
    """A probability vector over ``n`` items: shape (n,), finite, non-negative, summing to 1
    within 1e-9 (returned as given, not renormalised)."""
    x = as_numbers(values, name)
    if (x.shape != (n,) or not np.all(np.isfinite(x)) or np.any(x < 0)
            or abs(float(x.sum()) - 1.0) > 1e-9):
        raise ValueError(f"{name} must be a probability vector over the K={n} arms "
                         f"(non-negative, summing to 1), got {values!r}")
    return x


def check_in_unit_interval(values: object, name: str, shape: Sequence[int] | None = None
                           ) -> np.ndarray:
    """A finite float array with every entry in [0, 1] (optionally of a given shape)."""
    arr = as_numbers(values, name)
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"{name} must lie in [0, 1] entrywise")
    return arr


def check_range(value: object, name: str) -> tuple[float, float]:
    """A known range (lo, hi): two finite numbers with lo < hi. Text, booleans, None, a single
    number or more than two numbers are refused with a ValueError naming ``name``."""
    arr = as_numbers(value, name)
    if arr.shape != (2,):
        raise ValueError(f"{name} must be a pair (lo, hi) of numbers, got {value!r}")
    lo, hi = float(arr[0]), float(arr[1])
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"{name} must be finite with lo < hi, got {value!r}")
    return lo, hi
