"""G-optimal and XY-optimal designs by Frank–Wolfe with away steps, stopped on a certified gap.

Both problems minimise, over designs λ in the simplex on the rows of ``X``, a worst-case
variance ``max_y ||y||²_{A(λ)^-1}`` with ``A(λ) = Σ_x λ_x x xᵀ``:

* ``g_optimal``: ``Y = X``. By the Kiefer–Wolfowitz theorem the optimum is ``d`` and the
  G-optimal designs are exactly the D-optimal ones (maximisers of ``log det A(λ)``), so we run
  the Fedorov–Wynn / Wolfe–Atwood algorithm (Frank–Wolfe with away steps and the closed-form
  exact line search of ``log det``) and stop when ``max_x ||x||²_{A^-1} <= d (1 + tol)``.
* ``xy_optimal``: arbitrary ``Y`` (``XY-allocation`` of Soare et al. 2014 and the transductive
  design ``ρ(Y)`` of Fiez et al. 2019, eq. (2)), possibly with millions of directions
  (``Differences(Z)``). Solved by constraint generation over Y with Frank–Wolfe (away steps,
  exact line search) on a log-sum-exp smoothing of the max over the active set, and stopped
  on a duality bound (see ``xy_optimal``).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..validation import check_arms, check_positive_int, check_spans
from .differences import as_directions
from .result import Design, warn_unconverged

__all__ = ["design_value", "g_optimal", "xy_optimal"]

# Re-form A(λ)^-1 from λ this often: rank-one updates drift slowly in floating point.
_REFRESH_EVERY = 200
# β · max_y v_y beyond which exp-weights lose all but the top direction in double precision.
_MAX_SHARPNESS = 1e6


def _check_tol(tol: object) -> float:
    try:
        t = float(tol)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"tol must be a number, got {tol!r}") from None
    if not (np.isfinite(t) and t > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol}")
    return t


def _inverse_information(X: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``A(λ)^-1`` from the support of λ, by Cholesky (A is symmetric positive definite)."""
    sup = lam > 0
    Xs = X[sup]
    A = (Xs.T * lam[sup]) @ Xs
    try:
        c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError("design information matrix is singular") from None
    inv = scipy.linalg.cho_solve(c, np.eye(A.shape[0]), check_finite=False)
    return 0.5 * (inv + inv.T)


