"""One trial of EB-TCε₀ (:class:`~.eb_tc.EBTC`, Jourdan, Degenne & Kaufmann 2023) at compiled
speed: :func:`banditkit.simulate`'s result from the same seeds, bit for bit.

The kernel runs the class's rounds: the first batch (every arm once), then the empirical-best
leader, the fixed-β tracking and the transportation-cost challenger, the pull, and the Chernoff
stop after every batch. It reads the noise ``Generator`` as the environment does, one value per
pull (:func:`~banditkit.envs.noise_kernels.one_reward`); EB-TC has no internal randomness. The
stopping statistic is the class's own :func:`~banditkit.identification.top_two.chernoff_scalar`,
compiled, and so is the threshold's expression. Through the protocol loop a pull costs about
40 µs of Python; compiled, about 1 µs.

This module imports numba (through :func:`banditkit.jit.njit`) when imported: only the engine
declaration (:func:`ebtc_engine`) imports it, on first use.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...engines import Engine
from ...envs.base import Environment
from ...envs.multi_armed import BernoulliBandit, GaussianBandit
from ...envs.noise_kernels import one_reward
from ...jit import njit, njit_with
from ...rng import SeedLike, as_generator
from ...trial import Trial
from .. import top_two
from ..kernel_trial import (
    CHUNK,
    DONE,
    FULL,
    STOPPED,
    env_noise,
    identification_trial,
    one_pull_log,
    run_cap,
    run_chunks,
)
from .eb_tc import EBTC
from .thresholds import CHERNOFF_THRESHOLDS, gaussian_threshold_constant

__all__ = ["ebtc_engine", "ebtc_steps", "kernel_eligible", "run_ebtc"]


_kl = njit_with(top_two._kl)
_chernoff = njit_with(top_two.chernoff_scalar, _kl=_kl)


@njit
def ebtc_steps(noise: np.random.Generator, gaussian_env: bool, means: np.ndarray,
               thresholds: np.ndarray, below: np.ndarray, noise_sigma: float, t: int, cap: int,
               epsilon0: float, beta: float, sigma: float, kind: int, c_g2: float, delta: float,
               pulls: np.ndarray, sums: np.ndarray, leader_rounds: np.ndarray,
               leader_pulls: np.ndarray, out: np.ndarray) -> tuple[int, int, int, float]:
    """EB-TC's batches from pull count ``t`` (0: the first batch, every arm once) until the
    stopping rule fires, ``t`` reaches ``cap`` or ``out`` is full: returns (why, t, arms
    written, the last statistic). ``kind``: 0 the "theory" threshold, 1 "heuristic", 2
    "gaussian" (``c_g2`` its constant part, :func:`~.thresholds.gaussian_threshold_constant`)."""
    K = pulls.shape[0]
    n_out = 0
    stat = math.nan
    while t < cap:
        if n_out + K > out.shape[0]:
            return FULL, t, n_out, stat
        if t == 0:  # the first batch: every arm once, one value each in arm order
            for k in range(K):
                r = one_reward(noise, gaussian_env, k, means, thresholds, below, noise_sigma)
                pulls[k] += 1
                sums[k] += r
                out[n_out] = k
                n_out += 1
            t = K
        else:
            leader = 0
            best = sums[0] / pulls[0]
            for k in range(1, K):
                m = sums[k] / pulls[k]
                if m > best:
                    best, leader = m, k
            leader_rounds[leader] += 1
            if leader_pulls[leader] <= beta * leader_rounds[leader]:
                leader_pulls[leader] += 1
                arm = leader
            else:
                arm = -1
                low = math.inf
                nb = 1.0 / pulls[leader]
                for j in range(K):
                    if j == leader:
                        continue
                    cost = (best - sums[j] / pulls[j] + epsilon0) / math.sqrt(nb
                                                                             + 1.0 / pulls[j])
                    if arm < 0 or cost < low:
                        low, arm = cost, j
            r = one_reward(noise, gaussian_env, arm, means, thresholds, below, noise_sigma)
            pulls[arm] += 1
            sums[arm] += r
            out[n_out] = arm
            n_out += 1
            t += 1
        _, stat = _chernoff(pulls, sums, True, sigma)
        if kind == 1:
            level = math.log((math.log(max(t, 1)) + 1.0) / delta)
        elif kind == 2:
            level = c_g2 + 4.0 * math.log(4.0 + math.log(max(t, 1) / 2.0))
        else:
            level = math.log(2.0 * t * max(K - 1, 1) / delta)
        if stat > level:
            return STOPPED, t, n_out, stat
    return DONE, t, n_out, stat


def kernel_eligible(alg: object, env: Environment, horizon: int | None) -> bool:
    """Whether the kernel runs this pair: a fresh :class:`EBTC` (its own class) on a
    :class:`BernoulliBandit` or :class:`GaussianBandit` of its K arms, with room for the first
    batch (a cap below K takes the protocol loop, which cuts that batch)."""
    if type(alg) is not EBTC or alg.t != 0 or alg.stopped or alg.n_arms != env.n_arms:
        return False
    caps = [c for c in (horizon, alg.horizon) if c is not None]
    if caps and min(caps) < alg.n_arms:
        return False
    return type(env) in (BernoulliBandit, GaussianBandit)


def ebtc_engine(algorithm: object, env: Environment, horizon: int | None) -> Engine | None:
    """The engine of :class:`EBTC` (:attr:`banditkit.protocol.Algorithm.engines`): the
    compiled kernel when numba is available, on the pairs of :func:`kernel_eligible`."""
    from ...jit import available

    if not available() or not kernel_eligible(algorithm, env, horizon):
        return None
    return Engine("compiled kernel", run=run_ebtc)


def run_ebtc(alg: EBTC, env: Environment, *, horizon: int | None = None, seed: SeedLike = 0,
             checkpoints: np.ndarray | None = None) -> Trial:
    """One trial of ``alg`` on ``env`` through :func:`ebtc_steps` (``simulate``'s Trial)."""
    rng = as_generator(seed)
    start = time.perf_counter()
    gaussian_env, means, thresholds, below, noise_sigma = env_noise(env)
    cap = run_cap(horizon, alg.horizon)
    out = np.empty(CHUNK, dtype=np.int64)
    pulls = alg.pulls.astype(np.float64)  # exact counts as floats, as the class divides them
    kind = CHERNOFF_THRESHOLDS.index(alg.threshold)
    c_g2 = gaussian_threshold_constant(alg.delta, alg.n_arms) if kind == 2 else 0.0
    steps, stat, stopped = run_chunks(lambda t: ebtc_steps(
        rng, gaussian_env, means, thresholds, below, noise_sigma, t, cap, alg.epsilon0,
        alg.beta, alg.sigma, kind, c_g2, alg.delta, pulls, alg.sums,
        alg.leader_rounds, alg.leader_pulls, out), out)
    alg.pulls[:] = pulls.astype(np.int64)
    alg.statistic, alg._stopped = stat, stopped
    log = one_pull_log(steps, alg.n_arms)
    return identification_trial(alg, env, steps, log, stopped, horizon, checkpoints, start)
