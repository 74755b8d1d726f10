"""The live path's per-call machinery: why assign hands out fewer units, the shuffled order
computed slot by slot, the running totals (and what a hand edit of the file does), the leader
status names for every algorithm family, and every registered algorithm built from the
parameters the file stores."""

from __future__ import annotations

import json
import shutil
import sqlite3
from itertools import pairwise

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.live.journal.slots import slot_order
from banditkit.live.store.codec import pack_draws, unpack_draws
from banditkit.registry import get_policy, policy_names
from banditkit.rng import as_generator


def _rep(path, overflow="off", **kw):
    # "off": these tests watch the algorithm's slots alone (tests/test_overflow.py: with it)
    return Experiment.create(path, algorithm="ReplicableElimination", arms=["a", "b", "c"],
                             seed=3, horizon=3000, params={"rho": 0.3, "beta": 3, **kw},
                             overflow=overflow)


# -- fewer units than asked -------------------------------------------------------------------
def test_assign_says_why_it_hands_out_fewer_units(tmp_path):
    with _rep(tmp_path / "e.sqlite") as exp:
        first = exp.assign(10)
        assert first.attrs["reason"] is None and len(first) == 10
        rest = exp.assign(100)  # the first batch has 3 arms x 6 pulls = 18
        assert len(rest) == 8
        assert rest.attrs["reason"].startswith("8 of 100 units assigned: batch 1 has 18 pull(s)")
        assert "(18 still waiting)" in rest.attrs["reason"]
        none = exp.assign(5)
        assert none.empty and none.attrs["reason"].startswith("no unit assigned")
        exp.record(first["unit"], [1.0] * 10)
        assert "(8 still waiting)" in exp.assign(5).attrs["reason"]


def test_assign_after_the_end_says_the_experiment_is_finished(tmp_path):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    with Experiment.create(tmp_path / "e.sqlite", algorithm="RAGE", arms=X, seed=1,
                           horizon=100, overflow="off") as exp:
        units = exp.assign(1000)
        assert "the last before the horizon of 100" in units.attrs["reason"]
        exp.record(units["unit"], [0.5] * 100)
        done = exp.assign(5)
        assert done.empty and "horizon of 100 pulls is spent" in done.attrs["reason"]


def test_p1rage_says_its_first_epoch_is_one_pull_as_algorithm_4_defines_it(tmp_path):
    with Experiment.create(tmp_path / "p.sqlite", algorithm="P1RAGE", arms=np.eye(3), seed=0,
                           horizon=4000, overflow="off") as exp:
        units = exp.assign(4000)
        assert len(units) == 1  # Algorithm 4 line 8: λ is refreshed after pull 1
        assert "Algorithm 4" in units.attrs["reason"] and "after pull 1" in units.attrs["reason"]
        exp.record(units["unit"], [1.0])
        R = exp.status().info["epoch_length"]
        assert len(exp.assign(4000)) == R  # then whole epochs of R pulls


# -- the shuffled order, slot by slot ---------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 17, 64, 1000, 4097])
def test_slot_order_is_a_permutation(n):
    order = slot_order(5, 2, n, 0, n)
    assert sorted(order.tolist()) == list(range(n))


def test_slot_order_is_the_same_whatever_the_call_sizes_and_keyed_by_seed_and_batch():
    n = 10_000
    whole = slot_order(5, 2, n, 0, n)
    rng = np.random.default_rng(0)
    cuts = np.unique(np.r_[0, rng.integers(0, n, 30), n])
    parts = np.concatenate([slot_order(5, 2, n, a, b - a) for a, b in pairwise(cuts)])
    np.testing.assert_array_equal(parts, whole)
    assert not np.array_equal(whole, slot_order(6, 2, n, 0, n))  # the seed keys it
    assert not np.array_equal(whole, slot_order(5, 3, n, 0, n))  # and the batch
    # positions far into a batch of 10⁹ pulls cost what the first ones do
    far = slot_order(5, 2, 10**9, 10**9 - 5, 5)
    assert far.min() >= 0 and far.max() < 10**9 and np.unique(far).size == 5


@pytest.mark.parametrize("n", [1, 2, 3, 5, 16, 17, 1000, 2**40 + 3])
def test_slot_order_of_a_few_slots_in_python_integers_equals_numpy(n, monkeypatch):
    """Calls of a few positions (an ``assign(1)``) go through Python integers: the same slots,
    position by position and in any call size, as the numpy path gives them."""
    from banditkit.live.journal import slots

    span = min(n, 300)
    short = [slot_order(seed, 2, n, p, 1)[0] for seed in (5, 2**62 + 1) for p in range(span)]
    blocks = [slot_order(5, 2, n, p, min(16, span - p)) for p in range(0, span, 16)]
    monkeypatch.setattr(slots, "_SCALAR_MAX", 0)  # numpy for every call from here
    vector = np.concatenate([slot_order(seed, 2, n, 0, span) for seed in (5, 2**62 + 1)])
    np.testing.assert_array_equal(short, vector)
    np.testing.assert_array_equal(np.concatenate(blocks), vector[:span])


