"""Least squares from per-arm sufficient statistics, the core set of a G-optimal design with the
effective-support fix, and the replicable least-squares estimator.

Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni and Velegkas, "Replicable Bandits", ICLR 2023:

* Lemma 7 (Lattimore & Szepesvári 2020, Note 21.3): a deterministic approximate G-optimal design
  with a small core set (its support). Here the design is ``banditkit.design.g_optimal``
  (Frank–Wolfe with away steps from a deterministic start, so its support stays small and two
  executions compute bit-identical designs).
* Lemma 8 (effective support, proof in Appendix F.1): every core-set arm of mass below x is
  mixed in, π ← (1 − x) π + x e_a, which multiplies g(π) = max_a ‖a‖²_{V(π)^-1} by at most
  (1 − x)^−m for m such arms. The paper takes x = c'/(d log d) with c' an unspecified constant
  chosen so that the factor is ≤ 2; we take the largest x with (1 − x)^−m ≤ 2, i.e.
  x = 1 − 2^(−1/m) (parameter ``min_mass`` to override), which is what the proof needs.
* Lemma 9 / Algorithm 4 ``ReplicableLSE`` (proof in Appendix F.2): each core-set arm's mean
  reward is estimated by a replicable statistical query with φ(x) = x (the randomised-offset
  rounding of :mod:`banditkit.estimation.replicable_mean`, on rewards rescaled from their known
  range to [0, 1]) at replicability ρ/|C| and confidence δ/(2|C|) (the union bound of the
  proof), and θ_SQ = V^-1 Σ_a a n_a v(a). Since the arms and counts are fixed in advance, two
  executions that agree on every v(a) return bit-identical θ_SQ.

Everything works from sums and counts per arm, so an estimate costs O(|C| d² + d³) whatever
the number of pulls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..design import design_value, g_optimal
from ..validation import check_arms, check_probability, check_range
from .least_squares import LeastSquares
from .replicable_mean import grid_width, hoeffding_radius, replicable_means

__all__ = [
    "CoreSet",
    "ReplicableLSEResult",
    "check_range",
    "core_set",
    "replicable_lse",
]


def _information(X: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """V = Σ_a n_a a aᵀ."""
    return (X * counts[:, None]).T @ X


def _solve_spd(V: np.ndarray, B: np.ndarray) -> np.ndarray:
    """V^-1 B for a symmetric positive definite V (Cholesky; refuses a singular V)."""
    try:
        L = np.linalg.cholesky(V)
    except np.linalg.LinAlgError:
        raise ValueError("the pulled arms do not span R^d: the least-squares information "
                         "matrix is singular") from None
    return np.linalg.solve(L.T, np.linalg.solve(L, B))


@dataclass(frozen=True, eq=False)
class CoreSet:
    """Core set of an approximate G-optimal design with Lemma 8's effective-support fix.

    Attributes
    ----------
    indices : array of int
        Rows of X in the core set (the support of the design), ascending.
    weights : array of float
        π̂ on the core set (sums to 1); every entry ≥ ``min_mass`` · (1 − min_mass)^m.
    value : float
        g(π̂) = max_{x ∈ X} ‖x‖²_{V(π̂)^-1}, certified ≤ 2 g(π) when ``min_mass`` is the default.
    design_value : float
        g(π) of the design before the fix (≤ d (1 + tol)).
    n_mixed : int
        Number m of arms whose mass was raised.
    min_mass : float
        The mixing mass x.
    """

    indices: np.ndarray
    weights: np.ndarray
    value: float
    design_value: float
    n_mixed: int
    min_mass: float

    @property
    def size(self) -> int:
        return int(self.indices.size)


def core_set(X: np.ndarray, *, tol: float = 0.01, min_mass: float | None = None) -> CoreSet:
    """Core set of the G-optimal design on the rows of ``X`` (Lemmas 7 and 8 of Esfandiari et al.).

    Parameters
    ----------
    X : array, shape (n, d)
        Arms; must span R^d.
    tol : float
        Relative tolerance of the design: g(π) ≤ d (1 + tol) (Lemma 7 asks for a 2-approximation,
        i.e. tol ≤ 1).
    min_mass : float in (0, 1), optional
        Mass x below which a core-set arm is mixed in (Lemma 8). Default: the largest x with
        (1 − x)^−m ≤ 2 for the m arms below x (the doubling Appendix F.1 allows).

    Returns
    -------
    CoreSet
        Deterministic: the same ``X`` gives bit-identical output.
    """
    X = check_arms(X, "X")
    design = g_optimal(X, tol=tol)
    idx = np.asarray(design.support, dtype=np.int64)
    pi = np.asarray(design.weights, dtype=float)[idx]
    if min_mass is None:
        # The fixed point x = 1 − 2^(−1/m(x)), m(x) = #{π(a) < x}: m only grows with x, so
        # iterate from m = 1 (at most |C| steps).
        m = 1
        while True:
            x = 1.0 - 2.0 ** (-1.0 / m)
            m_new = int(np.sum(pi < x))
            if m_new <= m:
                break
            m = m_new
    else:
        x = check_probability(min_mass, "min_mass")
    low = np.flatnonzero(pi < x)
    w = pi.copy()
    for j in low:  # ascending order: deterministic
        w *= 1.0 - x
        w[j] += x
    w /= w.sum()
    full = np.zeros(X.shape[0])
    full[idx] = w
    return CoreSet(indices=idx, weights=w, value=float(design_value(X, full)),
                   design_value=float(design.value), n_mixed=int(low.size), min_mass=float(x))


@dataclass(frozen=True, eq=False)
class ReplicableLSEResult:
    """Output of :func:`replicable_lse`.

    Attributes
    ----------
    theta : array, shape (d,)
        θ_SQ = V^-1 Σ_a a n_a v(a).
    values : array, shape (m,)
        v(a): the replicable estimate of each core-set arm's mean reward (original units).
    means : array, shape (m,)
        The empirical means S_a / n_a (not replicable; for diagnostics).
    radius : array, shape (m,)
        Per-arm bound on |v(a) − ⟨a, θ*⟩| holding jointly with probability ≥ 1 − δ/2: half the
        rounding cell plus the Hoeffding radius at δ/(2m), in original units.
    """

    theta: np.ndarray
    values: np.ndarray
    means: np.ndarray
    radius: np.ndarray
    X: np.ndarray
    counts: np.ndarray

    def error_bound(self, points: np.ndarray) -> np.ndarray:
        """Bound on |⟨x, θ_SQ − θ*⟩| for each row x of ``points``, jointly w.p. ≥ 1 − δ/2.

        θ_SQ − θ* = V^-1 Σ_a a n_a (v(a) − ⟨a, θ*⟩), so
        |⟨x, θ_SQ − θ*⟩| ≤ Σ_a n_a |xᵀ V^-1 a| · radius_a (the propagation of Appendix F.2).
        """
        P = np.atleast_2d(np.asarray(points, dtype=float))
        W = _solve_spd(_information(self.X, self.counts), self.X.T)  # V^-1 aᵀ, shape (d, m)
        return np.abs(P @ W) @ (self.counts * self.radius)


def replicable_lse(X: np.ndarray, counts: np.ndarray, sums: np.ndarray, *, rho: float,
                   delta: float, xi: np.random.Generator | np.ndarray,
                   bounds: tuple[float, float] = (0.0, 1.0),
                   precision: float | np.ndarray | None = None) -> ReplicableLSEResult:
    """ρ-replicable least squares (``ReplicableLSE`` of Algorithm 4, Lemma 9 of Esfandiari et al.).

    Parameters
    ----------
    X : array, shape (m, d)
        The core-set arms (must span R^d), fixed before any reward is seen.
    counts : array of int, shape (m,)
        Pulls n_a of each arm (≥ 1).
    sums : array, shape (m,)
        Sum of the rewards of each arm.
    rho : float in (0, 1]
        Replicability of the whole estimate; each arm's statistical query gets ρ/m.
    delta : float in (0, 1) with ρ > δ
        Each query fails with probability ≤ δ/(2m); with the Hoeffding radius at δ/(2m), every
        :attr:`ReplicableLSEResult.radius` holds jointly w.p. ≥ 1 − δ.
    xi : Generator or array of m unit offsets in [0, 1)
        Shared internal randomness (one offset per arm, drawn in row order).
    bounds : (lo, hi)
        Known range of a single reward (e.g. (−1, 1) for Rademacher rewards); rewards are mapped
        affinely to [0, 1] for the replicable mean estimator.
    precision : float or array, optional
        Target precision τ of each query in original units (requires the Lemma 2.5 number of
        samples); by default the precision Lemma 2.5 gives for the counts.

    Returns
    -------
    ReplicableLSEResult
    """
    X = check_arms(X, "X")
    m = X.shape[0]
    counts = np.asarray(counts).reshape(-1)
    sums = np.asarray(sums, dtype=float).reshape(-1)
    if counts.shape != (m,) or sums.shape != (m,):
        raise ValueError(f"counts and sums must have one entry per arm ({m})")
    rho = check_probability(rho, "rho", open_high=False)
    delta = check_probability(delta, "delta")
    if not rho > delta:
        raise ValueError(f"rho must exceed delta for the replicable LSE (each of the m queries "
                         f"needs rho/m > 2 delta/(2m)), got rho={rho}, delta={delta}")
    rho_a, delta_a = rho / m, delta / (2 * m)
    lo, hi = check_range(bounds, "bounds")
    width = hi - lo
    scaled = (sums - counts * lo) / width
    eps = None if precision is None else np.asarray(precision, dtype=float) / width
    v01 = replicable_means(scaled, counts, rho_a, delta_a, xi, precision=eps)
    values = lo + width * v01
    alpha = np.broadcast_to(grid_width(counts, delta_a, rho_a, precision=eps), (m,))
    radius = width * (alpha / 2.0 + np.asarray(hoeffding_radius(counts, delta_a)))
    cf = counts.astype(float)
    theta = LeastSquares.from_sums(X, cf, cf * values).theta
    return ReplicableLSEResult(theta=theta, values=values, means=sums / cf, radius=radius,
                               X=X, counts=cf)

