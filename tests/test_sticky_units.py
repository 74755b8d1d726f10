"""Sticky units: ``Experiment.assign(keys=...)``. A key seen before gets its unit and arm again
without a new slot; new keys (and keys whose unit expired) take fresh slots in order, so the
decisions equal those of a run without keys (and of ``simulate``); two processes racing on the
same keys end with one unit per key; the keys are written in the assign transaction, under a
unique index; bad keys are refused by name, changing nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment, simulate
from banditkit.live import ExperimentError
from banditkit.live.journal.defaults import params_in_force
from banditkit.registry import make_policy
from banditkit.rng import as_generator
from live_support import TableBandit, Where, as_where, check_consistent, reward_table, unit_rewards

MEANS = [0.2, 0.5, 0.8]
CASES = {  # label: algorithm, horizon, params
    # small batches (18 pulls first): many batches in a short run
    "ReplicableElimination": ("ReplicableElimination", 3000, {"rho": 0.3, "beta": 3}),
    "UCB1": ("UCB1", 300, {}),  # one pull per batch
    # a first batch of 13,824 pulls: room for every key of the tests below
    "wide": ("ReplicableElimination", 100_000, {"rho": 0.1}),
}


def _create(path: Path | Where, case: str = "wide", seed: int = 3,
            overflow: str = "off") -> Experiment:
    # "off": these tests watch the algorithm's slots alone (tests/test_overflow.py: with it)
    name, horizon, params = CASES[case]
    return as_where(path).create(algorithm=name, arms=["a", "b", "c"], seed=seed,
                                 horizon=horizon, params=params, overflow=overflow)


def _simulated(case: str, seed: int = 3):
    table = reward_table(MEANS)
    env = TableBandit(table)
    name, horizon, params = CASES[case]
    algo = make_policy(name, env, as_generator(seed), horizon=horizon,
                       **params_in_force(name, params)[0])
    return simulate(algo, env, horizon=horizon, seed=0), table


def _handed(path: Path | Where) -> list[int]:
    conn = as_where(path).connect()
    try:
        return [h for (h,) in conn.execute("SELECT handed FROM batches ORDER BY id")]
    finally:
        conn.close()


def test_a_repeated_key_gets_its_unit_and_arm_again_without_a_slot(where):
    path = where
    with _create(path) as exp:
        first = exp.assign(keys=[f"u{i}" for i in range(20)])
        assert list(first.columns) == ["unit", "arm", "arm_index", "batch", "key", "repeated"]
        assert not first["repeated"].any() and first["unit"].is_unique
        counts = exp.status().arms["assigned"].copy()
        handed = _handed(path)
        # the same users come back, in another order, with 5 new ones among them
        keys = [f"u{i}" for i in range(19, -1, -2)] + [f"new{i}" for i in range(5)]
        again = exp.assign(len(keys), keys=keys)
        assert again["key"].tolist() == keys
        old = again[again["repeated"]].set_index("key")
        expected = first.set_index("key").loc[old.index]
        assert old["unit"].tolist() == expected["unit"].tolist()
        assert old["arm"].tolist() == expected["arm"].tolist()
        assert not again[~again["repeated"]]["unit"].isin(first["unit"]).any()
        # only the 5 new keys took slots: the batch's counts grew by 5, no more
        assert _handed(path) == [handed[0] + 5]
        assert int(exp.status().arms["assigned"].sum()) == int(counts.sum()) + 5
        # a call of repeated keys only changes nothing
        before = exp.status().arms["assigned"].tolist(), _handed(path)
        only_old = exp.assign(keys=["u3", "new2"])
        assert only_old["repeated"].all() and only_old.attrs["reason"] is None
        assert (exp.status().arms["assigned"].tolist(), _handed(path)) == before
        # integers are keys as their text; units() shows every unit's key
        int_key = exp.assign(keys=[17])
        assert exp.assign(keys=["17"])["unit"].tolist() == int_key["unit"].tolist()
        listed = exp.units().set_index("unit")["key"]
        assert listed.loc[int(int_key["unit"].iloc[0])] == "17"
        assert listed.notna().sum() == 26


def test_a_run_with_keys_makes_the_decisions_of_one_without(tmp_path):
    """Keys only route units: driven with sticky keys (a third of each call's keys repeated),
    the experiment makes exactly the decisions of simulate on the same rewards."""
    for name in ("ReplicableElimination", "UCB1"):
        trial, table = _simulated(name)
        path = tmp_path / f"{name}.sqlite"
        rng = np.random.default_rng(0)
        seen: list[str] = []
        with _create(path, name) as exp:
            for call in range(1_500):  # about 300 calls finish either run
                fresh = [f"{call}-{i}" for i in range(int(rng.integers(1, 30)))]
                old = (list(rng.choice(seen, size=min(len(seen), len(fresh) // 2),
                                       replace=False)) if seen else [])
                keys = fresh + [str(k) for k in old]
                rng.shuffle(keys)
                units = exp.assign(keys=keys)
                if exp.status().finished:
                    break
                assert units[units["repeated"]]["key"].isin(old).all()
                new = units[~units["repeated"]]
                seen += new["key"].tolist()
                ids = new["unit"].tolist()
                if ids:
                    exp.record(ids, unit_rewards(str(path), ids, table))
            assert exp.status().finished, name
            assert exp.decisions().same_as(trial.decisions), name
        check_consistent(path)


def test_an_expired_units_key_gets_a_new_slot_and_a_recorded_ones_keeps_its_unit(where):
    path = where
    with _create(path) as exp:
        first = exp.assign(keys=["gone", "kept", "answered"]).set_index("key")
        exp.expire([int(first.loc["gone", "unit"])])
        exp.record([int(first.loc["answered", "unit"])], [1.0])
        handed = _handed(path)
        again = exp.assign(keys=["gone", "kept", "answered"]).set_index("key")
        assert again["repeated"].tolist() == [False, True, True]
        # the expired unit stays expired; the key now points to a new unit, which took the
        # expired unit's slot (offered again first: same arm, no fresh slot)
        assert again.loc["gone", "unit"] != first.loc["gone", "unit"]
        assert again.loc["gone", "arm"] == first.loc["gone", "arm"]
        assert again.loc[["kept", "answered"], "unit"].tolist() == \
            first.loc[["kept", "answered"], "unit"].tolist()
        assert _handed(path) == handed
        units = exp.units().set_index("unit")
        assert units.loc[int(first.loc["gone", "unit"]), "expired_at"] is not None
        assert units.loc[int(first.loc["gone", "unit"]), "key"] == "gone"  # kept in the log
        assert units.loc[int(again.loc["gone", "unit"]), "key"] == "gone"
        # the new unit is the key's unit from now on
        third = exp.assign(keys=["gone"])
        assert third["unit"].tolist() == [again.loc["gone", "unit"]]
        assert third["repeated"].tolist() == [True]


def test_a_recorded_key_from_an_observed_batch_keeps_its_unit_in_a_later_batch(tmp_path):
    """UCB1 hands out one pull per batch: a key of an earlier, observed batch gets its unit
    (and batch) back; a new key in the same call takes the new batch's slot."""
    path = tmp_path / "e.sqlite"
    with _create(path, "UCB1") as exp:
        first = exp.assign(keys=["x"])
        exp.record(first["unit"].tolist(), [1.0])
        again = exp.assign(keys=["x", "y", "z"])
        assert again["key"].tolist() == ["x", "y"]  # one slot: z finds none
        assert again["repeated"].tolist() == [True, False]
        assert again["batch"].tolist() == [0, 1]
        assert again["unit"].iloc[0] == first["unit"].iloc[0]
        assert "1 of 3 units" not in again.attrs["reason"] and "2 of 3" in again.attrs["reason"]
        assert exp.assign(keys=["z"]).empty  # still waiting for y's reward


def test_the_keys_are_written_in_the_assign_transaction(tmp_path):
    """A key the file refuses to store (a trigger standing in for any failure after the
    units are written) rolls the whole call back: no unit, no slot, no key."""
    path = tmp_path / "e.sqlite"
    with _create(path) as exp:
        exp.assign(keys=["a"])
    conn = sqlite3.connect(path)
    conn.execute("CREATE TRIGGER poison BEFORE INSERT ON keys WHEN NEW.key = 'poison' "
                 "BEGIN SELECT RAISE(ABORT, 'refused'); END")
    conn.commit()
    conn.close()
    with Experiment.open(path) as exp:
        before = exp.units().to_dict(), _handed(path), exp.status().arms["assigned"].tolist()
        with pytest.raises(ExperimentError, match="refused"):
            exp.assign(keys=["b", "poison"])
        assert (exp.units().to_dict(), _handed(path),
                exp.status().arms["assigned"].tolist()) == before
        assert exp.assign(keys=["b"])["repeated"].tolist() == [False]


def test_the_file_holds_one_current_unit_per_key(tmp_path):
    path = tmp_path / "e.sqlite"
    with _create(path) as exp:
        units = exp.assign(keys=["k1", "k2"])["unit"].tolist()
    conn = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("UPDATE keys SET key = 'k1' WHERE unit = ?", (units[1],))
    finally:
        conn.close()


RACER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from banditkit import Experiment
    import pathlib
    path, go, seed = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    keys = [f"user{i}" for i in range(300)]
    rng = np.random.default_rng(seed)
    rng.shuffle(keys)
    seen, new = {}, 0
    exp = Experiment.open(path)
    pathlib.Path(f"{go}.{seed}").touch()  # ready: imported and opened
    while not go.exists():
        time.sleep(0.001)
    i = 0
    while i < len(keys):
        step = int(rng.integers(1, 5))
        units = exp.assign(keys=keys[i:i + step])
        seen.update(zip(units["key"], units["unit"].astype(int).tolist()))
        new += int((~units["repeated"]).sum())
        i += step
        time.sleep(0.003)  # a client between requests: SQLite's busy wait backs off, and a
        # process calling back-to-back would otherwise take every call while the other sleeps
    exp.close()
    print(json.dumps({"seen": seen, "new": new}))
""")


def test_two_processes_assigning_the_same_new_keys_end_with_one_unit_per_key(tmp_path):
    path = tmp_path / "e.sqlite"
    _create(path).close()
    go = tmp_path / "go"
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(path), str(go), str(s)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for s in (1, 2)]
    deadline = time.time() + 120
    # both processes import and open first, then start together
    while not all(Path(f"{go}.{s}").exists() for s in (1, 2)) and time.time() < deadline:
        assert all(r.poll() is None for r in racers), racers[0].communicate()[1]
        time.sleep(0.01)
    go.touch()
    answers = []
    for racer in racers:
        out, err = racer.communicate(timeout=300)
        assert racer.returncode == 0, err
        answers.append(__import__("json").loads(out))
    # both created units (they did race), were told the same unit for every key, and each
    # key has one unit
    assert all(a["new"] > 0 for a in answers) and sum(a["new"] for a in answers) == 300
    answers = [a["seen"] for a in answers]
    assert answers[0] == answers[1] and len(answers[0]) == 300
    with Experiment.open(path) as exp:
        units = exp.units()
        assert len(units) == 300 and units["key"].is_unique
        assert dict(zip(units["key"], units["unit"], strict=True)) == answers[0]
        assert int(exp.status().arms["assigned"].sum()) == 300
    assert _handed(path) == [300]
    check_consistent(path)


@pytest.mark.parametrize("n, keys, message", [
    (None, "u1", "keys must be a list"),
    (None, {"u1": 1}, "keys must be a list"),
    (None, [], "keys must be a non-empty list"),
    (None, ["u1", 1.5], "key 1 is 1.5"),
    (None, [float("nan")], "key 0 is nan"),
    (None, [None], "key 0 is None"),
    (None, [True], "key 0 is True"),
    (None, [["u1"]], "key 0 is list"),
    (None, np.array([1.0, 2.0]), "key 0 is 1.0"),
    (None, [""], "key 0 has 0 characters; a key has 1 to 256"),
    (None, ["x" * 257], "key 0 has 257 characters"),
    (None, ["u1", "u2", "u1"], "'u1' appears more than once"),
    (None, [17, "17"], "'17' appears more than once"),
    (3, ["u1", "u2"], "n must equal the number of keys \\(2\\)"),
    (True, ["u1"], "n must equal the number of keys"),
    (None, None, "n must be an integer >= 1"),
])
def test_bad_keys_are_refused_by_name_and_change_nothing(tmp_path, n, keys, message):
    path = tmp_path / "e.sqlite"
    with _create(path) as exp:
        exp.assign(keys=["u1"])
        before = exp.units().to_dict(), _handed(path)
        with pytest.raises(ExperimentError, match=message):
            exp.assign(n, keys=keys)
        assert (exp.units().to_dict(), _handed(path)) == before
