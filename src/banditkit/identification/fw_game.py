"""The small matrix game of Frank-Wolfe Sampling's vertex step (Wang, Tzeng & Proutière,
"Fast pure exploration via Frank-Wolfe", NeurIPS 2021, Algorithm 1 and their Section 3.2):
z(t) = argmax_{p ∈ Δ_K} min_{i ≤ h} ⟨p − x, g_i⟩ for the h gradients g_i of the
r-subdifferential, solved exactly by a dense simplex method written as plain loops.

Written out, with payoff A[a, i] = g_i[a] − ⟨x, g_i⟩ the row player's linear program is

    maximise v  subject to  Σ_a p_a A[a, i] − v − s_i = 0 (i = 1..h),  Σ_a p_a = 1,
                            p ≥ 0, s ≥ 0, v ≥ 0,

after A is shifted (by a constant, which changes no maximiser) to be positive, so that v ≥ 0
costs nothing. It has h + 1 rows and K + 1 + h columns, and a feasible basis is at hand: the
pure strategy a₀ of the largest guaranteed payoff min_i A[a₀, i], v, and the slacks of the other
h − 1 rows. The tableau therefore never needs a phase 1, and each pivot costs O(h (K + h)):
with h a handful of near-active alternatives this is microseconds compiled, where a general
LP solver (HiGHS through ``scipy.optimize.linprog``) spends about 10 ms setting up. Entering
columns follow Dantzig's rule (the largest reduced cost, the lowest index on ties) and switch to
Bland's rule (the lowest improving index) after a run of degenerate pivots, which ends cycling;
the ratio test breaks ties on the lowest basic index.

The game's value is unique; its maximiser p need not be (a face of optimal strategies), and
different solvers may return different points of that face: this one returns the basic optimal
solution its pivots reach, deterministically, and the same bits compiled or run by Python
(:func:`banditkit.jit.njit`). The tests check the value and optimality of p against the
definition above and against HiGHS.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

__all__ = ["solve_fw_game"]

#: Reduced costs and pivots below this (relative to the payoffs, scaled to at most 1) are zero.
_TOL = 1e-12
#: Degenerate pivots in a row after which entering columns follow Bland's rule.
_BLAND_AFTER = 50


@njit
def solve_fw_game(G: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float]:
    """(p, value): an optimal p ∈ Δ_K of max_p min_i ⟨p − x, G[:, i]⟩ and that value.

    ``G`` is K × h (one gradient per column), ``x`` the current iterate. Reductions are loops
    in a fixed order and the rest elementwise row operations, so compiled and Python runs give
    the same bits (and the Python run is vectorised over the K arms)."""
    K, h = G.shape
    # Payoff A[:, i] = G[:, i] − ⟨x, G[:, i]⟩, scaled to max |A| = 1 and shifted into [1, 3]
    # (so v ≥ 1 > 0 at every feasible point: v never leaves the basis).
    At = np.empty((h, K))
    for i in range(h):
        gx = 0.0
        for a in range(K):
            gx += x[a] * G[a, i]
        At[i, :] = G[:, i] - gx
    big = np.abs(At).max()
    scale = big if big > 0.0 else 1.0
    At = At / scale + 2.0
    rows = h + 1
    cols = K + 1 + h  # p_0..p_{K−1}, v, s_0..s_{h−1}
    T = np.zeros((rows, cols + 1))  # the last column is the right-hand side
    T[:h, :K] = At
    T[:h, K] = -1.0
    for i in range(h):
        T[i, K + 1 + i] = -1.0
    T[h, :K] = 1.0
    T[h, cols] = 1.0
    # The starting basis: the pure strategy a0 of the largest guaranteed payoff min_i A[a0, i]
    # (on the Σp = 1 row), v (on the row i0 that guarantee binds) and the other rows' slacks;
    # each pivot element is 1 or −1 when it is taken, and the solution is feasible.
    guarantee = At[0, :].copy()
    for i in range(1, h):
        guarantee = np.minimum(guarantee, At[i, :])
    a0 = int(np.argmax(guarantee))
    i0 = int(np.argmin(At[:, a0]))
    basis = np.empty(rows, dtype=np.int64)
    _pivot(T, h, a0)
    basis[h] = a0
    _pivot(T, i0, K)
    basis[i0] = K
    for i in range(h):
        if i != i0:
            _pivot(T, i, K + 1 + i)
            basis[i] = K + 1 + i
    # Maximise v: v stays basic (row kv), so the reduced cost of column j is c_j − T[kv, j].
    cost = np.zeros(cols)
    cost[K] = 1.0
    kv = i0
    degenerate = 0
    while True:
        reduced = cost - T[kv, :cols]
        if degenerate >= _BLAND_AFTER:  # Bland: the lowest improving index
            enter = int(np.argmax(reduced > _TOL))
        else:  # Dantzig: the largest reduced cost (the lowest index on ties)
            enter = int(np.argmax(reduced))
        if reduced[enter] <= _TOL:
            break
        leave = -1
        ratio = np.inf
        for k in range(rows):
            if T[k, enter] > _TOL:
                q = T[k, cols] / T[k, enter]
                if q < ratio or (q == ratio and basis[k] < basis[leave]):
                    ratio = q
                    leave = k
        if leave < 0:  # pragma: no cover - v ≤ max A: the program is bounded
            raise RuntimeError("Frank-Wolfe Sampling's matrix game is unbounded")
        degenerate = degenerate + 1 if ratio <= _TOL else 0
        _pivot(T, leave, enter)
        basis[leave] = enter
        if enter == K:  # pragma: no cover - v is basic from the start
            kv = leave
    p = np.zeros(K)
    for k in range(rows):
        if basis[k] < K:
            p[basis[k]] = max(T[k, cols], 0.0)
    total = 0.0
    for a in range(K):
        total += p[a]
    return p / total, (T[kv, cols] - 2.0) * scale


@njit
def _pivot(T: np.ndarray, r: int, c: int) -> None:
    """Gauss-Jordan pivot of the tableau on row ``r``, column ``c`` (elementwise row ops)."""
    T[r, :] = T[r, :] / T[r, c]
    for k in range(T.shape[0]):
        if k != r and T[k, c] != 0.0:
            T[k, :] = T[k, :] - T[k, c] * T[r, :]
