"""UCB1 for many trials at once: one vectorised step per round across trials.

UCB1 (:class:`~banditkit.policies.ucb.UCB1`) is fully sequential, so :func:`banditkit.simulate`
spends one Python step per pull (tens of µs). :func:`ucb1_lockstep` runs n trials together with
state arrays of shape (n, K): each round is a handful of numpy operations over all trials.

It reproduces :func:`banditkit.simulate` of ``UCB1`` exactly, trial by trial, on Bernoulli and
Gaussian arms: each trial's noise comes from its own seed and is drawn in the order simulate
draws it. A Bernoulli pull in simulate is ``rng.binomial(1, μ)``, which numpy computes by
inversion from one uniform U: reward 1 iff U > (1 − μ) for μ ≤ 1/2, and iff U ≤ μ for μ > 1/2
(it inverts the complement). Pre-drawing each trial's uniforms in blocks with ``rng.random``
reads the same doubles, so the rewards, and hence every decision, coincide (up to ties at
probability 2⁻⁵³ where ``exp(log(q))`` is off by one ulp). numpy draws nothing for μ = 0, so
Bernoulli instances with an arm of mean exactly 0 run through simulate. A Gaussian pull is
``μ + σ·standard_normal()``, likewise pre-drawn in blocks. Other environments fall back to
:func:`banditkit.simulate`, one trial at a time.

The indices are computed with the same floating-point operations as ``UCB1.indices`` (ties to
the lowest index), so the policies agree bit for bit; ``tests/test_ucb_lockstep.py`` checks it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from ..envs.base import Environment
from ..envs.multi_armed import BernoulliBandit, GaussianBandit
from ..protocol import Batch, DecisionLog
from ..rng import SeedLike, as_generator
from ..simulate import default_checkpoints, simulate
from ..trial import Trial
from ..validation import check_positive_int
from .ucb import UCB1

__all__ = ["ucb1_lockstep"]

_BLOCK = 4096  # rounds of noise pre-drawn per trial at a time


def _bernoulli_rule(mu: float) -> tuple[float, bool]:
    """(threshold, above) such that numpy's binomial(1, μ) from uniform U is
    ``U > threshold`` if ``above`` else ``U <= threshold`` (its inversion algorithm)."""
    if mu <= 0.5:
        return math.exp(math.log(1.0 - mu)), True
    p = 1.0 - mu        # numpy inverts the complement and returns 1 − X
    q = 1.0 - p
    return math.exp(math.log(q)), False


class _Noise:
    """Per-trial noise read in blocks, in simulate's order."""

    def __init__(self, env: Environment, seeds: Sequence[SeedLike]) -> None:
        self.rngs = [as_generator(s) for s in seeds]
        self.gaussian = isinstance(env, GaussianBandit)
        self.means = env.means
        self.block = np.empty((len(self.rngs), 0))
        self.pos = 0
        if not self.gaussian:
            rules = [_bernoulli_rule(float(m)) for m in env.means]
            self.thresholds = np.array([r[0] for r in rules])
            self.above = np.array([r[1] for r in rules])
        else:
            self.sigma = env.sigma

    def rewards(self, arms: np.ndarray) -> np.ndarray:
        if self.pos == self.block.shape[1]:
            draw = (lambda g: g.standard_normal(_BLOCK)) if self.gaussian else \
                (lambda g: g.random(_BLOCK))
            self.block = np.stack([draw(g) for g in self.rngs])
            self.pos = 0
        x = self.block[:, self.pos]
        self.pos += 1
        if self.gaussian:
            # simulate: n·μ + z·sqrt(n)·σ with n = 1
            return 1.0 * self.means[arms] + x * 1.0 * self.sigma
        thr = self.thresholds[arms]
        return np.where(self.above[arms], x > thr, x <= thr).astype(float)


def ucb1_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator],
                  seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None,
                  *, exploration: float = 2.0) -> list[Trial]:
    """Run ``len(seeds)`` trials of UCB1 in lock-step.

    Matches :attr:`banditkit.experiments.spec.AlgorithmSpec.lockstep`.

    Parameters
    ----------
    envs : sequence of Environment
        One per trial. Trials on one shared Bernoulli or Gaussian instance (the same object
        for every trial) run vectorised; other environments, or different instances per
        trial, run trial by trial through :func:`banditkit.simulate`.
    rngs : sequence of Generator
        The algorithm streams ξ (UCB1 has no internal randomness: unused, accepted for the
        protocol).
    seeds : sequence of seed-like
        Noise seed of each trial, as given to :func:`banditkit.simulate`.
    horizon : int
        Pulls per trial.
    checkpoints : array of int, optional
        Times at which cumulative regret is recorded (default: as simulate).
    exploration : float
        UCB1's constant c in sqrt(c ln t / n).

    Returns
    -------
    list of Trial
        One per seed, equal to ``simulate(UCB1(K, exploration=c), envs[i], horizon=horizon,
        seed=seeds[i], checkpoints=checkpoints)`` except that the decision log holds the whole
        pull sequence as one batch (``n_batches`` still counts one per pull).
    """
    horizon = check_positive_int(horizon, "horizon")
    if not len(envs) == len(rngs) == len(seeds):
        raise ValueError(f"envs, rngs and seeds must have the same length, got {len(envs)}, "
                         f"{len(rngs)} and {len(seeds)}")
    if not seeds:
        return []
    env = envs[0]
    UCB1(env.n_arms, exploration=exploration)  # validates exploration the same way
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    # numpy's binomial draws nothing for μ = 0, so arms with mean exactly 0 would shift the
    # uniforms of later pulls: such instances (and other environments) run through simulate
    vectorised = all(e is env for e in envs) and (
        type(env) is GaussianBandit
        or (type(env) is BernoulliBandit and bool(np.all(env.means > 0))))
    if not vectorised:
        return [simulate(UCB1(e.n_arms, exploration=exploration), e, horizon=horizon,
                         seed=s, checkpoints=checkpoints) for e, s in zip(envs, seeds, strict=True)]

    start = time.perf_counter()
    n, K = len(seeds), env.n_arms
    noise = _Noise(env, seeds)
    rows = np.arange(n)
    pulls = np.zeros((n, K), dtype=np.int64)
    sums = np.zeros((n, K))
    arms_seq = np.empty((n, horizon), dtype=np.int64)
    c = float(exploration)
    flat_pulls, flat_sums = pulls.reshape(-1), sums.reshape(-1)
    offsets = rows * K
    for t in range(horizon):
        if t < K:
            # unpulled arms have index +inf and ties go to the lowest index: arm t at round t
            arm = np.full(n, t)
        else:
            # the same operations, in the same order, as UCB1.indices
            bonus = np.sqrt(c * np.log(max(t, 1)) / pulls)
            arm = np.argmax(sums / pulls + bonus, axis=1)
        r = noise.rewards(arm)
        flat = offsets + arm
        flat_pulls[flat] += 1
        flat_sums[flat] += r
        arms_seq[:, t] = arm
    seconds = (time.perf_counter() - start) / n

    gaps = env.gaps
    trials = []
    for i in range(n):
        log = DecisionLog()
        log.record(Batch.from_sequence(arms_seq[i]))
        arms, counts = log.runs()
        cum = np.r_[0.0, np.cumsum(counts * gaps[arms])]
        ends = np.r_[0, np.cumsum(counts)]
        trials.append(Trial(
            counts=pulls[i].copy(), n_pulls=horizon, decisions=log, checkpoints=checkpoints,
            regret=np.interp(checkpoints, ends, cum), recommendation=None, correct=None,
            stopped=False, n_batches=horizon, seconds=seconds, info={}))
    return trials
