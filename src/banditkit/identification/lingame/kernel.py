"""Compiled LinGame steps (Degenne, Ménard, Shang & Valko 2020; :mod:`.lingame`): the GLR
stopping check, the AdaHedge learner of the current answer, nature's best response, the
optimistic gains, C-tracking and the pull, at compiled speed, as :mod:`.linear_glr_kernels`
does for Track-and-Stop and Frank-Wolfe Sampling (same events, same driver).

The class takes a step itself (``NEED_CHOOSE``) when the empirical answer ẑ changes (its learner
is the class's to create or switch to) or A(w) is not numerically positive definite. Explicit
loops in a fixed order: compiled and run by Python, the same numbers to the bit; against the
class's numpy arithmetic, round-off only.
"""

from __future__ import annotations

import math

import numpy as np

from ...jit import njit
from ..glr.kernels import (
    DUE,
    FULL,
    NEED_BETA,
    NEED_CHOOSE,
    REFRESH,
    STOP,
    _pull,
    glr_scan,
    most_behind,
)

__all__ = ["lingame_steps"]


@njit
def _cholesky(A: np.ndarray, L: np.ndarray) -> bool:
    """Lower Cholesky factor of A into L; False if A is not numerically positive definite."""
    d = A.shape[0]
    for i in range(d):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if s <= 0.0:
                    return False
                L[i, i] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return True


@njit
def _solve(L: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """out = (LLᵀ)⁻¹ y by two triangular solves."""
    d = L.shape[0]
    for i in range(d):
        s = y[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]
    for i in range(d - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, d):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@njit
def lingame_steps(X: np.ndarray, Z: np.ndarray, Ainv: np.ndarray, theta: np.ndarray,
                  est: np.ndarray, q: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                  losses: np.ndarray, gap: float, answer: int, sumw: np.ndarray, ridge: float,
                  means: np.ndarray, noise_sigma: float, rng: np.random.Generator, t: int,
                  cap: int, since: int, refresh_every: int, heuristic: bool, delta: float,
                  sigma: float, beta_lb: float, first_arm: int, check: bool, out: np.ndarray,
                  n_out: int) -> tuple[int, int, int, float, int, float, int]:
    """LinGame steps from pull count ``t`` until an event, with the AdaHedge learner of the
    answer ``answer`` (its cumulative ``losses``, updated in place, and mixability gap ``gap``;
    ``answer`` = −1: none yet). Returns (event, t, since, gap, n_out, Z(t), ẑ)."""
    K, d = X.shape
    M = Z.shape[0]
    stat = math.nan  # no check made yet (the driver keeps the last statistic)
    best = 0
    arm = first_arm
    w = np.empty(K)
    Aw = np.empty((d, d))
    L = np.zeros((d, d))
    y = np.empty(d)
    v = np.empty(d)
    vbest = np.empty(d)
    gains = np.empty(K)
    logK = math.log(K)
    while True:
        if arm < 0:
            if check:
                best, stat, _ = glr_scan(Z, Ainv, est, q, sigma)
                if heuristic:
                    if stat > math.log((1.0 + math.log(t)) / delta):
                        return STOP, t, since, gap, n_out, stat, best
                elif stat > beta_lb:
                    return NEED_BETA, t, since, gap, n_out, stat, best
            else:
                best = 0
                for j in range(1, M):
                    if est[j] > est[best]:
                        best = j
            check = True
            if t >= cap:
                return DUE, t, since, gap, n_out, stat, best
            if best != answer:  # the class creates or switches the learner
                return NEED_CHOOSE, t, since, gap, n_out, stat, best
            # AdaHedge's weights: w ∝ exp(−η (L − min L)), η = ln K / Δ (uniform on the
            # leaders while Δ = 0).
            low = losses[0]
            for a in range(1, K):
                if losses[a] < low:
                    low = losses[a]
            total = 0.0
            for a in range(K):
                shifted = losses[a] - low
                if gap <= 0.0:
                    w[a] = 1.0 if shifted == 0.0 else 0.0
                else:
                    w[a] = math.exp(-logK / gap * shifted)
                total += w[a]
            for a in range(K):
                w[a] /= total
            # Nature's best response under A(w): the closest alternative and the projections.
            for i in range(d):
                for k in range(d):
                    s = 0.0
                    for a in range(K):
                        s += w[a] * X[a, i] * X[a, k]
                    Aw[i, k] = s
            for i in range(d):
                Aw[i, i] += ridge
            if not _cholesky(Aw, L):
                return NEED_CHOOSE, t, since, gap, n_out, stat, best
            value = math.inf
            jbest = -1
            nbest = 1.0
            for j in range(M):
                if j == best:
                    continue
                for k in range(d):
                    y[k] = Z[best, k] - Z[j, k]
                _solve(L, y, v)
                norm = 0.0
                for k in range(d):
                    norm += y[k] * v[k]
                g = est[best] - est[j]
                val = g * g / max(norm, 1e-300)
                if val < value:
                    value = val
                    jbest = j
                    nbest = norm
                    for k in range(d):
                        vbest[k] = v[k]
            scale = (est[best] - est[jbest]) / max(nbest, 1e-300)
            c = math.log(t)
            for a in range(K):
                proj = 0.0
                for k in range(d):
                    proj += X[a, k] * vbest[k]
                proj *= scale
                form = 0.0
                for i in range(d):
                    s = 0.0
                    for k in range(d):
                        s += Ainv[i, k] * X[a, k]
                    form += X[a, i] * s
                u = abs(proj) + math.sqrt(2.0 * c * form)
                gains[a] = min(0.5 * u * u, c)
            # AdaHedge incurs the loss −U: Δ grows by the Hedge loss minus the mix loss.
            hedge = 0.0
            lmin = -gains[0]
            for a in range(K):
                hedge += w[a] * -gains[a]
                if -gains[a] < lmin:
                    lmin = -gains[a]
            if gap <= 0.0:
                mix = math.inf
                for a in range(K):
                    if w[a] > 0.0 and -gains[a] < mix:
                        mix = -gains[a]
            else:
                eta = logK / gap
                s = 0.0
                for a in range(K):
                    s += w[a] * math.exp(-eta * (-gains[a] - lmin))
                mix = lmin - math.log(s) / eta
            for a in range(K):
                losses[a] += -gains[a]
            gap += max(hedge - mix, 0.0)
            for a in range(K):
                sumw[a] += w[a]
            arm = most_behind(counts, sumw, 1.0)
        since += 1
        _pull(X, Z, Ainv, theta, est, q, counts, sums, means, noise_sigma, rng, arm,
              since < refresh_every)
        t += 1
        out[n_out] = arm
        n_out += 1
        arm = -1
        if since >= refresh_every:
            return REFRESH, t, since, gap, n_out, stat, best
        if n_out >= out.size:
            return FULL, t, since, gap, n_out, stat, best
