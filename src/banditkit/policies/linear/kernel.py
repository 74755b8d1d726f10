"""Compiled kernel of OFUL and linear Thompson sampling (numba, through :mod:`banditkit.jit`):
one trial's whole run in a loop, with the floating-point operations of
:mod:`banditkit.policies.linear.index` in the same order, so it plays the same arms as the
numpy lock-step driver and as :func:`banditkit.simulate` (``tests/test_linear_regret.py``).

Why it agrees bit for bit: every operation is an IEEE addition, multiplication, division or
square root (correctly rounded everywhere), in the order the numpy code writes them; numba
compiles without fast-math, so no reassociation or fused multiply-add; ``log``/``log1p`` are
libm's on both paths (the numpy path calls ``math.log1p``, not numpy's SIMD loop); the noise
and ξ are read from the same ``numpy.random.Generator`` objects, one value at a time, which
numba draws with NumPy's own algorithms.

Imported only when a lock-step run uses it: importing this module imports numba (0.4 s), which
the CLI's start-up must not pay.
"""

from __future__ import annotations

import math

import numpy as np

from ...jit import njit

__all__ = ["OFUL_KIND", "TS_KIND", "linear_trial"]

#: ``kind`` codes of :func:`linear_trial`.
OFUL_KIND, TS_KIND = 0, 1
#: OFUL radius codes (the order of :data:`banditkit.policies.linear.oful.RADII`).
SELF_NORMALIZED, DETERMINANT_FREE, CONSTANT = 0, 1, 2
#: Noise codes: one-pull Bernoulli or Rademacher reward from a uniform, or Gaussian.
BERNOULLI, RADEMACHER, GAUSSIAN = 0, 1, 2


@njit
def linear_trial(X: np.ndarray, lam: float, kind: int, radius: int, R: float, two_log: float,
                 bias: float, radius_scale: float, alpha: float, L2: float, delta: float,
                 v: float, noise: int, thresholds: np.ndarray, below: np.ndarray,
                 means: np.ndarray, sigma: float, noise_rng: np.random.Generator,
                 xi_rng: np.random.Generator, horizon: int, arms_out: np.ndarray) -> None:
    """Play ``horizon`` rounds of one trial, writing the arm of round t to ``arms_out[t]``.

    The constants are the policy's (``two_log`` = 2 log(1/δ), ``bias`` = √λ S, ``L2`` = L²);
    ``thresholds``/``below`` give numpy's inversion rule for a one-pull binomial draw
    (:func:`~banditkit.policies.index.lockstep._bernoulli_rule`).
    """
    K, d = X.shape
    G = np.empty((K, d))
    q = np.empty(K)
    m = np.zeros(K)
    for k in range(K):
        sq = X[k, 0] * X[k, 0]
        for j in range(1, d):
            sq = sq + X[k, j] * X[k, j]
        q[k] = sq / lam
        for j in range(d):
            G[k, j] = X[k, j] / lam
    C = np.zeros((d, d))
    for j in range(d):
        C[j, j] = math.sqrt(lam)
    logdet = 0.0
    c = np.empty(K)
    u = np.empty(d)
    x = np.empty(d)
    z = np.empty(d)
    y = np.empty(d)
    for t in range(horizon):
        # -- choose
        best = 0
        best_score = -np.inf
        if kind == OFUL_KIND:
            if radius == CONSTANT:
                rad = alpha
            elif radius == SELF_NORMALIZED:
                rad = radius_scale * (R * math.sqrt(logdet + two_log) + bias)
            else:
                level = d * math.log((1.0 + t * L2 / lam) / delta)
                rad = radius_scale * (R * math.sqrt(level) + bias)
            for k in range(K):
                s = m[k] + rad * math.sqrt(max(q[k], 0.0))
                if s > best_score or k == 0:
                    best, best_score = k, s
        else:
            for j in range(d):
                z[j] = xi_rng.standard_normal()
            for i in range(d - 1, -1, -1):
                acc = z[i]
                for j in range(i + 1, d):
                    acc = acc - C[j, i] * y[j]
                y[i] = acc / C[i, i]
            for k in range(K):
                p = X[k, 0] * y[0]
                for j in range(1, d):
                    p = p + X[k, j] * y[j]
                s = m[k] + v * p
                if s > best_score or k == 0:
                    best, best_score = k, s
        a = best
        arms_out[t] = a
        # -- the reward, as LinearBandit.pull draws it for one pull
        if noise == GAUSSIAN:
            r = 1.0 * means[a] + 1.0 * sigma * noise_rng.standard_normal()
        else:
            win = (noise_rng.random() > thresholds[a]) != below[a]
            r = 1.0 if win else 0.0
            if noise == RADEMACHER:
                r = 2.0 * r - 1.0
        # -- rank-one update (LinearState.update)
        for j in range(d):
            x[j] = X[a, j]
            u[j] = G[a, j]
        for k in range(K):
            acc = G[k, 0] * x[0]
            for j in range(1, d):
                acc = acc + G[k, j] * x[j]
            c[k] = acc
        w = c[a]
        denom = 1.0 + w
        err = (r - m[a]) / denom
        for k in range(K):
            m[k] = m[k] + c[k] * err
            q[k] = q[k] - c[k] * c[k] / denom
            for j in range(d):
                G[k, j] = G[k, j] - c[k] * (u[j] / denom)
        logdet = logdet + math.log1p(w)
        if kind == TS_KIND:
            for k in range(d):
                ckk = C[k, k]
                rr = math.sqrt(ckk * ckk + x[k] * x[k])
                cos = rr / ckk
                sin = x[k] / ckk
                C[k, k] = rr
                for i in range(k + 1, d):
                    col = (C[i, k] + sin * x[i]) / cos
                    x[i] = cos * x[i] - sin * col
                    C[i, k] = col
