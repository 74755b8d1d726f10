"""Efficient rounding of a design into an integer allocation (Pukelsheim, ch. 12).

Fiez, Jain, Jamieson & Ratliff, "Sequential Experimental Design for Transductive Linear
Bandits", NeurIPS 2019, Appendix B ("Rounding Procedure of [27]", Proposition 2); the method
is the efficient design apportionment of Pukelsheim, *Optimal Design of Experiments* (1993),
Section 12.5.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import check_positive_int

__all__ = ["round_allocation", "round_allocations", "rounding_min_samples"]

_SUM_TOL = 1e-9


def _check_weights(weights: object) -> np.ndarray:
    lam = np.asarray(weights, dtype=float)
    if lam.ndim != 1 or lam.size == 0:
        raise ValueError(f"weights must be a non-empty 1-D array, got shape {lam.shape}")
    if not np.all(np.isfinite(lam)):
        raise ValueError("weights must contain only finite numbers (found NaN or inf)")
    if np.any(lam < 0):
        raise ValueError("weights must be non-negative")
    total = float(lam.sum())
    if abs(total - 1.0) > _SUM_TOL:
        raise ValueError(f"weights must sum to 1 (within {_SUM_TOL:g}), got sum {total!r}")
    return lam


def round_allocation(weights: object, n: int, *, rng: np.random.Generator | None = None
                     ) -> np.ndarray:
    """Round a design λ into ``n`` pulls by efficient design apportionment.

    Parameters
    ----------
    weights : array_like, shape (K,)
        Design λ: non-negative, sums to 1.
    n : int
        Number of pulls (≥ 0).
    rng : Generator, optional
        Breaks ties in phase 2 uniformly at random (read only when there is one); without it,
        the lowest index. An identifier with internal randomness passes its ξ, so that which
        of several equally weighted arms gets the odd pull does not depend on their labels.

    Returns
    -------
    np.ndarray of int64, shape (K,)
        Allocation ``s`` with ``Σ s = n`` and ``s_i = 0`` wherever ``λ_i = 0``.

    Notes
    -----
    Fiez et al. (2019), Appendix B, two phases on the support (size p) of λ:

    1. ``N_i = ⌈(n - p/2) λ_i⌉``;
    2. while ``Σ N < n`` increase an ``N_j`` attaining ``min N_j / λ_j``; while ``Σ N > n``
       decrease an ``N_j`` attaining ``max (N_j - 1) / λ_j`` (ties: lowest index, or drawn
       with ``rng``).

    Proposition 2: for ``n >= 2p`` the fractional allocation ``s / n`` has
    ``max_y ||y||²_{A(s/n)^-1} <= (1 + 2p/n) max_y ||y||²_{A(λ)^-1}`` for every Y, because
    ``min_i (s_i / n) / λ_i >= 1 - p/n`` (Pukelsheim, Lemma 12.8).

    Deviation: the paper assumes ``n >= p`` so every support point gets a pull. For smaller
    ``n`` phase 1 can give ``⌈·⌉ <= 0``; counts are clipped at 0 and phase 2 never decreases
    a count below 0, so the allocation still sums to ``n`` (some support points get none).
    """
    lam = _check_weights(weights)
    n = check_positive_int(n, "n", allow_zero=True)
    sup = np.flatnonzero(lam > 0)
    w = lam[sup]
    p = sup.size
    counts = np.maximum(np.ceil((n - p / 2.0) * w), 0.0).astype(np.int64)
    excess = int(counts.sum()) - n
    # Phase 2 moves at most p units; each step is one vectorised argmin/argmax over p.
    while excess < 0:
        j = _tie_break(-(counts / w), rng)
        counts[j] += 1
        excess += 1
    while excess > 0:
        score = np.where(counts > 0, (counts - 1) / w, -np.inf)
        j = _tie_break(score, rng)
        counts[j] -= 1
        excess -= 1
    out = np.zeros(lam.size, dtype=np.int64)
    out[sup] = counts
    return out


def round_allocations(weights: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """:func:`round_allocation` of ``weights`` to every budget at once (ties: lowest index).

    Phase 1, N_i = ⌈(n − p/2) λ_i⌉ (clipped at 0), is elementwise. Phase 2 moves the excess
    e = Σ N − n (|e| ≤ p) one unit at a time: up to the arm of least N_j/λ_j (ties to the lowest
    index) while e < 0, down from the arm of largest (N_j − 1)/λ_j among N_j > 0 while e > 0.
    Each arm's successive keys (N_j + m)/λ_j increase (resp. (N_j − 1 − m)/λ_j decrease) in m,
    so the |e| moves are the first |e| keys of the merge ordered by (key, index), taken at once
    from the same floating-point keys; no arm gives more than |e| of them, so only m < |e| is
    formed (|e| is about √p, not p: the merge costs O(p √p) per budget instead of O(p²)).

    Parameters
    ----------
    weights : array, shape (K,)
        A design λ (non-negative, sums to 1; not re-checked: callers pass a solver's design).
    budgets : array of int, shape (B,)
        Budgets n ≥ 0.

    Returns
    -------
    array of int64, shape (B, K)
        Row b is ``round_allocation(weights, budgets[b])``.
    """
    lam = np.asarray(weights, dtype=float)
    n = np.asarray(budgets, dtype=np.int64)
    sup = np.flatnonzero(lam > 0)
    w = lam[sup]
    p = sup.size
    counts = np.maximum(np.ceil((n[:, None] - p / 2.0) * w), 0.0).astype(np.int64)
    excess = counts.sum(axis=1) - n
    for row in np.flatnonzero(excess != 0):
        N = counts[row]
        e = int(excess[row])
        m = np.arange(abs(e))
        idx = np.repeat(np.arange(p), m.size)  # arm of each key
        if e < 0:
            keys = ((N[:, None] + m[None, :]) / w[:, None]).ravel()
            order = np.lexsort((idx, keys))[:-e]
            np.add.at(N, idx[order], 1)
        else:
            steps = N[:, None] - 1 - m[None, :]
            keys = np.where(steps >= 0, steps / w[:, None], -np.inf).ravel()
            order = np.lexsort((idx, -keys))[:e]
            np.add.at(N, idx[order], -1)
    out = np.zeros((n.size, lam.size), dtype=np.int64)
    out[:, sup] = counts
    return out


def _tie_break(score: np.ndarray, rng: np.random.Generator | None) -> int:
    """``argmax score``: the lowest index, or one of the tied drawn with ``rng``."""
    j = int(np.argmax(score))
    if rng is None:
        return j
    tied = np.flatnonzero(score == score[j])
    return j if tied.size == 1 else int(tied[rng.integers(tied.size)])


def rounding_min_samples(p: int, epsilon: float) -> int:
    """Smallest ``n`` for which Proposition 2 guarantees a ``(1 + ε)`` rounding: ``r(ε) = 2p/ε``.

    Fiez et al. (2019), Appendix B: rounding ``n >= r(ε)`` pulls of a design with support
    size ``p`` loses at most a factor ``1 + ε``. Returned as the integer ``⌈2p/ε⌉``, and at
    least ``2p`` (Proposition 2 needs ``n >= 2p``; this only matters for ``ε > 1``).

    Parameters
    ----------
    p : int
        Support size of the design (≥ 1).
    epsilon : float
        Allowed relative loss (> 0).
    """
    p = check_positive_int(p, "p")
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise TypeError(f"epsilon must be a number, got {epsilon!r}") from None
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    return max(math.ceil(2 * p / eps), 2 * p)
