"""Confidence intervals shared by the reports (:mod:`banditkit.experiments.results`) and the
live experiment's status (:mod:`banditkit.live`)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

# scipy is imported where a Student-t quantile is needed, not with this module: a live
# experiment's status with 0/1 rewards needs only the normal quantile (the standard library's),
# and scipy.stats cost every CLI call about a second (tests/test_startup.py).

__all__ = ["mean_interval", "student_interval", "wilson_interval"]


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


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (sensible at 0 or n successes, unlike mean ± t·se)."""
    if n == 0:
        return np.nan, np.nan
    z = NormalDist().inv_cdf(0.5 + level / 2)  # scipy's norm.ppf to within 1e-15
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # The interval always contains p; rounding must not push a bound past it at p = 0 or 1.
    return float(min(p, max(0.0, centre - half))), float(max(p, min(1.0, centre + half)))
