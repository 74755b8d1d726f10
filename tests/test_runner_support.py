"""Small figure specs and algorithms for the runner, store, backend and CLI tests.

Module-level functions only (worker processes and Dask workers import them by name). This
module holds no tests; it sits beside them so every worker can import it.
"""

from __future__ import annotations

import numpy as np

from banditkit.envs import BernoulliBandit
from banditkit.experiments.figures.replicable_bandits import make_ucb1
from banditkit.experiments.spec import AlgorithmSpec, FigureSpec, PaperValue, PlotSpec
from banditkit.policies.index.ucb import UCB1
from banditkit.protocol import Algorithm, Batch
from banditkit.simulate import simulate


def make_env(rng: np.random.Generator, *, means: tuple[float, ...]) -> BernoulliBandit:
    return BernoulliBandit(np.asarray(means, dtype=float))


def make_random_env(rng: np.random.Generator, *, K: int) -> BernoulliBandit:
    """A random instance: the arm means are drawn from the instance stream."""
    return BernoulliBandit(np.sort(rng.uniform(0.2, 0.8, size=K)))


class EpsilonGreedy(Algorithm):
    """Batched ε-greedy: each batch of ``batch`` pulls explores uniformly with probability ε per
    pull and otherwise plays the empirical best arm. Uses its internal randomness ξ, so the
    runner's algorithm streams matter for its numbers."""

    kind = "regret"

    def __init__(self, n_arms: int, rng: np.random.Generator, eps: float, batch: int) -> None:
        super().__init__(n_arms)
        self.rng, self.eps, self.batch = rng, eps, batch
        self.pulls = np.zeros(n_arms, dtype=np.int64)
        self.sums = np.zeros(n_arms)

    def _next_batch(self) -> Batch:
        means = np.where(self.pulls > 0, self.sums / np.maximum(self.pulls, 1), np.inf)
        explore = self.rng.random(self.batch) < self.eps
        arms = np.where(explore, self.rng.integers(0, self.n_arms, self.batch),
                        int(np.argmax(means)))
        return Batch.from_sequence(arms)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)


def make_eps_greedy(env, rng, *, eps: float = 0.1, batch: int = 10) -> EpsilonGreedy:
    return EpsilonGreedy(env.n_arms, rng, eps, batch)


class UniformIdentifier(Algorithm):
    """Pull every arm ``n`` times in one batch, then stop and recommend the empirical best
    (ties broken at random with ξ)."""

    kind = "identification"

    def __init__(self, n_arms: int, rng: np.random.Generator, n: int) -> None:
        super().__init__(n_arms)
        self.rng, self.n = rng, n
        self.sums = np.zeros(n_arms)
        self.done = False

    def _next_batch(self) -> Batch | None:
        if self.done:
            return None
        return Batch.from_allocation(np.full(self.n_arms, self.n))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.sums, batch.arms, rewards)
        best = np.flatnonzero(self.sums == self.sums.max())
        self._recommendation = int(self.rng.choice(best))
        self.done = True

    @property
    def recommendation(self) -> int | None:
        return self._recommendation if self.done else None


def make_uniform_identifier(env, rng, *, n: int) -> UniformIdentifier:
    return UniformIdentifier(env.n_arms, rng, n)


def make_flaky(env, rng, *, eps: float = 0.1) -> EpsilonGreedy:
    """Fails for about half of the trials (decided by ξ, so the same trials fail every time)."""
    if rng.random() < 0.5:
        raise RuntimeError("flaky trial refused to start")
    return EpsilonGreedy(env.n_arms, rng, eps, 10)


#: Set to True by a test to make :func:`make_broken` fail (a fault fixed between two runs).
BROKEN = {"fail": False}


def make_broken(env, rng) -> EpsilonGreedy:
    if BROKEN["fail"]:
        raise ValueError("broken on purpose")
    return EpsilonGreedy(env.n_arms, rng, 0.1, 10)


#: Calls of :func:`ucb_lockstep`: (number of trials, horizon), to check grouping.
LOCKSTEP_CALLS: list[tuple[int, int]] = []


def ucb_lockstep(envs, rngs, seeds, horizon, checkpoints, **params):
    """A lock-step function honouring the contract (trial i uses envs[i], rngs[i] and
    seeds[i]) by simulating each trial in turn."""
    LOCKSTEP_CALLS.append((len(rngs), horizon))
    return [simulate(make_ucb1(env, rng, **params), env, horizon=horizon, seed=seed,
                     checkpoints=checkpoints)
            for env, rng, seed in zip(envs, rngs, seeds, strict=True)]


