"""What the K-armed identifiers' compiled engines share around their kernels: the environment's
noise as the kernels take it, the run's cap, the loop over the kernel's calls (a kernel fills a
buffer of :data:`CHUNK` pulls and says why it returned), and the :class:`~banditkit.trial.Trial`
of a run.

Who needs it: the drivers of :mod:`.top_two_kernel` and of :mod:`.k_armed`'s EB-TC, KL-LUCB and
Track-and-Stop kernels, each of which must return ``simulate``'s Trial bit for bit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..envs.multi_armed import GaussianBandit, bernoulli_rules
from ..protocol import DecisionLog
from ..simulate import default_checkpoints
from ..trial import Trial

__all__ = ["CHUNK", "DONE", "FULL", "STOPPED", "env_noise", "identification_trial",
           "one_pull_log", "run_cap", "run_chunks"]

CHUNK = 1 << 16  # pulls buffered per kernel call
DONE, STOPPED, FULL = 0, 1, 2  # why a kernel call returns: the cap, the stopping rule, the buffer


def env_noise(env: Environment) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray, float]:
    """``(gaussian, means, thresholds, below, sigma)`` of a Bernoulli or Gaussian bandit, as
    the kernels draw rewards (:func:`banditkit.envs.noise_kernels.one_reward`)."""
    gaussian = isinstance(env, GaussianBandit)
    means = np.ascontiguousarray(env.means, dtype=float)
    if gaussian:
        thresholds, below = np.zeros(env.n_arms), np.zeros(env.n_arms, dtype=np.bool_)
        return True, means, thresholds, below, float(env.sigma)  # type: ignore[attr-defined]
    thresholds, below = bernoulli_rules(means)
    return False, means, thresholds, below, 1.0


def run_cap(horizon: int | None, budget: int | None) -> int:
    """The pulls a run may take: the simulation's horizon and the algorithm's own budget."""
    caps = [c for c in (horizon, budget) if c is not None]
    return min(caps) if caps else 2**62


def run_chunks(step: Callable[[int], tuple[int, int, int, float]], out: np.ndarray
               ) -> tuple[np.ndarray, float, bool]:
    """Call the kernel until it stops or reaches its cap: ``step(t)`` runs it from pull ``t``,
    writes its pulls into ``out`` and returns ``(why, t, n_out, statistic)`` (NaN when it
    computed none in this call). Returns every pull in order, the last statistic computed (0
    if none) and whether the stopping rule fired."""
    seq: list[np.ndarray] = []
    t, stat = 0, 0.0
    while True:
        why, t, n_out, new_stat = step(t)
        seq.append(out[:n_out].copy())
        if not math.isnan(new_stat):
            stat = new_stat
        if why != FULL:
            return np.concatenate(seq), float(stat), why == STOPPED


def one_pull_log(steps: np.ndarray, n_arms: int) -> DecisionLog:
    """The decisions of an identifier that pulls every arm once in its first batch and then
    one arm a batch (Track-and-Stop, EB-TC)."""
    K = n_arms
    ends = np.r_[K, np.arange(K + 1, steps.size + 1)] if steps.size >= K else np.array([K])
    return DecisionLog.from_runs(steps, np.ones(steps.size, dtype=np.int64), ends)


def identification_trial(alg: Any, env: Environment, steps: np.ndarray, log: DecisionLog,
                         stopped: bool, horizon: int | None,
                         checkpoints: np.ndarray | None, start: float) -> Trial:
    """The Trial of a run of ``alg`` that pulled ``steps`` (``log`` its decisions): as
    ``simulate`` ends it — a run the algorithm's own budget ended (``next_batch`` gave None)
    counts as stopped, one the simulation's horizon ended does not. Sets ``alg.t`` and
    ``alg.decisions``."""
    alg.t = int(steps.size)
    alg.decisions = log
    if (not stopped and alg.horizon is not None and alg.t >= alg.horizon
            and (horizon is None or alg.horizon < horizon)):
        stopped = True
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else max(alg.t, 1))
    recommendation = alg.recommendation
    return Trial(counts=np.bincount(steps, minlength=alg.n_arms).astype(np.int64),
                 n_pulls=alg.t, decisions=log, checkpoints=np.asarray(checkpoints, np.int64),
                 regret=None, violation=None, recommendation=recommendation,
                 correct=recommendation is not None and recommendation == env.best_item(horizon),
                 stopped=stopped, n_batches=log.n_batches, seconds=time.perf_counter() - start,
                 info=alg.info)