def test_slot_order_mixes_arms_over_time():
    """A batch in arm order (arm 0's pulls first): in the shuffled order every tenth of the
    batch gets each arm about a third of the time, as a randomised order must."""
    n = 30_000
    arms = slot_order(1, 0, n, 0, n) // (n // 3)  # the arm of each handed-out slot
    for part in np.array_split(arms, 10):
        share = np.bincount(part, minlength=3) / part.size
        assert np.all(np.abs(share - 1 / 3) < 0.03), share


def test_the_same_seed_assigns_the_same_arms_whatever_the_call_sizes(tmp_path):
    sequences = []
    for i, sizes in enumerate([[18], [1, 5, 12], [7, 7, 4]]):
        with _rep(tmp_path / f"{i}.sqlite") as exp:
            sequences.append([a for k in sizes for a in exp.assign(k)["arm_index"].tolist()])
    assert sequences[0] == sequences[1] == sequences[2]


# -- running totals and hand edits ------------------------------------------------------------
def _one_batch_done(path):
    with _rep(path) as exp:
        units = exp.assign(18)
        exp.record(units["unit"], (np.arange(18) % 2).astype(float))
        more = exp.assign(6)
        exp.record(more["unit"][:3], [1.0, 1.0, 1.0])
        exp.expire(more["unit"][3:5].tolist())
        return exp.status(), exp.units()


def test_status_from_running_totals_matches_the_units(tmp_path):
    state, units = _one_batch_done(tmp_path / "e.sqlite")
    live = units[units["expired_at"].isna()]
    for arm, row in state.arms.iterrows():
        mine = live[live["arm"] == arm]
        assert row["assigned"] == len(mine)
        assert row["recorded"] == mine["reward"].notna().sum()
        if row["recorded"]:
            assert row["mean"] == pytest.approx(mine["reward"].mean())
    with Experiment.open(tmp_path / "e.sqlite") as exp:
        assert exp.verify() == len(live)


def _edited(tmp_path, sql):
    good = tmp_path / "e.sqlite"
    if not good.exists():
        _one_batch_done(good)
    copy = tmp_path / f"copy{len(list(tmp_path.iterdir()))}.sqlite"
    shutil.copy(good, copy)
    for suffix in ("-wal", "-shm"):
        if (tmp_path / f"e.sqlite{suffix}").exists():
            shutil.copy(tmp_path / f"e.sqlite{suffix}", f"{copy}{suffix}")
    conn = sqlite3.connect(copy)
    conn.execute(sql)
    conn.commit()
    conn.close()
    return copy


def test_hand_edits_are_refused_where_the_docs_say(tmp_path):
    state, _ = _one_batch_done(tmp_path / "e.sqlite")
    # an observed batch's run sums edited: refused on open (checked against the totals)
    path = _edited(tmp_path, "UPDATE batches SET reward_sums = '[3.0, 3.0, 2.0]' WHERE id = 0")
    with pytest.raises(ExperimentError, match="do not match the rewards recorded"):
        Experiment.open(path)
    # a batch's digest edited (its runs left alone): refused on open
    path = _edited(tmp_path, "UPDATE batches SET digest = 'ab' || substr(digest, 3) WHERE id = 1")
    with pytest.raises(ExperimentError, match="asks for other pulls than stored batch 1"):
        Experiment.open(path)
    # the totals edited: refused on open too
    path = _edited(tmp_path, "UPDATE totals SET reward = reward + 1 WHERE batch = 0 AND arm = 0")
    with pytest.raises(ExperimentError, match="do not match the rewards recorded"):
        Experiment.open(path)
    # a unit's reward edited: status keeps what the algorithm observed; verify() refuses
    path = _edited(tmp_path, "UPDATE units SET reward = 1 WHERE reward = 0")
    with Experiment.open(path) as exp:
        assert exp.status().arms["mean"].equals(state.arms["mean"])
        with pytest.raises(ExperimentError, match="is damaged: the units of batch 0"):
            exp.verify()
    # a reward of the pending batch edited: verify() refuses
    path = _edited(tmp_path, "UPDATE units SET reward = 0 WHERE batch = 1 AND reward = 1")
    with Experiment.open(path) as exp, pytest.raises(ExperimentError, match="units of batch 1"):
        exp.verify()


