"""What a live experiment's calls take, checked: unit ids, external keys, numbers; each refused
in one message naming the parameter and its rule, before anything is read or written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .errors import ExperimentError

__all__ = ["MAX_KEY_LENGTH", "MAX_MAGNITUDE", "as_ids", "as_keys", "brief", "check_summable",
           "numbers", "units_frame"]

#: The longest external unit key ``assign(keys=...)`` takes, in characters.
MAX_KEY_LENGTH = 256

#: The largest |value| any entry stores (:func:`check_summable`: every sum the readout forms
#: stays finite).
MAX_MAGNITUDE = 1e60


def numbers(values: Any) -> np.ndarray | None:
    """``values`` as an array of real numbers (booleans read as 0/1), or ``None`` when they are
    not (text, None, ragged lists...)."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "biuf":
        return None
    return arr


def check_summable(name: str, values: np.ndarray, ids: np.ndarray | None = None) -> None:
    """Refuse (ExperimentError naming ``name``) any of ``values`` (floats, finite: checked
    before) whose magnitude exceeds :data:`MAX_MAGNITUDE`; ``ids``: the units, to name the
    first one (else its position).

    Why a bound on magnitude: the readout keeps running sums of every value a unit carries
    (reward, covariate, denominator, guardrail metric, cost) and of their squares and
    products, and the sequences square some of those sums again (CUPED's squared covariance,
    a variance's (Σx)²). A continuous reward of 1e155 is finite, but its square (1e310) is
    not: before this check it turned the arm's sums into inf and its interval into
    [−inf, inf] for the rest of the experiment, and nothing could undo it (a reward is
    recorded once). :data:`MAX_MAGNITUDE` is the largest magnitude for which everything the
    readout forms stays finite: the square of a sum, over 2**63 units (every unit id), of
    products of two values is at most (2**63 · 1e60 · 1e60)² ≈ 8.5e277 < 1.8e308 (the largest
    float64). Every entry that stores a value refuses one beyond it, naming the parameter,
    before anything is written (issue 37 §1).
    """
    bad = np.flatnonzero(np.abs(values) > MAX_MAGNITUDE)
    if not bad.size:
        return
    i = int(bad.flat[0])
    where = f"unit {int(ids[i])}" if ids is not None else f"value {i}"
    raise ExperimentError(f"{name} must lie within ±{MAX_MAGNITUDE:g} (larger values overflow "
                          f"the running sums of squares): {where} got {values.flat[i]:g}")


def brief(value: object) -> str:
    """What was given, in a few words: its type, and its value only when that is short (a
    Series or a long list would dump itself into the message)."""
    text = repr(value)
    kind = type(value).__name__
    size = getattr(value, "size", None) if hasattr(value, "shape") else (
        len(value) if isinstance(value, (list, tuple)) else None)
    dtype = getattr(value, "dtype", None)
    if len(text) <= 40 and "\n" not in text:
        return text if size is None else f"{kind} {text}"
    details = ", ".join(d for d in (None if size is None else f"{size} values",
                                    None if dtype is None else f"dtype {dtype}") if d)
    return f"a {kind}" + (f" ({details})" if details else "")


def as_keys(keys: Any, n: object) -> list[str]:
    """``assign``'s keys as stored (text), refused by name unless they are a list of distinct,
    non-empty strings or integers of at most :data:`MAX_KEY_LENGTH` characters, one per unit."""
    if isinstance(keys, (str, bytes, Mapping)) or not isinstance(
            keys, (Sequence, np.ndarray, pd.Series, pd.Index)):
        raise ExperimentError(f"keys must be a list of unit keys (strings or integers), got "
                              f"{brief(keys)}")
    values = list(keys.tolist() if hasattr(keys, "tolist") else keys)
    if not values:
        raise ExperimentError("keys must be a non-empty list of unit keys (one per unit)")
    out: list[str] = []
    for i, key in enumerate(values):
        if isinstance(key, str):
            text = key
        elif isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            text = str(int(key))
        else:
            raise ExperimentError(f"keys: key {i} is {brief(key)}; a key is a non-empty "
                                  "string or an integer")
        if not text or len(text) > MAX_KEY_LENGTH:
            raise ExperimentError(f"keys: key {i} has {len(text)} characters; a key has 1 to "
                                  f"{MAX_KEY_LENGTH}")
        out.append(text)
    if len(set(out)) != len(out):
        seen: set[str] = set()
        twice = next(k for k in out if k in seen or seen.add(k))
        raise ExperimentError(f"keys: {twice!r} appears more than once; each key may appear "
                              "once per call (integers count as their text: 17 and '17')")
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer))
                          or n != len(out)):
        raise ExperimentError(f"n must equal the number of keys ({len(out)}) when keys are "
                              f"given (or be omitted), got {n!r}")
    return out


def as_ids(units: Any, allow_empty: bool = False) -> np.ndarray:
    try:
        arr = np.asarray(units) if units is not None else np.empty(0)
    except (TypeError, ValueError):
        arr = np.empty(0)
    if arr.size == 0 and allow_empty and units is not None and arr.ndim == 1:
        return arr.astype(np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.size == 0:
        raise ExperimentError(f"units must be a non-empty list of unit ids (integers), got "
                              f"{brief(units)}")
    if arr.dtype.kind == "u" and int(arr.max()) > np.iinfo(np.int64).max:
        raise ExperimentError(f"units: {int(arr.max())} is not a unit id (ids are below 2**63)")
    if np.unique(arr).size != arr.size:
        raise ExperimentError("units: each unit may appear once per call")
    return arr.astype(np.int64)


def units_frame(ids: list[int], arms: list[int], batches: list[int], names: list[str]
                 ) -> pd.DataFrame:
    return pd.DataFrame({"unit": pd.Series(ids, dtype="int64"),
                         "arm": pd.Series([names[a] for a in arms], dtype="object"),
                         "arm_index": pd.Series(arms, dtype="int64"),
                         "batch": pd.Series(batches, dtype="int64")})


_INT64 = 2**63


def joined_calls(calls: Any) -> tuple[list, list, list[int]] | None:
    """The units and rewards of several ``record(units, rewards)`` calls joined into one list
    each, with each call's count, when every call is *plain*: ``units`` a non-empty list of
    Python integers and ``rewards`` a list of as many Python numbers (no ``bool`` unit, no
    integer beyond 64 bits). Otherwise ``None``.

    Who needs it: :meth:`banditkit.Experiment.record_many`, which then checks the joined lists
    once (:func:`as_ids`, :func:`numbers`, finite) instead of each call's: for plain calls the
    joined lists pass those checks exactly when every call's own lists do, since numpy reads a
    list of such integers as int64 and such numbers as numbers whatever they are joined with
    (a ``True`` among integers, or an integer past 64 bits beside a float, would not be read as
    it is alone, which is why those calls are not plain). A unit in two calls is refused by
    the joined check, as ``record_many`` refuses it."""
    units: list = []
    rewards: list = []
    sizes = []
    for call in calls:
        ids, values = call
        if type(ids) is not list or type(values) is not list or not ids \
                or len(ids) != len(values):
            return None
        for u in ids:
            if type(u) is not int or not -_INT64 <= u < _INT64:
                return None
        for r in values:
            if type(r) is not float and (type(r) not in (int, bool) or not -_INT64 <= r < _INT64):
                return None
        units += ids
        rewards += values
        sizes.append(len(ids))
    return units, rewards, sizes
