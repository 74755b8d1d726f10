"""Relative lift: each arm's difference to the control as a share of the control's mean (what
GrowthBook shows by default: "+4.2%"), with an anytime-valid interval built from the two
sequences ``status`` already has.

The construction (exact, no approximation beyond the sequences' own)
--------------------------------------------------------------------
The lift of arm a is L = Δ/μ_c, Δ = μ_a − μ_c. ``status`` holds, at every look, a sequence on
the difference, [Δ⁻, Δ⁺] (:mod:`.sequences`: the exact plug-in by default), and
the control's own sequence [c⁻, c⁺] (level 1 − α/K). On the event that both cover — at every
look together, with probability at least 1 − (α_Δ + α/K), α_Δ the difference's share of α —
L lies in the image of the box [Δ⁻, Δ⁺] × [c⁻, c⁺] under (Δ, μ) ↦ Δ/μ, which for c⁻ > 0 is

    lower = Δ⁻/c⁻ if Δ⁻ < 0 else Δ⁻/c⁺,      upper = Δ⁺/c⁺ if Δ⁺ < 0 else Δ⁺/c⁻

(Δ/μ is monotone in μ > 0 with the sign of Δ). So the lift's interval is valid at every look,
under any allocation and however often one looks, exactly when the intervals it is built from
are: it inherits their guarantee (exact for the exact sequences, asymptotic for the normal
ones) at the cost of the control's α/K, which those intervals already spend — nothing more
is spent, and its verdict is the difference's (L > 0 ⇔ Δ > 0). When the control's lower end
is not above 0 (a control with few units, a metric whose mean may be ≤ 0), the interval is
unbounded on the side where μ_c → 0⁺ and NaN when c⁺ ≤ 0 (no positive control mean left:
a relative lift means nothing).

Why not the delta method: L̂ ± z·√(Var(Δ̂)/μ̂_c² + Δ̂²Var(μ̂_c)/μ̂_c⁴) at the difference's
sequence radius is narrower by the control's share of the width, but it is a first-order
approximation whose error does not shrink with looking, and it can exclude L when the control's
mean is poorly known (c⁻ near 0), which is when readers over-read a relative number. Its cost
here: the interval's width is (Δ⁺ − Δ⁻)/μ_c plus |L|·(c⁺ − c⁻)/μ_c to first order, i.e. the
difference's relative width plus the lift times the control's relative width (measured in
docs/experiment.md, "Relative lift").
"""

from __future__ import annotations

import numpy as np

__all__ = ["relative_lift"]


def relative_lift(mean: np.ndarray, low: np.ndarray, high: np.ndarray, diff: np.ndarray,
                  diff_low: np.ndarray, diff_high: np.ndarray, control: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lift Δ/μ_c of every arm and its interval (module docstring), elementwise over any
    leading axes; the last axis is the arms, ``control`` the control's index (its row NaN).

    Parameters
    ----------
    mean, low, high : ndarray
        Each arm's mean and its own interval (``status``'s ``mean``, ``low``, ``high``).
    diff, diff_low, diff_high : ndarray
        Each arm's difference to the control and its interval.
    control : int
        The control arm's index.

    Returns
    -------
    lift, lift_low, lift_high : ndarray
        Fractions (0.042 is +4.2%).
    """
    m_c = np.asarray(mean, dtype=float)[..., control, None]
    c_lo = np.asarray(low, dtype=float)[..., control, None]
    c_hi = np.asarray(high, dtype=float)[..., control, None]
    d = np.asarray(diff, dtype=float)
    d_lo = np.asarray(diff_low, dtype=float)
    d_hi = np.asarray(diff_high, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.where(m_c > 0, d / m_c, np.nan)
        # at μ → 0⁺ a nonzero Δ's ratio is unbounded: that end is infinite when c⁻ ≤ 0
        near_zero_lo = np.where(c_lo > 0, d_lo / c_lo, -np.inf)
        near_zero_hi = np.where(c_lo > 0, d_hi / c_lo, np.inf)
        lo = np.where(d_lo < 0, near_zero_lo, d_lo / c_hi)
        hi = np.where(d_hi < 0, d_hi / c_hi, near_zero_hi)
    defined = c_hi > 0  # else no positive control mean is left: the ratio means nothing
    lo, hi = np.where(defined, lo, np.nan), np.where(defined, hi, np.nan)
    lift, lo, hi = (np.broadcast_to(v, d.shape).copy() for v in (lift, lo, hi))
    for column in (lift, lo, hi):
        column[..., control] = np.nan
    return lift, lo, hi
