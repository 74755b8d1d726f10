"""Compiled trials of UCB1, KL-UCB and Thompson sampling (issue 18 §3): one loop over the
rounds of one trial, compiled by numba through :func:`banditkit.jit.njit`.

The numpy lock-step driver (:func:`~banditkit.policies.sequential_lockstep.index_lockstep`)
spends a dozen to forty numpy calls per round, about a microsecond each whatever the number of
trials: with the 20 trials of ``replicable-bandits:fig1`` that is 7-18x a plain C loop. These
kernels run the round loop of one trial as compiled code instead, reading the same two streams
in the same order as :func:`banditkit.simulate` of the sequential class:

* noise: one ``random()`` (Bernoulli, the uniform numpy's ``binomial(1, μ)`` inverts, see
  :func:`~banditkit.policies.sequential_lockstep._bernoulli_rule`) or one ``standard_normal()``
  (Gaussian) per pull, from the trial's noise ``Generator``;
* ξ: the policy's ``n_draws`` values per round (``random()`` or ``standard_normal()``) from the
  trial's ξ ``Generator``, read every round as the class reads them.

numba draws from a ``numpy.random.Generator`` with NumPy's own algorithms (its ``random`` and
``standard_normal`` read the bit generator as numpy does), and every score below is the same
floating-point expression, in the same order, as the class's numpy ``scores`` (``math.log`` and
numpy's ``log`` are the same C library function on builds without numpy's AVX-512 loops; where
numpy's SIMD loops differ from it by an ulp, decisions still agree unless two scores fall within
that ulp). The Beta sampler's normal quantile and its rare inverse-CDF fallback are scipy's own
compiled functions (``scipy.special.cython_special``), passed in as function pointers, so they
are bit for bit those :func:`~banditkit.policies.thompson.beta_from_uniforms` calls. The tests
(``tests/test_sequential_kernels.py``) check the pulls, rewards and regret against ``simulate``
and the numpy lock-step path, with numba and without it (the kernels then run as plain Python,
slowly, on short horizons).

This module imports numba (through :mod:`banditkit.jit`) and is imported only by the lock-step
driver when :func:`banditkit.jit.available`, never on the CLI's start-up path.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..estimation.beta_kernels import gamma_attempt_scalar as _gamma_attempt
from ..estimation.beta_kernels import scipy_functions
from ..jit import njit
from .index_policy import IndexPolicy
from .kl_ucb import _BELOW_ONE, KLUCB, NEWTON_STEPS
from .thompson import BETA_UNIFORMS, ThompsonSampling
from .ucb import UCB1

__all__ = ["RULE_KLUCB_BERNOULLI", "RULE_KLUCB_GAUSSIAN", "RULE_UCB1", "TrialKernel",
           "index_trial", "kernel_for", "scipy_functions", "thompson_trial"]

#: The index rules of :func:`index_trial`.
RULE_UCB1, RULE_KLUCB_BERNOULLI, RULE_KLUCB_GAUSSIAN = 0, 1, 2


@njit
def _reward(noise: np.random.Generator, gaussian: bool, arm: int, means: np.ndarray,
            thresholds: np.ndarray, below: np.ndarray, sigma: float) -> float:
    """One pull's reward, as simulate draws it (see sequential_lockstep._Noise)."""
    if gaussian:
        # simulate: n·μ + z·sqrt(n)·σ with n = 1, the same operations as the lock-step path
        return 1.0 * means[arm] + noise.standard_normal() * 1.0 * sigma
    u = noise.random()
    # numpy's binomial(1, μ): U > thr for μ ≤ 1/2, U ≤ thr for μ > 1/2 (it inverts 1 − μ)
    return 1.0 if (u > thresholds[arm]) != below[arm] else 0.0


@njit
def _klucb_index(mean: float, n: float, level: float) -> float:
    """:func:`~banditkit.policies.kl_ucb.klucb_bernoulli_index` for one arm, operation for
    operation (the same start, the same ``NEWTON_STEPS`` monotone Newton steps)."""
    p = min(max(mean, 0.0), 1.0)
    b = level / n
    plogp = p * math.log(p) if p > 0 else 0.0
    neg_entropy = plogp + ((1 - p) * math.log1p(-p) if p < 1 else 0.0)
    tail = 1.0 - (1.0 - p) * math.exp(-(b - plogp) / (1.0 - p)) if p < 1 else 1.0
    q = min(min(p + math.sqrt(b / 2), tail), _BELOW_ONE)
    q1 = 1.0 - p
    for _ in range(NEWTON_STEPS):
        f = neg_entropy - p * math.log(q) - q1 * math.log1p(-q) - b
        if f > 0:  # above the root; at or below it the iterate stays (as numpy's where)
            step = q - f / ((q - p) / (q * (1.0 - q)))
            if step < q:
                q = step
    return q


