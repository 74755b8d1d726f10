"""Rewards worth a second look: the outlier warning at the outcomes part's entry.

Values that cannot be summed safely (beyond ±:data:`~banditkit.live.inputs.MAX_MAGNITUDE`)
are refused by every entry that stores one (:func:`banditkit.live.inputs.check_summable`).
A value within that bound can still be a mistake (revenue in cents in a metric of dollars, a
latency in nanoseconds): it is summed correctly but moves the arm's mean and variance for the
rest of the experiment. ``record`` warns (:class:`OutlierWarning`, a Python warning: the call
still records) when a reward of an experiment without a declared range lies more than
:data:`OUTLIER_SDS` standard deviations from its arm's mean, both taken over the arm's
counted rewards before the call (at least :data:`OUTLIER_MIN_N` of them; the moments are
:data:`banditkit.live.store.reads.PREFIX_MOMENTS`, read with the call's first round trip).
By Chebyshev's inequality at most 1/50² = 0.04% of any distribution's values lie that far out
(far fewer for the usual metrics: 0.0023% of a lognormal(0, 1.5), one value in 43,000; at 20
standard deviations the revenue example of docs/experiment.md warned on 4 values of a day's
4,000), so a warning is rare and worth reading. A wrong value is then fixed by a recorded
correction (:mod:`banditkit.live.outcomes.corrections`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

__all__ = ["OUTLIER_MIN_N", "OUTLIER_SDS", "OutlierWarning", "outliers", "warn_outliers"]

#: A reward more than this many of its arm's standard deviations from the arm's mean is an
#: outlier (warned about, still recorded).
OUTLIER_SDS = 50.0

#: The arm's counted rewards needed before its mean and deviation judge a new one.
OUTLIER_MIN_N = 30


class OutlierWarning(UserWarning):
    """A recorded reward far from its arm's other rewards (:data:`OUTLIER_SDS`)."""


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
                  moments: Mapping[int, tuple], stacklevel: int = 2) -> None:
    """One :class:`OutlierWarning` naming the first outlier of the call and how many;
    ``stacklevel`` as :func:`warnings.warn` counts it from the caller of this function (the
    warning points at the user's ``record`` line)."""
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
          "records the right value beside it"), stacklevel=stacklevel + 1)
