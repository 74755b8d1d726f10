"""OFUL and linear Thompson sampling for many trials at once (:func:`linear_lockstep`), and both
registered by name (``OFUL``, ``LinearThompson``) for ``simulate``, ``audit``, figures and live
experiments.

A sequential policy spends one Python step per pull in :func:`banditkit.simulate` (tens of µs).
The lock-step driver runs n trials together: each round is the policy's own ``scores`` and the
state's rank-one ``update`` (:mod:`banditkit.policies.linear.index`) on arrays with a leading
axis of n trials, a few dozen numpy operations whatever n.

It reproduces :func:`banditkit.simulate` exactly, trial by trial, on a
:class:`~banditkit.envs.linear.LinearBandit`, because every trial keeps its own two streams:

* Noise: a one-pull Rademacher reward is ``2·binomial(1, (1 + μ)/2) − 1`` and a Bernoulli one
  ``binomial(1, μ)``; numpy draws either from one uniform by inversion, so each trial's uniforms
  are pre-drawn in blocks and compared with the same threshold numpy uses
  (:func:`~banditkit.policies.index.lockstep._bernoulli_rule`, the K-armed driver's rule).
  numpy draws nothing for a success probability of exactly 0, so such instances run through
  simulate. A Gaussian reward is ``μ + σ·standard_normal()``, likewise pre-drawn.
* ξ: linear Thompson sampling reads d standard normals a round; each trial's are pre-drawn in
  blocks of rounds, row r of a block being what the class reads at round r.

Other environments, or different instances per trial, run trial by trial through simulate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial

import numpy as np

from ... import jit
from ...engines import Engine
from ...envs.base import Environment
from ...envs.linear import LinearBandit
from ...protocol import Batch, DecisionLog
from ...registry import register_policy
from ...rng import SeedLike, as_generator
from ...simulate import _cumulative_at, default_checkpoints, simulate
from ...trial import Trial
from ...validation import check_positive_int
from ..index.base import draw_xi
from ..index.lockstep import _bernoulli_rule
from .elimination import linear_arms
from .index import LinearIndexPolicy, LinearState
from .oful import OFUL, RADII
from .thompson import LinearThompson

__all__ = ["linear_engine", "linear_lockstep", "linear_trials", "lints", "lints_lockstep",
           "oful", "oful_lockstep"]

_BLOCK = 4096  # rounds of noise and ξ pre-drawn per trial at a time


class _LinearNoise:
    """Per-trial one-pull rewards of a linear bandit, read in blocks in simulate's order."""

    def __init__(self, env: LinearBandit, seeds: Sequence[SeedLike]) -> None:
        self.rngs = [as_generator(s) for s in seeds]
        self.gaussian = env.noise == "gaussian"
        self.rademacher = env.noise == "rademacher"
        self.means = env.means
        self.sigma = env.sigma
        self.block = np.empty((len(self.rngs), 0))
        self.pos = 0
        if not self.gaussian:
            # the success probability numpy is given, computed as LinearBandit.pull does
            p = (1.0 + self.means) / 2.0 if self.rademacher else self.means
            rules = [_bernoulli_rule(float(v)) for v in p]
            self.thresholds = np.array([r[0] for r in rules])
            self.below = ~np.array([r[1] for r in rules])

    def rewards(self, arms: np.ndarray) -> np.ndarray:
        if self.pos == self.block.shape[1]:
            kind = "normal" if self.gaussian else "uniform"
            self.block = np.stack([draw_xi(g, kind, (_BLOCK,)) for g in self.rngs])
            self.pos = 0
        x = self.block[:, self.pos]
        self.pos += 1
        if self.gaussian:
            # simulate: n·μ + sqrt(n)·σ·z with n = 1
            return 1.0 * self.means[arms] + 1.0 * self.sigma * x
        wins = ((x > self.thresholds[arms]) ^ self.below[arms]).astype(float)
        return 2.0 * wins - 1.0 if self.rademacher else wins


