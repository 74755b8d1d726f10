"""The replicable identifiers of issue 25 run live (banditkit.Experiment) and make the
decisions of a simulation on the same rewards."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit import Experiment, simulate
from banditkit.live.journal.defaults import params_in_force
from banditkit.registry import make_policy
from banditkit.rng import as_generator
from live_support import TableBandit, reward_table, unit_rewards

# (algorithm, arms: names or features, horizon, params, means); ρ = 1 and a wide gap keep the
# phases within the table's 20,000 pulls per arm
CASES = {
    "ReplicableSuccessiveElimination": (["a", "b"], None, {"rho": 1.0, "delta": 0.2},
                                        [0.05, 0.95]),
    "ReplicableRAGE": (np.eye(2), None, {"rho": 1.0, "delta": 0.2}, [0.05, 0.95]),
    # observed from per-arm running totals (observe_arm_sums), as every i.i.d. identifier
    "ReplicableGBAI": (np.eye(3), 15_000, {"rho": 1.0, "sigma": 0.5}, [0.2, 0.4, 0.9]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_live_replicable_identifier_makes_the_decisions_of_a_simulation(tmp_path, name):
    arms, horizon, params, means = CASES[name]
    table = reward_table(means)
    X = arms if isinstance(arms, np.ndarray) else None
    algo = make_policy(name, TableBandit(table, X), as_generator(3), horizon=horizon,
                       **params_in_force(name, params)[0])
    trial = simulate(algo, TableBandit(table, X), horizon=horizon, seed=0)
    assert trial.stopped and trial.recommendation == len(means) - 1

    path = str(tmp_path / "e.sqlite")
    Experiment.create(path, algorithm=name, arms=arms, seed=3, horizon=horizon,
                      params=params).close()
    with Experiment.open(path) as exp:
        for _ in range(200):
            units = exp.assign(1000)["unit"].tolist()
            if exp.status().finished:
                break
            exp.record(units, unit_rewards(path, units, table))
        state = exp.status()
        assert state.finished
        assert exp.decisions().same_as(trial.decisions)
        assert state.recommendation == exp.arm_names[trial.recommendation]
