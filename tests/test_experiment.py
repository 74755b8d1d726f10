"""banditkit.Experiment: a live experiment gives the decisions of a simulation on the same
rewards, however its units are assigned and recorded, across restarts, kills and processes."""

from __future__ import annotations

import functools
import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError, simulate
from banditkit.live.journal.defaults import params_in_force
from banditkit.registry import make_policy
from banditkit.rng import as_generator
from live_support import (
    TableBandit,
    Where,
    as_where,
    check_consistent,
    drive,
    reward_table,
    unit_rewards,
)

HERE = Path(__file__).parent

# (algorithm, arms: names or features, horizon, params, means of the reward table)
CASES = {
    "ReplicableElimination": ("ReplicableElimination", ["a", "b", "c"], 3000,
                              {"rho": 0.3, "beta": 3}, [0.2, 0.5, 0.8]),
    "UCB1": ("UCB1", ["a", "b", "c"], 80, {}, [0.3, 0.5, 0.7]),
    "GBAI": ("GBAI", np.eye(3), 150, {}, [0.2, 0.4, 0.9]),
    # i.i.d. identifiers with several epochs: each observed from its per-arm running totals
    "P1RAGE": ("P1RAGE", np.eye(3), 600, {}, [0.2, 0.4, 0.9]),
    "MixedPeace": ("MixedPeace", np.eye(3), 600, {}, [0.2, 0.4, 0.9]),
    "RAGE": ("RAGE", np.eye(2), None, {"delta": 0.1}, [0.1, 0.9]),
    "DEBORAS": ("DEBORAS", ["a", "b", "c"], 400, {"rho": 0.3}, [0.3, 0.6, 0.9]),
    # live DEBORA-H: x◇ = arm a (cost 0.2) and a lower bound 0.2 on its true margin 0.3
    "DEBORAH": ("DEBORAH", ["a", "b", "c"], 400,
                {"rho": 0.3, "safe_strategy": [1.0, 0.0, 0.0], "safe_margins": [0.2]},
                [0.3, 0.6, 0.9]),
}
CONSTRAINED = ("DEBORAS", "DEBORAH")
COST_MEANS = [[0.2], [0.5], [0.8]]  # of the constrained case, threshold 0.5
THRESHOLDS = [0.5]


@functools.cache
def _cost_table(n: int = 20_000) -> np.ndarray:
    rng = np.random.default_rng(9)
    return (rng.random((3, n, 1)) < np.asarray(COST_MEANS)[:, None, :]).astype(float)


def _simulated(case: str, seed: int = 3):
    name, arms, horizon, params, means = CASES[case]
    table = reward_table(means)
    X = arms if isinstance(arms, np.ndarray) else None
    constrained = case in CONSTRAINED
    env = TableBandit(table, X, costs=_cost_table() if constrained else None,
                      alpha=THRESHOLDS if constrained else None)
    # the experiment runs the parameters in force (live defaults included): so does the
    # simulation it is compared with
    algo = make_policy(name, env, as_generator(seed), horizon=horizon,
                       **params_in_force(name, params)[0])
    return simulate(algo, env, horizon=horizon, seed=0), table


def _create(path: Path | Where, case: str, seed: int = 3, **kw) -> Experiment:
    name, arms, horizon, params, _ = CASES[case]
    if case in CONSTRAINED:
        kw.setdefault("thresholds", THRESHOLDS)
    kw.setdefault("overflow", "off")  # these tests watch the algorithm's slots alone
    return as_where(path).create(algorithm=name, arms=arms, seed=seed, horizon=horizon,
                                 params=params, **kw)


def _finish(path: Path | Where, table: np.ndarray, seed: int, restart_every: int = 3
            ) -> Experiment:
    """Drive to the end in small random assign/record calls, reopening every few calls."""
    where = as_where(path)
    with where.open() as exp:
        costs = _cost_table() if exp._problem.n_costs else None
    drive(where, table, seed, 10**6, restart_every=restart_every, cost_table=costs)
    exp = where.open()
    assert exp.status().finished
    return exp


