"""G-optimal designs by Frank–Wolfe with away steps, stopped on the Kiefer–Wolfowitz gap.

``g_optimal`` minimises, over designs λ in the simplex on the rows of ``X``, the worst-case
variance ``max_x ||x||²_{A(λ)^-1}`` with ``A(λ) = Σ_x λ_x x xᵀ``. By the Kiefer–Wolfowitz
theorem the optimum is ``d`` and the G-optimal designs are exactly the D-optimal ones
(maximisers of ``log det A(λ)``), so we run the Fedorov–Wynn / Wolfe–Atwood algorithm
(Frank–Wolfe with away steps and the closed-form exact line search of ``log det``) and stop
when ``max_x ||x||²_{A^-1} <= d (1 + tol)``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..validation import check_arms, check_positive_int, check_spans
from .information import check_tol, inverse_information, quad_rows
from .result import Design, warn_unconverged

__all__ = ["g_optimal"]

# Re-form A(λ)^-1 from λ this often: rank-one updates drift slowly in floating point.
_REFRESH_EVERY = 200


def _spanning_start(X: np.ndarray) -> np.ndarray:
    """Uniform weights on ``d`` well-conditioned rows (QR with column pivoting of Xᵀ).

    This is the Kumar–Yildirim style start: greedy maximal-volume rows give a non-singular,
    reasonably conditioned initial design with support ``d``.
    """
    d = X.shape[1]
    _, _, piv = scipy.linalg.qr(X.T, mode="economic", pivoting=True, check_finite=False)
    lam = np.zeros(X.shape[0])
    lam[piv[:d]] = 1.0 / d
    return lam


def _rank_one_step(lam: np.ndarray, Ainv: np.ndarray, idx: int, gamma: float, w: np.ndarray,
                   g_idx: float, drop: bool) -> tuple[np.ndarray, float]:
    """Move λ to ``(1 - γ) λ + γ e_idx`` (γ < 0 is an away step) and update ``A^-1`` in place.

    Returns the new inverse and the Sherman–Morrison coefficient ``c`` such that any form
    ``uᵀ A^-1 u`` becomes ``(uᵀA^-1u - c (uᵀ w)²) / (1 - γ)`` with ``w = A^-1 x_idx``.
    """
    c = gamma / (1.0 - gamma + gamma * g_idx)
    Ainv -= c * np.outer(w, w)
    Ainv /= 1.0 - gamma
    lam *= 1.0 - gamma
    lam[idx] += gamma
    if drop or lam[idx] < 0:
        lam[idx] = 0.0
    return Ainv, c


def g_optimal(X: object, *, tol: float = 0.01, max_iter: int = 100_000) -> Design:
    """G-optimal design on the rows of ``X``: ``argmin_λ max_x ||x||²_{A(λ)^-1}``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Arms (rows); must be finite and span ``R^d``.
    tol : float
        Stop when the certified relative gap ``(value - d) / d <= tol``.
    max_iter : int
        Safety cap on iterations; if reached, a ``DesignConvergenceWarning`` is issued and the
        returned ``Design`` still reports the true gap (``converged=False``).

    Returns
    -------
    Design
        ``lower_bound = d`` (Kiefer–Wolfowitz: the optimum equals ``d`` when X spans R^d).

    Notes
    -----
    Kiefer & Wolfowitz (1960) equivalence theorem; the algorithm is Frank–Wolfe on
    ``log det A(λ)`` (Fedorov 1972, Wynn 1970) with Wolfe's away steps (Atwood 1973; Todd,
    *Minimum-Volume Ellipsoids*, SIAM 2016, ch. 3). With ``g_x = xᵀA^-1x`` the exact line
    search toward (γ > 0) or away from (γ < 0) vertex x has the closed form
    ``γ = (g_x - d) / (d (g_x - 1))``, clipped to the feasible interval (a drop step when it
    reaches it). The start is ``d`` greedy maximal-volume rows (Kumar & Yildirim 2005).
    """
    X = check_arms(X, "X")
    check_spans(X, "X")
    tol = check_tol(tol)
    max_iter = check_positive_int(max_iter, "max_iter")
    d = X.shape[1]

    lam = _spanning_start(X)
    Ainv = inverse_information(X, lam)
    g = quad_rows(X, Ainv)
    it = 0
    target = d * (1.0 + tol)
    while True:
        j = int(np.argmax(g))
        if g[j] <= target:
            # Confirm on freshly formed quantities before stopping (no drift in the certificate).
            Ainv = inverse_information(X, lam)
            g = quad_rows(X, Ainv)
            j = int(np.argmax(g))
            if g[j] <= target:
                break
        if it >= max_iter:
            break
        sup = np.flatnonzero(lam > 0)
        k = int(sup[np.argmin(g[sup])])
        drop = False
        if g[j] - d >= d - g[k] or lam[k] >= 1.0:
            idx, gamma = j, (g[j] - d) / (d * (g[j] - 1.0))
        else:
            idx = k
            gmax = lam[k] / (1.0 - lam[k])
            gamma = -gmax if g[k] <= 1.0 else (g[k] - d) / (d * (g[k] - 1.0))
            if gamma <= -gmax:
                gamma, drop = -gmax, True
        w = Ainv @ X[idx]
        Ainv, c = _rank_one_step(lam, Ainv, idx, gamma, w, g[idx], drop)
        u = X @ w
        g = (g - c * u * u) / (1.0 - gamma)
        it += 1
        if it % _REFRESH_EVERY == 0:
            lam /= lam.sum()
            Ainv = inverse_information(X, lam)
            g = quad_rows(X, Ainv)

    lam /= lam.sum()
    value = float(np.max(quad_rows(X, inverse_information(X, lam))))
    converged = value <= target
    design = Design(lam, value, float(d), it, converged)
    if not converged:
        warn_unconverged("G-optimal", design.relative_gap, tol, max_iter)
    return design
