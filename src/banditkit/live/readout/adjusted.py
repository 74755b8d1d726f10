"""Continuous metrics beyond a plain mean: CUPED and ratio metrics, from running sums.

Both give, per arm, an estimate and its variance per unit from O(1) running sums kept in the
resolved prefix (:mod:`banditkit.live.outcomes.resolved_prefix`: Σx, Σx², Σxy of a pre-experiment
covariate x, Σd, Σd², Σdy of a denominator d, y the reward), so ``status`` stays O(arms). The
differences to the control then go through the asymptotic confidence sequence
(:func:`banditkit.live.readout.sequences.asymptotic_from`, Waudby-Smith, Arbour, Sinha, Kennedy &
Ramdas 2024, Thm 2.2) or the mSPRT (:func:`banditkit.live.readout.sequences.msprt_from`), which need
only an asymptotically normal estimate and its plug-in variance.

CUPED (Deng, Xu, Kohavi & Walker 2013, "Improving the sensitivity of online controlled
experiments by utilizing pre-experiment data", WSDM, eq. (3)–(4))
    Each arm's mean of y − θ(x − x̄), x̄ the pooled mean of x, θ = Σ_a Ĉov_a(x, y) / Σ_a
    V̂ar_a(x) pooled *within* arms (so a treatment effect on y does not enter θ). With x fixed
    before assignment, E[x] is the same in every arm, so the adjusted difference estimates the
    same μ_a − μ_c with variance (1 − ρ²) times the plain one (ρ the within-arm correlation of
    x and y). θ is re-estimated at every look (a plug-in, as the asymptotic sequence's σ̂ is):
    consistent, so the sequence keeps its asymptotic guarantee (the regression-adjusted
    anytime-valid inference of Lindon, Ham, Tingley & Bojinov 2022, "Anytime-valid linear
    models and regression adjusted causal inference in randomized experiments", makes the same
    plug-in). Per-unit variance of arm a: (C_yy − 2θ C_xy + θ² C_xx)/(n − 1) with C the
    within-arm centred sums.
Ratio metrics (Deng, Knoblich & Lu 2018, "Applying the delta method in metric analytics",
KDD, §3)
    Per arm R = Σy / Σd (revenue per order: y a unit's revenue, d its orders); the unit is the
    randomisation unit, so units are i.i.d. but (y, d) pairs are not. First-order Taylor
    expansion: R̂ − R ≈ mean(y − R d)/d̄, so R̂'s variance per unit is
    Σ(y − R̂ d)²/((n − 1) d̄²) = (Σy² − 2R̂ Σdy + R̂² Σd²)/((n − 1) d̄²).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .sums import ArmSums
    from .verdict_spec import VerdictSpec

__all__ = ["Estimates", "adjusted_estimates", "cuped", "ratio"]


@dataclass(frozen=True)
class Estimates:
    """Per arm (arrays shaped as the sums): the estimate, its variance per unit (so var/n is
    the estimate's variance) and the units; ``theta`` (CUPED only, one per leading index)."""

    mean: np.ndarray
    variance: np.ndarray
    n: np.ndarray
    theta: np.ndarray | None = None


def cuped(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, x: np.ndarray,
          x_sq: np.ndarray, xy: np.ndarray) -> Estimates:
    """CUPED-adjusted means (module docstring; Deng et al. 2013, eq. (3)–(4)), elementwise over
    leading axes, arms on the last axis.

    Parameters
    ----------
    n, total, total_sq : ndarray
        Per arm: units, Σy, Σy².
    x, x_sq, xy : ndarray
        Per arm: Σx, Σx², Σxy of the units' covariates.

    Returns
    -------
    Estimates
        Adjusted means, variances per unit, units, and the pooled θ.
    """
    n, S, Q, X, XX, XY = (np.asarray(a, dtype=float) for a in (n, total, total_sq, x, x_sq, xy))
    with np.errstate(divide="ignore", invalid="ignore"):
        cxx = np.where(n > 0, XX - X * X / n, 0.0)
        cxy = np.where(n > 0, XY - X * S / n, 0.0)
        cyy = np.where(n > 0, Q - S * S / n, 0.0)
        pooled_xx = cxx.sum(axis=-1, keepdims=True)
        theta = np.where(pooled_xx > 0, cxy.sum(axis=-1, keepdims=True) / pooled_xx, 0.0)
        x_bar = X.sum(axis=-1, keepdims=True) / n.sum(axis=-1, keepdims=True)
        mean = S / n - theta * (X / n - x_bar)
        variance = np.maximum(cyy - 2 * theta * cxy + theta * theta * cxx, 0.0) / (n - 1)
    return Estimates(mean, variance, n, theta[..., 0])


def ratio(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, d: np.ndarray,
          d_sq: np.ndarray, dy: np.ndarray) -> Estimates:
    """Ratios of sums R = Σy/Σd per arm with their delta-method variances (module docstring;
    Deng, Knoblich & Lu 2018, §3), elementwise over leading axes; NaN where Σd = 0.

    Parameters
    ----------
    n, total, total_sq : ndarray
        Per arm: units, Σy, Σy².
    d, d_sq, dy : ndarray
        Per arm: Σd, Σd², Σdy of the units' denominators.
    """
    n, S, Q, D, DD, DY = (np.asarray(a, dtype=float) for a in (n, total, total_sq, d, d_sq, dy))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(D != 0, S / D, np.nan)
        d_bar = D / n
        variance = np.maximum(Q - 2 * r * DY + r * r * DD, 0.0) / ((n - 1) * d_bar * d_bar)
    return Estimates(r, variance, n)


def adjusted_estimates(sums: ArmSums, spec: VerdictSpec) -> Estimates:
    """The estimates ``spec`` declares (``cuped`` or ``ratio``) from ``sums.extra``."""
    if sums.extra is None:
        raise ValueError("CUPED and ratio metrics need the covariates' and denominators' sums "
                         "(ArmSums.extra)")
    e = np.asarray(sums.extra, dtype=float)
    if spec.cuped:
        return cuped(sums.n, sums.total, sums.total_sq, e[..., 0], e[..., 1], e[..., 2])
    return ratio(sums.n, sums.total, sums.total_sq, e[..., 3], e[..., 4], e[..., 5])
