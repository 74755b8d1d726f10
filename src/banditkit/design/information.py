"""Information matrices ``A(λ) = Σ_x λ_x x xᵀ`` and the variances ``||y||²_{A(λ)^-1}``.

Shared by the G- and XY-design solvers, and ``design_value`` for callers who need the
objective of a given design (e.g. RAGE's ``ρ(Y(S))``).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..validation import check_arms, check_positive
from .differences import as_directions

__all__ = ["design_value"]


def check_tol(tol: object) -> float:
    """A finite tolerance > 0."""
    return check_positive(tol, "tol")


def inverse_information(X: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``A(λ)^-1`` from the support of λ, by Cholesky (A is symmetric positive definite).

    Raises ``numpy.linalg.LinAlgError`` when ``A(λ)`` is singular.
    """
    sup = lam > 0
    Xs = X[sup]
    A = (Xs.T * lam[sup]) @ Xs
    try:
        c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError("design information matrix is singular") from None
    inv = scipy.linalg.cho_solve(c, np.eye(A.shape[0]), check_finite=False)
    return 0.5 * (inv + inv.T)


def quad_rows(V: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``v_i = V_iᵀ M V_i`` for every row of V."""
    return np.einsum("ij,ij->i", V @ M, V)


def design_value(X: object, weights: object, Y: object = None) -> float:
    """``max_{y ∈ Y} ||y||²_{A(λ)^-1}`` for weights λ on the rows of X (``Y=None``: ``Y = X``).

    ``Y`` may be an array of directions or ``Differences(Z)`` (scanned in chunks). Returns
    ``inf`` when ``A(λ)`` is singular.
    """
    X = check_arms(X, "X")
    lam = np.asarray(weights, dtype=float)
    if lam.shape != (X.shape[0],):
        raise ValueError(f"weights must have shape ({X.shape[0]},), got {lam.shape}")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0) or not np.any(lam > 0):
        raise ValueError("weights must be finite, non-negative and not all zero")
    D = as_directions(X if Y is None else Y, X.shape[1])
    try:
        Ainv = inverse_information(X, lam)
    except np.linalg.LinAlgError:
        return float("inf")
    return float(D.scan(Ainv, 1)[0][0])
