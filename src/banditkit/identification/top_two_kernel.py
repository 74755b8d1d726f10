"""One trial of top-two Thompson sampling (:class:`~.top_two.TopTwoThompson`, Russo 2016) at
compiled speed: :func:`banditkit.simulate`'s result from the same seeds, bit for bit.

The kernel runs the class's round — the leader's posterior draw, the β coin, Russo's redraws in
blocks of :data:`~.top_two.BLOCK`, the fallback challenger, the pull, the Chernoff stopping
check — reading ξ and the noise ``Generator`` in the class's order: a Beta draw reads 5 uniforms
per arm (:func:`~banditkit.estimation.beta_kernels.beta_draw_scalar`, scipy's own ``ndtri`` and
``betaincinv`` through C pointers), a Gaussian draw one standard normal per arm, a redraw block
all its draws' values even when its first draw already names a challenger, the environment one
value per pull (:func:`~banditkit.envs.noise_kernels.one_reward`). The stopping statistic and the
fallback are the class's own functions (:func:`~.top_two.chernoff_scalar`,
:func:`~.top_two.challenger_from_beating`), compiled.

Without numba (or with ``BANDITKIT_JIT=0``) :func:`simulate_top_two` is ``simulate``;
``engine="kernel"`` forces the kernel, then run by Python (the same numbers, slowly: the tests'
bit-identity check).

This module imports numba (through :func:`banditkit.jit.njit`) when imported: only simulation
drivers import it, never the CLI's start-up.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..engines import Engine
from ..envs.base import Environment
from ..envs.multi_armed import BernoulliBandit, GaussianBandit
from ..envs.noise_kernels import one_reward
from ..estimation.beta_kernels import beta_draw_scalar, scipy_functions
from ..jit import njit, njit_with
from ..protocol import DecisionLog
from ..rng import SeedLike, as_generator
from ..simulate import simulate
from ..trial import Trial
from ..validation import check_positive_int
from . import top_two
from .kernel_trial import (
    CHUNK,
    DONE,
    FULL,
    STOPPED,
    env_noise,
    identification_trial,
    run_cap,
    run_chunks,
)
from .top_two import BLOCK, TopTwoThompson

__all__ = ["ENGINES", "kernel_eligible", "simulate_top_two", "top_two_engine", "top_two_steps"]

ENGINES = ("auto", "kernel", "python")

# the class's own functions, compiled (their calls to each other bound to the compiled copies)
_kl = njit_with(top_two._kl)
_chernoff = njit_with(top_two.chernoff_scalar, _kl=_kl)
_log_cdf = njit_with(top_two.log_normal_cdf)
_from_beating = njit_with(top_two.challenger_from_beating, log_normal_cdf=_log_cdf)
_moments = njit_with(top_two.posterior_moments)


@njit
def _draw(xi: np.random.Generator, beta_post: bool, pulls: np.ndarray, sums: np.ndarray,
          a0: float, b0: float, sigma: float, ndtri, betaincinv, buf: np.ndarray,
          theta: np.ndarray) -> int:
    """One joint posterior draw into ``theta`` (reading ξ as the class's ``_draws``); returns
    its first argmax. ``buf`` holds the draw's 5K uniforms."""
    K = pulls.shape[0]
    if beta_post:
        for j in range(5 * K):
            buf[j] = xi.random()
        for k in range(K):
            a = sums[k] + a0
            b = (pulls[k] - sums[k]) + b0
            theta[k] = beta_draw_scalar(a, b, buf[k], buf[K + k], buf[2 * K + k],
                                        buf[3 * K + k], buf[4 * K + k], ndtri, betaincinv)
    else:
        for k in range(K):
            n1 = pulls[k] + 1.0
            theta[k] = sums[k] / n1 + sigma * xi.standard_normal() / math.sqrt(n1)
    arm = 0
    for k in range(1, K):
        if theta[k] > theta[arm]:
            arm = k
    return arm


@njit
def top_two_steps(noise: np.random.Generator, xi: np.random.Generator, gaussian_env: bool,
                  means: np.ndarray, thresholds: np.ndarray, below: np.ndarray,
                  noise_sigma: float, t: int, cap: int, beta_post: bool, a0: float, b0: float,
                  sigma: float, beta: float, max_redraws: int, log_scale: float,
                  heuristic: bool, delta: float, ndtri, betaincinv, pulls: np.ndarray,
                  sums: np.ndarray, out: np.ndarray, counters: np.ndarray
                  ) -> tuple[int, int, int, float]:
    """TTTS rounds from pull count ``t`` until the stopping rule fires, ``t`` reaches ``cap`` or
    ``out`` is full: returns (why, t, arms written, the last statistic). ``log_scale`` is K − 1
    of the theory threshold log(2t(K − 1)/δ); ``counters[0]`` counts fallbacks."""
    K = pulls.shape[0]
    buf = np.empty(5 * K)
    theta = np.empty(K)
    mom_m = np.empty(K)
    mom_v = np.empty(K)
    gaussian_glr = not beta_post
    n_out = 0
    stat = math.nan
    while t < cap:
        if n_out >= out.shape[0]:
            return FULL, t, n_out, stat
        leader = _draw(xi, beta_post, pulls, sums, a0, b0, sigma, ndtri, betaincinv, buf,
                       theta)
        if xi.random() < beta:
            arm = leader
        else:
            arm = -1
            drawn = 0
            while drawn < max_redraws:
                size = min(BLOCK, max_redraws - drawn)
                for _ in range(size):  # the whole block is read, as the class reads it
                    j = _draw(xi, beta_post, pulls, sums, a0, b0, sigma, ndtri, betaincinv,
                              buf, theta)
                    if arm < 0 and j != leader:
                        arm = j
                if arm >= 0:
                    break
                drawn += size
            if arm < 0:
                counters[0] += 1
                _moments(beta_post, pulls, sums, a0, b0, sigma, mom_m, mom_v)
                arm = _from_beating(mom_m, mom_v, leader, xi.random())
        r = one_reward(noise, gaussian_env, arm, means, thresholds, below, noise_sigma)
        pulls[arm] += 1
        sums[arm] += r
        t += 1
        out[n_out] = arm
        n_out += 1
        _, stat = _chernoff(pulls, sums, gaussian_glr, sigma)
        if heuristic:
            level = math.log((math.log(max(t, 1)) + 1.0) / delta)
        else:
            level = math.log(2.0 * t * log_scale / delta)
        if stat > level:
            return STOPPED, t, n_out, stat
    return DONE, t, n_out, stat


def kernel_eligible(alg: object, env: Environment, horizon: int | None) -> bool:
    """Whether the kernel runs this pair: a fresh :class:`TopTwoThompson` (its own class, not a
    subclass) on a :class:`BernoulliBandit` (either posterior) or a :class:`GaussianBandit`
    (Gaussian posterior: the Beta posterior refuses rewards outside [0, 1])."""
    if type(alg) is not TopTwoThompson or alg.t != 0 or alg.stopped:
        return False
    if alg.n_arms != env.n_arms:
        return False
    return type(env) is BernoulliBandit or (type(env) is GaussianBandit
                                            and alg.posterior == "gaussian")


def top_two_engine(algorithm: object, env: Environment, horizon: int | None
                   ) -> Engine | None:
    """The engine of :class:`TopTwoThompson` (:attr:`banditkit.protocol.Algorithm.engines`):
    the compiled kernel when numba and scipy's C functions are available (run by Python it is
    slower than the protocol loop), for its exact class on the environments of
    :func:`kernel_eligible`."""
    from ..jit import available

    if not available() or not kernel_eligible(algorithm, env, horizon):
        return None
    try:
        scipy_functions()
    except (AttributeError, KeyError, RuntimeError):
        return None
    return Engine("compiled kernel", run=_engine_run)


def _engine_run(algorithm: TopTwoThompson, env: Environment, *, horizon: int | None,
                seed: SeedLike, checkpoints: np.ndarray | None) -> Trial:
    """The engine's ``run``: the kernel itself (:func:`top_two_engine` checked it applies)."""
    return _run(algorithm, env, horizon, seed, checkpoints)


def simulate_top_two(algorithm: TopTwoThompson, env: Environment, *,
                     horizon: int | None = None, seed: SeedLike = 0,
                     checkpoints: np.ndarray | None = None, engine: str = "auto") -> Trial:
    """One trial of :class:`TopTwoThompson` on ``env``: :func:`banditkit.simulate`'s
    decisions, through the compiled kernel when numba is available (``engine="auto"``),
    always (``"kernel"``, run by Python without numba), or never (``"python"``).

    Not the public way in: :func:`banditkit.simulate` takes this kernel by itself (it is the
    class's declared engine). This driver stays for tests that run the kernel as Python."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    from ..jit import available

    use = engine == "kernel" or (engine == "auto" and available())
    if use and algorithm.posterior == "beta":
        try:
            scipy_functions()
        except (AttributeError, KeyError, RuntimeError):  # a scipy without these C functions
            use = False  # simulate: the same numbers
    if not (use and kernel_eligible(algorithm, env, horizon)):
        # "python" is the protocol loop: simulate's own default engine is this kernel
        return simulate(algorithm, env, horizon=horizon, seed=seed, checkpoints=checkpoints,
                        engine="reference" if engine == "python" else "auto")
    return _run(algorithm, env, horizon, seed, checkpoints)


def _run(alg: TopTwoThompson, env: Environment, horizon: int | None, seed: SeedLike,
         checkpoints: np.ndarray | None) -> Trial:
    rng = as_generator(seed)
    start = time.perf_counter()
    ndtri, betaincinv = scipy_functions()
    gaussian_env, means, thresholds, below, noise_sigma = env_noise(env)
    cap = run_cap(horizon, alg.horizon)
    out = np.empty(CHUNK, dtype=np.int64)
    counters = np.zeros(1, dtype=np.int64)
    steps, stat, stopped = run_chunks(lambda t: top_two_steps(
        rng, alg.rng, gaussian_env, means, thresholds, below, noise_sigma, t, cap,
        alg.posterior == "beta", alg.prior[0], alg.prior[1], alg.sigma, alg.beta,
        alg.max_redraws, float(max(alg.n_arms - 1, 1)), alg.threshold == "heuristic",
        alg.delta, ndtri, betaincinv, alg.pulls, alg.sums, out, counters), out)
    alg._statistic, alg._stopped = stat, stopped
    alg.fallbacks += int(counters[0])
    log = DecisionLog.from_runs(steps, np.ones(steps.size, dtype=np.int64),
                                np.arange(steps.size + 1, dtype=np.int64))
    return identification_trial(alg, env, steps, log, stopped, horizon, checkpoints, start)
