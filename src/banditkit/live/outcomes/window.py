"""The outcome window of a live experiment: how long a unit's outcome is awaited, and what a
unit unanswered when its window closes becomes.

Real traffic leaves units unanswered: a visitor who never converts sends nothing, a client
times out on ``assign`` and never learns its units. Without a rule, one such unit keeps its
batch waiting for ever, and the experiment stops assigning (issue 26: the README's own curl
example stopped on day 6). Every experiment therefore has

``outcome_window`` (seconds, > 0)
    A unit's outcome is awaited from its assignment for this long: its window is
    ``[assigned_at, assigned_at + outcome_window)``; at ``assigned_at + outcome_window`` it
    closes (a reward recorded at that instant or later is refused).
``missing``
    What a unit unanswered when its window closes becomes:

    - ``"zero"``: reward 0 is recorded for it, as a real outcome (``units.imputed`` = 1 says
      the rule wrote it): the conversion that did not happen. The right rule for a conversion
      metric — a visitor who did not convert within the attribution window scored 0 — and for
      any "amount of something" metric (clicks, revenue per visitor).
    - ``"expire"``: the unit is withdrawn (:meth:`banditkit.Experiment.expire`): no outcome,
      its slot goes back to the design and is handed to a later unit. For measurements that
      may fail to arrive and whose absence is not a value (a rating, a latency); valid only if
      whether an outcome arrives does not depend on its value (the missing-outcome check
      warns when it depends on the arm).

Defaults (what a practitioner running a conversion test expects; shown in ``status``):
``outcome_window = 86_400`` s (one day: a whole daily traffic cycle for every unit, and a
batch never waits more than a day for its last unit; GrowthBook's metrics default to a 72-hour
conversion window — choose that for purchases that take days), and ``missing = "zero"`` when
the algorithm's rewards lie in [0, 1] (0/1 conversions, the K-armed policies' rewards) and no
costs are recorded; ``"expire"`` otherwise (rewards on another scale, where 0 is not "nothing
happened", and constrained policies, whose costs a zero could not stand for).

Resolution is checked on every call that writes (``assign``, ``record``, ``expire``,
``resume``, and ``status`` and ``units`` on an experiment opened for writing): no background
job. The units whose window closed are found through the partial index of waiting units on
``assigned_at`` — O(log units + units resolved) — resolved by the rule in the call's
transaction, the running totals and the resolved prefix (:mod:`.resolved_prefix`) updated, and
a batch they complete is observed by the algorithm before the call goes on. The time is the
experiment's clock (``clock=`` of ``create``/``open``; :func:`time.time` by default), read once
per call; what was resolved is stored, so :meth:`banditkit.Experiment.open` replays the same
batches and reaches the same state whatever the clock says later.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ExperimentError

__all__ = ["DEFAULT_WINDOW", "MAX_WINDOW", "MISSING", "OutcomeWindow", "Waiting",
           "check_missing", "check_window", "default_missing"]

#: The rules for a unit unanswered when its window closes.
MISSING = ("zero", "expire")

#: One day, in seconds (module docstring).
DEFAULT_WINDOW = 86_400.0

#: A century: a longer window is a typo, and the time arithmetic stays within datetime's range.
MAX_WINDOW = 100 * 365.25 * 86_400.0


def check_window(value: object) -> float:
    """``outcome_window`` as seconds, or one ExperimentError naming it and its rule."""
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(float(value)) or not 1e-6 <= float(value) <= MAX_WINDOW):
        raise ExperimentError(f"outcome_window must be a number of seconds in [1e-06, "
                              f"{MAX_WINDOW:.4g}] (a microsecond to a century; finite), got "
                              f"{value!r}")
    return float(value)


def check_missing(value: object) -> str:
    """``missing`` checked: one of :data:`MISSING`."""
    if not isinstance(value, str) or value not in MISSING:
        raise ExperimentError(f"missing must be 'zero' (a unit unanswered when its window "
                              f"closes scores 0) or 'expire' (it is withdrawn, its slot given "
                              f"to another unit), got {value!r}")
    return value


def default_missing(reward_range: tuple[float, float] | None, n_costs: int) -> str:
    """``"zero"`` for rewards in [0, 1] without costs, else ``"expire"`` (module docstring)."""
    if n_costs == 0 and reward_range is not None and tuple(map(float, reward_range)) == (0, 1):
        return "zero"
    return "expire"


@dataclass(frozen=True)
class OutcomeWindow:
    """An experiment's window and rule, as stored in its meta.

    Attributes
    ----------
    seconds : float or None
        The window; ``None`` only for an experiment created before windows existed (format 5,
        upgraded): its units wait until recorded or expired by hand.
    missing : str or None
        ``"zero"`` or ``"expire"`` (``None`` with no window).
    defaults : tuple of str
        Which of the two were not given at create (``"outcome_window"``, ``"missing"``).
    """

    seconds: float | None
    missing: str | None
    defaults: tuple[str, ...] = ()

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> OutcomeWindow:
        seconds = meta.get("outcome_window")
        if seconds is None:
            return cls(None, None)
        return cls(check_window(seconds), check_missing(meta.get("missing")),
                   tuple(meta.get("outcome_window_defaults", ())))

    def as_meta(self) -> dict[str, Any]:
        return {"outcome_window": self.seconds, "missing": self.missing,
                "outcome_window_defaults": list(self.defaults)}

    @property
    def micros(self) -> int | None:
        return None if self.seconds is None else round(self.seconds * 1_000_000)

    def describe(self) -> str:
        """One line for ``status``."""
        if self.seconds is None:
            return ("outcome window: none (created before banditkit had outcome windows): a "
                    "unit waits until its outcome is recorded or it is expired by hand")
        rule = ("reward 0 recorded" if self.missing == "zero"
                else "withdrawn, its slot given to another unit")
        marks = {k: " [default]" if k in self.defaults else ""
                 for k in ("outcome_window", "missing")}
        return (f"outcome window: {_duration(self.seconds)}{marks['outcome_window']}; a unit "
                f"unanswered when it closes: missing={self.missing!r}"
                f"{marks['missing']} ({rule})")


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86_400.0), ("h", 3_600.0), ("min", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds:g} s ({seconds / size:g} {unit})"
    return f"{seconds:g} s"


@dataclass(frozen=True)
class Waiting:
    """The units waiting for an outcome (what ``status`` warns about).

    Attributes
    ----------
    units : int
        Units assigned, neither recorded nor expired.
    oldest_unit : int or None
        The one assigned first (``None`` when none waits), its ``oldest_arm`` and
        ``oldest_assigned_at``.
    resolves_at : str or None
        When its window closes (``None`` without a window).
    overdue : int
        Units whose window has closed but that no call has resolved yet (an experiment read
        with ``readonly=True``: the next call that writes resolves them).
    """

    units: int
    oldest_unit: int | None = None
    oldest_arm: str | None = None
    oldest_assigned_at: str | None = None
    resolves_at: str | None = None
    overdue: int = 0

