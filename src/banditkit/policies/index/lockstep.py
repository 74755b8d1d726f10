"""Sequential index policies (UCB1, KL-UCB, Thompson sampling) for many trials at once: one
vectorised step per round across trials.

An :class:`~banditkit.policies.index.base.IndexPolicy` is fully sequential, so
:func:`banditkit.simulate` spends one Python step per pull (tens of µs). :func:`index_lockstep`
runs n trials together with state arrays of shape (n, K): each round is the policy's own
``scores`` over all trials, a handful of numpy operations.

It reproduces :func:`banditkit.simulate` exactly, trial by trial, on Bernoulli and Gaussian
arms, because every trial keeps its own two streams:

* Noise: a Bernoulli pull in simulate is ``rng.binomial(1, μ)``, which numpy computes by
  inversion from one uniform U: reward 1 iff U > (1 − μ) for μ ≤ 1/2, and iff U ≤ μ for μ > 1/2
  (it inverts the complement). Pre-drawing each trial's uniforms in blocks with ``rng.random``
  reads the same doubles, so the rewards coincide (up to ties at probability 2⁻⁵³ where
  ``exp(log(q))`` is off by one ulp). numpy draws nothing for μ = 0, so Bernoulli instances with
  an arm of mean exactly 0 run through simulate. A Gaussian pull is ``μ + σ·standard_normal()``,
  likewise pre-drawn in blocks.
* ξ: the policy reads a fixed number of values per round (``n_draws``), so each trial's ξ is
  pre-drawn in blocks of rounds and row r of the block is what the sequential class reads at
  round r.

The scores are the policy's own ``scores`` method applied to (n, K) arrays instead of (K,), the
same floating-point operations, so decisions agree bit for bit (``tests/test_regret_lockstep.py``).
Other environments fall back to :func:`banditkit.simulate`, one trial at a time.

When numba is available (:func:`banditkit.jit.available`), UCB1, KL-UCB and Thompson sampling
(their exact classes) run instead through a compiled loop per trial
(:mod:`banditkit.policies.index.kernels`) that reads the same streams pull by pull and gives
the same trials: a numpy round costs about a microsecond per call whatever the number of trials,
so with a figure's 20 trials the numpy path is 7-18x a C loop, the compiled one 1-2x
(``benchmarks/bench_sequential.py``). The numpy path below is what ``BANDITKIT_JIT=0`` runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ... import jit
from ...engines import Engine
from ...envs.base import Environment
from ...envs.multi_armed import BernoulliBandit, GaussianBandit
from ...envs.multi_armed import bernoulli_rule as _bernoulli_rule
from ...protocol import Batch, DecisionLog
from ...rng import SeedLike, as_generator
from ...simulate import default_checkpoints, simulate
from ...trial import Trial
from ...validation import check_positive_int
from .base import IndexPolicy, draw_xi

__all__ = ["index_engine", "index_lockstep", "index_trials"]

_BLOCK = 4096  # rounds of noise pre-drawn per trial at a time
_XI_BLOCK = 262_144  # ξ values pre-drawn per trial at a time (2 MB), whole rounds


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
            self.below = ~np.array([r[1] for r in rules])
        else:
            self.sigma = env.sigma

    def rewards(self, arms: np.ndarray) -> np.ndarray:
        if self.pos == self.block.shape[1]:
            kind = "normal" if self.gaussian else "uniform"
            self.block = np.stack([draw_xi(g, kind, (_BLOCK,)) for g in self.rngs])
            self.pos = 0
        x = self.block[:, self.pos]
        self.pos += 1
        if self.gaussian:
            # simulate: n·μ + z·sqrt(n)·σ with n = 1
            return 1.0 * self.means[arms] + x * 1.0 * self.sigma
        # U > thr for arms with μ ≤ 1/2, U ≤ thr (= not U > thr) for the others
        return ((x > self.thresholds[arms]) ^ self.below[arms]).astype(float)


class _Xi:
    """Per-trial ξ read in blocks of rounds, ``n_draws`` values per round."""

    def __init__(self, rngs: Sequence[np.random.Generator], kind: str, n_draws: int) -> None:
        self.rngs, self.kind, self.n_draws = list(rngs), kind, n_draws
        self.block = np.empty((len(self.rngs), 0, n_draws))
        self.pos = 0
        # a block holds about 2 MB per trial whatever n_draws is
        self.rounds = max(1, min(_BLOCK, _XI_BLOCK // max(n_draws, 1)))

    def next(self) -> np.ndarray:
        if self.pos == self.block.shape[1]:
            self.block = np.stack([draw_xi(g, self.kind, (self.rounds, self.n_draws))
                                   for g in self.rngs])
            self.pos = 0
        x = self.block[:, self.pos]
        self.pos += 1
        return x


def _vectorised_env(env: Environment, policy: IndexPolicy) -> bool:
    """Whether the lock-step engines run ``policy`` on ``env``: a Bernoulli instance with every
    mean above 0 (numpy's binomial draws nothing for μ = 0, which would shift the uniforms of
    later pulls), or a Gaussian one for a policy that accepts unbounded rewards (Gaussian
    rewards leave a bounded range: the protocol loop refuses them as ``observe`` does)."""
    if type(env) is GaussianBandit:
        return policy.reward_range is None
    return type(env) is BernoulliBandit and bool(np.all(env.means > 0))


def index_engine(policy: IndexPolicy, env: Environment, horizon: int | None
                 ) -> Engine | None:
    """The engines of an index policy (UCB1, KL-UCB, Thompson sampling) on ``env``
    (:attr:`banditkit.protocol.Algorithm.engines`): the compiled trial of its exact class
    (:func:`~banditkit.policies.index.kernels.kernel_for`) when numba is available, and
    the lock-step runner :func:`index_trials` across trials; ``None`` on other environments
    or without a horizon."""
    if horizon is None or not _vectorised_env(env, policy):
        return None
    run = None
    if jit.available():
        from .kernels import kernel_for

        if kernel_for(policy) is not None:
            run = _index_run
    return Engine("compiled kernel" if run is not None else "lock-step", run=run,
                  run_trials=index_trials)


def _index_run(policy: IndexPolicy, env: Environment, *, horizon: int, seed: SeedLike,
               checkpoints: np.ndarray | None) -> Trial:
    """One trial through the compiled kernel (the noise Generator read pull by pull, so a
    Generator given as ``seed`` ends where the protocol loop leaves it)."""
    from .kernels import kernel_for

    kernel = kernel_for(policy)
    assert kernel is not None  # index_engine offers this engine only then
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    return _compiled(kernel, env, [policy.rng], [seed], horizon, checkpoints)[0]


def index_lockstep(make: Callable[[int, np.random.Generator | None], IndexPolicy],
                   envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                   seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None
                   ) -> list[Trial]:
    """:func:`index_trials` of the policies ``make(K, rngs[i])`` (``make(n_arms, rng)`` builds
    a fresh policy with its parameters fixed)."""
    if not len(envs) == len(rngs) == len(seeds):
        raise ValueError(f"envs, rngs and seeds must have the same length, got {len(envs)}, "
                         f"{len(rngs)} and {len(seeds)}")
    return index_trials([make(e.n_arms, r) for e, r in zip(envs, rngs, strict=True)], envs,
                        seeds, horizon, checkpoints)


def index_trials(policies: Sequence[IndexPolicy], envs: Sequence[Environment],
                 seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None
                 ) -> list[Trial]:
    """Run ``len(seeds)`` trials of the index policies ``policies`` in lock-step.

    Parameters
    ----------
    policies : sequence of IndexPolicy
        Fresh policies of one class with the same parameters (one factory's), each with its
        own ξ (``policy.rng``; ``None`` for deterministic policies).
    envs : sequence of Environment
        One per trial. Trials on one shared Bernoulli or Gaussian instance (the same object
        for every trial) run vectorised; other environments, or different instances per
        trial, run trial by trial through the protocol loop.
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
        seed=seeds[i], checkpoints=checkpoints, engine="reference")`` except that the
        decision log holds the whole pull sequence as one batch (``n_batches`` still counts one
        per pull).
    """
    horizon = check_positive_int(horizon, "horizon")
    if not len(policies) == len(envs) == len(seeds):
        raise ValueError(f"policies, envs and seeds must have the same length, got "
                         f"{len(policies)}, {len(envs)} and {len(seeds)}")
    if not seeds:
        return []
    env = envs[0]
    policy = policies[0]
    rngs = [p.rng for p in policies]
    checkpoints = (default_checkpoints(horizon) if checkpoints is None
                   else np.asarray(checkpoints, dtype=np.int64))
    if not (all(e is env for e in envs) and _vectorised_env(env, policy)):
        return [simulate(p, e, horizon=horizon, seed=s, checkpoints=checkpoints,
                         engine="reference")
                for p, e, s in zip(policies, envs, seeds, strict=True)]

    if jit.available():
        # a compiled loop per trial (banditkit.policies.index.kernels) for the classes
        # that have one: the same streams, the same numbers, at C speed
        from .kernels import kernel_for

        kernel = kernel_for(policy)
        if kernel is not None:
            return _compiled(kernel, env, rngs, seeds, horizon, checkpoints)

    start = time.perf_counter()
    n, K = len(seeds), env.n_arms
    noise = _Noise(env, seeds)
    xi = _Xi(rngs, policy.draw_kind, policy.n_draws) if policy.n_draws else None
    rows = np.arange(n)
    # pull counts kept as floats (exact below 2⁵³): the scores divide by them, and a float
    # array spares numpy an int → float conversion per operation; same values as the class's
    pulls = np.zeros((n, K))
    sums = np.zeros((n, K))
    arms_seq = np.empty((horizon, n), dtype=np.int64)  # a row per round: contiguous writes
    flat_pulls, flat_sums = pulls.reshape(-1), sums.reshape(-1)
    offsets = rows * K
    initial = K if policy.initial_rounds else 0
    scores = policy.scores
    for t in range(horizon):
        draws = xi.next() if xi is not None else None  # read every round, as the class does
        if t < initial:
            arm = np.full(n, t)  # every arm once, in index order
        else:
            arm = np.argmax(scores(pulls, sums, t, draws), axis=1)
        r = noise.rewards(arm)
        flat = offsets + arm
        flat_pulls[flat] += 1.0
        flat_sums[flat] += r
        arms_seq[t] = arm
    seconds = (time.perf_counter() - start) / n
    return _trials(env, arms_seq.T, pulls, horizon, checkpoints, seconds)


def _compiled(kernel: Callable[..., None], env: Environment,
              rngs: Sequence[np.random.Generator | None], seeds: Sequence[SeedLike],
              horizon: int, checkpoints: np.ndarray) -> list[Trial]:
    """:func:`index_lockstep` through a compiled kernel, one call per trial: each trial reads
    its own noise and ξ streams pull by pull, as simulate does."""
    start = time.perf_counter()
    n, K = len(seeds), env.n_arms
    gaussian = isinstance(env, GaussianBandit)
    thresholds, below = np.zeros(K), np.zeros(K, dtype=np.bool_)
    if not gaussian:
        for k, mu in enumerate(env.means):
            thresholds[k], above = _bernoulli_rule(float(mu))
            below[k] = not above
    means = np.ascontiguousarray(env.means, dtype=np.float64)
    sigma = float(env.sigma) if gaussian else 1.0
    arms = np.empty((n, horizon), dtype=np.int64)
    pulls, sums = np.zeros((n, K)), np.zeros((n, K))
    for i in range(n):
        kernel(as_generator(seeds[i]), rngs[i], gaussian, means, thresholds, below, sigma,
               horizon, arms[i], pulls[i], sums[i])
    seconds = (time.perf_counter() - start) / n
    return _trials(env, arms, pulls, horizon, checkpoints, seconds)


def _trials(env: Environment, arms: np.ndarray, pulls: np.ndarray, horizon: int,
            checkpoints: np.ndarray, seconds: float) -> list[Trial]:
    """The trials' results from their pull sequences ``arms`` (n, horizon) and final pull
    counts (n, K): regret as simulate records it, the sequence as one batch."""
    gaps = env.gaps
    trials = []
    for i in range(arms.shape[0]):
        log = DecisionLog()
        log.record(Batch.from_sequence(arms[i]))
        runs, counts = log.runs()
        cum = np.r_[0.0, np.cumsum(counts * gaps[runs])]
        ends = np.r_[0, np.cumsum(counts)]
        trials.append(Trial(
            counts=pulls[i].astype(np.int64), n_pulls=horizon, decisions=log,
            checkpoints=checkpoints,
            regret=np.interp(checkpoints, ends, cum), recommendation=None, correct=None,
            stopped=False, n_batches=horizon, seconds=seconds, info={}))
    return trials