# -- status names its leader ------------------------------------------------------------------
def test_status_names_the_leader_and_why_before_and_after_the_commit(tmp_path):
    with Experiment.create(tmp_path / "e.sqlite", algorithm="ReplicableElimination",
                           arms=["a", "b", "c"], seed=3, horizon=3000,
                           params={"rho": 0.3, "beta": 3}, order="batch") as exp:
        assert exp.status().leader is None and exp.status().reason == "no reward recorded yet"
        units = exp.assign(18)
        exp.record(units["unit"], (units["arm"] == "b").astype(float))
        state = exp.status()
        assert state.leader == "b" and "leads on the observed mean" in state.reason
    with Experiment.create(tmp_path / "lo.sqlite", algorithm="ReplicableElimination",
                           arms=["a", "b"], seed=0, horizon=40,
                           params={"rho": 0.3, "commit": "lowest-index"}) as exp:
        state = exp.status()  # β = 2304 does not fit in 40 pulls: committed at once
        assert state.leader == "a" and "smallest index" in state.reason
        assert "live default" not in state.reason


@pytest.mark.parametrize("algorithm, arms, params", [
    ("RAGE", np.eye(2), {"delta": 0.1}),
    ("GBAI", np.eye(2), {}),
])
def test_identifiers_are_named_as_identified_at_the_end(tmp_path, algorithm, arms, params):
    with Experiment.create(tmp_path / "e.sqlite", algorithm=algorithm, arms=arms, seed=0,
                           horizon=400, params=params, overflow="off") as exp:
        while True:
            units = exp.assign(1000)
            if units.empty:
                break
            exp.record(units["unit"], (units["arm_index"] == 1).astype(float))
        state = exp.status()
    assert state.finished and state.leader == state.recommendation == "1"
    assert state.reason.startswith("identified")


@pytest.mark.parametrize("name", [n for n in policy_names() if n not in
                                  ("XYOracle", "LinGapE", "ALBA", "SafeOptimisticConstrained")])
def test_every_algorithm_runs_from_the_parameters_the_file_stores(tmp_path, name):
    """The file stores every parameter in force; reopening builds the algorithm from them and
    must ask for the same first batch (a default that does not survive JSON would not)."""
    constrained = name in ("DEBORAS", "DEBORAH", "OptimisticConstrained",
                           "OptimisticMixingConstrained", "OPLB")
    kw: dict = {"thresholds": [0.5]} if constrained else {}
    if name in ("DEBORAH", "OptimisticMixingConstrained"):  # hard constraints: x◇ and margins
        kw["params"] = {"safe_strategy": [1, 0, 0], "safe_margins": [0.2]}
    if name == "OPLB":  # a known safe arm a₀ and its costs c₀
        kw["params"] = {"safe_arm": 0, "safe_costs": [0.1]}
    try:  # K-armed policies take names; linear ones refuse names and take features
        exp = Experiment.create(tmp_path / "e.sqlite", algorithm=name, arms=["a", "b", "c"],
                                seed=0, horizon=5000, **kw)
    except ExperimentError as error:
        assert "feature" in str(error), error  # any other refusal is a failure, not a skip
        exp = Experiment.create(tmp_path / "e.sqlite", algorithm=name, arms=np.eye(3),
                                seed=0, horizon=5000, **kw)
    with exp:
        first = exp.assign(50)
        stored = exp.status().params
    assert set(stored) == set(get_policy(name).parameters())  # every parameter in force
    with Experiment.open(tmp_path / "e.sqlite") as again:
        assert again.units()["arm_index"].tolist() == first["arm_index"].tolist()


def test_a_budget_the_memory_cannot_hold_is_refused_by_name(tmp_path):
    path = tmp_path / "g.sqlite"
    with pytest.raises(ExperimentError, match=r"horizon: Peace shuffles each epoch.*37 GiB"):
        Experiment.create(path, algorithm="Peace", arms=np.eye(3), seed=0, horizon=10**9)
    assert not path.exists()
    Experiment.create(path, algorithm="ReplicableElimination", arms=["a", "b"], seed=0,
                      horizon=10**9).close()  # runs of K arms: any budget


def test_a_constrained_policy_names_the_arm_its_strategy_weighs_most(tmp_path):
    with Experiment.create(tmp_path / "d.sqlite", algorithm="DEBORAS", arms=["a", "b", "c"],
                           seed=0, horizon=400, thresholds=[0.5], params={"rho": 0.3}) as exp:
        for _ in range(6):
            units = exp.assign(100)
            exp.record(units["unit"], (units["arm"] == "c").astype(float),
                       [[0.2]] * len(units))
        state = exp.status()
        strategy = exp._algorithm._pending.strategy
    assert state.leader == ["a", "b", "c"][int(np.argmax(strategy))]
    assert state.reason.startswith("largest weight of the strategy")


