"""Compiled trials of UCB1, KL-UCB, MOSS, Bayes-UCB and Thompson sampling (issue 18 §3,
issue 36 §1): one loop over the rounds of one trial, compiled by numba through
:func:`banditkit.jit.njit`.

The numpy lock-step driver (:func:`~banditkit.policies.index.lockstep.index_lockstep`)
spends a dozen to forty numpy calls per round, about a microsecond each whatever the number of
trials: with the 20 trials of ``replicable-bandits:fig1`` that is 7-18x a plain C loop. These
kernels run the round loop of one trial as compiled code instead, reading the same two streams
in the same order as :func:`banditkit.simulate` of the sequential class:

* noise: one ``random()`` (Bernoulli, the uniform numpy's ``binomial(1, μ)`` inverts, see
  :func:`~banditkit.policies.index.lockstep._bernoulli_rule`) or one ``standard_normal()``
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
are bit for bit those :func:`~banditkit.policies.index.thompson.beta_from_uniforms` calls. The tests
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

from ...estimation.beta_kernels import gamma_attempt_scalar as _gamma_attempt
from ...estimation.beta_kernels import scipy_functions
from ...jit import njit
from .base import IndexPolicy
from .bayes_ucb import BayesUCB
from .kl_ucb import _BELOW_ONE, KLUCB, NEWTON_STEPS
from .moss import MOSS
from .thompson import BETA_UNIFORMS, ThompsonSampling
from .ucb import UCB1

__all__ = ["LANES", "RULE_KLUCB_BERNOULLI", "RULE_KLUCB_GAUSSIAN", "RULE_MOSS", "RULE_UCB1",
           "TrialKernel", "bayes_ucb_scores", "bayes_ucb_trial", "index_trial", "kernel_for",
           "scipy_functions",
           "thompson_trial"]

#: The index rules of :func:`index_trial`.
RULE_UCB1, RULE_KLUCB_BERNOULLI, RULE_KLUCB_GAUSSIAN, RULE_MOSS = 0, 1, 2, 3


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
    """:func:`~banditkit.policies.index.kl_ucb.klucb_bernoulli_index` for one arm, operation for
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
def _first_argmax(score: np.ndarray, K: int) -> int:
    """The first arm of the highest score among ``score[:K]`` (numpy's ``argmax`` tie rule)."""
    arm = 0
    best = score[0]
    for k in range(1, K):
        if score[k] > best:
            best = score[k]
            arm = k
    return arm


@njit
def _log_log(lt: float, c: float) -> float:
    """c · log(max(log t, 1)) of :func:`~banditkit.policies.index.kl_ucb.exploration_level`: 0.0
    without the logarithm when c = 0 (log(max(lt, 1)) ≥ 0 is finite, so c · it is 0.0 and
    lt + 0.0 is lt, the same bits), which spares c = 0, the default, one ``log`` a round."""
    if c == 0.0:
        return 0.0
    return c * math.log(max(lt, 1.0))


#: Lanes of the index loops: arms are held in arrays padded to a multiple of 8, so the loop
#: over one block of 8 has a trip count known when it is compiled, and LLVM unrolls it and
#: computes the 8 divisions and square roots as vector instructions (IEEE-exact, so the same
#: bits as one at a time). With the number of arms only known at run time the loop stayed a
#: scalar loop: UCB1's trial took 1.6-1.9x the C loop, whose K is a compile-time constant;
#: padded, 1.0x (``benchmarks/bench_sequential.py``).
LANES = 8


