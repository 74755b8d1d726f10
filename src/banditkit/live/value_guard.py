"""Values a live experiment can sum safely, and values worth a second look.

Why a bound on magnitude
------------------------
The readout keeps running sums of every value a unit carries (reward, covariate, denominator,
guardrail metric, cost) and of their squares and products, and the sequences square some
of those sums again (CUPED's squared covariance, a variance's (Σx)²). A continuous reward of
1e155 is finite, but its square (1e310) is not: before this check it turned the arm's sums
into inf and its interval into [−inf, inf] for the rest of the experiment, and nothing could
undo it (a reward is recorded once). :data:`MAX_MAGNITUDE` is the largest magnitude for which
everything the readout forms stays finite: the square of a sum, over 2**63 units (every unit
id), of products of two values is at most (2**63 · 1e60 · 1e60)² ≈ 8.5e277 < 1.8e308 (the
largest float64). Every entry that stores a value refuses one beyond it, naming the
parameter, before anything is written (:func:`check_summable`).

Why a warning on outliers
-------------------------
A value within that bound can still be a mistake (revenue in cents in a metric of dollars, a
latency in nanoseconds): it is summed correctly but moves the arm's mean and variance for the
rest of the experiment. ``record`` warns (:class:`OutlierWarning`, a Python warning: the call
still records) when a reward of an experiment without a declared range lies more than
:data:`OUTLIER_SDS` standard deviations from its arm's mean, both taken over the arm's
counted rewards before the call (at least :data:`OUTLIER_MIN_N` of them). By Chebyshev's
inequality at most 1/50² = 0.04% of any distribution's values lie that far out (far fewer
for the usual metrics: 0.0023% of a lognormal(0, 1.5), one value in 43,000; at 20 standard
deviations the revenue example of docs/experiment.md warned on 4 values of a day's 4,000), so a
warning is rare and worth reading.
A wrong value is then fixed by a recorded correction (:mod:`banditkit.live.corrections`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from .journal import ExperimentError

__all__ = ["MAX_MAGNITUDE", "OUTLIER_MIN_N", "OUTLIER_SDS", "PREFIX_MOMENTS", "OutlierWarning",
           "check_summable", "outliers", "warn_outliers"]

#: The largest |value| any entry stores (module docstring: every sum the readout forms stays
#: finite).
MAX_MAGNITUDE = 1e60

#: A reward more than this many of its arm's standard deviations from the arm's mean is an
#: outlier (warned about, still recorded).
OUTLIER_SDS = 50.0

#: The arm's counted rewards needed before its mean and deviation judge a new one.
OUTLIER_MIN_N = 30

#: The read of each arm's counted rewards (count, sum, sum of squares) that ``record`` sends
#: ahead with its first round trip (no extra round trip on PostgreSQL).
PREFIX_MOMENTS = ("SELECT arm, n, reward, reward_sq FROM prefix", ())


class OutlierWarning(UserWarning):
    """A recorded reward far from its arm's other rewards (:data:`OUTLIER_SDS`)."""


def check_summable(name: str, values: np.ndarray, ids: np.ndarray | None = None) -> None:
    """Refuse (ExperimentError naming ``name``) any of ``values`` (floats, finite: checked
    before) whose magnitude exceeds :data:`MAX_MAGNITUDE`; ``ids``: the units, to name the
    first one (else its position)."""
    bad = np.flatnonzero(np.abs(values) > MAX_MAGNITUDE)
    if not bad.size:
        return
    i = int(bad.flat[0])
    where = f"unit {int(ids[i])}" if ids is not None else f"value {i}"
    raise ExperimentError(f"{name} must lie within ±{MAX_MAGNITUDE:g} (larger values overflow "
                          f"the running sums of squares): {where} got {values.flat[i]:g}")


def outliers(values: np.ndarray, arms: np.ndarray, moments: Mapping[int, tuple]
             ) -> np.ndarray:
    """Positions of ``values`` (one per unit, of arm ``arms``) more than :data:`OUTLIER_SDS`
    standard deviations from their arm's mean, from ``moments`` (arm → (n, Σx, Σx²) of the
    arm's counted rewards); arms with fewer than :data:`OUTLIER_MIN_N` are not judged."""
    mean = np.full(values.shape, np.nan)
    sd = np.full(values.shape, np.nan)
    for arm, (n, total, total_sq) in moments.items():
        if n is None or n < OUTLIER_MIN_N:
            continue
        m = total / n
        var = max(total_sq / n - m * m, 0.0) * n / (n - 1)
        mine = arms == arm
        mean[mine], sd[mine] = m, math.sqrt(var)
    with np.errstate(invalid="ignore"):
        far = np.abs(values - mean) > OUTLIER_SDS * sd
    return np.flatnonzero(far & np.isfinite(sd))


def warn_outliers(values: np.ndarray, ids: np.ndarray, arms: np.ndarray,
                  moments: Mapping[int, tuple]) -> None:
    """One :class:`OutlierWarning` naming the first outlier of the call and how many."""
    far = outliers(values, arms, moments)
    if not far.size:
        return
    i = int(far[0])
    n, total, total_sq = moments[int(arms[i])]
    m = total / n
    sd = math.sqrt(max(total_sq / n - m * m, 0.0) * n / (n - 1))
    warnings.warn(OutlierWarning(
        f"rewards: unit {int(ids[i])} got {values[i]:g}, more than {OUTLIER_SDS:g} standard "
        f"deviations from its arm's mean ({m:g} ± {sd:g} over {int(n)} counted rewards)"
        + (f"; {far.size} such rewards in this call" if far.size > 1 else "")
        + ". It is recorded; if it is wrong, Experiment.correct(units, rewards, reason=...) "
          "records the right value beside it"), stacklevel=5)
