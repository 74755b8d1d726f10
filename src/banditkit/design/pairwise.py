"""The XY design of a set of items: ``min_λ max_{z,z'∈W} ||z − z'||²_{A(λ)⁻¹}``.

Used by every elimination algorithm over a surviving set of items: RAGE's phases (Fiez et al.
2019, Algorithm 1), the virtual phases of P1-RAGE and P1-Peace (Xiong et al., Algorithms 3
and 5), Peace and Mixed-Peace's ρ(Z, λ) (Xiong et al., Eq. (5); Katz-Samuels et al. 2020).
"""

from __future__ import annotations

import numpy as np

from .differences import Differences
from .information import design_value
from .result import Design
from .xy import xy_optimal

__all__ = ["pairwise_design"]

#: Weight of the arms added as directions when the differences do not span R^d (see
#: :func:`pairwise_design`); it costs at most about √τ ≈ 1% of ρ.
SPAN_TAU = 1e-4


def pairwise_design(X: np.ndarray, Z: np.ndarray, active: np.ndarray, tol: float
                    ) -> tuple[Design, float]:
    """λ and ρ = ``max_{z,z'} ||z − z'||²_{A(λ)⁻¹}`` over the items ``Z[active]`` (≥ 2 items).

    When the differences of the active items span R^d the XY design is solved on the lazy
    ``Differences`` set. When they do not (few items left), the optimal design is singular —
    supported on a few arms with ``A(λ)`` of rank < d — which ``xy_optimal`` (a Cholesky-based
    solver) cannot represent. Then the directions are augmented with the arms scaled by
    ``η = √(τ max‖y‖² / (d max‖x‖²))``: mixing any design with 1% of a G-optimal one shows
    the augmented optimum is at most ``(1/(1−√τ) + √τ)·ρ* ≈ 1.02 ρ*`` (Lemma 1's
    ``ρ ≥ max‖y‖²/max‖x‖²``), and the ``ρ`` returned is the exact maximum over the *original*
    differences at the returned λ, so it is an upper bound on the optimum and the design has
    full rank (an IPS estimate with it is defined).
    """
    W = Z[active]
    if W.shape[0] < 2:
        raise ValueError("pairwise_design needs at least 2 items")
    arms = _arms_of_items(X, W)
    if arms is not None:
        return _multi_armed_design(X, W, arms, tol)
    diffs = W[1:] - W[0]
    d = X.shape[1]
    sv = np.linalg.svd(diffs, compute_uv=False)
    if sv.size >= d and sv[d - 1] > 1e-10 * sv[0]:
        design = xy_optimal(X, Differences(Z, active), tol=tol)
        return design, float(design.value)
    i, j = np.triu_indices(W.shape[0], k=1)
    Y = W[i] - W[j]
    y2 = float(np.max(np.einsum("ij,ij->i", Y, Y)))
    x2 = float(np.max(np.einsum("ij,ij->i", X, X)))
    eta = np.sqrt(SPAN_TAU * y2 / (d * x2))
    design = xy_optimal(X, np.vstack([Y, eta * X]), tol=tol)
    return design, float(design_value(X, design.weights, Y))


def _arms_of_items(X: np.ndarray, W: np.ndarray) -> np.ndarray | None:
    """The arm index of each item when ``X`` is square (K = d, hence invertible: it spans
    R^d) and every item is one of the arms; otherwise ``None``."""
    K, d = X.shape
    if K != d:
        return None
    index = {row.tobytes(): a for a, row in enumerate(np.ascontiguousarray(X))}
    arms = [index.get(row.tobytes()) for row in np.ascontiguousarray(W)]
    if any(a is None for a in arms):
        return None
    return np.asarray(arms, dtype=np.int64)


def _multi_armed_design(X: np.ndarray, W: np.ndarray, arms: np.ndarray, tol: float
                        ) -> tuple[Design, float]:
    """The design of items that are arms of a square X, in closed form.

    In the coordinates ``w = X⁻ᵀ y`` the difference of arms ``i`` and ``j`` is ``e_i − e_j``
    and ``||y||²_{A(λ)⁻¹} = 1/λ_i + 1/λ_j``: a multi-armed problem, whose optimum
    ``min_λ max_{i≠j∈W} 1/λ_i + 1/λ_j = 2|W|`` is the uniform design on W (any λ puts at most
    1/|W| on its two least-weighted items of W). That optimum is singular; mixing it with
    ``ε = tol/2`` of the uniform design on all arms keeps ``A(λ)`` invertible (the IPS and
    least-squares estimates need it) and costs ``ρ ≤ 2|W|/(1 − ε)``, a certified relative gap
    below ``tol``. The P1-RAGE paper's click-through instance (24 arms in R²⁴) is of this kind,
    and its small item sets were the slowest solves of the general path.
    """
    K = X.shape[0]
    eps = tol / 2.0
    weights = np.full(K, eps / K)
    weights[np.unique(arms)] += (1.0 - eps) / np.unique(arms).size
    i, j = np.triu_indices(W.shape[0], k=1)
    value = float(design_value(X, weights, W[i] - W[j]))
    design = Design(weights, value, 2.0 * np.unique(arms).size, 0, True)
    return design, value