def _vectorised(envs: Sequence[Environment], policy: LinearIndexPolicy) -> bool:
    """Whether the trials share one linear instance the driver reproduces draw for draw."""
    env = envs[0]
    if not all(e is env for e in envs) or type(env) is not LinearBandit:
        return False
    if env.noise == "gaussian":
        # Gaussian rewards leave a bounded range: simulate refuses them as observe does
        return policy.reward_range is None
    p = (1.0 + env.means) / 2.0 if env.noise == "rademacher" else env.means
    return bool(np.all(p > 0))  # numpy draws nothing at probability 0


def linear_engine(policy: LinearIndexPolicy, env: Environment, horizon: int | None
                  ) -> Engine | None:
    """The engines of OFUL and LinTS on ``env`` (:attr:`banditkit.protocol.Algorithm.engines`):
    the compiled trial of their exact classes when numba is available
    (:mod:`banditkit.policies.linear.kernel`), and the lock-step runner :func:`linear_trials`
    across trials (compiled, or vectorised numpy); ``None`` on environments the runners do not
    reproduce draw for draw, or without a horizon."""
    if horizon is None or not _vectorised([env], policy):
        return None
    compiled = jit.available() and type(policy) in (OFUL, LinearThompson)
    return Engine("compiled kernel" if compiled else "lock-step",
                  run=_linear_run if compiled else None, run_trials=linear_trials)


def _linear_run(policy: LinearIndexPolicy, env: LinearBandit, *, horizon: int,
                seed: SeedLike, checkpoints: np.ndarray | None) -> Trial:
    """One trial through the compiled kernel (the noise Generator read pull by pull)."""
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    ((arms, seconds),) = _kernel_columns(policy, env, [policy.rng], [seed], horizon)
    return _trial(env, arms, horizon, checkpoints, seconds)


def linear_lockstep(make: Callable[[Environment, np.random.Generator | None], LinearIndexPolicy],
                    envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                    seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None
                    ) -> list[Trial]:
    """:func:`linear_trials` of the policies ``make(envs[i], rngs[i])``."""
    if not len(envs) == len(rngs) == len(seeds):
        raise ValueError(f"envs, rngs and seeds must have the same length, got {len(envs)}, "
                         f"{len(rngs)} and {len(seeds)}")
    return linear_trials([make(e, r) for e, r in zip(envs, rngs, strict=True)], envs, seeds,
                         horizon, checkpoints)


def linear_trials(policies: Sequence[LinearIndexPolicy], envs: Sequence[Environment],
                  seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None
                  ) -> list[Trial]:
    """Run ``len(seeds)`` trials of the linear policies ``policies`` in lock-step.

    Parameters
    ----------
    policies : sequence of LinearIndexPolicy
        Fresh policies of one class with the same parameters (one factory's), each with its
        own ξ (``policy.rng``; ``None`` for OFUL).
    envs : sequence of Environment
        One per trial. Trials on one shared :class:`LinearBandit` (the same object) run
        vectorised; other environments run trial by trial through the protocol loop.
    seeds : sequence of seed-like
        Noise seed of each trial, as given to :func:`banditkit.simulate`.
    horizon : int
        Pulls per trial.
    checkpoints : array of int, optional
        Times at which cumulative regret is recorded (default: as simulate).

    Returns
    -------
    list of Trial
        One per seed, equal to ``simulate(policies[i], envs[i], horizon=horizon,
        seed=seeds[i], checkpoints=checkpoints, engine="reference")`` except that the decision
        log holds the whole pull sequence as one batch (``n_batches`` still counts one per
        pull).
    """
    horizon = check_positive_int(horizon, "horizon")
    if not len(policies) == len(envs) == len(seeds):
        raise ValueError(f"policies, envs and seeds must have the same length, got "
                         f"{len(policies)}, {len(envs)} and {len(seeds)}")
    if not seeds:
        return []
    policy = policies[0]
    rngs = [p.rng for p in policies]
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    if not _vectorised(envs, policy):
        return [simulate(p, e, horizon=horizon, seed=s, checkpoints=checkpoints,
                         engine="reference")
                for p, e, s in zip(policies, envs, seeds, strict=True)]

    env = envs[0]
    if jit.available() and type(policy) in (OFUL, LinearThompson):
        # one trial at a time, each turned into its Trial at once: one pull sequence in memory
        # (8 bytes a pull), not all n of them (320 MB for 40 trials of 10⁶ pulls)
        return [_trial(env, arms, horizon, checkpoints, seconds)
                for arms, seconds in _kernel_columns(policy, env, rngs,  # type: ignore[arg-type]
                                                     seeds, horizon)]
    start = time.perf_counter()
    arms_seq = _numpy_arms(policy, env, rngs, seeds, horizon)  # type: ignore[arg-type]
    seconds = (time.perf_counter() - start) / len(seeds)
    return [_trial(env, arms_seq[:, i], horizon, checkpoints, seconds)
            for i in range(len(seeds))]


