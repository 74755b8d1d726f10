"""The service's JSON of a data frame (``frame_records``): Python values a strict JSON encoder
takes (no NaN, no numpy scalar), missing values as null, timestamps as ISO text, one object
per row with the named index first."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from banditkit.service.jsonable import frame_records


def test_each_column_kind_becomes_its_json_value():
    frame = pd.DataFrame({
        "unit": np.array([7, 8], dtype=np.int64),
        "flag": np.array([True, False]),
        "reward": [np.nan, 0.25],
        "inf": [np.inf, -1.0],
        "count": pd.array([3, None], dtype="Int64"),
        "at": pd.to_datetime(["2026-01-02T03:04:05", None], utc=True),
        "arm": ["a", None],
        "costs": [None, [0.5, 1.0]],
        # an object column of numpy values: converted value by value
        "mixed": pd.Series([np.nan, np.int64(3)], dtype=object, index=["x", "y"]),
    }, index=pd.Index(["x", "y"], name="row"))
    records = frame_records(frame)
    assert records == [
        {"row": "x", "unit": 7, "flag": True, "reward": None, "inf": None, "count": 3,
         "at": "2026-01-02T03:04:05+00:00", "arm": "a", "costs": None, "mixed": None},
        {"row": "y", "unit": 8, "flag": False, "reward": 0.25, "inf": -1.0, "count": None,
         "at": None, "arm": None, "costs": [0.5, 1.0], "mixed": 3},
    ]
    assert [type(r["unit"]) for r in records] == [int, int]  # not numpy.int64
    assert type(records[0]["flag"]) is bool and type(records[1]["mixed"]) is int
    json.dumps(records, allow_nan=False)  # strict JSON: raises on a NaN left behind


def test_an_unnamed_index_is_dropped_and_empty_frames_stay_empty():
    frame = pd.DataFrame({"a": [1.5]}, index=[10])
    assert frame_records(frame) == [{"a": 1.5}]
    assert frame_records(frame.iloc[:0]) == []
    assert frame_records(pd.DataFrame(index=range(2))) == [{}, {}]