# every case in both orders on SQLite; on PostgreSQL (the same SQL through the other backend,
# each call a few round trips to the server) a batched elimination, an i.i.d. identifier and a
# linear elimination, in the shuffled order (the costs' SQL: the mean-cost test below)
PG_CASES = ("ReplicableElimination", "GBAI", "RAGE")


@pytest.mark.parametrize("case, order, where", [
    *((c, o, "sqlite") for o in ("shuffled", "batch") for c in CASES),
    *((c, "shuffled", "postgres") for c in PG_CASES)], indirect=["where"])
def test_an_experiment_makes_the_decisions_of_a_simulation(where, case, order):
    trial, table = _simulated(case)
    _create(where, case, order=order).close()
    exp = _finish(where, table, 1)
    log = exp.decisions()
    assert log.same_as(trial.decisions)
    np.testing.assert_array_equal(log.batch_sizes(), trial.decisions.batch_sizes())
    state = exp.status()
    assert state.finished and state.pulls_observed == trial.n_pulls
    assert state.arms["recorded"].sum() == trial.n_pulls
    if trial.recommendation is not None:
        assert state.recommendation == exp.arm_names[trial.recommendation]
    exp.close()


def test_shuffled_order_is_seeded_and_differs_from_the_batch_order(tmp_path):
    orders = []
    for i, order in enumerate(["shuffled", "shuffled", "batch"]):
        with _create(tmp_path / f"{i}.sqlite", "ReplicableElimination", order=order) as exp:
            orders.append(exp.assign(9)["arm_index"].tolist())
    assert orders[0] == orders[1]  # the same seed hands out the same order
    assert orders[2] == sorted(orders[2]) and orders[0] != orders[2]


def test_each_batch_has_its_own_shuffled_order(tmp_path):
    """Batches of the same size get independent orders (a stream per batch), so an arm does not
    sit at the same positions batch after batch, where a drift within batches would bias it."""
    with _create(tmp_path / "e.sqlite", "ReplicableElimination") as exp:
        orders = [exp._slot_order(b, 40).tolist() for b in range(3)]
    assert all(sorted(o) == list(range(40)) for o in orders)
    assert orders[0] != orders[1] and orders[1] != orders[2]


def test_status_counts_means_and_intervals(where):
    with _create(where, "ReplicableElimination", order="batch") as exp:
        units = exp.assign(6)  # the 6 pulls of arm a come first in batch order (18 in all)
        assert units["arm"].tolist() == ["a"] * 6
        exp.record(units["unit"], [1, 1, 0, 1, 0, 1])
        state = exp.status(intervals="fixed")
    row = state.arms.loc["a"]
    assert (row["assigned"], row["recorded"]) == (6, 6)
    assert row["mean"] == pytest.approx(4 / 6)
    # Wilson's interval for 4/6 at 95% (z = 1.96), by hand: [0.300, 0.903]
    assert row["low"] == pytest.approx(0.3000, abs=1e-3)
    assert row["high"] == pytest.approx(0.9032, abs=1e-3)
    assert state.arms.loc["b", "recorded"] == 0 and np.isnan(state.arms.loc["b", "mean"])
    assert bool(state.arms["active"].all()) and not state.finished
    assert state.batch_pending == 18 - 6 and state.batch_unassigned == 18 - 6


def test_status_intervals_of_non_binary_rewards_stay_in_the_reward_range(tmp_path):
    with _create(tmp_path / "e.sqlite", "ReplicableElimination", order="batch") as exp:
        units = exp.assign(6)
        exp.record(units["unit"], [1.0, 0.9, 1.0, 0.95, 1.0, 1.0])
        row = exp.status(intervals="fixed").arms.loc["a"]
    # Student-t: mean 0.975, s = 0.0418, half-width 2.571 * s / sqrt(6) = 0.0439 -> clipped at 1
    assert row["mean"] == pytest.approx(0.975)
    assert row["low"] == pytest.approx(0.975 - 0.04389, abs=1e-4) and row["high"] == 1.0


