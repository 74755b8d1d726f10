"""Regression adjustment on several covariates: CUPED (:mod:`.adjusted`) with a
vector of pre-experiment covariates, from running sums.

Each arm's mean of y − θᵀ(x − x̄) is compared, x ∈ R^p the unit's covariates (fixed before
assignment, so E[x] is the same in every arm), x̄ their pooled mean and θ = C_xx⁻¹ C_xy the
pooled *within-arm* least-squares coefficients (C the within-arm centred sums, added over the
arms; a treatment effect on y does not enter θ). This is Deng, Xu, Kohavi & Walker (2013)'s
CUPED with the multivariate control variate of their §3.3, and the regression-adjusted
estimator of Lin (2013, "Agnostic notes on regression adjustments to experimental data")
with a common slope; its variance per unit is that of the within-arm residuals,
(C_yy − 2θᵀC_xy + θᵀC_xxθ)/(n − 1) in each arm, which is (1 − R²) times the plain variance, R²
the within-arm coefficient of determination. θ is re-estimated at every look (a plug-in, as
for one covariate: Lindon, Ham, Tingley & Bojinov 2022), and the differences go through the
asymptotic sequence (:func:`banditkit.live.readout.sequences.asymptotic_from`): valid at every look
to the normal approximation, under any allocation predictable from the past.

The sums per arm: n, Σy, Σy², Σx (p), Σxxᵀ (p × p), Σxy (p): O(p²) per arm, whatever the
units. Cost in width against one covariate: none when the others add nothing but their
estimation (p/n to the variance); a gain of √((1 − R²_p)/(1 − ρ²)) when they do.
Where it lives: a live experiment stores one covariate per unit (``covariates=``); this module
takes the sums of several (:func:`sums_of`), for readouts computed from a warehouse table, and
is what a multi-covariate ``Experiment`` would call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ExperimentError
from .adjusted import Estimates
from .sequences import asymptotic_from

__all__ = ["CovariateSums", "adjusted_difference", "regression_adjusted", "sums_of"]


@dataclass(frozen=True)
class CovariateSums:
    """Per arm (arrays over the K arms first): ``n`` (K), ``y`` Σy (K), ``yy`` Σy² (K), ``x``
    Σx (K, p), ``xx`` Σxxᵀ (K, p, p), ``xy`` Σxy (K, p)."""

    n: np.ndarray
    y: np.ndarray
    yy: np.ndarray
    x: np.ndarray
    xx: np.ndarray
    xy: np.ndarray


def sums_of(y: np.ndarray, X: np.ndarray, arm: np.ndarray, n_arms: int) -> CovariateSums:
    """The sums of rewards ``y`` (n), covariates ``X`` (n, p) and arm indices ``arm`` (n),
    refused by name unless finite and shaped so."""
    y, X, arm = np.asarray(y, dtype=float), np.asarray(X, dtype=float), np.asarray(arm)
    if X.ndim == 1:
        X = X[:, None]
    if y.ndim != 1 or X.ndim != 2 or X.shape[0] != y.size or arm.shape != y.shape:
        raise ExperimentError(f"y, X and arm must be one row per unit: y {y.shape}, X "
                              f"{X.shape}, arm {arm.shape}")
    if not (np.isfinite(y).all() and np.isfinite(X).all()):
        raise ExperimentError("y and X must be finite")
    if arm.dtype.kind not in "iu" or arm.min(initial=0) < 0 or arm.max(initial=0) >= n_arms:
        raise ExperimentError(f"arm must be integers in [0, {n_arms})")
    p = X.shape[1]
    n = np.bincount(arm, minlength=n_arms).astype(float)
    out_x, out_xy = np.zeros((n_arms, p)), np.zeros((n_arms, p))
    out_xx = np.zeros((n_arms, p, p))
    for a in range(n_arms):
        mine = arm == a
        out_x[a], out_xy[a] = X[mine].sum(0), X[mine].T @ y[mine]
        out_xx[a] = X[mine].T @ X[mine]
    return CovariateSums(n, np.bincount(arm, y, n_arms), np.bincount(arm, y * y, n_arms),
                         out_x, out_xx, out_xy)


def regression_adjusted(s: CovariateSums) -> Estimates:
    """Each arm's adjusted mean and residual variance per unit (module docstring); ``theta``
    the pooled coefficients (p)."""
    n = s.n
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.maximum(n, 1.0)
        cxx = s.xx - s.x[:, :, None] * s.x[:, None, :] / safe[:, None, None]
        cxy = s.xy - s.x * (s.y / safe)[:, None]
        cyy = s.yy - s.y * s.y / safe
        theta = np.linalg.lstsq(cxx.sum(0), cxy.sum(0), rcond=None)[0]
        x_bar = s.x.sum(0) / n.sum()
        mean = s.y / n - (s.x / n[:, None] - x_bar) @ theta
        resid = cyy - 2 * cxy @ theta + np.einsum("i,aij,j->a", theta, cxx, theta)
        variance = np.maximum(resid, 0.0) / (n - 1)
    return Estimates(mean, variance, n, theta)


def adjusted_difference(s: CovariateSums, control: int, alpha: float = 0.05, *,
                        n_tune: float = 10_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each arm's adjusted difference to ``control`` and its asymptotic confidence sequence
    at α/(K − 1) (as ``status`` splits it): (diff, low, high), the control's entries NaN."""
    est = regression_adjusted(s)
    K = est.n.size
    d = est.mean - est.mean[control]
    v = est.variance / est.n + est.variance[control] / est.n[control]
    low, high = asymptotic_from(d, v, est.n, control, alpha / max(K - 1, 1), n_tune=n_tune)
    d = d.copy()
    d[control] = np.nan
    return d, low, high
