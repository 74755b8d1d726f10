"""Quantile metrics (p90 latency): an anytime-valid confidence sequence for one arm's
p-quantile and for the difference of two arms' p-quantiles, exact for every n.

The construction
----------------
Let q* be arm a's p-quantile (a continuous distribution: F(q*) = p). For the true q*, the
indicators 1{x_i ≤ q*} of the arm's rewards in assignment order are Bernoulli(p) given
everything before them — however the design allocated the units, since the allocation is
decided before the reward (as for every sequence of :mod:`.sequences`). So with
k_n(q) = #{i ≤ n : x_i ≤ q}, the conjugate Beta(a, b) mixture of likelihood ratios

    M_n(q) = B(a + k_n, b + n − k_n) / (B(a, b) · p^k_n · (1 − p)^(n − k_n))

is, at q = q*, a nonnegative martingale of mean 1 (Robbins' mixture; Howard, Ramdas, McAuliffe
& Sekhon 2021, §3), and by Ville's inequality P(∃n: M_n(q*) ≥ 1/α) ≤ α. The sequence is every
q whose M_n(q) < 1/α: it holds q* at every n together with probability 1 − α. log M_n is
convex in k, so the accepted counts are an interval [k⁻, k⁺], and the set of q is the interval
between order statistics [x_(k⁻), x_(k⁺+1)) (x_(0) = −∞, x_(n+1) = +∞). The mixture is taken
Beta(a, b) with mean p and a + b = ``strength`` (default 10): it concentrates near p, where the
count of the true quantile lies. This is the quantile analogue of Howard & Ramdas (2022,
*Sequential estimation of quantiles with applications to A/B-testing and best-arm
identification*, Bernoulli 28(3)), who give a uniform-in-p band; one p is narrower.

A difference of two arms' p-quantiles (q*_a − q*_c) lies in [L_a − U_c, U_a − L_c] whenever
both arms' sequences hold: each at α/2 (K − 1 arms against one control: the caller splits α).

Cost: the rewards of both arms (order statistics): O(n log n) per look, where a mean costs
O(1) from running sums; in width, the two-arm union costs the log(2/α) of a two-sided bound on
each arm.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ExperimentError

__all__ = ["check_quantile", "quantile_difference", "quantile_frame",
           "quantile_sequence"]


def _accepted(n: int, p: float, alpha: float, strength: float) -> tuple[int, int]:
    """The counts k ∈ [0, n] with log M_n(k) < log(1/α): an interval (log M is convex in k,
    smallest near n·p), its ends found by bisection on each side (O(log n))."""
    a, b = p * strength, (1 - p) * strength
    lp, lq, level = math.log(p), math.log1p(-p), math.log(1 / alpha)
    base = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)

    def log_m(k: int) -> float:
        return (math.lgamma(a + k) + math.lgamma(b + n - k) - math.lgamma(a + b + n) - base
                - k * lp - (n - k) * lq)

    # log M's minimum is near n·p (its slope ψ(a + k) − ψ(b + n − k) − log(p/(1 − p)) is 0
    # there to within 1/2), where M < 1 < 1/α (M averages 1 over k ~ Binomial(n, p))
    mid = min(max(round(n * p), 0), n)
    if log_m(mid) >= level:  # not seen; a scan, rather than a wrong interval
        inside = [k for k in range(n + 1) if log_m(k) < level]
        return inside[0], inside[-1]

    def edge(inside: int, outside: int) -> int:
        while abs(outside - inside) > 1:
            half = (inside + outside) // 2
            inside, outside = (half, outside) if log_m(half) < level else (inside, half)
        return inside

    low = 0 if log_m(0) < level else edge(mid, 0)
    high = n if log_m(n) < level else edge(mid, n)
    return low, high


def _check(p: object, alpha: object, strength: object) -> tuple[float, float, float]:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise ExperimentError(f"p must be a number in (0, 1) (0.9 for the 90th percentile), "
                              f"got {p!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ExperimentError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if isinstance(strength, bool) or not isinstance(strength, (int, float)) \
            or not strength > 0:
        raise ExperimentError(f"strength must be a number > 0 (the Beta mixture's a + b), got "
                              f"{strength!r}")
    return float(p), float(alpha), float(strength)


def quantile_sequence(values: np.ndarray, p: float, alpha: float = 0.05, *,
                      strength: float = 10.0) -> tuple[float, float, float]:
    """The estimate and anytime-valid interval of the p-quantile of one arm's ``values``
    (module docstring): (x̂_p, low, high), with low/high ±inf while the data cannot bound it."""
    p, alpha, strength = _check(p, alpha, strength)
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        return math.nan, -math.inf, math.inf
    k_lo, k_hi = _accepted(n, p, alpha, strength)
    low = -math.inf if k_lo == 0 else float(x[k_lo - 1])
    high = math.inf if k_hi >= n else float(x[k_hi])
    return float(np.quantile(x, p)), low, high


def quantile_difference(arm: np.ndarray, control: np.ndarray, p: float, alpha: float = 0.05,
                        *, strength: float = 10.0) -> tuple[float, float, float]:
    """The difference of two arms' p-quantiles (arm − control), its estimate and anytime-valid
    interval from each arm's sequence at α/2 (module docstring)."""
    qa, la, ha = quantile_sequence(arm, p, alpha / 2, strength=strength)
    qc, lc, hc = quantile_sequence(control, p, alpha / 2, strength=strength)
    return qa - qc, la - hc, ha - lc


def check_quantile(p: object, alpha: object) -> tuple[float, float]:
    """``Experiment.quantiles``' arguments checked before any work."""
    p, alpha, _ = _check(p, alpha, 10.0)
    return p, alpha


def quantile_frame(names: list[str], values: list[np.ndarray], control: int, p: float,
                   alpha: float) -> Any:
    """Each arm's p-quantile of its counted rewards ``values`` with its anytime-valid interval
    at α/K, and its difference to the control with the interval at α/(K − 1) (each arm's
    sequence at half of it; module docstring): ``Experiment.quantiles``' frame."""
    import pandas as pd

    K = len(names)
    rows_out = []
    for a in range(K):
        q, lo, hi = quantile_sequence(values[a], p, alpha / K)
        if a == control:
            d = dlo = dhi = math.nan
        else:
            d, dlo, dhi = quantile_difference(values[a], values[control], p,
                                              alpha / max(K - 1, 1))
        rows_out.append((values[a].size, q, lo, hi, d, dlo, dhi))
    frame = pd.DataFrame(rows_out, columns=["counted", "quantile", "low", "high", "diff",
                                            "diff_low", "diff_high"],
                         index=pd.Index(names, name="arm"))
    frame.attrs.update(p=p, alpha=alpha)
    return frame
