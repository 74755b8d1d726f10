"""EXP3-IX trials in lock-step (the engine :class:`~banditkit.policies.exp3_ix.EXP3IX`
declares, :mod:`banditkit.engines`): one vectorised round across trials, each trial with its
own ξ and noise streams, read as the protocol loop reads them (one ξ uniform per round, the
noise of :mod:`banditkit.policies.index.lockstep`), the same floating-point operations row
by row, so every trial equals the protocol loop's bit for bit
(``tests/test_regret_baselines.py``; ``banditkit.testing.check_algorithm`` checks it too).
With numba (:func:`banditkit.jit.available`) each trial runs instead as one compiled loop
(:mod:`banditkit.policies.exp3_ix.kernel`), which reads the same streams pull by pull.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ... import jit
from ...engines import Engine
from ...envs.base import Environment
from ...rng import SeedLike
from ...simulate import default_checkpoints, simulate
from ...trial import Trial
from ..index.lockstep import _compiled, _Noise, _trials, _vectorised_env, _Xi
from . import EXP3IX, exp_weights

__all__ = ["exp3_ix_engine", "exp3_ix_kernel", "exp3_ix_trials"]


def exp3_ix_engine(policy: EXP3IX, env: Environment, horizon: int | None) -> Engine | None:
    """The engines of EXP3-IX itself (not a subclass, which may change the rule) on a Bernoulli
    or Gaussian instance: the compiled trial when numba is available, and the runner of many
    trials :func:`exp3_ix_trials`; ``None`` (the protocol loop) otherwise."""
    if type(policy) is not EXP3IX or horizon is None or not _vectorised_env(env, policy):
        return None
    if _compiles(policy):
        return Engine("compiled kernel", run=_exp3_ix_run, run_trials=exp3_ix_trials)
    return Engine("lock-step", run_trials=exp3_ix_trials)


def _compiles(policy: EXP3IX) -> bool:
    """Whether the compiled trial runs ``policy``: numba available and K ≤ 128
    (:data:`~banditkit.policies.exp3_ix.kernel.MAX_ARMS`)."""
    return jit.available() and policy.n_arms <= 128


def exp3_ix_kernel(policy: EXP3IX) -> Callable[..., None]:
    """The compiled trial with ``policy``'s η and γ, in the call form of
    :func:`~banditkit.policies.index.lockstep._compiled`'s kernels."""
    from .kernel import exp3_ix_trial

    eta, gamma, K = policy.eta, policy.gamma, policy.n_arms

    def run(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon, arms, pulls,
            sums) -> None:
        exp3_ix_trial(noise, xi, gaussian, means, thresholds, below, noise_sigma, horizon, eta,
                      gamma, arms, pulls, sums, np.zeros(K), np.empty(K))
    return run


def _exp3_ix_run(policy: EXP3IX, env: Environment, *, horizon: int, seed: SeedLike,
                 checkpoints: np.ndarray | None) -> Trial:
    """One trial through the compiled kernel (the noise Generator read pull by pull, so a
    Generator given as ``seed`` ends where the protocol loop leaves it)."""
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    return _compiled(exp3_ix_kernel(policy), env, [policy.rng], [seed], horizon,
                     checkpoints)[0]


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
    if _compiles(first):  # one compiled loop per trial: the same streams, the same numbers
        return _compiled(exp3_ix_kernel(first), env, [p.rng for p in policies], seeds,
                         horizon, checkpoints)
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
        p = exp_weights(-eta * (losses - losses.min(axis=1, keepdims=True)))
        u = xi.next()[:, 0]
        cdf = np.cumsum(p, axis=1)
        arm = np.minimum((cdf <= u[:, None]).sum(axis=1), K - 1)  # searchsorted "right"
        r = noise.rewards(arm)
        losses[rows, arm] += (1.0 - r) / (p[rows, arm] + gamma)
        pulls[rows, arm] += 1.0
        arms_seq[t] = arm
    seconds = (time.perf_counter() - start) / n
    return _trials(env, arms_seq.T, pulls, horizon, checkpoints, seconds)