def test_expired_slots_are_assigned_again_and_late_rewards_refused(where):
    with _create(where, "ReplicableElimination", order="batch") as exp:
        first = exp.assign(18)
        assert exp.assign(5).empty  # the batch is fully handed out: it needs rewards
        exp.record(first["unit"][2:], [1.0] * 16)
        assert exp.expire(first["unit"][:2].tolist()) == 2
        again = exp.assign(5)
        assert again["arm_index"].tolist() == first["arm_index"][:2].tolist()
        with pytest.raises(ExperimentError, match="expired"):
            exp.record([int(first["unit"][0])], [1.0])
        exp.record(again["unit"], [0.0, 0.0])
        assert exp.status().batches_observed == 1
        with pytest.raises(ExperimentError, match="already has a reward"):
            exp.expire([int(again["unit"][0])])
        later = exp.assign(3)
        assert exp.expire(older_than=0.0) == 3 and exp.assign(3)["unit"].min() > later["unit"].max()


def test_a_retried_record_counts_nothing_twice_and_conflicts_are_refused(where):
    with _create(where, "ReplicableElimination") as exp:
        units = exp.assign(4)["unit"].tolist()
        assert exp.record(units, [1, 0, 1, 0]) == 4
        assert exp.record(units, [1, 0, 1, 0]) == 0  # the same call again: nothing new
        with pytest.raises(ExperimentError, match="already has reward"):
            exp.record(units[:1], [0])
        state = exp.status()
    assert state.arms["recorded"].sum() == 4


@pytest.mark.parametrize("call, match", [
    (lambda e, u: e.record([999], [1.0]), "never assigned"),
    (lambda e, u: e.record(u, [1.0]), "one per unit"),
    (lambda e, u: e.record(u[:1], [float("nan")]), "finite"),
    (lambda e, u: e.record(u[:1], [7.0]), r"in \[0, 1\]"),
    (lambda e, u: e.record(u[:1], ["x"]), "numbers"),
    (lambda e, u: e.record(u[:1], [1.0], costs=[[0.1]]), "no costs"),
    (lambda e, u: e.record([u[0], u[0]], [1.0, 1.0]), "once per call"),
    (lambda e, u: e.record([1.5], [1.0]), "integers"),
    (lambda e, u: e.assign(0), "n must be"),
    (lambda e, u: e.expire(), "exactly one"),
    (lambda e, u: e.expire(older_than=-1), "older_than"),
])
def test_refusals_name_the_rule_and_change_nothing(where, call, match):
    with _create(where, "ReplicableElimination") as exp:
        units = exp.assign(3)["unit"].tolist()
        before = exp.units()
        with pytest.raises(ExperimentError, match=match):
            call(exp, units)
        after = exp.units()
    assert before.equals(after)


@pytest.mark.parametrize("kwargs, match", [
    (dict(algorithm="NoSuch"), "unknown policy"),
    (dict(params={"rho": 2.0}), "rho"),
    (dict(params={"gamma": 1}), "takes no parameter"),
    (dict(params={"rho": float("nan")}), "JSON"),
    (dict(arms=["a"]), "at least 2 arms"),
    (dict(arms=["a", "a"]), "distinct"),
    (dict(arms=np.array([[1.0, np.nan], [0, 1]])), "finite"),
    (dict(seed=-1), "seed"),
    (dict(horizon=0), "horizon"),
    (dict(order="random"), "order"),
    (dict(thresholds=[1.5]), "thresholds"),
])
def test_create_refuses_bad_input_and_writes_no_file(tmp_path, kwargs, match):
    base = dict(algorithm="ReplicableElimination", arms=["a", "b"], seed=0, horizon=1000,
                params={"rho": 0.3})
    path = tmp_path / "e.sqlite"
    with pytest.raises(ExperimentError, match=match):
        Experiment.create(path, **{**base, **kwargs})
    assert not path.exists()


