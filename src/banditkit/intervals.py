"""Confidence intervals shared by the reports (:mod:`banditkit.experiments.results`) and the
live experiment's status (:mod:`banditkit.live`)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

# scipy is imported where a Student-t quantile is needed, not with this module: a live
# experiment's status with 0/1 rewards needs only the normal quantile (the standard library's),
# and scipy.stats cost every CLI call about a second (tests/test_startup.py).

__all__ = ["mean_interval", "newcombe_difference", "student_interval", "wilson_interval"]


def mean_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, standard error and Student-t ``level`` interval of ``values`` (NaNs ignored).

    With one value the standard error and interval are NaN (no spread can be estimated).
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return (np.nan,) * 4
    return student_interval(n, float(x.mean()), float(x.std(ddof=1)) if n > 1 else np.nan,
                            level)


def student_interval(n: int, mean: float, sd: float, level: float = 0.95
                     ) -> tuple[float, float, float, float]:
    """Mean, standard error and Student-t ``level`` interval from a sample's size, mean and
    standard deviation (ddof 1): :func:`mean_interval` from sufficient statistics."""
    if n == 0:
        return (np.nan,) * 4
    if n == 1:
        return mean, np.nan, np.nan, np.nan
    se = sd / float(np.sqrt(n))
    from scipy.special import stdtrit  # the Student-t quantile (what stats.t.ppf calls)

    half = float(stdtrit(n - 1, 0.5 + level / 2)) * se
    return mean, se, mean - half, mean + half


def wilson_interval(successes: int | np.ndarray, n: int | np.ndarray, level: float = 0.95
                    ) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion (sensible at 0 or n successes, unlike mean ± t·se).

    Elementwise on arrays (NaN where n = 0); floats for scalar input.
    """
    z = NormalDist().inv_cdf(0.5 + level / 2)  # scipy's norm.ppf to within 1e-15
    k, n = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(n, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # The interval always contains p; rounding must not push a bound past it at p = 0 or 1.
    low = np.where(n > 0, np.minimum(p, np.maximum(0.0, centre - half)), np.nan)
    high = np.where(n > 0, np.maximum(p, np.minimum(1.0, centre + half)), np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def newcombe_difference(k1: int | np.ndarray, n1: int | np.ndarray, k2: int | np.ndarray,
                        n2: int | np.ndarray, level: float = 0.95
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``p1 − p2`` for proportions ``k1/n1`` and ``k2/n2`` with Newcombe's ``level`` interval
    (his method 10: built from the two Wilson intervals; sensible at 0 and 1, unlike
    ``diff ± z·se``), elementwise. Returns ``(diff, lo, hi)``; NaN where a sample is empty.

    Newcombe, "Interval estimation for the difference between independent proportions",
    Statistics in Medicine 17 (1998).
    """
    k1, n1, k2, n2 = (np.asarray(v, dtype=float) for v in (k1, n1, k2, n2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, level)
    l2, u2 = wilson_interval(k2, n2, level)
    diff = p1 - p2
    lo = diff - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = diff + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return diff, lo, hi