#: Calls of :func:`counting_simulator`: (algorithm class name, horizon).
SIMULATOR_CALLS: list[tuple[str, int | None]] = []


def counting_simulator(algorithm, env, *, horizon=None, seed=0, checkpoints=None):
    """A drop-in for simulate that records its calls and delegates to it."""
    SIMULATOR_CALLS.append((type(algorithm).__name__, horizon))
    return simulate(algorithm, env, horizon=horizon, seed=seed, checkpoints=checkpoints)


POINTS = ({"means": (0.3, 0.5, 0.6)}, {"means": (0.4, 0.45, 0.5, 0.55)})

#: Two points, a deterministic and a randomised policy: 24 short trials.
SMALL = FigureSpec(
    name="test:small",
    title="Small regret figure for tests",
    paper="none (test)",
    make_env=make_env,
    points=POINTS,
    algorithms=(AlgorithmSpec("UCB1", make_ucb1, {"exploration": 2.0}),
                AlgorithmSpec("eps-greedy", make_eps_greedy, {"eps": 0.2, "batch": 10})),
    trials=6,
    horizon=400,
    checkpoints=20,
    plot=PlotSpec(kind="curve", metric="regret"),
    paper_values=(PaperValue("UCB1", 0, "final_regret", 20.0, "made up for the test"),),
    quick={"trials": 3, "horizon": 200},
    notes="A test figure.",
)

#: UCB1 run by its lock-step function (same numbers as the UCB1 of SMALL).
LOCKSTEP = FigureSpec(
    name="test:small",
    title="Small regret figure for tests",
    paper="none (test)",
    make_env=make_env,
    points=POINTS,
    algorithms=(AlgorithmSpec("UCB1", make_ucb1, {"exploration": 2.0}, lockstep=ucb_lockstep),),
    trials=6,
    horizon=400,
    checkpoints=20,
)

#: Identification over a sweep of the per-arm sample size, with random instances per trial.
IDENTIFY = FigureSpec(
    name="test:identify",
    title="Uniform sampling identification for tests",
    paper="none (test)",
    make_env=make_random_env,
    points=tuple({"K": 4, "algorithm_params": {"n": n}} for n in (2, 20, 200)),
    algorithms=(AlgorithmSpec("uniform", make_uniform_identifier),),
    trials=8,
    instance_per_trial=True,
    plot=PlotSpec(kind="sweep", metric="failure_rate", x="n", xscale="log"),
)

#: Half of the trials of "flaky" fail; "broken" fails while BROKEN["fail"] is set.
FAILING = FigureSpec(
    name="test:failing",
    title="Failing trials",
    paper="none (test)",
    make_env=make_env,
    points=POINTS[:1],
    algorithms=(AlgorithmSpec("UCB1", make_ucb1),
                AlgorithmSpec("flaky", make_flaky),
                AlgorithmSpec("broken", make_broken)),
    trials=6,
    horizon=200,
    checkpoints=10,
)

#: Slow enough (about 50 ms a trial) to be killed half-way.
class LoopUCB1(UCB1):
    """UCB1 without its engines (the protocol loop): each trial is its own task, stored as it
    finishes, which the interruption tests need (UCB1's lock-step engine would run a point's
    trials as one task)."""

    engines = None


def make_loop_ucb1(env: BernoulliBandit, rng: np.random.Generator, **params: float
                   ) -> LoopUCB1:
    return LoopUCB1(env.n_arms, **params)


SLOW = FigureSpec(
    name="test:slow",
    title="Slow figure for interruption tests",
    paper="none (test)",
    make_env=make_env,
    points=POINTS[:1],
    algorithms=(AlgorithmSpec("UCB1", make_loop_ucb1),),
    trials=12,
    horizon=1000,
    checkpoints=10,
)


def square(shared, task):
    """A backend task: ``shared · task²``, except that task 3 raises."""
    if task == 3:
        raise ValueError("task 3 cannot run")
    return shared * task * task


def frames_equal(a, b) -> None:
    """Assert two RunResults hold the same numbers (everything but wall-clock seconds)."""
    import pandas.testing as pdt

    pdt.assert_frame_equal(a.trials.drop(columns="seconds"), b.trials.drop(columns="seconds"),
                           check_exact=True)
    pdt.assert_frame_equal(a.curves, b.curves, check_exact=True)
