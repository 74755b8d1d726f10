"""What one :meth:`banditkit.Experiment.assign` call hands out, as plain Python lists.

``assign`` returns a DataFrame; a server answering thousands of ``assign(1)`` calls a second
does not need one. Building it (four typed columns, an index) cost about 1 ms of the worker
thread per call, more than the call's own SQL, and turning it back into JSON records another
0.4 ms (py-spy of ``banditkit serve`` under ``benchmarks/bench_service.py``, 32 clients: the
frame was 27% of the writer thread's time). :meth:`banditkit.Experiment.assign_rows` returns
this object instead; :meth:`Assignment.frame` is the DataFrame ``assign`` returns and
:meth:`Assignment.records` the JSON rows the service answers, equal to that frame's records
column for column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..inputs import units_frame

__all__ = ["Assignment"]


@dataclass(frozen=True)
class Assignment:
    """The units of one assign call, in the order ``assign`` returns them.

    Attributes
    ----------
    unit, arm_index, batch : list of int
        One entry per unit: its id, its arm's index, its batch.
    arm_names : list of str
        The experiment's arm names (``arm_names[arm_index[i]]`` is unit i's arm).
    reason : str or None
        Why fewer than the units asked came back, or that some are overflow or rollout units
        (``attrs["reason"]`` of the frame).
    overflow_units : list of int
        The ids of the overflow and rollout units among them.
    key, repeated : list, optional
        With ``keys``: each unit's key (as stored: text) and whether an earlier call had
        assigned it already; ``None`` without keys.
    """

    unit: list[int]
    arm_index: list[int]
    batch: list[int]
    arm_names: list[str]
    reason: str | None = None
    overflow_units: list[int] = field(default_factory=list)
    key: list[str] | None = None
    repeated: list[bool] | None = None

    def __len__(self) -> int:
        return len(self.unit)

    def frame(self) -> pd.DataFrame:
        """The DataFrame :meth:`banditkit.Experiment.assign` returns: columns ``unit``,
        ``arm``, ``arm_index``, ``batch`` (and ``key``, ``repeated`` with keys), with
        ``attrs["reason"]`` and ``attrs["overflow_units"]``."""
        frame = units_frame(self.unit, self.arm_index, self.batch, self.arm_names)
        if self.key is not None:
            frame["key"] = pd.Series(self.key, dtype="object")
            frame["repeated"] = pd.Series(self.repeated, dtype="bool")
        frame.attrs["reason"] = self.reason
        frame.attrs["overflow_units"] = self.overflow_units
        return frame

    def records(self) -> list[dict[str, Any]]:
        """One JSON object per unit, with the fields and values of :meth:`frame`'s rows
        (``unit``, ``arm``, ``arm_index``, ``batch``, then ``key`` and ``repeated`` with keys),
        without building the frame."""
        names = self.arm_names
        if self.key is None:
            return [{"unit": int(u), "arm": names[a], "arm_index": int(a), "batch": int(b)}
                    for u, a, b in zip(self.unit, self.arm_index, self.batch, strict=True)]
        assert self.repeated is not None
        return [{"unit": int(u), "arm": names[a], "arm_index": int(a), "batch": int(b),
                 "key": k, "repeated": bool(r)}
                for u, a, b, k, r in zip(self.unit, self.arm_index, self.batch, self.key,
                                         self.repeated, strict=True)]
