"""Confidence intervals shared by the reports (:mod:`banditkit.experiments.results`) and the
live experiment's status (:mod:`banditkit.live`)."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["mean_interval", "wilson_interval"]


def mean_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, standard error and Student-t ``level`` interval of ``values`` (NaNs ignored).

    With one value the standard error and interval are NaN (no spread can be estimated).
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return (np.nan,) * 4
    mean = float(x.mean())
    if n == 1:
        return mean, np.nan, np.nan, np.nan
    se = float(x.std(ddof=1) / np.sqrt(n))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * se
    return mean, se, mean - half, mean + half


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (sensible at 0 or n successes, unlike mean ± t·se)."""
    if n == 0:
        return np.nan, np.nan
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # The interval always contains p; rounding must not push a bound past it at p = 0 or 1.
    return float(min(p, max(0.0, centre - half))), float(max(p, min(1.0, centre + half)))
