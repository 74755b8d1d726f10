"""units()'s propensity column: the probability with which the design gave each unit its arm,
so that the log can be re-analysed off-policy (inverse-propensity estimates)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from banditkit import Experiment
from banditkit.live.assignment.propensity import batch_propensities

MEANS = np.array([0.2, 0.5, 0.8])


def _run_to_the_end(exp: Experiment, rng: np.random.Generator, means: np.ndarray = MEANS,
                    cost_means: np.ndarray | None = None) -> None:
    while not (units := exp.assign(10_000)).empty:
        arms = units["arm_index"].to_numpy()
        rewards = (rng.random(arms.size) < means[arms]).astype(float)
        cost = None if cost_means is None else \
            (rng.random((arms.size, 1)) < cost_means[arms, None]).astype(float)
        exp.record(units["unit"], rewards, cost)


def test_ips_estimates_from_the_log_recover_the_arm_means(tmp_path):
    rng = np.random.default_rng(8)
    with Experiment.create(tmp_path / "e.sqlite", algorithm="ReplicableElimination",
                           arms=["a", "b", "c"], seed=2, horizon=6000,
                           params={"rho": 0.2, "beta_floor": False, "commit": "argmax"},
                           overflow="off") as exp:  # the algorithm's units alone, to the end
        _run_to_the_end(exp, rng)
        log = exp.units()
    assert log["reward"].notna().all()
    # an elimination round gives each active arm an equal share; the commit gives one arm all
    assert set(np.round(log["propensity"], 6)) >= {round(1 / 3, 6), 1.0}
    arms, rewards, p = log["arm_index"].to_numpy(), log["reward"].to_numpy(), \
        log["propensity"].to_numpy()
    batch_has = {}  # per batch, the arms it gave a positive probability
    for b, group in log.groupby("batch"):
        batch_has[b] = set(group["arm_index"])
    for a, mu in enumerate(MEANS):
        covered = np.array([a in batch_has[b] for b in log["batch"]])
        ips = np.sum((arms == a) * covered * rewards / p) / covered.sum()
        assert abs(ips - mu) < 0.05, (a, ips, mu)
        # weights of 1/K instead of the design's share are biased once one arm takes all
        naive = np.sum((arms == a) * covered * rewards * 3) / covered.sum()
        if a == 2:
            assert abs(naive - mu) > 0.1  # measured: 0.16


def test_a_sampled_design_gives_its_strategy_not_the_batch_share(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "d.sqlite"
    with Experiment.create(path, algorithm="DEBORAS", arms=["a", "b", "c"], seed=1,
                           horizon=2000, params={"rho": 0.3}, thresholds=[0.5],
                           overflow="off") as exp:
        _run_to_the_end(exp, rng, np.array([0.2, 0.3, 0.9]), np.array([0.2, 0.6, 0.8]))
        log = exp.units()
    conn = sqlite3.connect(path)
    strategies = {b: json.loads(s) for b, s in conn.execute("SELECT id, strategy FROM batches")}
    conn.close()
    expected = [strategies[b][a] for b, a in zip(log["batch"], log["arm_index"], strict=True)]
    np.testing.assert_allclose(log["propensity"], expected)


def test_a_strategy_wins_over_the_share_and_shares_follow_the_counts():
    batches = [(1, np.array([0, 2]), np.array([3, 1]), None),  # any order of rows
               (0, np.array([0, 1, 0]), np.array([2, 5, 3]), "[0.25, 0.25, 0.5]")]
    np.testing.assert_allclose(batch_propensities(batches, 3),
                               [[0.25, 0.25, 0.5], [0.75, 0.0, 0.25]])
