"""Replicable linear programmes over the simplex for constrained bandits (Bollini et al.,
"Replicable Constrained Bandits", Algorithm 3 line 16 and Algorithm 4 line 17).

DEBORA-S and DEBORA-H play x_h = argmax_{x ∈ Δ_K} v^T x s.t. C x ≤ b, with v the optimistic
rewards r̂_h + ζ_h and C the optimistic costs ĝ_h − ζ_h (Eq. (2)). Replicability (Definition 2.3)
asks that two executions whose replicable estimates coincide play the *same* strategy, so the
map (v, C, b) ↦ x must be a function, not "some optimal vertex": an LP solver may return
different optimal vertices when the optimum is not unique, and the answer to inputs that are
equal in exact arithmetic may differ in the last bits. :func:`optimistic_strategy` makes the
choice canonical:

1. **Inputs snapped** to the dyadic grid 2^-40 (≈ 9.1e-13, :data:`INPUT_GRID`): inputs that
   differ only below the grid (e.g. ``0.1 + 0.2`` against ``0.3``) become bit-identical, so the
   solver sees the same problem and follows the same path. This moves the objective by at most
   2^-41 and each constraint row by at most 2^-40 (a value exactly half-way between grid points
   is rounded half to even; values on either side of such a point can still differ).
2. **Solved** with HiGHS dual simplex (``method="highs-ds"``; simplex runs on one thread), which
   returns a vertex and the duals. Equal inputs give bit-identical outputs on a given machine.
3. **Canonical tie-break: lexicographic maximum.** The optimal face is read off the duals of
   the first solve (complementary slackness: the optimal strategies are the feasible x with
   x_k = 0 wherever x_k's reduced cost is nonzero and row i tight wherever its dual is nonzero;
   a dual counts as nonzero above 1e-9 · max(1, max|v|), so objective values closer than that
   count as tied); no tolerance on the objective value itself is involved. If those equations
   (with the simplex equation) have rank K, the optimum is unique and the returned vertex is
   the answer. Otherwise x_0, x_1, ... are maximised in turn over the face, each fixed (to
   within 1e-11) before the next (at most K more LPs): the answer is the lexicographically
   greatest optimal strategy — mass goes to the lowest-index arms, the same rule as DEBORA's
   "argmax, ties by lowest index" (with no constraint and v = (1, 1, 0) the answer is e_0;
   with v = (1, 1, 1) and x_0 ≤ 0.3 it is (0.3, 0.7, 0)).
4. **Output snapped** to the grid 2^-32 (:data:`OUTPUT_GRID`), negatives clipped, and the
   largest entry set to 1 − (sum of the others): the sum is then exactly 1.0 in floating point
   (multiples of 2^-32 below 1 add without rounding) and solver noise below the grid disappears.
   Each constraint C x ≤ b may then be exceeded by at most K · 2^-32 · max|C| (≈ 1e-9 for K = 5),
   plus the solver's feasibility tolerance.

Infeasible constraints (the optimistic safe set of Eq. (2) is empty, which the paper's analysis
excludes on its clean event but which can happen with ``width_scale`` < 1): **fallback** to the
strategies that minimise the largest violation max_i (C x − b)_i — an LP in (x, s) — and, among
those, the canonical maximiser of v as above (the thresholds are relaxed to b + s*).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

__all__ = ["INPUT_GRID", "OUTPUT_GRID", "optimistic_strategy", "snap_strategy"]

#: Grid the inputs (values, costs, thresholds) are rounded to before solving.
INPUT_GRID = 2.0**-40
#: Grid of the returned strategy's entries.
OUTPUT_GRID = 2.0**-32

_DUAL_TOL = 1e-9  # a dual below this (times max(1, max|v|)) counts as zero
_FIX_TOL = 1e-11  # slack left on each coordinate fixed by the lexicographic refinement
_OPTIONS = {"presolve": True, "dual_feasibility_tolerance": 1e-10,
            "primal_feasibility_tolerance": 1e-10}


def _snap(a: np.ndarray, grid: float) -> np.ndarray:
    return np.round(a / grid) * grid


def snap_strategy(x: np.ndarray) -> np.ndarray:
    """Round a near-distribution onto the :data:`OUTPUT_GRID` with an exact sum of 1.0.

    Negative entries (solver noise) are clipped to 0; the largest entry (lowest index among
    equals) absorbs the rounding, so the entries are multiples of the grid summing to 1.0.
    """
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    x = _snap(x / x.sum(), OUTPUT_GRID)
    top = int(np.argmax(x))
    x[top] = 0.0
    x[top] = 1.0 - x.sum()  # exact: the others are multiples of 2^-32 summing to < 1
    return x


def _solve(c: np.ndarray, A_ub: np.ndarray | None, b_ub: np.ndarray | None, n: int, *,
           A_eq: np.ndarray | None = None, b_eq: np.ndarray | None = None,
           bounds: list[tuple[float, float | None]] | None = None):
    """min c^T z s.t. A_ub z ≤ b_ub, A_eq z = b_eq, the first ``n`` coordinates of z summing to
    1, bounds (default z ≥ 0); HiGHS dual simplex."""
    simplex = np.zeros((1, c.size))
    simplex[0, :n] = 1.0
    eq = simplex if A_eq is None else np.vstack([simplex, A_eq])
    rhs = np.r_[1.0, [] if b_eq is None else b_eq]
    if A_ub is not None and A_ub.shape[0] == 0:
        A_ub = b_ub = None
    return linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=eq, b_eq=rhs,
                   bounds=[(0, None)] * c.size if bounds is None else bounds,
                   method="highs-ds", options=_OPTIONS)


def _canonical_argmax(v: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Lexicographically greatest maximiser of v^T x over {x ∈ Δ_K: A x ≤ b}; None if empty.

    The optimal face is read off the duals (s, y) of the first solve: by LP duality
    v* − v^T x = Σ_k s_k x_k + Σ_i y_i (b_i − A_i x) for every feasible x, so the optimal
    strategies are exactly the feasible x with x_k = 0 wherever s_k > 0 and A_i x = b_i wherever
    y_i > 0 — no tolerance on the objective. If these equations have rank K the optimum is
    unique; otherwise x_0, x_1, … are maximised in turn over that face.
    """
    K = v.size
    res = _solve(-v, A, b, K)
    if res.status != 0:
        return None
    tol = _DUAL_TOL * max(1.0, float(np.abs(v).max()))
    zero = np.abs(res.lower.marginals) > tol           # x_k = 0 on the optimal face
    tight = (np.abs(res.ineqlin.marginals) > tol if A.shape[0]
             else np.zeros(0, dtype=bool))              # A_i x = b_i on the optimal face
    face = np.vstack([np.ones((1, K)), np.eye(K)[zero], A[tight]])
    if np.linalg.matrix_rank(face) == K:
        return res.x
    # Lexicographic refinement over the optimal face.
    bounds: list[tuple[float, float | None]] = [(0.0, 0.0) if z else (0.0, None) for z in zero]
    A_eq, b_eq = A[tight], b[tight]
    A_ub, b_ub = A[~tight], b[~tight]
    x = res.x
    fixed = 0.0
    for k in np.flatnonzero(~zero):
        if fixed >= 1.0 - _FIX_TOL:
            break  # the remaining coordinates are zero
        c = np.zeros(K)
        c[k] = -1.0
        res_k = _solve(c, A_ub, b_ub, K, A_eq=A_eq, b_eq=b_eq, bounds=bounds)
        if res_k.status != 0:  # numerically infeasible after fixing: keep the last solution
            break
        x = res_k.x
        xk = float(x[k])
        fixed += xk
        bounds[k] = (max(xk - _FIX_TOL, 0.0), None)
    return x


