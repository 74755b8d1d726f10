"""One trial of K-armed Track-and-Stop (:class:`~.track_and_stop.KArmedTrackAndStop`, Garivier
& Kaufmann 2016) at compiled speed: :func:`banditkit.simulate`'s result from the same seeds,
bit for bit.

The kernel runs the class's rounds:
- the first batch pulls every arm once;
- each later round solves w*(μ̂) with the oracle's compiled solver (the function the class
  calls), then applies D-tracking (forced exploration, then argmax t w* − N) or C-tracking (the
  running sum of the ε-floored w*, then argmax);
- the Chernoff rule is checked after every batch.

The environment reads one noise value per pull (:func:`~banditkit.envs.noise_kernels.one_reward`).
Track-and-Stop has no internal randomness. C-tracking's floor projection sums the sorted weights,
which numpy does pairwise from 8 terms on, so the kernel takes C-tracking for K ≤ 7 only. The
solve dominates a pull (about 33 µs on the loaded machine): the kernel saves the protocol loop's
share.

This module imports numba (through :func:`banditkit.jit.njit`) when imported: only the engine
declaration (:func:`tas_engine`) imports it, on first use.
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
from .oracle_kernels import optimal_weights
from .track_and_stop import KArmedTrackAndStop

__all__ = ["kernel_eligible", "run_tas", "tas_engine", "tas_steps"]


_kl = njit_with(top_two._kl)
_chernoff = njit_with(top_two.chernoff_scalar, _kl=_kl)


@njit
def _project_floor(w: np.ndarray, eps: float, out: np.ndarray) -> None:
    """:func:`~.track_and_stop.project_floor` into ``out`` (sums in order: K ≤ 7)."""
    K = w.shape[0]
    order = np.sort(w)[::-1]
    eta = 0.0
    for k in range(K, 0, -1):
        total = 0.0
        for i in range(k):
            total += order[i]
        eta = (total - (1.0 - (K - k) * eps)) / k
        if order[k - 1] - eta > eps or k == 1:
            break
    for a in range(K):
        out[a] = max(w[a] - eta, eps)


@njit
def tas_steps(noise: np.random.Generator, gaussian_env: bool, means: np.ndarray,
              thresholds: np.ndarray, below: np.ndarray, noise_sigma: float, t: int, cap: int,
              d_tracking: bool, gaussian: bool, sigma: float, heuristic: bool, delta: float,
              pulls: np.ndarray, sums: np.ndarray, weights: np.ndarray, cum: np.ndarray,
              out: np.ndarray, counters: np.ndarray, lazy_ratio: float
              ) -> tuple[int, int, int, float]:
    """Track-and-Stop's batches from pull count ``t`` (0: the first batch) until the stopping
    rule fires, ``t`` reaches ``cap`` or ``out`` is full: returns (why, t, arms written, the last
    statistic). ``counters``: [forced pulls, w* solves, the lazy grid's next time, the empirical
    best of the last lazy solve]; ``lazy_ratio`` 0 solves every round."""
    K = pulls.shape[0]
    mu = np.empty(K)
    floored = np.empty(K)
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
            best_arm = 0
            for k in range(K):
                mu[k] = sums[k] / pulls[k]
                if mu[k] > mu[best_arm]:
                    best_arm = k
            if lazy_ratio == 0.0:
                optimal_weights(mu, gaussian, sigma, weights)
                counters[1] += 1
            elif t >= counters[2] or best_arm != counters[3]:
                optimal_weights(mu, gaussian, sigma, weights)
                counters[1] += 1
                counters[3] = best_arm
                if t >= counters[2]:
                    counters[2] = max(t + 1, math.ceil(t * lazy_ratio))
            arm = -1
            if d_tracking:
                bound = math.sqrt(t) - K / 2
                for k in range(K):  # forced: the least pulled of U_t, lowest index first
                    if pulls[k] < bound and (arm < 0 or pulls[k] < pulls[arm]):
                        arm = k
                if arm >= 0:
                    counters[0] += 1
                else:
                    best = 0.0
                    for k in range(K):
                        v = t * weights[k] - pulls[k]
                        if arm < 0 or v > best:
                            best, arm = v, k
            else:
                _project_floor(weights, 0.5 / math.sqrt(K * K + t), floored)
                best = 0.0
                for k in range(K):
                    cum[k] += floored[k]
                    v = cum[k] - pulls[k]
                    if arm < 0 or v > best:
                        best, arm = v, k
            r = one_reward(noise, gaussian_env, arm, means, thresholds, below, noise_sigma)
            pulls[arm] += 1
            sums[arm] += r
            out[n_out] = arm
            n_out += 1
            t += 1
        _, stat = _chernoff(pulls, sums, gaussian, sigma)
        if heuristic:
            level = math.log((math.log(max(t, 1)) + 1.0) / delta)
        else:
            level = math.log(2.0 * t * max(K - 1, 1) / delta)
        if stat > level:
            return STOPPED, t, n_out, stat
    return DONE, t, n_out, stat


def kernel_eligible(alg: object, env: Environment, horizon: int | None) -> bool:
    """Whether the kernel runs this pair: a fresh :class:`KArmedTrackAndStop` (its own class;
    C-tracking for K ≤ 7) on a :class:`BernoulliBandit` or :class:`GaussianBandit` of its K arms,
    with room for the first batch (a cap below K takes the protocol loop, which cuts it)."""
    if (type(alg) is not KArmedTrackAndStop or alg.t != 0 or alg.stopped
            or alg.n_arms != env.n_arms or (alg.tracking == "C" and alg.n_arms > 7)):
        return False
    caps = [c for c in (horizon, alg.horizon) if c is not None]
    if caps and min(caps) < alg.n_arms:
        return False
    return type(env) in (BernoulliBandit, GaussianBandit)


def tas_engine(algorithm: object, env: Environment, horizon: int | None) -> Engine | None:
    """The engine of :class:`KArmedTrackAndStop`: the compiled kernel when numba is available,
    on the pairs of :func:`kernel_eligible`."""
    from ...jit import available

    if not available() or not kernel_eligible(algorithm, env, horizon):
        return None
    return Engine("compiled kernel", run=run_tas)


def run_tas(alg: KArmedTrackAndStop, env: Environment, *, horizon: int | None = None,
            seed: SeedLike = 0, checkpoints: np.ndarray | None = None) -> Trial:
    """One trial of ``alg`` on ``env`` through :func:`tas_steps` (``simulate``'s Trial)."""
    rng = as_generator(seed)
    start = time.perf_counter()
    gaussian_env, means, thresholds, below, noise_sigma = env_noise(env)
    cap = run_cap(horizon, alg.horizon)
    out = np.empty(CHUNK, dtype=np.int64)
    counters = np.array([0, 0, alg._next_solve, alg._solved_for], dtype=np.int64)
    steps, stat, stopped = run_chunks(lambda t: tas_steps(
        rng, gaussian_env, means, thresholds, below, noise_sigma, t, cap,
        alg.tracking == "D", alg.gaussian, alg.sigma, alg.threshold == "heuristic",
        alg.delta, alg.pulls, alg.sums, alg.weights, alg._cum, out, counters,
        0.0 if alg.lazy_ratio is None else alg.lazy_ratio), out)
    alg.forced += int(counters[0])
    alg.solves += int(counters[1])
    alg._next_solve, alg._solved_for = int(counters[2]), int(counters[3])
    alg.statistic, alg._stopped = stat, stopped
    log = one_pull_log(steps, alg.n_arms)
    return identification_trial(alg, env, steps, log, stopped, horizon, checkpoints, start)