def test_open_refuses_what_is_not_an_intact_experiment(tmp_path):
    with pytest.raises(ExperimentError, match="no experiment"):
        Experiment.open(tmp_path / "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ExperimentError, match="not a banditkit experiment"):
        Experiment.open(junk)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ExperimentError, match="lacks the meta"):
        Experiment.open(other)
    path = tmp_path / "e.sqlite"
    with _create(path, "ReplicableElimination") as exp:
        units = exp.assign(18)["unit"].tolist()
        exp.record(units, [1.0] * len(units))


def test_reopen_replays_and_refuses_a_tampered_batch(where):
    with _create(where, "ReplicableElimination") as exp:
        units = exp.assign(18)["unit"].tolist()
        exp.record(units, [1.0] * len(units))
    with pytest.raises(ExperimentError, match="already exists"):
        _create(where, "ReplicableElimination")
    with where.open() as exp:  # intact: the replay accepts it
        assert exp.status().batches_observed == 1
    conn = where.connect()  # tamper with a stored batch: the replay must notice
    conn.execute("UPDATE runs SET counts = ? WHERE batch = 0",
                 (bytes.fromhex(_runs_hex(5, 6, 7)),))
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match="other pulls than stored batch 0"):
        where.open()
    with pytest.raises(ExperimentError, match="other pulls than stored batch 0"):
        where.open(readonly=True)