# -- i.i.d. identifiers at any budget: a batch is its description ------------------------------
@pytest.mark.parametrize("algorithm", ["GBAI", "P1RAGE"])
def test_an_iid_identifier_runs_live_at_a_budget_of_a_billion(tmp_path, algorithm):
    """The batch of 10⁹ (or 10⁹ / log ρ) pulls is stored as its cdf, ξ's state and its size:
    the file stays small, each unit's arm is ξ.choice's draw at its slot, and a restarted
    process reads it back without computing the batch."""
    from banditkit.identification.item_designs import g_design

    path = tmp_path / "g.sqlite"
    with Experiment.create(path, algorithm=algorithm, arms=np.eye(3), seed=4,
                           horizon=10**9) as exp:
        first = exp.assign(1)  # P1-RAGE's first epoch is one pull (Algorithm 4 line 8)
        exp.record(first["unit"], [1.0])
        units = exp.assign(10_000)
        assert len(units) == 10_000
        exp.record(units["unit"], (units["arm_index"] == 2).astype(float))
    with Experiment.open(path) as exp:
        state = exp.status()
        assert state.pulls_observed == (1 if algorithm == "P1RAGE" else 0)
        assert state.arms["recorded"].sum() == 10_001
        more = exp.assign(5)
    assert path.stat().st_size < 2**21  # two megabytes, not the gigabytes of a sequence
    if algorithm == "GBAI":  # its one batch: ξ's first 10⁹ choices from λ*
        weights = g_design(np.eye(3), 0.01)[0]
        expected = as_generator(4).choice(3, size=10_006, p=weights)
        got = np.r_[first["arm_index"], units["arm_index"], more["arm_index"]]
        np.testing.assert_array_equal(got, expected)


def test_an_iid_batch_reoffers_an_expired_slot_with_its_own_arm(tmp_path):
    with Experiment.create(tmp_path / "g.sqlite", algorithm="GBAI", arms=np.eye(3), seed=2,
                           horizon=300) as exp:
        units = exp.assign(40)
        exp.expire(units["unit"].iloc[[3, 17, 18]].tolist())
        again = exp.assign(3)
        assert again["arm_index"].tolist() == units["arm_index"].iloc[[3, 17, 18]].tolist()
        table = exp.units()
        # each unit's propensity is the design's probability of its arm
        weights = np.diff(exp._algorithm.next_batch().cdf, prepend=0.0)
        np.testing.assert_allclose(table["propensity"], weights[table["arm_index"]])
        assert exp.verify() == 40


def test_verify_and_open_catch_edits_of_an_iid_batch(tmp_path):
    path = tmp_path / "g.sqlite"
    with Experiment.create(path, algorithm="P1RAGE", arms=np.eye(3), seed=2,
                           horizon=400, overflow="off") as exp:
        while not (units := exp.assign(500)).empty:
            exp.record(units["unit"], (units["arm_index"] == 2).astype(float))
        assert exp.verify() == 400
    for edit, where in [
            ("UPDATE units SET arm = (arm + 1) % 3 WHERE id = 7", "verify"),
            ("UPDATE draws SET state = replace(state, '\"inc\": ', '\"inc\": 1') "
             "WHERE batch = 1", "open"),
            ("UPDATE batches SET reward_sums = '[0.0, 1.0, 2.0]' WHERE id = 1", "open")]:
        copy = tmp_path / f"{abs(hash(edit))}.sqlite"
        copy.write_bytes(path.read_bytes())
        conn = sqlite3.connect(copy)
        conn.execute(edit)
        conn.commit()
        conn.close()
        with pytest.raises(ExperimentError, match=r"damaged|edited|asks for other pulls"):
            with Experiment.open(copy) as exp:
                if where == "verify":
                    exp.verify()
    # a stored batch edited together with its digest (self-consistent, but not what the
    # algorithm asks for: ξ's state one step on) is refused when the experiment is replayed
    copy = tmp_path / "consistent.sqlite"
    copy.write_bytes(path.read_bytes())
    conn = sqlite3.connect(copy)
    cdf, state, n = conn.execute("SELECT cdf, state, n_pulls FROM draws WHERE batch = 1"
                                 ).fetchone()
    moved = json.loads(state)
    moved["state"]["state"] += 1
    cdf, state, digest = pack_draws(unpack_draws(cdf, json.dumps(moved), n))
    conn.execute("UPDATE draws SET state = ? WHERE batch = 1", (state,))
    conn.execute("UPDATE batches SET digest = ? WHERE id = 1", (digest,))
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match="asks for other pulls than stored batch 1"):
        Experiment.open(copy).close()