def _trial(env: Environment, arms_seq: np.ndarray, horizon: int, checkpoints: np.ndarray,
           seconds: float) -> Trial:
    """The Trial simulate would return for the pull sequence ``arms_seq`` (one batch)."""
    log = DecisionLog()
    log.record(Batch.from_sequence(arms_seq))
    arms, counts = log.runs()
    regret = _cumulative_at(env.regret(Batch(arms, counts)), counts, checkpoints)
    return Trial(counts=np.bincount(arms_seq, minlength=env.n_arms).astype(np.int64),
                 n_pulls=horizon, decisions=log, checkpoints=checkpoints, regret=regret,
                 recommendation=None, correct=None, stopped=False, n_batches=horizon,
                 seconds=seconds, info={})


def _numpy_arms(policy: LinearIndexPolicy, env: LinearBandit,
                rngs: Sequence[np.random.Generator | None], seeds: Sequence[SeedLike],
                horizon: int) -> np.ndarray:
    """The arms (horizon, n) of n trials run together, one vectorised round at a time."""
    n = len(seeds)
    X = policy.X
    noise = _LinearNoise(env, seeds)
    state = LinearState.initial(X, policy.lam, n, cholesky=policy.cholesky)
    d_xi = policy.n_draws
    xi_block = np.empty((n, 0, d_xi))
    xi_pos = 0
    arms_seq = np.empty((horizon, n), dtype=np.int64)  # a row per round: contiguous writes
    for t in range(horizon):
        xi = None
        if d_xi:
            if xi_pos == xi_block.shape[1]:
                xi_block = np.stack([draw_xi(g, "normal", (_BLOCK, d_xi))
                                     for g in rngs])  # type: ignore[arg-type]
                xi_pos = 0
            xi = xi_block[:, xi_pos]
            xi_pos += 1
        arm = np.argmax(policy.scores(state, t, xi), axis=1)
        state.update(X, arm, noise.rewards(arm))
        arms_seq[t] = arm
    return arms_seq


def _kernel_arms(policy: LinearIndexPolicy, env: LinearBandit,
                 rngs: Sequence[np.random.Generator | None], seeds: Sequence[SeedLike],
                 horizon: int) -> np.ndarray:
    """The same arms (horizon, n) from the compiled kernel (each trial its own streams, so
    the result is :func:`_numpy_arms`'s)."""
    return np.column_stack([arms for arms, _ in _kernel_columns(policy, env, rngs, seeds,
                                                                horizon)])


