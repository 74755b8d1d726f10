"""Designs of surviving item sets and the G-optimal design, memoised, and Peace's halving
rule.

The fixed-budget eliminators of Xiong et al. ("P1-RAGE": Algorithms 3–6) and Peace
(Katz-Samuels et al. 2020, fixed budget, with ρ in place of γ as in Xiong et al., Appendix D)
solve ``inf_λ ρ(W, λ)``, ``ρ(W, λ) = max_{z,z'∈W} ||z − z'||²_{A(λ)⁻¹}`` (Eq. (5)), for many
item sets ``W`` — virtual phases recomputed at every epoch, and prefixes tried by a halving
search. A design depends only on the arms, the *set* of items and the tolerance, so identical
sets (frequent: the ranked prefixes repeat across epochs and trials) are solved once per
process (:data:`ITEM_DESIGNS`). Memoised values are the computation's own result, so nothing
depends on how trials are spread over workers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..design import Design, g_optimal, pairwise_design
from ..estimation.ips import ips_information
from .memo import ArrayMemo

__all__ = [
    "G_DESIGNS",
    "ITEM_DESIGNS",
    "canonical_order",
    "g_design",
    "halving_prefix",
    "item_design",
]

#: Designs of item sets, reused across epochs and trials in one process.
ITEM_DESIGNS = ArrayMemo(20_000)


#: λ* and A(λ*) per (arms, tolerance), shared by every trial and algorithm of a process.
G_DESIGNS = ArrayMemo(256)


def g_design(X: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """The G-optimal design λ* on the rows of ``X`` (Xiong et al., Eq. (3)) and ``A(λ*)``.

    Solved by :func:`banditkit.design.g_optimal` to certified relative gap ``tol`` and
    memoised per process (:data:`G_DESIGNS`): the value is the solve's own result, so no
    number depends on how trials are spread over workers. Both arrays are read-only.
    """
    def solve() -> tuple[np.ndarray, np.ndarray]:
        # solved on the rows in a canonical order: optimal designs need not be unique (on the
        # Soare arms x' ≈ e_1 can stand in for e_1 within the gap), and which one the solver
        # returns must not depend on how the arms are listed
        order = canonical_order(X)
        weights = np.empty(X.shape[0])
        weights[order] = g_optimal(X[order], tol=tol).weights
        information = ips_information(X, weights)
        weights.setflags(write=False)
        information.setflags(write=False)
        return weights, information

    return G_DESIGNS.get(("g-design", X, float(tol)), solve)


def item_design(X: np.ndarray, Z: np.ndarray, items: np.ndarray, tol: float
                ) -> tuple[Design | None, float]:
    """``(λ, ρ)`` for the set ``Z[items]``: the XY design of its pairwise differences and its
    value (:func:`banditkit.design.pairwise_design`). A single item has ``ρ = 0`` and no
    design (``None``)."""
    items = np.unique(np.asarray(items, dtype=np.int64))
    if items.size < 2:
        return None, 0.0
    return ITEM_DESIGNS.get(("items", X, Z, items, float(tol)),
                            lambda: _canonical_pairwise_design(X, Z, items, tol))


def canonical_order(rows: np.ndarray) -> np.ndarray:
    """The positions of ``rows`` sorted lexicographically (first column first): an order that
    depends on the set of rows, not on how they are listed."""
    return np.lexsort(rows.T[::-1])


def _canonical_pairwise_design(X: np.ndarray, Z: np.ndarray, items: np.ndarray, tol: float
                               ) -> tuple[Design, float]:
    """:func:`banditkit.design.pairwise_design` on the arms and the items in their canonical
    order, its weights put back in the arms' order: the design of a set, whatever the labels
    (like λ* in :func:`g_design`)."""
    arms = canonical_order(X)
    W = Z[items]
    design, rho = pairwise_design(X[arms], W[canonical_order(W)], np.arange(items.size), tol)
    weights = np.empty(X.shape[0])
    weights[arms] = design.weights
    weights.setflags(write=False)
    return dataclasses.replace(design, weights=weights), rho


def halving_prefix(X: np.ndarray, Z: np.ndarray, ranked: np.ndarray, rho: float, tol: float
                   ) -> int:
    """The largest ``k`` with ``inf_λ ρ(ranked[:k], λ) ≤ ρ / 2`` (Xiong et al., Algorithm 5
    line 6 and Algorithm 6 line 13; Peace's elimination).

    ``ranked`` lists items best first by the current estimate. The optimum of ρ can only grow
    as items are added (a maximum over more pairs), so the largest ``k`` is found by bisection
    over ``k`` (as the authors' code does) with ``O(log |ranked|)`` design solves; ``k ≥ 1``
    always, since one item has ``ρ = 0``.
    """
    ranked = np.asarray(ranked, dtype=np.int64)
    lo, hi = 1, ranked.size  # ρ(ranked[:lo]) ≤ ρ/2 holds; find the largest such k ≤ hi
    if item_design(X, Z, ranked, tol)[1] <= rho / 2:
        return ranked.size
    hi = ranked.size - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if item_design(X, Z, ranked[:mid], tol)[1] <= rho / 2:
            lo = mid
        else:
            hi = mid - 1
    return lo
