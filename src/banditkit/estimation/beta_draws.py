"""Exact Beta draws from a fixed number of uniforms, shared by Thompson sampling
(:mod:`banditkit.policies.index.thompson`) and top-two Thompson sampling
(:mod:`banditkit.identification.top_two`), and their compiled kernels.

A Beta(a, b) draw reads ``BETA_UNIFORMS`` = 5 uniforms per arm: G_a/(G_a + G_b) with one
Marsaglia–Tsang (2000, "A simple method for generating gamma variables") attempt for each Gamma
(the normal by inversion, ``scipy.special.ndtri``); when either attempt is rejected, or a shape is
below 1, the Beta CDF is inverted at the fifth uniform (``scipy.special.betaincinv``).
Conditionally on acceptance a Marsaglia–Tsang draw is exactly Gamma(α)-distributed for α ≥ 1,
and the fallback is exact and independent of the attempts, so every draw is an exact Beta draw.

Marsaglia & Tsang's acceptance test is valid only for α ≥ 1 (for α < 1 they boost a
Gamma(α + 1) draw by U^{1/α}); priors below 1 (Jeffreys' Beta(½, ½)) give shapes below 1 on arms
with few successes or failures, and those draws always take the inverse-CDF fallback, which is
exact for every a, b > 0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BETA_UNIFORMS", "beta_from_uniforms", "gamma_attempt"]

#: Uniforms read per arm per Beta draw: normal and accept for G_a, the same for G_b, fallback.
BETA_UNIFORMS = 5


def gamma_attempt(alpha: np.ndarray, u_normal: np.ndarray, u_accept: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """One Marsaglia–Tsang attempt for Gamma(α): (value, accepted); never accepted for α < 1
    (the method's test holds for α ≥ 1 only)."""
    from scipy.special import ndtri  # here, not at import: the CLI's start-up stays light

    valid = alpha >= 1.0
    d = np.where(valid, alpha, 1.0) - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    x = ndtri(u_normal)
    y = 1.0 + c * x
    # y·y·y, not y ** 3: numpy's ** 3 is pow, which is numpy's SIMD pow (SVML) on AVX-512
    # machines and the C library's elsewhere (they differ in the last bit on ~5% of draws), and
    # pow costs a third of the compiled kernel's time; two multiplications are correctly rounded
    # IEEE operations, the same bits in numpy, in the compiled kernels and on every machine.
    v = y * y * y
    positive = v > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_v = np.log(np.where(positive, v, 1.0))
        accept = valid & positive & (np.log(u_accept) < 0.5 * x * x + d - d * v + d * log_v)
    return d * v, accept


def beta_from_uniforms(a: np.ndarray, b: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Exact Beta(a, b) draws (a, b > 0, shape (..., K)) from 5K uniforms ``u`` (..., 5K)."""
    K = a.shape[-1]
    shape = (*u.shape[:-1], K)
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    ga, ok_a = gamma_attempt(a, u[..., :K], u[..., K:2 * K])
    gb, ok_b = gamma_attempt(b, u[..., 2 * K:3 * K], u[..., 3 * K:4 * K])
    ok = ok_a & ok_b
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(ok, ga / (ga + gb), 0.0)
    if not ok.all():
        miss = ~ok
        from scipy.special import betaincinv

        theta[miss] = betaincinv(a[miss], b[miss], u[..., 4 * K:][miss])
    return theta
