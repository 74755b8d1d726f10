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
about 40 µs through the protocol loop and a few µs compiled. LUCB1 (Hoeffding bounds) keeps the
protocol loop: its t⁴ is an exact Python integer that int64 would overflow past t ≈ 55,000.

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
from ..kernel_trial import env_noise, identification_trial, run_cap
from .lucb import KLLUCB
from .oracle_kernels import all_kl_bounds

__all__ = ["kernel_eligible", "kl_lucb_engine", "kl_lucb_steps", "run_kl_lucb"]

_CHUNK = 1 << 16  # pulls buffered per kernel call
DONE, STOPPED, FULL = 0, 1, 2  # why a kernel call returns: the cap, the stopping rule, the buffer


@njit
def kl_lucb_steps(noise: np.random.Generator, gaussian_env: bool, env_means: np.ndarray,
                  thresholds: np.ndarray, below: np.ndarray, noise_sigma: float, t: int,
                  cap: int, rounds: int, k1: float, alpha: float, heuristic: bool,
                  delta: float, gaussian: bool, sigma: float, epsilon: float,
                  pulls: np.ndarray, sums: np.ndarray, out: np.ndarray, ends: np.ndarray,
                  state: np.ndarray) -> tuple[int, int, int, int, int]:
    """KL-LUCB's batches from pull count ``t`` until the rule stops, ``t`` reaches ``cap`` or
    the buffers are full. Returns (why, t, arms written, batches written, rounds);
    ``state[0]`` is the last gap U_l − L_h."""
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
    :class:`BernoulliBandit` or :class:`GaussianBandit` of its K arms, with room for the first
    batch."""
    if type(alg) is not KLLUCB or alg.t != 0 or alg.stopped or alg.n_arms != env.n_arms:
        return False
    caps = [c for c in (horizon, alg.horizon) if c is not None]
    if caps and min(caps) < alg.n_arms:
        return False
    return type(env) in (BernoulliBandit, GaussianBandit)


def kl_lucb_engine(algorithm: object, env: Environment, horizon: int | None
                   ) -> Engine | None:
    """The engine of :class:`KLLUCB`: the compiled kernel when numba is available, on the pairs
    of :func:`kernel_eligible`."""
    from ...jit import available

    if not available() or not kernel_eligible(algorithm, env, horizon):
        return None
    return Engine("compiled kernel", run=run_kl_lucb)


def run_kl_lucb(alg: KLLUCB, env: Environment, *, horizon: int | None = None,
                seed: SeedLike = 0, checkpoints: np.ndarray | None = None) -> Trial:
    """One trial of ``alg`` on ``env`` through :func:`kl_lucb_steps` (``simulate``'s Trial)."""
    rng = as_generator(seed)
    start = time.perf_counter()
    gaussian_env, env_means, thresholds, below, noise_sigma = env_noise(env)
    cap = run_cap(horizon, alg.horizon)
    out = np.empty(_CHUNK, dtype=np.int64)
    ends = np.empty(_CHUNK, dtype=np.int64)
    state = np.full(1, math.inf)
    arms_seq: list[np.ndarray] = []
    ends_seq: list[np.ndarray] = []
    t, done_runs, rounds, stopped = 0, 0, alg.rounds, False
    while True:
        why, t, n_out, n_end, rounds = kl_lucb_steps(
            rng, gaussian_env, env_means, thresholds, below, noise_sigma, t, cap, rounds,
            alg.k1, alg.alpha, alg.threshold == "heuristic", alg.delta, alg.gaussian,
            alg.sigma, alg.epsilon, alg.pulls, alg.sums, out, ends, state)
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
