"""Confidence-interval comparisons of items shared by RAGE and the XY baselines.

Both rules compare items ``z, z'`` through the least-squares estimate: the difference
``(z' − z)ᵀθ̂`` against the width ``c ||z' − z||_{A⁻¹}`` (Fiez et al. 2019, Algorithm 1 and
Appendix F). Pairwise forms are computed from a Gram matrix in row chunks
(``||z'−z||² = a' + a − 2 z'ᵀA⁻¹z``), never by building the difference vectors.
"""

from __future__ import annotations

import numpy as np

from ..estimation.least_squares import LeastSquares
from ..validation import check_arms, check_probability, check_spans

__all__ = ["certified_best", "check_arms_items", "check_problem", "dominated"]

# Entries of a chunk of the pairwise comparison held at once.
_CHUNK_ENTRIES = 1 << 20
# Items of largest estimated value tested as dominators of every item before the full test.
_LEADERS = 16


def check_arms_items(X: object, Z: object) -> tuple[np.ndarray, np.ndarray]:
    """Validate the arms X and items Z of an identification problem (``Z=None``: Z = X).

    X must be finite and span R^d, Z finite with d columns and distinct rows (identical items
    can never be told apart). Shared by the fixed-confidence and fixed-budget identifiers.
    """
    X = check_arms(X, "X")
    check_spans(X, "X")
    Z = X if Z is None else check_arms(Z, "Z")
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z must have d = {X.shape[1]} columns like X, got {Z.shape[1]}")
    order = np.lexsort(Z.T[::-1])  # rows sorted: equal rows become neighbours
    if Z.shape[0] > 1 and np.any(np.all(Z[order[1:]] == Z[order[:-1]], axis=1)):
        raise ValueError("Z must have distinct rows: identical items can never be told apart")
    return X, Z


def check_problem(X: object, Z: object, delta: object) -> tuple[np.ndarray, np.ndarray, float]:
    """Validate a transductive identification problem ``(X, Z, δ)``: X and Z as
    :func:`check_arms_items`, δ in (0, 1)."""
    X, Z = check_arms_items(X, Z)
    delta = check_probability(delta, "delta")
    return X, Z, delta


def _forms(Zc: np.ndarray, W: np.ndarray, Ainv: np.ndarray, a_c: np.ndarray, a_w: np.ndarray
           ) -> np.ndarray:
    """``||w − z||²_{A⁻¹}`` for rows z of Zc (axis 0) and w of W (axis 1)."""
    q = a_c[:, None] + a_w[None, :] - 2.0 * (Zc @ Ainv) @ W.T
    return np.maximum(q, 0.0)


def dominated(Z: np.ndarray, active: np.ndarray, fit: LeastSquares, width: float, *,
              strict: bool = True) -> np.ndarray:
    """Which active items some other active item beats with confidence.

    Item ``z`` is dominated when ``∃ z'`` active with ``width · ||z' − z||_{A⁻¹} < (z' − z)ᵀθ̂``
    (``≤`` when ``strict`` is False).

    Returns
    -------
    np.ndarray of bool, shape (len(active),)
        All False when ``A`` is singular: differences outside the span of the pulled arms are
        not estimable, so nothing is eliminated.
    """
    W = Z[active]
    if fit.rank < Z.shape[1]:
        return np.zeros(W.shape[0], dtype=bool)
    k = W.shape[0]
    vals = W @ fit.theta
    a = np.einsum("ij,ij->i", W @ fit.A_inv, W)
    # The empirical leaders dominate most losers: test them first, then only the rest fully
    # (one leader is not enough: on RAGE's many-arms items the best leaves 40% of 3·10⁴ items
    # to the full O(k²) test, and the two best none).
    lead = np.argsort(-vals, kind="stable")[:_LEADERS]
    gain = vals[lead][None, :] - vals[:, None]
    wid = width * np.sqrt(_forms(W, W[lead], fit.A_inv, a, a[lead]))
    beat = wid < gain if strict else wid <= gain
    beat[lead, np.arange(lead.size)] = False  # an item never beats itself
    out = beat.any(axis=1)
    rest = np.flatnonzero(~out)
    rows = max(1, _CHUNK_ENTRIES // max(k, 1))
    for s in range(0, rest.size, rows):
        idx = rest[s:s + rows]
        gain = vals[None, :] - vals[idx, None]
        wid = width * np.sqrt(_forms(W[idx], W, fit.A_inv, a[idx], a))
        beat = wid < gain if strict else wid <= gain
        beat[np.arange(idx.size), idx] = False  # an item never beats itself
        out[idx] = beat.any(axis=1)
    return out


def certified_best(Z: np.ndarray, fit: LeastSquares, width: float) -> int | None:
    """The item certified best, or None (Fiez et al. 2019, Appendix F stopping rule).

    The rule is ``∃ z' ∀ z ≠ z' : width · ||z' − z||_{A⁻¹} ≤ (z' − z)ᵀθ̂``. Only the empirical
    leader ``argmax_z zᵀθ̂`` can satisfy it (any other z' loses to the leader), so it is the
    only candidate checked: O(|Z| d²) instead of O(|Z|² d). None while ``A`` is singular.
    """
    if fit.rank < Z.shape[1]:
        return None
    vals = Z @ fit.theta
    lead = int(np.argmax(vals))
    diff = Z[lead] - Z
    gain = vals[lead] - vals
    wid = width * np.sqrt(np.maximum(fit.norms2(diff), 0.0))
    ok = wid <= gain
    ok[lead] = True
    return lead if bool(ok.all()) else None
