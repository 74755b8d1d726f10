"""Replicable mean estimation and replicable statistical queries (randomised-offset rounding).

The estimator of Impagliazzo, Lei, Pitassi and Sorrell (2022, "Reproducibility in learning",
Theorem 2.3), used as ``ReprMeanEstimation`` by Esfandiari et al. (ICLR 2023, "Replicable
bandits", Proposition 2) and written out explicitly as ``RepMean`` (Algorithm 1) by Bollini et
al. ("Replicable constrained bandits"):

1. compute the sample mean r̄ of n samples in [0, 1];
2. cut the line into cells of width α whose boundaries are shifted by a random offset
   α_off ~ Uni[0, α] drawn from the *shared* internal randomness ξ;
3. return the centre of the cell holding r̄ (clipped to [0, 1]).

Two executions with the same ξ and independent samples have sample means within 2τ' of each
other (τ' the Hoeffding radius) with probability ≥ 1 − 2δ; they then return different cells
only if a boundary falls between them, which the random offset makes happen with probability
≤ 2τ'/α. Choosing α = 2τ'/(ρ − 2δ) gives non-replication ≤ ρ and error ≤ τ' + α/2.

Closed form of the rounding (with u ∈ [0, 1) the unit offset, α_off = u α)::

    z = floor((r̄ − α_off) / α),        estimate = clip(α_off + (z + 1/2) α, 0, 1).

Deviation from RepMean's pseudo-code (documented, both harmless to the guarantees):

* RepMean's Line 2 reads α = 2δ/(1 + ρ − 2δ); with δ there the width would not depend on the
  precision at all. The derivation above (and Impagliazzo et al.'s rSTAT) gives
  α = 2ε/(1 + ρ − 2δ) for a target precision ε, which is what we use.
* RepMean's Line 6 takes z = ⌊max{(r̄ − α_off)/α, 0}⌋, which merges the partial first cell
  [0, α_off) into the next one and can put the answer 1.5 α away from r̄. We keep it as a cell of
  its own (its centre clipped into [0, 1]), so the error is at most α/2 + τ' everywhere. Merging or
  not merging cells is a deterministic function of the cell, so replicability is unchanged.

Only the sufficient statistics (sum, count) are needed, so an estimate after a batch of any size
costs O(1); :func:`replicable_means` handles many arms (one offset each) in one vectorised call.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import check_in_unit_interval, check_positive_int, check_probability

__all__ = [
    "grid_round",
    "grid_width",
    "hoeffding_radius",
    "prop2_samples",
    "replicable_mean",
    "replicable_means",
    "replicable_sq",
    "repmean_precision",
    "repmean_samples",
]


def _check_rho_delta(rho: float, delta: float) -> tuple[float, float]:
    rho = check_probability(rho, "rho", open_high=False)
    delta = check_probability(delta, "delta")
    if not rho > 2 * delta:
        raise ValueError(f"rho must exceed 2*delta for replicable mean estimation "
                         f"(Lemma 2.5), got rho={rho}, delta={delta}")
    return rho, delta


def hoeffding_radius(n: int | np.ndarray, delta: float) -> np.ndarray | float:
    """τ' = sqrt(ln(2/δ) / (2n)): |r̄ − r| ≤ τ' with probability ≥ 1 − δ for n samples in [0, 1]."""
    return np.sqrt(math.log(2.0 / delta) / (2.0 * np.asarray(n, dtype=float)))


def repmean_samples(precision: float, delta: float, rho: float) -> int:
    """Samples sufficient for a ρ-replicable estimate within ``precision`` w.p. ≥ 1 − δ.

    Lemma 2.5 of Bollini et al. (Impagliazzo et al. 2022, Theorem 2.3):
    n = 2 ln(2/δ) / (ε² (ρ − 2δ)²).
    """
    rho, delta = _check_rho_delta(rho, delta)
    if not (np.isfinite(precision) and precision > 0):
        raise ValueError(f"precision must be a positive number, got {precision}")
    return math.ceil(2.0 * math.log(2.0 / delta) / (precision**2 * (rho - 2 * delta) ** 2))


def repmean_precision(n: int | np.ndarray, delta: float, rho: float) -> np.ndarray | float:
    """Precision ε = sqrt(2 ln(2/δ) / (n (ρ − 2δ)²)) of the ρ-replicable estimate from n samples
    (Lemma 2.5 of Bollini et al., solved for ε)."""
    rho, delta = _check_rho_delta(rho, delta)
    n_arr = np.asarray(n, dtype=float)
    if np.any(n_arr < 1):
        raise ValueError("n must be >= 1")
    out = np.sqrt(2.0 * math.log(2.0 / delta) / (n_arr * (rho - 2 * delta) ** 2))
    return float(out) if out.ndim == 0 else out


def prop2_samples(precision: float, delta: float, rho: float, constant: float = 1.0) -> int:
    """Proposition 2 of Esfandiari et al.: C · ln(1/δ) / (τ² (ρ − δ)²) samples.

    The proposition is stated up to an unspecified absolute constant C (``constant``); Lemma 2.5
    (:func:`repmean_samples`) is the explicit version used by the estimator here.
    """
    rho = check_probability(rho, "rho", open_high=False)
    delta = check_probability(delta, "delta")
    if not rho > delta:
        raise ValueError(f"rho must exceed delta in Proposition 2, got rho={rho}, delta={delta}")
    if not (np.isfinite(precision) and precision > 0):
        raise ValueError(f"precision must be a positive number, got {precision}")
    return math.ceil(constant * math.log(1.0 / delta) / (precision**2 * (rho - delta) ** 2))


def grid_width(n: int | np.ndarray, delta: float, rho: float,
               precision: float | None = None) -> np.ndarray | float:
    """Cell width α of the rounding grid.

    With a target ``precision`` ε: α = 2ε/(1 + ρ − 2δ) (RepMean, Line 2, with ε for the typo δ).
    Without one, ε is the precision Lemma 2.5 guarantees for ``n`` samples
    (:func:`repmean_precision`).
    """
    rho, delta = _check_rho_delta(rho, delta)
    eps = repmean_precision(n, delta, rho) if precision is None else precision
    alpha = 2.0 * np.asarray(eps, dtype=float) / (1.0 + rho - 2.0 * delta)
    return float(alpha) if alpha.ndim == 0 else alpha


def _unit_offsets(xi: np.random.Generator | float | np.ndarray, size: int) -> np.ndarray:
    """Offsets u ∈ [0, 1) (fractions of the cell width), from ξ or given explicitly."""
    if isinstance(xi, np.random.Generator):
        return xi.random(size)
    u = np.asarray(xi, dtype=float)
    if u.ndim == 0:
        u = np.full(size, float(u))
    if u.shape != (size,):
        raise ValueError(f"offsets must be a scalar or have one entry per estimate ({size}), "
                         f"got shape {u.shape}")
    if not np.all((u >= 0) & (u < 1)):
        raise ValueError("offsets must lie in [0, 1) (fractions of the cell width)")
    return u


def replicable_means(sums: np.ndarray, counts: np.ndarray, rho: float, delta: float,
                     xi: np.random.Generator | float | np.ndarray, *,
                     precision: float | np.ndarray | None = None) -> np.ndarray:
    """ρ-replicable estimates of several means from their sufficient statistics.

    Parameters
    ----------
    sums, counts : arrays, shape (m,)
        Sum and number of the samples (each in [0, 1]) of each of the m means; counts ≥ 1.
    rho : float in (0, 1]
        Replicability: two executions with the same ``xi`` and independent samples give a
        different estimate (of a given mean) with probability ≤ ρ.
    delta : float in (0, 1) with ρ > 2δ
        Each estimate is within its precision of the true mean with probability ≥ 1 − δ.
    xi : Generator, or unit offsets in [0, 1)
        The shared internal randomness: a ``Generator`` (one uniform is drawn per estimate, in
        order), or the unit offsets u themselves (α_off = u α).
    precision : float or array, optional
        Target precision ε per estimate; requires ``counts`` ≥ :func:`repmean_samples`. By default
        the precision Lemma 2.5 guarantees for the given counts.

    Returns
    -------
    array, shape (m,)
        The estimates, each the centre of a grid cell, in [0, 1].
    """
    rho, delta = _check_rho_delta(rho, delta)
    sums = np.asarray(sums, dtype=float).reshape(-1)
    counts = np.asarray(counts).reshape(-1)
    if sums.shape != counts.shape:
        raise ValueError(f"sums and counts must have the same length, got {sums.size} and "
                         f"{counts.size}")
    if counts.size and (not np.issubdtype(counts.dtype, np.integer) and
                        not np.all(counts == np.round(counts))):
        raise TypeError("counts must be integers")
    counts = counts.astype(np.int64)
    if np.any(counts < 1):
        raise ValueError("counts must be >= 1 (n >= 1 samples per estimate)")
    slack = 1e-9 * counts  # float sums of per-pull rewards in [0, 1] may round past count
    if not np.all(np.isfinite(sums)) or np.any(sums < -slack) or np.any(sums > counts + slack):
        raise ValueError("samples for replicable mean estimation must lie in [0, 1]: every sum "
                         "must lie in [0, count]")
    if precision is None:
        eps = np.asarray(repmean_precision(counts, delta, rho), dtype=float).reshape(-1)
    else:
        eps = np.broadcast_to(np.asarray(precision, dtype=float), counts.shape)
        if not np.all(np.isfinite(eps) & (eps > 0)):
            raise ValueError("precision must be positive")
        need = np.ceil(2.0 * math.log(2.0 / delta) / (eps**2 * (rho - 2 * delta) ** 2))
        if np.any(counts < need):
            raise ValueError(f"too few samples for precision {eps.min():.3g} at rho={rho}, "
                             f"delta={delta}: need >= {int(need.max())} (Lemma 2.5), got "
                             f"{int(counts.min())}")
    alpha = 2.0 * eps / (1.0 + rho - 2.0 * delta)
    u = _unit_offsets(xi, counts.size)
    return np.clip(grid_round(sums / counts, alpha, u), 0.0, 1.0)


def grid_round(values: np.ndarray | float, widths: np.ndarray | float,
               offsets: np.ndarray | float) -> np.ndarray:
    """Centre of the grid cell holding each value: cells of width α (``widths``) whose
    boundaries are shifted by u·α, u ∈ [0, 1) the unit ``offsets`` (from ξ).

    The rounding of :func:`replicable_means` (which clips the result to [0, 1]); used unclipped
    for statistics that are not means of [0, 1] samples (Algorithm 3's least-squares values in
    :mod:`banditkit.policies.commit`). Two values v, v' land in different cells with
    probability min(|v − v'|/α, 1) over the offset.
    """
    alpha = np.asarray(widths, dtype=float)
    off = np.asarray(offsets, dtype=float) * alpha
    return off + (np.floor((np.asarray(values, dtype=float) - off) / alpha) + 0.5) * alpha


def replicable_mean(samples: np.ndarray | None = None, rho: float = 0.1, delta: float = 0.01,
                    xi: np.random.Generator | float | None = None, *,
                    total: float | None = None, count: int | None = None,
                    precision: float | None = None) -> float:
    """ρ-replicable estimate of one mean (RepMean, Algorithm 1 of Bollini et al.).

    Pass the ``samples`` (each in [0, 1]) or their sufficient statistics ``total`` and ``count``.
    See :func:`replicable_means` for the other parameters; ``xi`` is required.
    """
    if xi is None:
        raise TypeError("xi (a Generator, or the unit offset in [0, 1)) is required")
    if samples is not None:
        if total is not None or count is not None:
            raise TypeError("pass either samples or (total, count), not both")
        s = check_in_unit_interval(samples, "samples")
        total, count = float(s.sum()), int(s.size)
    elif total is None or count is None:
        raise TypeError("pass samples, or both total and count")
    else:
        count = check_positive_int(count, "count")
    return float(replicable_means(np.array([total]), np.array([count]), rho, delta, xi,
                                  precision=precision)[0])


def replicable_sq(values: np.ndarray, rho: float, delta: float,
                  xi: np.random.Generator | float, *, bounds: tuple[float, float] = (0.0, 1.0),
                  precision: float | None = None) -> float:
    """ρ-replicable statistical query: E[φ(x)] for a bounded φ, from the values φ(x_1..x_n).

    The values are rescaled from ``bounds`` = (lo, hi) to [0, 1], estimated with
    :func:`replicable_means`, and mapped back; ``precision`` is in the original units.
    Values outside ``bounds`` are refused.
    """
    lo, hi = (float(b) for b in bounds)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"bounds must be finite with lo < hi, got {bounds}")
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.size == 0:
        raise ValueError("values must not be empty")
    if not np.all(np.isfinite(v)) or np.any(v < lo) or np.any(v > hi):
        raise ValueError(f"values of the statistical query must lie in bounds [{lo}, {hi}]")
    scaled = (v - lo) / (hi - lo)
    eps = None if precision is None else precision / (hi - lo)
    est = replicable_means(np.array([scaled.sum()]), np.array([v.size]), rho, delta, xi,
                           precision=eps)[0]
    return float(lo + (hi - lo) * est)
