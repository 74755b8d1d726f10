"""EXP3-IX trials in lock-step (the engine :class:`~banditkit.policies.exp3_ix.EXP3IX`
declares, :mod:`banditkit.engines`): one vectorised round across trials, each trial with its
own ξ and noise streams, read as the protocol loop reads them (one ξ uniform per round, the
noise of :mod:`banditkit.policies.sequential_lockstep`), the same floating-point operations row
by row, so every trial equals the protocol loop's bit for bit
(``tests/test_regret_baselines.py``; ``banditkit.testing.check_algorithm`` checks it too).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..engines import Engine
from ..envs.base import Environment
from ..rng import SeedLike
from ..simulate import default_checkpoints, simulate
from ..trial import Trial
from .exp3_ix import EXP3IX
from .sequential_lockstep import _Noise, _trials, _vectorised_env, _Xi

__all__ = ["exp3_ix_engine", "exp3_ix_trials"]


def exp3_ix_engine(policy: EXP3IX, env: Environment, horizon: int | None) -> Engine | None:
    """The lock-step engine of EXP3-IX itself (not a subclass, which may change the rule) on a
    Bernoulli or Gaussian instance; ``None`` (the protocol loop) otherwise."""
    if type(policy) is not EXP3IX or horizon is None or not _vectorised_env(env, policy):
        return None
    return Engine("lock-step", run_trials=exp3_ix_trials)


def exp3_ix_trials(policies: Sequence[EXP3IX], envs: Sequence[Environment],
                   seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None
                   ) -> list[Trial]:
    """Trial i of ``policies[i]`` (fresh, one factory's, own ξ) on ``envs[i]`` with noise
    ``seeds[i]``, each equal to the protocol loop's; trials on one shared instance run in
    lock-step, others one by one through the loop."""
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    env, first = envs[0], policies[0]
    if not (all(e is env for e in envs) and _vectorised_env(env, first)
            and all(p.eta == first.eta and p.gamma == first.gamma for p in policies)):
        return [simulate(p, e, horizon=horizon, seed=s, checkpoints=checkpoints,
                         engine="reference") for p, e, s in zip(policies, envs, seeds,
                                                                  strict=True)]
    start = time.perf_counter()
    n, K = len(policies), env.n_arms
    eta, gamma = first.eta, first.gamma
    noise = _Noise(env, seeds)
    xi = _Xi([p.rng for p in policies], "uniform", 1)
    rows = np.arange(n)
    losses = np.zeros((n, K))
    pulls = np.zeros((n, K))
    arms_seq = np.empty((horizon, n), dtype=np.int64)
    for t in range(horizon):
        # EXP3IX.probabilities, row by row
        w = np.exp(-eta * (losses - losses.min(axis=1, keepdims=True)))
        p = w / w.sum(axis=1, keepdims=True)
        u = xi.next()[:, 0]
        cdf = np.cumsum(p, axis=1)
        arm = np.minimum((cdf <= u[:, None]).sum(axis=1), K - 1)  # searchsorted "right"
        r = noise.rewards(arm)
        losses[rows, arm] += (1.0 - r) / (p[rows, arm] + gamma)
        pulls[rows, arm] += 1.0
        arms_seq[t] = arm
    seconds = (time.perf_counter() - start) / n
    return _trials(env, arms_seq.T, pulls, horizon, checkpoints, seconds)
