"""Results of :class:`banditkit.Experiment` as JSON values: data frames as lists of records,
dataclasses field by field (so a field added to :class:`~banditkit.ExperimentStatus` appears in
the API without a change here), numpy scalars as Python numbers, NaN as ``null``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["frame_records", "to_json"]


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One JSON object per row; a named index becomes the first field (``arm`` of a status).

    Column by column: a numpy column of integers, booleans or floats becomes Python values in
    one ``tolist`` (NaN then ``None``), and only other columns go value by value through
    :func:`to_json`. Row by row through pandas cost about 1 ms for the one unit of an
    ``assign(1)`` and 80 µs per unit of ``GET .../units``."""
    if frame.index.name is not None:
        frame = frame.reset_index()
    if frame.shape[1] == 0:
        return [{} for _ in range(len(frame))]
    names = [str(c) for c in frame.columns]
    columns = [_column(column) for _, column in frame.items()]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _column(series: pd.Series) -> list[Any]:
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return series.tolist()  # Python ints and bools
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return [v if math.isfinite(v) else None for v in series.tolist()]  # JSON has no NaN
    return [to_json(v) for v in series.tolist()]


def to_json(value: Any) -> Any:
    """``value`` as something :func:`json.dumps` writes without loss of meaning."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, pd.DataFrame):
        return frame_records(value)
    if isinstance(value, pd.Series):
        return {str(k): to_json(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [to_json(v) for v in value.tolist()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None  # JSON has no NaN
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return str(value)