def _child(path: Path | Where, means: list[float], seed: int, calls: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    return subprocess.Popen([sys.executable, str(HERE / "live_support.py"),
                             *as_where(path).argv(), json.dumps(means), str(seed), str(calls)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_kill_9_mid_record_loses_and_duplicates_nothing(where):
    case = "ReplicableElimination"
    trial, table = _simulated(case)
    path = where
    _create(path, case).close()
    means = CASES[case][4]
    rng = np.random.default_rng(5)
    for round_ in range(4):
        with path.open() as exp:  # a finished experiment leaves the child nothing to do
            assert not exp.status().finished
        child = _child(path, means, seed=round_, calls=100_000)
        # The kill comes after a few returned record calls, not after a wall-clock delay: on a
        # fast machine a delay let earlier children finish the whole experiment.
        seen = []
        for _ in range(int(rng.integers(1, 8))):
            ready, _, _ = select.select([child.stdout], [], [], 120)
            assert ready, "the child printed nothing in 120 s"
            line = child.stdout.readline()
            assert line.startswith("recorded"), (line, child.stderr.read())
            seen.append(line)
        time.sleep(0.005 * rng.random())  # land the kill at a random point of the next call
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate()
        returned = [int(u) for line in [*seen, *out.splitlines()]
                    if line.startswith("recorded") for u in line.split()[1:]]
        conn = path.connect()
        recorded = {u for (u,) in conn.execute("SELECT id FROM units WHERE reward IS NOT NULL")}
        conn.close()
        assert set(returned) <= recorded  # what a call returned is on disk
        check_consistent(path)
        assert returned, "the child never got to record: the kill test tested nothing"
    exp = _finish(path, table, 2, restart_every=10)
    assert exp.decisions().same_as(trial.decisions)
    exp.close()
    check_consistent(path)


def test_two_processes_on_one_experiment_do_not_corrupt_it(where):
    case = "ReplicableElimination"
    trial, table = _simulated(case)
    path = where
    _create(path, case).close()
    means = CASES[case][4]
    children = [_child(path, means, seed=s, calls=150) for s in (11, 12)]
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    check_consistent(path)
    conn = path.connect()
    (dupes,) = conn.execute("SELECT COUNT(*) FROM (SELECT batch, slot FROM units WHERE "
                            "expired_at IS NULL GROUP BY batch, slot HAVING COUNT(*) > 1) AS d"
                            ).fetchone()
    conn.close()
    assert dupes == 0
    exp = _finish(path, table, 3, restart_every=10)
    assert exp.decisions().same_as(trial.decisions)
    exp.close()


def test_status_gives_each_arms_mean_cost(where):
    """cost_k is the mean over each arm's recorded, unexpired units only: units still waiting
    for an answer and expired ones do not count."""
    with where.create(algorithm="DEBORAS", arms=["a", "b", "c"], seed=0, horizon=1000,
                      thresholds=[0.5, 0.5]) as exp:
        recorded: dict[str, list] = {}
        rng = np.random.default_rng(0)
        for _ in range(40):  # the first (short) epochs, answered in full
            units = exp.assign(50)
            if len(units) >= 6:
                break
            costs = rng.random((len(units), 2)).round(3)
            exp.record(units["unit"].tolist(), [1.0] * len(units), costs.tolist())
            for arm, c in zip(units["arm"], costs, strict=True):
                recorded.setdefault(arm, []).append(c)
        assert len(units) >= 6  # this epoch: some answered, some expired, some waiting
        k = len(units) // 3
        costs = rng.random((k, 2)).round(3)
        exp.record(units["unit"][:k].tolist(), [1.0] * k, costs.tolist())
        for arm, c in zip(units["arm"][:k], costs, strict=True):
            recorded.setdefault(arm, []).append(c)
        exp.expire(units["unit"][k:2 * k].tolist())
        state = exp.status()
    assert recorded
    for arm, costs in recorded.items():
        np.testing.assert_allclose(state.arms.loc[arm, ["cost_1", "cost_2"]].to_numpy(float),
                                   np.mean(costs, axis=0))
    for arm in set("abc") - set(recorded):
        assert state.arms.loc[arm, ["cost_1", "cost_2"]].isna().all()


def test_a_constrained_experiment_records_costs_and_refuses_wrong_ones(tmp_path):
    with _create(tmp_path / "e.sqlite", "DEBORAS") as exp:
        units = exp.assign(3)["unit"].tolist()
        n = len(units)
        for costs, match in [(None, "costs are required"), ([[0.1, 0.2]] * n, "shape"),
                             ([[2.0]] * n, r"costs must lie in \[0, 1\]"),
                             ([[float("nan")]] * n, "finite")]:
            with pytest.raises(ExperimentError, match=match):
                exp.record(units, [1.0] * n, costs)
        assert exp.record(units, [1.0] * n, [[0.5]] * n) == n
    for params, match in [({}, "strictly safe strategy"),  # a live experiment knows neither
                          ({"safe_strategy": [1.0, 0.0]}, "Slater margins"),
                          ({"safe_strategy": [1.0, 0.0], "safe_margins": [0.6]},
                           "safe_margins must be <= thresholds")]:
        with pytest.raises(ExperimentError, match=match):
            Experiment.create(tmp_path / "h.sqlite", algorithm="DEBORAH", arms=["a", "b"],
                              seed=0, horizon=100, thresholds=[0.5], params=params)
    assert not (tmp_path / "h.sqlite").exists()
    with pytest.raises(ExperimentError, match="thresholds"):
        Experiment.create(tmp_path / "s.sqlite", algorithm="DEBORAS", arms=["a", "b"], seed=0,
                          horizon=100)


@pytest.mark.parametrize("call, match", [
    (lambda p: Experiment.create(p, algorithm="RAGE", arms=[[1.0, 2.0], [3.0]], seed=0),
     "same length"),
    (lambda p: Experiment.create(p, algorithm="DEBORAS", arms=["a", "b"], seed=0, horizon=10,
                                 thresholds="abc"), "thresholds"),
    (lambda p: Experiment.create(p, algorithm="DEBORAS", arms=["a", "b"], seed=0, horizon=10,
                                 thresholds=[0.3, [0.2]]), "thresholds"),
    (lambda p: Experiment.create(p, algorithm="DEBORAS", arms=["a", "b"], seed=0, horizon=10,
                                 thresholds=[True]), "thresholds"),
    (lambda p: Experiment.create(p, algorithm="UCB1", arms=["a", "b"], seed=0, horizon=10,
                                 params={"exploration": "2"}), "exploration"),
    (lambda p: Experiment.create(p, algorithm="UCB1", arms=np.eye(2), seed=0, horizon=10),
     "takes arm names, not features"),
    (lambda p: Experiment.create(p, algorithm="RAGE", arms=["a", "b"], seed=0), "RAGE"),
])
def test_malformed_python_input_is_refused_in_one_message(tmp_path, call, match):
    with pytest.raises(ExperimentError, match=match):
        call(tmp_path / "e.sqlite")


def test_more_refusals_found_by_a_new_user(tmp_path):
    with _create(tmp_path / "c.sqlite", "DEBORAS") as exp:
        units = exp.assign(1)["unit"].tolist()
        with pytest.raises(ExperimentError, match="not a table of numbers"):
            exp.record(units, [1.0], costs=[[0.1, [0.2]]])
        exp.record(units, [1.0], costs=[[0.5]])
        with pytest.raises(ExperimentError, match="already has costs"):
            exp.record(units, [1.0], costs=[[0.4]])
    with _create(tmp_path / "e.sqlite", "ReplicableElimination") as exp:
        units = exp.assign(3)["unit"].tolist()
        with pytest.raises(ExperimentError, match="below 2\\*\\*63"):
            exp.record(np.array([2**64 - 1], dtype=np.uint64), [1.0])
        assert exp.record(units, np.array([True, False, True])) == 3  # booleans read as 1/0
        assert exp.expire(older_than=1e12) == 0  # older than the epoch: every unit, no error
        more = exp.assign(np.uint64(2**64 - 1))  # no overflow: what the batch has left
        assert len(more) == 18 - 3


def test_a_horizon_caps_an_identifier_as_simulate_does(tmp_path):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    path = tmp_path / "e.sqlite"
    with Experiment.create(path, algorithm="RAGE", arms=X, seed=1, horizon=100,
                           overflow="off") as exp:
        units = exp.assign(1000)
        assert len(units) == 100  # the first phase is longer: cut at the horizon
        exp.record(units["unit"], [0.5] * 100)
        state = exp.status()
        assert state.finished and state.budget_left == 0 and state.pulls_observed == 100
        assert exp.assign(5).empty


def test_a_damaged_or_deleted_file_is_refused_not_trusted(tmp_path):
    path = tmp_path / "e.sqlite"
    with _create(path, "ReplicableElimination") as exp:
        units = exp.assign(18)["unit"].tolist()
        exp.record(units, [1.0] * 18)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE batches SET reward_sums = '[1e9, 0, 0]' WHERE id = 0")
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match="is damaged"):
        Experiment.open(path)
    fresh = tmp_path / "f.sqlite"
    exp = _create(fresh, "ReplicableElimination")
    exp.assign(2)
    os.remove(fresh)
    with pytest.raises(ExperimentError, match="deleted, moved or replaced"):
        exp.assign(2)
    exp.close()


def test_opening_a_file_that_is_refused_leaves_it_unchanged(tmp_path):
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    with pytest.raises(ExperimentError, match="not a banditkit experiment"):
        Experiment.open(other)
    assert other.read_bytes() == before
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(ExperimentError):
        Experiment.open(empty)
    assert empty.read_bytes() == b""
    # experiment files refused by their format, their meta or on replay: left as they were
    # (the WAL switch comes only once a file is accepted)
    good = tmp_path / "good.sqlite"
    with _create(good, "ReplicableElimination") as exp:
        exp.record(exp.assign(18)["unit"].tolist(), [1.0] * 18)
    for i, (edit, match) in enumerate([
            ("UPDATE meta SET value = '99' WHERE key = 'format'", "format 99"),
            ("UPDATE meta SET value = 'true' WHERE key = 'format'", "format True"),
            ("UPDATE meta SET value = x'ff' WHERE key = 'seed'", "meta table cannot be read"),
            # runs are little-endian int64 arrays: 6, 6, 7 pulls; 'garbage'; -1, 6, 6
            (f"UPDATE runs SET counts = x'{_runs_hex(6, 6, 7)}' WHERE batch = 0",
             "asks for other pulls"),
            ("UPDATE runs SET arms = 'garbage' WHERE batch = 0", "cannot be read"),
            (f"UPDATE runs SET counts = x'{_runs_hex(-1, 6, 6)}' WHERE batch = 0",
             "cannot be read")]):
        edited = tmp_path / f"edited{i}.sqlite"
        edited.write_bytes(good.read_bytes())
        conn = sqlite3.connect(edited)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute(edit)
        conn.commit()
        conn.close()
        before = edited.read_bytes()
        with pytest.raises(ExperimentError, match=match):
            Experiment.open(edited)
        assert edited.read_bytes() == before, edit


def _runs_hex(*values: int) -> str:
    return np.asarray(values, dtype="<i8").tobytes().hex()


def test_a_unit_whose_arm_is_not_an_arm_is_refused(tmp_path):
    path = tmp_path / "e.sqlite"
    with _create(path, "ReplicableElimination") as exp:
        exp.assign(3)
    for arm in (99, -1, "'x'"):
        conn = sqlite3.connect(path)
        conn.execute(f"UPDATE units SET arm = {arm} WHERE id = 1")
        conn.commit()
        conn.close()
        with Experiment.open(path) as exp:
            # status reads the running totals, which the edit left alone; units() lists the
            # units themselves, and verify() recomputes the totals from them
            for call in (exp.units, exp.verify):
                with pytest.raises(ExperimentError, match="a unit's arm is"):
                    call()


class _FailingCommit:
    """A connection whose next commit fails (a full disk), as the caller sees it: an error,
    and nothing of the transaction on disk."""

    def __init__(self, conn):
        self._conn, self.fail = conn, True

    def commit(self):
        if self.fail:
            self.fail = False
            self._conn.rollback()
            raise sqlite3.OperationalError("disk I/O error")
        self._conn.commit()

    def __getattr__(self, name):
        return getattr(self._conn, name)


def test_a_failed_commit_leaves_the_algorithm_as_the_file_says(tmp_path):
    """The batch-completing record fails at commit: the algorithm had observed the batch in
    memory, the file has not. The retry must observe it exactly once."""
    trial, table = _simulated("ReplicableElimination")
    path = tmp_path / "e.sqlite"
    with _create(path, "ReplicableElimination") as exp:
        units = exp.assign(18)["unit"].tolist()
        rewards = unit_rewards(str(path), units, table)
        exp._journal.conn = _FailingCommit(exp._journal.conn)
        with pytest.raises(ExperimentError, match="disk I/O error"):
            exp.record(units, rewards)
        assert exp.status().batches_observed == 0
        assert exp.record(units, rewards) == 18
        assert exp.status().batches_observed == 1
    exp = _finish(path, table, 4)
    assert exp.decisions().same_as(trial.decisions)
    exp.close()


@pytest.mark.parametrize("algorithm, arms, params, match", [
    ("UCB1", [None, "b"], {}, "every arm needs a name"),
    ("UCB1", ["a", float("nan")], {}, "every arm needs a name"),
    ("RAGE", np.eye(3) * 1e160, {}, "features must be at most 1e30"),
    ("LinGapE", np.eye(3), {}, "pass theta_bound=S"),
    ("ALBA", np.eye(3), {}, "pass theta_bound=S"),
    ("XYOracle", np.eye(3), {}, "cannot run on live data"),
])
def test_arms_and_algorithms_that_cannot_run_live_are_refused_at_create(
        tmp_path, algorithm, arms, params, match):
    path = tmp_path / "e.sqlite"
    with pytest.raises(ExperimentError, match=match):
        Experiment.create(path, algorithm=algorithm, arms=arms, seed=0, params=params)
    assert not path.exists()


def test_an_algorithm_that_fails_on_the_arms_is_refused_in_one_message(tmp_path, monkeypatch):
    """A failure inside the algorithm while it chooses a batch (a design or LP it cannot
    compute on these arms) is an ExperimentError naming the algorithm, at create."""
    from banditkit.identification.rage import RAGE

    def fails(self):
        raise np.linalg.LinAlgError("singular design")

    monkeypatch.setattr(RAGE, "_next_batch", fails)
    path = tmp_path / "e.sqlite"
    with pytest.raises(ExperimentError, match=r"'RAGE' cannot choose its next batch.*singular"):
        Experiment.create(path, algorithm="RAGE", arms=np.eye(2), seed=0)
    assert not path.exists()
