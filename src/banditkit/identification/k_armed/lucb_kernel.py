"""One trial of KL-LUCB (:class:`~.lucb.KLLUCB`, Kaufmann & Kalyanakrishnan 2013) at compiled
speed: :func:`banditkit.simulate`'s result from the same seeds, bit for bit.

The kernel runs the class's rounds:
- the first batch pulls every arm once;
- each later round computes the KL confidence bounds at β(t, δ)
  (:func:`~.oracle.all_kl_bounds`, compiled), then h_t and l_t;
- it stops when U_l − L_h < ε, else pulls h_t then l_t as one batch.

The environment reads one noise value per pull, in batch order
(:func:`~banditkit.envs.noise_kernels.one_reward`). A batch that would pass the horizon is cut
to its first pull, as ``simulate`` cuts it. KL-LUCB has no internal randomness. A pull costs
about 40 µs through the protocol loop and a few µs compiled.

LUCB1 (:class:`~.lucb.LUCB`, Hoeffding bounds) runs the same rounds with
β(u, t) = √(log(k₁ K t⁴/δ)/(2u)) (:func:`lucb1_level`). The class computes t⁴ as an exact Python
integer (int64 would overflow past t ≈ 55,108) that the product with the float k₁K rounds once
to the nearest double. The kernel takes a = float(t²), exact while t² < 2⁵³, and a·a, one IEEE
multiplication of exact operands: the same correctly rounded double, hence the same bits. It
runs where every round has t ≤ 94,906,265 (t² < 2⁵³): a finite cap of at most
:data:`LUCB1_MAX_PULLS` pulls.

This module imports numba when imported: only :func:`kl_lucb_engine` imports it, on first use.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...engines import Engine
from ...envs.base import Environment
from ...envs.multi_armed import BernoulliBandit, GaussianBandit
from ...envs.noise_kernels import one_reward
from ...jit import njit
from ...protocol import DecisionLog
from ...rng import SeedLike, as_generator
from ...trial import Trial
from ..kernel_trial import CHUNK, DONE, FULL, STOPPED, env_noise, identification_trial, run_cap
from .lucb import KLLUCB, LUCB
from .oracle_kernels import all_kl_bounds

__all__ = ["LUCB1_MAX_PULLS", "kernel_eligible", "kl_lucb_engine", "kl_lucb_steps",
           "lucb1_engine", "lucb1_level", "run_kl_lucb"]

#: LUCB1's kernel runs caps up to 2²⁷ pulls: rounds t ≤ 2²⁶ + 1, so t² < 2⁵³ (see the module
#: docstring)
LUCB1_MAX_PULLS = 1 << 27


@njit
def lucb1_level(k1: float, n_arms: int, rounds: int, delta: float) -> float:
    """log(k₁ K t⁴/δ) of LUCB1 with ``t = rounds``, the bits of the class's
    ``math.log(k1 * K * t ** 4 / delta)`` while t² < 2⁵³: float(t²)² is the double nearest the
    integer t⁴, as Python's int-to-float conversion gives it."""
    a = float(rounds * rounds)
    return math.log(k1 * n_arms * (a * a) / delta)


@njit
def kl_lucb_steps(noise: np.random.Generator, gaussian_env: bool, env_means: np.ndarray,
                  thresholds: np.ndarray, below: np.ndarray, noise_sigma: float, t: int,
                  cap: int, rounds: int, k1: float, alpha: float, heuristic: bool,
                  delta: float, gaussian: bool, sigma: float, epsilon: float,
                  pulls: np.ndarray, sums: np.ndarray, out: np.ndarray, ends: np.ndarray,
                  state: np.ndarray, hoeffding: bool) -> tuple[int, int, int, int, int]:
    """KL-LUCB's batches (LUCB1's with ``hoeffding``: the bounds μ̂ ± β(N_a, t)) from pull
    count ``t`` until the rule stops, ``t`` reaches ``cap`` or the buffers are full. Returns
    (why, t, arms written, batches written, rounds); ``state[0]`` is the last gap U_l − L_h."""
    K = pulls.shape[0]
    mu = np.empty(K)
    lower = np.empty(K)
    upper = np.empty(K)
    n_out = 0
    n_end = 0
    while t < cap:
        if n_out + K > out.shape[0] or n_end + 1 > ends.shape[0]:
            return FULL, t, n_out, n_end, rounds
        if t == 0:  # the first batch: every arm once, one value each in arm order
            for k in range(K):
                r = one_reward(noise, gaussian_env, k, env_means, thresholds, below, noise_sigma)
                pulls[k] += 1
                sums[k] += r
                out[n_out] = k
                n_out += 1
            t = K
            ends[n_end] = n_out
            n_end += 1
            continue
        for k in range(K):
            mu[k] = sums[k] / pulls[k]
        if hoeffding:  # the class's np.sqrt(level / (2.0 * pulls)), arm by arm
            level = lucb1_level(k1, K, rounds, delta)
            for k in range(K):
                width = math.sqrt(level / (2.0 * pulls[k]))
                lower[k] = mu[k] - width
                upper[k] = mu[k] + width
        else:
            if heuristic:
                level = math.log((math.log(rounds) + 1.0) / delta)
            else:
                level = math.log(k1 * K * rounds ** alpha / delta)
            all_kl_bounds(mu, pulls, level, gaussian, sigma, lower, upper)
        h = 0
        for k in range(1, K):
            if mu[k] > mu[h]:
                h = k
        l_arm = -1
        for k in range(K):
            if k != h and (l_arm < 0 or upper[k] > upper[l_arm]):
                l_arm = k
        state[0] = upper[l_arm] - lower[h]
        if state[0] < epsilon:
            return STOPPED, t, n_out, n_end, rounds
        rounds += 1
        size = 2 if t + 2 <= cap else 1  # simulate cuts the batch to the horizon
        for i in range(size):
            arm = h if i == 0 else l_arm
            r = one_reward(noise, gaussian_env, arm, env_means, thresholds, below, noise_sigma)
            pulls[arm] += 1
            sums[arm] += r
            out[n_out] = arm
            n_out += 1
        t += size
        ends[n_end] = n_out
        n_end += 1
    return DONE, t, n_out, n_end, rounds