@njit
def index_trial(noise: np.random.Generator, gaussian: bool, means: np.ndarray,
                thresholds: np.ndarray, below: np.ndarray, noise_sigma: float, horizon: int,
                rule: int, constant: float, sigma: float, arms: np.ndarray,
                pulls: np.ndarray, sums: np.ndarray) -> None:
    """One trial of UCB1 or KL-UCB: every arm once in index order, then the first maximiser
    of the index (np.argmax's tie rule). Fills ``arms`` (horizon,), ``pulls`` and ``sums``
    (K,), which start at zero.

    ``rule``: :data:`RULE_UCB1` (μ̂ + sqrt(c ln t / n), ``constant`` = c; Auer et al. 2002),
    :data:`RULE_KLUCB_BERNOULLI` or :data:`RULE_KLUCB_GAUSSIAN` (f(t) = log t + c log log t,
    ``constant`` = c, Gaussian scale ``sigma``; Garivier & Cappé 2011).
    """
    K = means.shape[0]
    for t in range(horizon):
        arm = t
        if t >= K:
            lt = math.log(t)  # t ≥ K ≥ 1: the class's log(max(t, 1))
            if rule == RULE_UCB1:
                scale = constant * lt
            else:  # exploration_level(t, c)
                scale = lt + constant * math.log(max(lt, 1.0))
            arm = 0
            best = 0.0
            for k in range(K):
                n = pulls[k]
                if rule == RULE_UCB1:
                    score = sums[k] / n + math.sqrt(scale / n)
                elif rule == RULE_KLUCB_GAUSSIAN:
                    score = sums[k] / n + sigma * math.sqrt(2 * scale / n)
                else:
                    score = _klucb_index(sums[k] / n, n, scale)
                if k == 0 or score > best:
                    best = score
                    arm = k
        r = _reward(noise, gaussian, arm, means, thresholds, below, noise_sigma)
        pulls[arm] += 1.0
        sums[arm] += r
        arms[t] = arm


@njit
def thompson_trial(noise: np.random.Generator, xi: np.random.Generator, gaussian: bool,
                   means: np.ndarray, thresholds: np.ndarray, below: np.ndarray,
                   noise_sigma: float, horizon: int, beta: bool, a0: float, b0: float,
                   sigma: float, ndtri: Callable, betaincinv: Callable, arms: np.ndarray,
                   pulls: np.ndarray, sums: np.ndarray, draws: np.ndarray) -> None:
    """One trial of Thompson sampling (Agrawal & Goyal 2012, 2013): each round reads ``draws``
    (the round's ξ: 5K uniforms for the Beta posterior, K normals for the Gaussian one) and
    plays the first maximiser of θ. Fills ``arms``, ``pulls`` and ``sums`` as
    :func:`index_trial`.

    Beta(S + a0, F + b0): G_a / (G_a + G_b) from one Marsaglia–Tsang attempt each (normal by
    ``ndtri``), else the inverse CDF ``betaincinv`` at the fifth uniform, as
    :func:`~banditkit.policies.thompson.beta_from_uniforms`. Gaussian: N(S/(n+1), σ²/(n+1)).
    """
    K = means.shape[0]
    for t in range(horizon):
        for j in range(draws.shape[0]):
            draws[j] = xi.random() if beta else xi.standard_normal()
        arm = 0
        best = 0.0
        for k in range(K):
            if beta:
                a = sums[k] + a0
                b = (pulls[k] - sums[k]) + b0
                ga, ok_a = _gamma_attempt(a, draws[k], draws[K + k], ndtri)
                gb, ok_b = _gamma_attempt(b, draws[2 * K + k], draws[3 * K + k], ndtri)
                if ok_a and ok_b:
                    theta = ga / (ga + gb)
                else:
                    theta = betaincinv(a, b, draws[4 * K + k], 0)
            else:
                n1 = pulls[k] + 1.0
                theta = sums[k] / n1 + sigma * draws[k] / math.sqrt(n1)
            if k == 0 or theta > best:
                best = theta
                arm = k
        r = _reward(noise, gaussian, arm, means, thresholds, below, noise_sigma)
        pulls[arm] += 1.0
        sums[arm] += r
        arms[t] = arm


#: ``kernel(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon, arms, pulls,
#: sums)``: one trial, filling ``arms``, ``pulls`` and ``sums``.
TrialKernel = Callable[..., None]


def kernel_for(policy: IndexPolicy) -> TrialKernel | None:
    """The compiled trial of ``policy``'s exact class with its parameters, or ``None`` for
    other index policies (subclasses may change ``scores``: they keep the numpy path)."""
    kind = type(policy)
    if kind is UCB1 or kind is KLUCB:
        if kind is UCB1:
            rule, constant, sigma = RULE_UCB1, policy.exploration, 1.0  # type: ignore
        else:
            rule = (RULE_KLUCB_GAUSSIAN if policy.divergence == "gaussian"  # type: ignore
                    else RULE_KLUCB_BERNOULLI)
            constant, sigma = policy.c, policy.sigma  # type: ignore[attr-defined]

        def run_index(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon,
                      arms, pulls, sums) -> None:
            index_trial(noise, gaussian, means, thresholds, below, noise_sigma, horizon, rule,
                        constant, sigma, arms, pulls, sums)
        return run_index
    if kind is ThompsonSampling:
        ts: ThompsonSampling = policy  # type: ignore[assignment]
        beta = ts.posterior == "beta"
        try:
            ndtri, betaincinv = scipy_functions()
        except (AttributeError, KeyError, RuntimeError):  # a scipy without these C functions:
            return None  # the numpy path, the same numbers
        a0, b0 = ts.prior
        width = BETA_UNIFORMS * ts.n_arms if beta else ts.n_arms

        def run_thompson(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon,
                         arms, pulls, sums) -> None:
            thompson_trial(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon,
                           beta, float(a0), float(b0), ts.sigma, ndtri, betaincinv, arms,
                           pulls, sums, np.empty(width))
        return run_thompson
    return None
