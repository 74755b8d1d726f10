"""A user's program over every name of ``banditkit.__all__``, type-checked with ``mypy --strict``
by tests/test_typing.py (never run: the README's quick starts run in test_readme.py). It fails
when a public signature loses its annotations, when a documented use does not type-check
(e.g. a numpy array passed where the README passes one), or when a name leaves ``__all__``."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import banditkit
from banditkit import (
    Algorithm,
    Batch,
    DecisionLog,
    Engine,
    Experiment,
    ExperimentError,
    Trial,
    __version__,
    simulate,
    simulate_trials,
)
from banditkit.envs import BernoulliBandit
from banditkit.policies import UCB1, ReplicableElimination


def simulation() -> tuple[float, npt.NDArray[np.int64]]:
    env = BernoulliBandit([0.44, 0.47, 0.50, 0.53, 0.56, 0.59])
    trial: Trial = simulate(UCB1(env.n_arms), env, horizon=45_000, seed=1)
    xi = np.random.default_rng(7)
    other = simulate(ReplicableElimination(6, 45_000, rho=0.3, rng=xi), env, horizon=45_000,
                     seed=np.random.SeedSequence(2))
    log: DecisionLog = other.decisions
    assert log.same_as(trial.decisions) in (True, False)
    assert trial.final_regret is not None  # None only for an identifier's trial
    return trial.final_regret, trial.counts


def many_trials() -> list[float]:
    env = BernoulliBandit([0.44, 0.47, 0.50])
    trials: list[Trial] = simulate_trials(lambda e, xi: UCB1(e.n_arms), env, n_trials=4,
                                          seed=0, horizon=1_000)
    engine: Engine | None = UCB1(env.n_arms).engine(env, 1_000)
    assert engine is None or engine.name != ""
    return [t.final_regret or 0.0 for t in trials]


def live_test(rates: dict[str, float]) -> str:
    rng = np.random.default_rng(0)
    Experiment.create("checkout.sqlite", algorithm="ReplicableElimination", arms=list(rates),
                      seed=7, horizon=30_000, params={"rho": 0.2}).close()
    with Experiment.open("checkout.sqlite") as exp:
        units = exp.assign(3_000)
        converted = rng.random(len(units)) < units["arm"].map(rates).to_numpy()
        exp.record(units["unit"], converted)
        status = exp.status()
        waiting = exp.units(unanswered=True)
    try:
        Experiment.open("missing.sqlite", readonly=True)
    except ExperimentError as error:
        return str(error)
    return f"{status.leader} {len(waiting)} {banditkit.__version__ == __version__}"


class RoundRobin(Algorithm):
    """An algorithm written against the public base class: every arm once per batch."""

    def __init__(self, n_arms: int, horizon: int) -> None:
        super().__init__(n_arms)
        self.horizon = horizon
        self.sums = np.zeros(n_arms)

    def _next_batch(self) -> Batch | None:
        if self.t >= self.horizon:
            return None
        return Batch(arms=np.arange(self.n_arms), counts=np.ones(self.n_arms, dtype=np.int64))

    def _observe(self, batch: Batch, rewards: npt.NDArray[np.float64],
                 costs: npt.NDArray[np.float64] | None) -> None:
        self.sums[batch.arms] += rewards