def _min_violation_level(A: np.ndarray, b: np.ndarray) -> float:
    """s* = min_{x ∈ Δ_K} max_i (A x − b)_i^+ (an LP in (x, s))."""
    m, K = A.shape
    c = np.zeros(K + 1)
    c[-1] = 1.0
    A_ub = np.hstack([A, -np.ones((m, 1))])
    res = _solve(c, A_ub, b, K)
    if res.status != 0:
        raise RuntimeError(f"the minimum-violation LP failed: {res.message}")
    return max(float(res.x[-1]), 0.0)


def optimistic_strategy(values: np.ndarray, costs: np.ndarray, thresholds: np.ndarray
                        ) -> np.ndarray:
    """Canonical argmax_{x ∈ Δ_K} values^T x s.t. costs @ x ≤ thresholds.

    Parameters
    ----------
    values : array, shape (K,)
        Objective (DEBORA-S/H: the optimistic rewards r̂_h + ζ_h).
    costs : array, shape (m, K)
        Constraint rows (DEBORA-S/H: the optimistic costs ĝ_{h,i} − ζ_h); m may be 0.
    thresholds : array, shape (m,)
        Right-hand sides α.

    Returns
    -------
    array, shape (K,)
        The lexicographically greatest optimal strategy (most mass on the lowest indices among
        optimal strategies), entries multiples of 2^-32 summing to exactly 1.0. Equal inputs —
        and inputs equal after rounding to 2^-40 — give bit-identical outputs. If no strategy
        satisfies the constraints, the same choice among the strategies that minimise the
        largest violation max_i (costs @ x − thresholds)_i (see the module notes).

    Raises
    ------
    ValueError
        If the shapes disagree or an input is not finite.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size < 1:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {v.shape}")
    K = v.size
    C = np.asarray(costs, dtype=float)
    if C.ndim == 1 and C.size == K:
        C = C[None, :]
    if C.ndim != 2 or C.shape[1] != K:
        raise ValueError(f"costs must have shape (m, K={K}), got {np.shape(costs)}")
    alpha = np.asarray(thresholds, dtype=float).reshape(-1)
    if alpha.shape != (C.shape[0],):
        raise ValueError(f"thresholds must have shape (m={C.shape[0]},), got "
                         f"{np.shape(thresholds)}")
    for name, arr in (("values", v), ("costs", C), ("thresholds", alpha)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
    if K == 1:
        return np.ones(1)
    v, C, alpha = _snap(v, INPUT_GRID), _snap(C, INPUT_GRID), _snap(alpha, INPUT_GRID)
    x = _canonical_argmax(v, C, alpha)
    if x is None:
        # Empty feasible set: relax to the smallest uniform violation level, then the same rule.
        s_star = _min_violation_level(C, alpha)
        relaxed = _snap(alpha + s_star, INPUT_GRID) + INPUT_GRID
        x = _canonical_argmax(v, C, relaxed)
        if x is None:
            raise RuntimeError("the relaxed LP is infeasible (numerical failure)")
    return snap_strategy(x)