def _quad_rows(V: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``v_i = V_iᵀ M V_i`` for every row."""
    return np.einsum("ij,ij->i", V @ M, V)


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
    tol = _check_tol(tol)
    max_iter = check_positive_int(max_iter, "max_iter")
    d = X.shape[1]

    lam = _spanning_start(X)
    Ainv = _inverse_information(X, lam)
    g = _quad_rows(X, Ainv)
    it = 0
    target = d * (1.0 + tol)
    while True:
        j = int(np.argmax(g))
        if g[j] <= target:
            # Confirm on freshly formed quantities before stopping (no drift in the certificate).
            Ainv = _inverse_information(X, lam)
            g = _quad_rows(X, Ainv)
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
            Ainv = _inverse_information(X, lam)
            g = _quad_rows(X, Ainv)

    lam /= lam.sum()
    value = float(np.max(_quad_rows(X, _inverse_information(X, lam))))
    converged = value <= target
    design = Design(lam, value, float(d), it, converged)
    if not converged:
        warn_unconverged("G-optimal", design.relative_gap, tol, max_iter)
    return design


def design_value(X: object, weights: object, Y: object = None) -> float:
    """``max_{y ∈ Y} ||y||²_{A(λ)^-1}`` for weights λ on the rows of X (``Y=None``: ``Y = X``).

    ``Y`` may be an array of directions or ``Differences(Z)`` (scanned in chunks).
    """
    X = check_arms(X, "X")
    lam = np.asarray(weights, dtype=float)
    if lam.shape != (X.shape[0],):
        raise ValueError(f"weights must have shape ({X.shape[0]},), got {lam.shape}")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0):
        raise ValueError("weights must be finite and non-negative")
    D = as_directions(X if Y is None else Y, X.shape[1])
    Ainv = _inverse_information(X, lam)
    return float(D.scan(Ainv, 1)[0][0])


def _dual_bound(X: np.ndarray, Ys: np.ndarray, mu: np.ndarray, Ainv: np.ndarray
                ) -> tuple[float, float, np.ndarray]:
    """Lower bound ``h² / max_x q_x`` on the XY optimum from a distribution μ on rows of Ys.

    Returns (bound, h, q) with ``h = Σ_y μ_y yᵀA^-1y`` and ``q_x = xᵀA^-1 W A^-1 x``,
    ``W = Σ_y μ_y y yᵀ`` (q is also minus the gradient of ``λ ↦ tr(W A(λ)^-1)``).
    """
    v = _quad_rows(Ys, Ainv)
    h = float(mu @ v)
    W = (Ys * mu[:, None]).T @ Ys
    q = _quad_rows(X, Ainv @ W @ Ainv)
    return h * h / float(q.max()), h, q


def _line_values(v: np.ndarray, u2: np.ndarray, g: float, gammas: np.ndarray) -> np.ndarray:
    """Forms ``yᵀA(γ)^-1y`` (rows: γ) along ``A(γ) = (1 - γ) A + γ x xᵀ`` (Sherman–Morrison)."""
    den = 1.0 - gammas + gammas * g
    with np.errstate(divide="ignore", invalid="ignore"):
        c = gammas / den
        out = (v[None, :] - c[:, None] * u2[None, :]) / (1.0 - gammas)[:, None]
    out[den <= 0] = np.inf
    return out


def _lse(values: np.ndarray, beta: float) -> np.ndarray:
    """Row-wise ``(1/β) log Σ exp(β v)``, stable."""
    m = values.max(axis=1)
    with np.errstate(invalid="ignore"):
        s = np.exp(beta * (values - m[:, None])).sum(axis=1)
    out = m + np.log(s) / beta
    out[~np.isfinite(m)] = np.inf
    return out


def _line_search(v: np.ndarray, u2: np.ndarray, g: float, lo: float, hi: float,
                 beta: float) -> float:
    """Minimise the (convex) smoothed max along the segment γ ∈ [lo, hi] (0 is an end).

    A geometric grid finds the scale of the step (Frank–Wolfe steps span many orders of
    magnitude), then two uniform grids refine inside the bracket.
    """
    end = hi if hi > 0 else lo
    grid = np.concatenate([[0.0], end * np.geomspace(1e-9, 1.0, 40)])
    best_g, best_phi = 0.0, np.inf
    for _ in range(4):
        phi = _lse(_line_values(v, u2, g, grid), beta)
        i = int(np.argmin(phi))
        if phi[i] < best_phi:
            best_g, best_phi = float(grid[i]), float(phi[i])
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        grid = np.linspace(a, b, 17)
    return best_g


def _smoothed_frank_wolfe(X: np.ndarray, Ys: np.ndarray, lam: np.ndarray, lb: float,
                          tol: float, budget: int, sharpness: float
                          ) -> tuple[np.ndarray, float, float, int, float]:
    """Frank–Wolfe with away steps on ``F_β(λ) = (1/β) log Σ_{y∈Ys} exp(β yᵀA(λ)^-1y)``.

    ``β = sharpness / max_y yᵀA^-1y``; the smoothing error of ``F_β`` is at most
    ``log(m)/β``, so ``sharpness`` is doubled whenever the Frank–Wolfe gap of the smoothed
    problem falls well below that error. Each iterate's softmax weights μ give the dual bound
    of ``_dual_bound``. Stops when ``(max_y v_y - lb) <= tol * lb`` or after ``budget`` steps.
    Returns (λ, best lower bound, max over Ys at λ, iterations, sharpness).
    """
    Ainv = _inverse_information(X, lam)
    m = Ys.shape[0]
    it = 0
    while True:
        v = _quad_rows(Ys, Ainv)
        f_s = float(v.max())
        beta = sharpness / f_s
        mu = np.exp(beta * (v - f_s))
        mu /= mu.sum()
        bound, h, q = _dual_bound(X, Ys, mu, Ainv)
        lb = max(lb, bound)
        if f_s - lb <= tol * lb or it >= budget:
            return lam, lb, f_s, it, sharpness
        j = int(np.argmax(q))
        fw_gap = q[j] - h
        if m > 1 and fw_gap < 0.25 * (f_s - h) and sharpness <= _MAX_SHARPNESS:
            sharpness *= 2.0
            continue
        sup = np.flatnonzero(lam > 0)
        k = int(sup[np.argmin(q[sup])])
        if fw_gap >= h - q[k] or lam[k] >= 1.0:
            idx, lo, hi = j, 0.0, 1.0 - 1e-12
        else:
            idx, lo, hi = k, -lam[k] / (1.0 - lam[k]), 0.0
        w = Ainv @ X[idx]
        g_idx = float(X[idx] @ w)
        u = Ys @ w
        gamma = _line_search(v, u * u, g_idx, lo, hi, beta)
        if gamma == 0.0:
            # No descent along the chosen vertex: the smoothed problem is solved to machine
            # precision at this β, so only a sharper β can lower the smoothing error.
            if sharpness > _MAX_SHARPNESS:
                return lam, lb, f_s, it, sharpness
            sharpness *= 2.0
            continue
        Ainv, _ = _rank_one_step(lam, Ainv, idx, gamma, w, g_idx, drop=gamma <= lo)
        it += 1
        if it % _REFRESH_EVERY == 0:
            lam /= lam.sum()
            Ainv = _inverse_information(X, lam)


def xy_optimal(X: object, Y: object, *, tol: float = 0.01, max_iter: int = 50_000,
               batch: int | None = None) -> Design:
    """XY-optimal (transductive) design: ``argmin_λ max_{y∈Y} ||y||²_{A(λ)^-1}``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Measurement vectors (rows); must be finite and span ``R^d``.
    Y : array_like of shape (n_y, d), or Differences
        Directions. ``Differences(Z)`` stands for all ``z - z'`` (``z ≠ z'``) without ever
        building them (millions are fine).
    tol : float
        Stop when the certified relative gap ``(value - lower_bound) / lower_bound <= tol``.
    max_iter : int
        Safety cap on Frank–Wolfe iterations (summed over rounds); if reached, a
        ``DesignConvergenceWarning`` is issued and the ``Design`` reports the true gap.
    batch : int, optional
        Directions added to the active set per round (default ``max(16, 2 d)``).

    Returns
    -------
    Design

    Notes
    -----
    This is ``ρ(Y)`` of Fiez et al. (NeurIPS 2019, eq. (2)); with ``Y = Differences(X)`` the
    XY-allocation of Soare et al. (2014).

    *Algorithm.* Constraint generation: an active set S ⊂ Y starts from the largest forms at a
    G-optimal start. Each round runs Frank–Wolfe with away steps and exact line search on the
    smoothed objective ``(1/β) log Σ_{y∈S} exp(β ||y||²_{A^-1})`` (β raised as the smoothed
    problem converges), then scans all of Y in chunks for ``max_y ||y||²_{A^-1}`` and adds the
    largest violators to S. It stops on the certified gap, never on an iteration count.

    *Certificate.* For any distribution μ on Y let ``W = Σ μ_y y yᵀ``. For every λ',
    ``max_y ||y||²_{A(λ')^-1} >= tr(W A(λ')^-1)``, and for any matrix U (columns u_y) and
    ``B = [√μ_y y]``, ``tr(Bᵀ A^-1 B) = max_U 2 tr(UᵀB) - tr(Uᵀ A U)``; since
    ``tr(Uᵀ A(λ') U) = Σ_x λ'_x ||Uᵀx||² <= max_x ||Uᵀx||²``, scaling U by s > 0 and
    optimising s gives ``OPT >= (tr UᵀB)² / max_x ||Uᵀx||²``. Taking ``U = A(λ)^-1 B`` at the
    current λ yields ``OPT >= h² / max_x q_x`` with ``h = Σ_y μ_y ||y||²_{A^-1} = tr(WA^-1)``
    and ``q_x = xᵀA^-1 W A^-1 x``. (With s = 1 this is the Frank–Wolfe-gap bound
    ``2h - max_x q_x`` of the convex surrogate ``tr(W A(λ)^-1)``, which it always dominates.)
    It is tight at the saddle point, where μ is optimal and λ minimises ``tr(W A^-1)``.
    μ is the softmax of the forms on the active set, a distribution on Y, so the bound is
    valid for all of Y. ``value`` is the exact maximum over all of Y at the returned λ.
    """
    X = check_arms(X, "X")
    check_spans(X, "X")
    d = X.shape[1]
    D = as_directions(Y, d)
    tol = _check_tol(tol)
    max_iter = check_positive_int(max_iter, "max_iter")
    batch = max(16, 2 * d) if batch is None else check_positive_int(batch, "batch")

    lam = g_optimal(X, tol=0.1).weights.copy()
    top_v, top_i = D.scan(_inverse_information(X, lam), batch)
    best_lam, best_val = lam.copy(), float(top_v[0])
    active = top_i
    Ys = D.rows(active)
    lb, its, sharpness = 0.0, 0, 4.0 * np.log(max(len(D), 2))
    inner_tol = 0.5 * tol
    while True:
        lam, lb, f_s, used, sharpness = _smoothed_frank_wolfe(
            X, Ys, lam, lb, inner_tol, max_iter - its, sharpness)
        its += used
        top_v, top_i = D.scan(_inverse_information(X, lam), batch)
        if top_v[0] < best_val:
            best_lam, best_val = lam.copy(), float(top_v[0])
        if best_val - lb <= tol * lb or its >= max_iter:
            break
        fresh = ~np.isin(top_i, active) & (top_v > f_s * (1.0 + 1e-12))
        if fresh.any():
            active = np.concatenate([active, top_i[fresh]])
            Ys = D.rows(active)
        else:
            inner_tol *= 0.5

    best_lam /= best_lam.sum()
    value = float(D.scan(_inverse_information(X, best_lam), 1)[0][0])
    converged = value - lb <= tol * lb
    design = Design(best_lam, value, lb, its, converged)
    if not converged:
        warn_unconverged("XY-optimal", design.relative_gap, tol, max_iter)
    return design

