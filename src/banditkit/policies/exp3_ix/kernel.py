"""The compiled trial of EXP3-IX (Neu 2015, Algorithm 1; issue 36 §1): one loop over the rounds
of one trial, compiled by numba through :func:`banditkit.jit.njit`, reading the streams
:func:`banditkit.simulate` of :class:`~banditkit.policies.exp3_ix.EXP3IX` reads (one ξ uniform
per round, the noise of :mod:`banditkit.policies.index.kernels`) and computing each round
with the class's floating-point operations in the class's order:

* p = w / Σw with w = exp(−η (L̃ − min L̃)); Σw is numpy's pairwise sum (:func:`pairwise_sum`,
  the order ``ndarray.sum`` adds in, for up to :data:`MAX_ARMS` arms), so p is the class's to
  the bit wherever ``exp`` is;
* the arm is the first k whose running sum of p exceeds u (``searchsorted`` with
  ``side="right"`` on a nondecreasing array), K − 1 when none does;
* L̃_arm += (1 − r) / (p_arm + γ).

``math.exp`` is the C library's, and so is the class's
(:func:`~banditkit.policies.exp3_ix.exp_weights`; numpy's AVX-512 ``exp`` rounds differently,
and EXP3-IX amplifies a last-bit difference into different pulls within a few hundred rounds
at a large η), so every operation is the class's and the pulls agree bit for bit.

This module imports numba (through :mod:`banditkit.jit`): only the EXP3-IX engine imports it,
when :func:`banditkit.jit.available`.
"""

from __future__ import annotations

import math

import numpy as np

from ...jit import njit
from ..index.kernels import _reward

__all__ = ["MAX_ARMS", "exp3_ix_trial", "pairwise_sum"]


#: The most arms the compiled trial takes: numpy's pairwise sum of up to 128 values is one
#: block (:func:`pairwise_sum`); above, numpy recurses, and numba's on-disk cache of a kernel
#: calling a recursive function crashed when loaded (numba 0.62), so more arms keep the
#: numpy lock-step.
MAX_ARMS = 128


@njit
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """Σ a[lo : lo + n], n ≤ :data:`MAX_ARMS`, in the order numpy's ``add.reduce`` of float64
    adds (its pairwise summation: a plain loop below 8 values, else eight interleaved partial
    sums), so the sum is numpy's to the last bit."""
    if n < 8:
        total = 0.0
        for i in range(n):
            total += a[lo + i]
        return total
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += a[lo + i]
        i += 1
    return total


@njit
def exp3_ix_trial(noise: np.random.Generator, xi: np.random.Generator, gaussian: bool,
                  means: np.ndarray, thresholds: np.ndarray, below: np.ndarray,
                  noise_sigma: float, horizon: int, eta: float, gamma: float,
                  arms: np.ndarray, pulls: np.ndarray, sums: np.ndarray,
                  losses: np.ndarray, weights: np.ndarray) -> None:
    """One trial of EXP3-IX with learning rate ``eta`` and implicit exploration ``gamma``.
    Fills ``arms`` (horizon,), ``pulls``, ``sums`` and the loss estimates ``losses`` (K,),
    which start at zero; ``weights`` (K,) is scratch."""
    K = means.shape[0]
    scale = -eta  # the class's -self.eta * (L̃ - min L̃)
    for t in range(horizon):
        low = losses[0]
        for k in range(1, K):
            if losses[k] < low:
                low = losses[k]
        for k in range(K):
            weights[k] = math.exp(scale * (losses[k] - low))
        total = pairwise_sum(weights, 0, K)
        u = xi.random()
        # searchsorted(cumsum(p), u, "right"): the first k whose running sum exceeds u (the
        # sums never decrease: p ≥ 0), K - 1 when none does (u just below 1, rounded sums)
        arm = K - 1
        running = 0.0
        for k in range(K):
            running += weights[k] / total
            if running > u:
                arm = k
                break
        r = _reward(noise, gaussian, arm, means, thresholds, below, noise_sigma)
        losses[arm] += (1.0 - r) / (weights[arm] / total + gamma)
        pulls[arm] += 1.0
        sums[arm] += r
        arms[t] = arm