@njit
def index_trial(noise: np.random.Generator, gaussian: bool, means: np.ndarray,
                thresholds: np.ndarray, below: np.ndarray, noise_sigma: float, horizon: int,
                rule: int, constant: float, sigma: float, arms: np.ndarray,
                pulls: np.ndarray, sums: np.ndarray) -> None:
    """One trial of UCB1, KL-UCB or MOSS: every arm once in index order, then the first
    maximiser of the index (np.argmax's tie rule). Fills ``arms`` (horizon,), ``pulls`` and
    ``sums`` (K,), which start at zero.

    ``rule``: :data:`RULE_UCB1` (μ̂ + sqrt(c ln t / n), ``constant`` = c; Auer et al. 2002),
    :data:`RULE_KLUCB_BERNOULLI` or :data:`RULE_KLUCB_GAUSSIAN` (f(t) = log t + c log log t,
    ``constant`` = c, Gaussian scale ``sigma``; Garivier & Cappé 2011), :data:`RULE_MOSS`
    (μ̂ + sqrt(max(log(n / (K n_k)), 0) / n_k), ``constant`` = the policy's horizon n;
    Audibert & Bubeck 2009).

    Each arm's mean (MOSS: its whole index, which reads only the arm's own counts) changes
    only when the arm is pulled, so it is kept from its last pull instead of divided again
    every round: the same expression on the same values, the same bits. Padding lanes (see
    :data:`LANES`) hold one pull and a mean of −∞, so their scores are −∞ and never chosen
    (the argmax reads the K real arms only).
    """
    K = means.shape[0]
    width = (K + LANES - 1) // LANES * LANES
    n = np.ones(width)
    n[:K] = 0.0
    total = np.zeros(width)
    cached = np.full(width, -math.inf)
    score = np.empty(width)
    for t in range(horizon):
        arm = t
        if t >= K:
            lt = math.log(t)  # t ≥ K ≥ 1: the class's log(max(t, 1))
            if rule == RULE_UCB1:
                scale = constant * lt
                for block in range(0, width, LANES):
                    for j in range(block, block + LANES):
                        score[j] = cached[j] + math.sqrt(scale / n[j])
            elif rule == RULE_KLUCB_GAUSSIAN:  # exploration_level(t, c)
                scale = 2 * (lt + _log_log(lt, constant))
                for block in range(0, width, LANES):
                    for j in range(block, block + LANES):
                        score[j] = cached[j] + sigma * math.sqrt(scale / n[j])
            elif rule == RULE_MOSS:
                score[:K] = cached[:K]
            else:
                scale = lt + _log_log(lt, constant)
                for k in range(K):
                    score[k] = _klucb_index(cached[k], n[k], scale)
            arm = _first_argmax(score, K)
        r = _reward(noise, gaussian, arm, means, thresholds, below, noise_sigma)
        n[arm] += 1.0
        total[arm] += r
        arms[t] = arm
        if rule == RULE_MOSS:  # MOSS.scores: log(n / (K n_k)), floored at 0
            cached[arm] = (total[arm] / n[arm]
                           + math.sqrt(max(math.log(constant / (K * n[arm])), 0.0) / n[arm]))
        else:
            cached[arm] = total[arm] / n[arm]
    pulls[:] = n[:K]
    sums[:] = total[:K]


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
    :func:`~banditkit.policies.index.thompson.beta_from_uniforms`. Gaussian: N(S/(n+1), σ²/(n+1)).
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


@njit
def bayes_ucb_scores(pulls: np.ndarray, sums: np.ndarray, t: int, scale: float,
                     betaincinv: Callable, out: np.ndarray) -> None:
    """:meth:`BayesUCB.scores <banditkit.policies.index.bayes_ucb.BayesUCB.scores>` after ``t``
    pulls into ``out``: each arm's Beta(S_k + 1, n_k − S_k + 1) quantile of order
    1 − 1 / ((t + 1) ``scale``)."""
    level = 1.0 - 1.0 / ((t + 1) * scale)  # quantile_order(t + 1, c, n)
    for k in range(pulls.shape[0]):
        out[k] = betaincinv(sums[k] + 1.0, pulls[k] - sums[k] + 1.0, level, 0)


@njit
def bayes_ucb_trial(noise: np.random.Generator, gaussian: bool, means: np.ndarray,
                    thresholds: np.ndarray, below: np.ndarray, noise_sigma: float,
                    horizon: int, scale: float, betaincinv: Callable, arms: np.ndarray,
                    pulls: np.ndarray, sums: np.ndarray) -> None:
    """One trial of Bayes-UCB (Kaufmann, Cappé & Garivier 2012, Algorithm 1): at round t + 1
    the first maximiser of the Beta(S_k + 1, n_k − S_k + 1) quantile of order
    1 − 1 / ((t + 1) ``scale``), ``scale`` = (log n)^c, by scipy's ``betaincinv`` (the function
    :meth:`~banditkit.policies.index.bayes_ucb.BayesUCB.scores` calls). No initial round-robin.
    Fills
    ``arms``, ``pulls`` and ``sums`` as :func:`index_trial`."""
    K = means.shape[0]
    score = np.empty(K)
    for t in range(horizon):
        bayes_ucb_scores(pulls, sums, t, scale, betaincinv, score)
        arm = _first_argmax(score, K)
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
    if kind is UCB1 or kind is KLUCB or kind is MOSS:
        if kind is UCB1:
            rule, constant, sigma = RULE_UCB1, policy.exploration, 1.0  # type: ignore
        elif kind is MOSS:
            rule, constant, sigma = RULE_MOSS, float(policy.horizon), 1.0  # type: ignore
        else:
            rule = (RULE_KLUCB_GAUSSIAN if policy.divergence == "gaussian"  # type: ignore
                    else RULE_KLUCB_BERNOULLI)
            constant, sigma = policy.c, policy.sigma  # type: ignore[attr-defined]

        def run_index(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon,
                      arms, pulls, sums) -> None:
            index_trial(noise, gaussian, means, thresholds, below, noise_sigma, horizon, rule,
                        constant, sigma, arms, pulls, sums)
        return run_index
    if kind is BayesUCB:
        try:
            betaincinv = scipy_functions()[1]
        except (AttributeError, KeyError, RuntimeError):  # as Thompson sampling below
            return None
        bayes: BayesUCB = policy  # type: ignore[assignment]
        # quantile_order's (log n)^c, computed as it does (a Python float power)
        scale = 1.0 if bayes.c == 0 else float(np.log(bayes.horizon)) ** bayes.c

        def run_bayes_ucb(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon,
                          arms, pulls, sums) -> None:
            bayes_ucb_trial(noise, gaussian, means, thresholds, below, noise_sigma, horizon,
                            scale, betaincinv, arms, pulls, sums)
        return run_bayes_ucb
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
