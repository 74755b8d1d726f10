"""The optimal proportions w*(μ) and the characteristic time T*(μ) of K-armed best-arm
identification with fixed confidence (Garivier & Kaufmann 2016, "Optimal best arm identification
with fixed confidence", Section 2: Theorem 1's lower bound E[τ_δ] ≥ T*(μ) kl(δ, 1 − δ), and
Theorem 5 / Lemmas 3–4 for computing w*).

For a one-parameter exponential family with divergence d (Bernoulli kl, or (x − y)²/(2σ²) for
Gaussian arms of variance σ²), with arm 1 the best (μ₁ > μ_a for every a ≠ 1):

* g_a(x) = d(μ₁, m_a(x)) + x d(μ_a, m_a(x)), m_a(x) = (μ₁ + x μ_a)/(1 + x), increasing from 0
  to d(μ₁, μ_a) on [0, ∞), with g_a'(x) = d(μ_a, m_a(x)); x_a(y) = g_a⁻¹(y);
* F(y) = Σ_{a ≠ 1} d(μ₁, m_a(x_a(y))) / d(μ_a, m_a(x_a(y))), increasing on [0, d(μ₁, μ₂)) from 0
  to ∞; y* solves F(y*) = 1;
* w₁* = 1/(1 + Σ_a x_a(y*)), w_a* = x_a(y*) w₁*, and T*(μ)⁻¹ = w₁* y*.

x_a(y) by Newton's method from the last y's value, safeguarded by bisection (g_a is increasing),
y* by bisection on [0, d(μ₁, μ₂)] (F is increasing): plain Python over ``math``, so that a
compiled copy (:mod:`.oracle_kernels`, chosen by :mod:`.solvers`) gives the same numbers.
Everything takes the arms in any order; the best arm must be unique (:func:`optimal_weights`
returns the uniform allocation and T* = ∞ otherwise, which the identifiers' forced exploration
then follows).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["all_kl_bounds", "characteristic_time", "divergence", "kl_bounds", "lower_bound",
           "optimal_weights"]

_CLIP = 1e-15  # Bernoulli means are kept in [CLIP, 1 − CLIP] inside the divergence's log


def divergence(p: float, q: float, gaussian: bool, sigma: float) -> float:
    """d(p, q): (p − q)²/(2σ²) (Gaussian) or the Bernoulli kl(p, q) (0 log 0 = 0)."""
    if gaussian:
        return (p - q) * (p - q) / (2.0 * sigma * sigma)
    q = min(max(q, _CLIP), 1.0 - _CLIP)
    out = 0.0
    if p > 0.0:
        out += p * math.log(p / q)
    if p < 1.0:
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


def _g(x: float, top: float, mu: float, gaussian: bool, sigma: float) -> float:
    m = (top + x * mu) / (1.0 + x)
    return divergence(top, m, gaussian, sigma) + x * divergence(mu, m, gaussian, sigma)


def _x_of_y(y: float, top: float, mu: float, gaussian: bool, sigma: float, guess: float
            ) -> float:
    """x_a(y) = g_a⁻¹(y) for 0 < y < d(top, mu): Newton's method (g_a'(x) = d(μ_a, m_a(x)))
    from ``guess``, safeguarded by a bisection bracket (g_a is increasing)."""
    lo, hi = 0.0, 1.0
    while _g(hi, top, mu, gaussian, sigma) < y and hi < 1e15:
        lo = hi
        hi *= 2.0
    x = guess if lo < guess < hi else 0.5 * (lo + hi)
    for _ in range(100):
        m = (top + x * mu) / (1.0 + x)
        gx = divergence(top, m, gaussian, sigma) + x * divergence(mu, m, gaussian, sigma) - y
        if gx > 0:
            hi = x
        else:
            lo = x
        if abs(gx) <= 1e-13 * y or hi - lo <= 1e-13 * hi:
            break
        slope = divergence(mu, m, gaussian, sigma)
        step = x - gx / slope if slope > 0.0 else lo - 1.0
        if abs(step - x) <= 1e-14 * x:  # Newton has converged to round-off
            return step
        x = step if lo < step < hi else 0.5 * (lo + hi)
    return x


def _ratio_sum(y: float, means: np.ndarray, best: int, gaussian: bool, sigma: float,
               xs: np.ndarray) -> float:
    """F(y) − 1, filling ``xs`` with x_a(y) (0 for the best arm; ``xs`` holds the starting
    guesses on entry)."""
    top = means[best]
    total = 0.0
    for a in range(means.shape[0]):
        if a == best:
            xs[a] = 0.0
            continue
        x = _x_of_y(y, top, means[a], gaussian, sigma, xs[a])  # warm: the last y's x_a
        xs[a] = x
        m = (top + x * means[a]) / (1.0 + x)
        total += divergence(top, m, gaussian, sigma) / divergence(means[a], m, gaussian, sigma)
    return total - 1.0


def optimal_weights(means: np.ndarray, gaussian: bool, sigma: float, out: np.ndarray
                    ) -> float:
    """w*(μ) into ``out`` (K,) and T*(μ)⁻¹ returned (0 when the best arm is not unique, with
    ``out`` uniform)."""
    K = means.shape[0]
    best = 0
    for a in range(1, K):
        if means[a] > means[best]:
            best = a
    second = -math.inf
    for a in range(K):
        if a != best and means[a] > second:
            second = means[a]
    top = means[best]
    y_max = divergence(top, second, gaussian, sigma)
    if not (second < top) or not (y_max > 0.0):
        for a in range(K):
            out[a] = 1.0 / K
        return 0.0
    for a in range(K):
        out[a] = 1.0  # Newton's first guesses
    lo, hi = 0.0, y_max
    for _ in range(52):  # F is increasing: bisection to a relative 2⁻⁵² of d(μ₁, μ₂)
        mid = 0.5 * (lo + hi)
        if _ratio_sum(mid, means, best, gaussian, sigma, out) > 0.0:
            hi = mid
        else:
            lo = mid
    y = 0.5 * (lo + hi)
    _ratio_sum(y, means, best, gaussian, sigma, out)
    out[best] = 1.0
    total = 0.0
    for a in range(K):
        total += out[a]
    for a in range(K):
        out[a] /= total
    return out[best] * y


def kl_bounds(mean: float, n: int, level: float, gaussian: bool, sigma: float
              ) -> tuple[float, float]:
    """(L, U): the smallest and largest q with n d(mean, q) ≤ level, the KL confidence bounds
    of KL-LUCB (bisection, 50 halvings; Gaussian in closed form)."""
    if gaussian:
        w = sigma * math.sqrt(2.0 * level / n)
        return mean - w, mean + w
    p = min(max(mean, 0.0), 1.0)
    lo, hi = p, 1.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if n * divergence(p, mid, False, 1.0) <= level:
            lo = mid
        else:
            hi = mid
    upper = lo
    lo, hi = 0.0, p
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if n * divergence(p, mid, False, 1.0) <= level:
            hi = mid
        else:
            lo = mid
    return hi, upper


def all_kl_bounds(means: np.ndarray, pulls: np.ndarray, level: float, gaussian: bool,
                  sigma: float, lower: np.ndarray, upper: np.ndarray) -> None:
    """:func:`kl_bounds` of every arm, into ``lower`` and ``upper``."""
    for a in range(means.shape[0]):
        lower[a], upper[a] = kl_bounds(means[a], pulls[a], level, gaussian, sigma)


def characteristic_time(means: np.ndarray, model: str = "bernoulli", sigma: float = 1.0
                        ) -> tuple[float, np.ndarray]:
    """(T*(μ), w*(μ)) of Garivier & Kaufmann (2016, Theorem 1 and Section 2.2)."""
    means = np.ascontiguousarray(means, dtype=float)
    w = np.empty(means.size)
    inv = optimal_weights(means, model == "gaussian", float(sigma), w)
    return (math.inf if inv <= 0 else 1.0 / inv), w


def lower_bound(means: np.ndarray, delta: float, model: str = "bernoulli",
                sigma: float = 1.0) -> float:
    """T*(μ) kl(δ, 1 − δ): no δ-correct algorithm needs fewer pulls in expectation (GK16,
    Theorem 1)."""
    t_star, _ = characteristic_time(means, model, sigma)
    return t_star * divergence(delta, 1.0 - delta, False, 1.0)
