"""Experiment.allocation: what an application downloads (banditkit.live.assignment.allocation)."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.client import Assigner


def _elimination(tmp_path, name="e.db", **kw):
    return Experiment.create(tmp_path / name, algorithm="BatchedElimination",
                             arms=["control", "b", "c"], seed=3, horizon=600,
                             params={"q": 4.0}, **kw)


def test_remaining_slots_and_versions(tmp_path):
    with _elimination(tmp_path) as e:
        a = e.allocation()
        assert a.mode == "batch" and a.arms == ["control", "b", "c"]
        first = e.assign_rows(1).batch[0]
        batch = e._algorithm.next_batch()
        counts = batch.allocation(3)
        assert a.weights == pytest.approx(list(counts / counts.sum()))
        assert e.allocation().version != a.version  # one slot fewer: new weights
        assert e.allocation().version == e.allocation().version  # stable
        assert e.allocation().salt == a.salt and first == 0
        json = a.as_json()
        assert set(json) >= {"name", "version", "salt", "arms", "weights", "cache_seconds"}
        assert json["name"] == "e" and json["cache_seconds"] == 5.0


def test_every_slot_taken_publishes_the_overflow_shares(tmp_path):
    with _elimination(tmp_path) as e:
        n = e._algorithm.next_batch().n_pulls
        e.assign(n)
        a = e.allocation()
        assert a.mode == "overflow" and sum(a.weights) == pytest.approx(1)
        assert all(w > 0 for w in a.weights)


def test_thompson_publishes_its_sampling_probabilities_with_the_control_floor(tmp_path):
    with Experiment.create(tmp_path / "t.db", algorithm="BatchedThompson",
                           arms=["control", "b", "c"], seed=1, horizon=2000,
                           params={"batch_size": 200, "min_share": 0.0}) as e:
        a = e.allocation()
        assert a.mode == "sampling"
        assert a.weights == pytest.approx(list(e._algorithm.last_shares))
        # feed a batch in which b wins: the control floor 0.2 (live default) holds
        units = e.assign(200)
        e.record(units.unit, (units.arm == "b").astype(float))
        b = e.allocation()
        assert b.version != a.version and b.batch == 1
        assert b.weights[0] == pytest.approx(0.2) and b.weights[1] > 0.7


def test_paused_stopped_and_finished_always_publish_something(tmp_path):
    with _elimination(tmp_path) as e:
        e.pause("by hand")
        a = e.allocation()
        assert a.mode == "control" and a.weights == [1.0, 0.0, 0.0]
        e.resume()
        e.stop("c")
        r = e.allocation()
        assert r.mode == "rollout" and r.weights == [0.0, 0.0, 1.0]
        assert {Assigner(r.as_json()).assign(k) for k in range(50)} == {"c"}
    with _elimination(tmp_path, "s.db") as e:
        e.stop(rollout=False)
        assert e.allocation().mode == "control"
    with Experiment.create(tmp_path / "f.db", algorithm="ReplicableElimination",
                           arms=["a", "b"], seed=0, horizon=40, params={"rho": 0.2}) as e:
        while True:
            units = e.assign(40)
            if units.attrs["overflow_units"] or not len(units):
                break
            e.record(units.unit, np.where(units.arm == "b", 1.0, 0.0))
        assert e.allocation().mode == "rollout"


def test_bad_arguments_are_refused_by_name(tmp_path):
    with _elimination(tmp_path) as e:
        for bad in (0, -1, float("nan"), "5", True, 1e9):
            with pytest.raises(ExperimentError, match="cache_seconds"):
                e.allocation(cache_seconds=bad)
        with pytest.raises(ExperimentError, match="name"):
            e.allocation(name="")
        assert e.allocation("shop", cache_seconds=30).as_json()["cache_seconds"] == 30


def test_readonly_computes_the_same_allocation(tmp_path):
    _elimination(tmp_path).close()  # nothing stored yet: not even the first batch
    with Experiment.open(tmp_path / "e.db", readonly=True) as r:
        fresh = r.allocation()
    with _elimination(tmp_path, "e2.db") as e:
        a = e.allocation()
    assert fresh.weights == a.weights and fresh.mode == a.mode
    with Experiment.open(tmp_path / "e2.db", readonly=True) as r:
        assert r.allocation() == a