def _kernel_columns(policy: LinearIndexPolicy, env: LinearBandit,
                    rngs: Sequence[np.random.Generator | None], seeds: Sequence[SeedLike],
                    horizon: int) -> Iterator[tuple[np.ndarray, float]]:
    """Each trial's arms (horizon,) from the compiled kernel, one trial after another, with
    the seconds it took."""
    from . import kernel as lk  # imports numba: only here, never at the CLI's start-up

    noise = _LinearNoise(env, seeds)
    code = {"gaussian": lk.GAUSSIAN, "rademacher": lk.RADEMACHER}.get(env.noise, lk.BERNOULLI)
    thresholds = getattr(noise, "thresholds", np.zeros(env.n_arms))
    below = getattr(noise, "below", np.zeros(env.n_arms, dtype=bool))
    if isinstance(policy, OFUL):
        kind, radius = lk.OFUL_KIND, RADII.index(policy.radius)
        consts = (policy.R, policy._two_log, policy._bias, policy.radius_scale, policy.alpha,
                  policy.L**2, policy.delta, 0.0)
    else:
        assert isinstance(policy, LinearThompson)
        kind, radius = lk.TS_KIND, 0
        consts = (policy.R, 0.0, 0.0, 1.0, 0.0, 0.0, policy.delta, policy.v)
    X = np.ascontiguousarray(policy.X)
    means = np.asarray(env.means, dtype=float)
    unused = np.random.default_rng(0)  # OFUL reads no ξ; the kernel needs a Generator all the same
    for g, noise_rng in zip(rngs, noise.rngs, strict=True):
        start = time.perf_counter()
        out = np.empty(horizon, dtype=np.int64)
        lk.linear_trial(X, policy.lam, kind, radius, *consts, code, thresholds, below, means,
                        env.sigma, noise_rng, g if g is not None else unused, horizon, out)
        yield out, time.perf_counter() - start


# ---------------------------------------------------------------------------------------------
# By name (issue 18): OFUL and LinTS, sequential, with their lock-step drivers

def _make_oful(env: Environment, rng: np.random.Generator | None, **params: object) -> OFUL:
    return OFUL(linear_arms(env), **params)  # type: ignore[arg-type]


def _make_lints(env: Environment, rng: np.random.Generator | None, *, horizon: int,
                **params: object) -> LinearThompson:
    return LinearThompson(linear_arms(env), rng, horizon=horizon,  # type: ignore[arg-type]
                          **params)


def oful_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                  seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None,
                  **params: object) -> list[Trial]:
    """OFUL trials in lock-step, each equal to ``simulate`` of :class:`OFUL` (``params`` as
    the class takes them)."""
    return linear_lockstep(partial(_make_oful, **params), envs, rngs, seeds, horizon,
                           checkpoints)


def lints_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                   seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None,
                   **params: object) -> list[Trial]:
    """Linear Thompson sampling trials in lock-step, each with its own ξ ``rngs[i]``, each
    equal to ``simulate`` of :class:`LinearThompson` with ``horizon=horizon``."""
    return linear_lockstep(partial(_make_lints, horizon=horizon, **params), envs, rngs, seeds,
                           horizon, checkpoints)


@register_policy("OFUL")
def oful(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         lam: float = 1.0, delta: float = 0.01, R: float = 1.0, S: float = 1.0,
         L: float | None = None, radius: str = "self-normalized", radius_scale: float = 1.0,
         alpha: float = 1.0, reward_range: tuple[float, float] | None = (-1.0, 1.0)) -> OFUL:
    """OFUL (Abbasi-Yadkori et al. 2011), Theorem 2's radius; LinUCB with radius='constant'."""
    return OFUL(linear_arms(env), lam=lam, delta=delta, R=R, S=S, L=L, radius=radius,
                radius_scale=radius_scale, alpha=alpha, horizon=horizon,
                reward_range=reward_range)


@register_policy("LinearThompson")
def lints(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
          lam: float = 1.0, delta: float = 0.01, epsilon: float | None = None, R: float = 1.0,
          v: float | None = None, reward_range: tuple[float, float] | None = (-1.0, 1.0)
          ) -> LinearThompson:
    """Linear Thompson sampling (Agrawal & Goyal 2013), v = R sqrt(24/eps d ln(1/delta))."""
    return LinearThompson(linear_arms(env), rng, lam=lam, delta=delta, epsilon=epsilon, R=R,
                          v=v, horizon=horizon, reward_range=reward_range)