def kernel_eligible(alg: object, env: Environment, horizon: int | None) -> bool:
    """Whether the kernel runs this pair: a fresh :class:`KLLUCB` (its own class) on a
    :class:`BernoulliBandit` or :class:`GaussianBandit` of its K arms, or a fresh
    :class:`LUCB` (LUCB1) on a :class:`BernoulliBandit` with a cap of at most
    :data:`LUCB1_MAX_PULLS` pulls, with room for the first batch."""
    if type(alg) not in (KLLUCB, LUCB) or alg.t != 0 or alg.stopped or (
            alg.n_arms != env.n_arms):
        return False
    caps = [c for c in (horizon, alg.horizon) if c is not None]
    if caps and min(caps) < alg.n_arms:
        return False
    if type(alg) is LUCB:  # rewards in [0, 1], and t² exact as a double in every round
        return type(env) is BernoulliBandit and bool(caps) and min(caps) <= LUCB1_MAX_PULLS
    return type(env) in (BernoulliBandit, GaussianBandit)


def kl_lucb_engine(algorithm: object, env: Environment, horizon: int | None
                   ) -> Engine | None:
    """The engine of :class:`KLLUCB`: the compiled kernel when numba is available, on the pairs
    of :func:`kernel_eligible`."""
    from ...jit import available

    if not available() or not kernel_eligible(algorithm, env, horizon):
        return None
    return Engine("compiled kernel", run=run_kl_lucb)


def lucb1_engine(algorithm: object, env: Environment, horizon: int | None) -> Engine | None:
    """The engine of :class:`LUCB` (LUCB1): the compiled kernel when numba is available, on
    the pairs of :func:`kernel_eligible`."""
    return kl_lucb_engine(algorithm, env, horizon)


def run_kl_lucb(alg: LUCB, env: Environment, *, horizon: int | None = None,
                seed: SeedLike = 0, checkpoints: np.ndarray | None = None) -> Trial:
    """One trial of ``alg`` (KL-LUCB or LUCB1) on ``env`` through :func:`kl_lucb_steps`
    (``simulate``'s Trial)."""
    rng = as_generator(seed)
    start = time.perf_counter()
    gaussian_env, env_means, thresholds, below, noise_sigma = env_noise(env)
    cap = run_cap(horizon, alg.horizon)
    out = np.empty(CHUNK, dtype=np.int64)
    ends = np.empty(CHUNK, dtype=np.int64)
    state = np.full(1, math.inf)
    arms_seq: list[np.ndarray] = []
    ends_seq: list[np.ndarray] = []
    t, done_runs, rounds, stopped = 0, 0, alg.rounds, False
    hoeffding = type(alg) is LUCB
    alpha = 1.0 if hoeffding else float(alg.alpha)  # type: ignore[attr-defined]
    heuristic = not hoeffding and alg.threshold == "heuristic"
    while True:
        why, t, n_out, n_end, rounds = kl_lucb_steps(
            rng, gaussian_env, env_means, thresholds, below, noise_sigma, t, cap, rounds,
            alg.k1, alpha, heuristic, alg.delta, alg.gaussian, alg.sigma, alg.epsilon,
            alg.pulls, alg.sums, out, ends, state, hoeffding)
        arms_seq.append(out[:n_out].copy())
        ends_seq.append(ends[:n_end] + done_runs)
        done_runs += n_out
        if why == STOPPED:
            stopped = True
            break
        if why == DONE:
            break
    steps = np.concatenate(arms_seq)
    alg.rounds, alg.gap, alg._stopped = int(rounds), float(state[0]), stopped
    log = DecisionLog.from_runs(steps, np.ones(steps.size, dtype=np.int64),
                                np.concatenate(ends_seq))
    return identification_trial(alg, env, steps, log, stopped, horizon, checkpoints, start)
