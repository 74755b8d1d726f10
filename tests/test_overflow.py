"""Every visitor gets an arm (banditkit.live.assignment.overflow): ``assign(n)`` returns n units
every call
on both backends; units beyond the algorithm's slots are overflow units (while it waits) or
rollout units (once finished or stopped), stored with their propensity and kind, never shown
to the algorithm, which decides exactly as ``simulate`` on the same rewards; their arms come
from a stream of their own; sticky keys keep their arm; stop, pause, archive and delete are
audited; a format-5 file is upgraded on open."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit import Experiment, simulate
from banditkit.live import ExperimentError
from banditkit.live.assignment.overflow import design_shares, draw_arms
from banditkit.live.journal.defaults import params_in_force
from banditkit.registry import make_policy
from banditkit.rng import as_generator, stream
from live_support import DOWNGRADE_TO_5, TableBandit, check_consistent, reward_table, unit_rewards

MEANS = [0.2, 0.5, 0.8]
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


def _simulated(definition=DEFINITION):
    table = reward_table(MEANS)
    env = TableBandit(table)
    params = params_in_force(definition["algorithm"], definition["params"])[0]
    algo = make_policy(definition["algorithm"], env, as_generator(definition["seed"]),
                       horizon=definition["horizon"], **params)
    return simulate(algo, env, horizon=definition["horizon"], seed=0), table


def _drive(exp, where, table, rng, *, calls_after_end=5, overflow_reward=1.0):
    """Assign random n and record: the algorithm's units get the table's rewards, overflow and
    rollout units ``overflow_reward`` (far from the arms' means: were they shown to the
    algorithm, it would decide otherwise). Returns the frames assigned, in order."""
    frames, after = [], 0
    while after < calls_after_end:
        n = int(rng.integers(1, 80))
        units = exp.assign(n)
        assert len(units) == n, units.attrs["reason"]  # every call: exactly n
        frames.append(units)
        extra = set(units.attrs["overflow_units"])
        mine = [int(u) for u in units["unit"] if int(u) not in extra]
        if mine:
            exp.record(mine, unit_rewards(where, mine, table))
        if extra:
            exp.record(sorted(extra), [overflow_reward] * len(extra))
        if exp.status().finished:
            after += 1
    return frames


def test_every_call_gets_n_units_and_the_algorithm_decides_as_without_overflow(where):
    trial, table = _simulated()
    with where.create(**DEFINITION) as exp:
        frames = _drive(exp, where, table, np.random.default_rng(1))
        assert exp.decisions().same_as(trial.decisions)
        state = exp.status()
        units = exp.units()
        assert exp.verify() == len(units)  # the totals agree with the units, kinds apart
    check_consistent(where)
    assert state.finished and state.pulls_observed == trial.n_pulls
    assert int(state.arms["recorded"].sum()) == trial.n_pulls  # the algorithm's own units
    kinds = units["kind"].value_counts().to_dict()
    assert kinds["algorithm"] == trial.n_pulls and kinds["overflow"] > 0
    assert kinds["rollout"] > 0
    assert int(state.arms["overflow"].sum()) == kinds["overflow"] + kinds["rollout"]
    # overflow units take no slot, carry the propensity of their draw
    extra = units[units["kind"] != "algorithm"]
    assert (extra["slot"] == -1).all()
    overflow = extra[extra["kind"] == "overflow"]
    assert ((overflow["propensity"] > 0) & (overflow["propensity"] <= 1)).all()
    assert (overflow["propensity"] < 1).any()  # the exploring batches' shares
    # during the commit batch the design is the committed arm: there, propensity 1
    assert overflow.loc[overflow["propensity"] == 1, "arm"].nunique() <= 1
    # rollout: every unit on the recommended / committed arm, propensity 1
    rollout = extra[extra["kind"] == "rollout"]
    assert set(rollout["arm"]) == {state.leader} and (rollout["propensity"] == 1).all()
    assert state.decision["winner"] == state.leader
    last = frames[-1]
    assert set(last["arm"]) == {state.leader} and "rollout" in last.attrs["reason"]
    # counting every recorded outcome, the anytime intervals count overflow rewards (all 1.0
    # here), the fixed ones do not; the resolved prefix (the default) counts every unit of an
    # arm, whatever its kind, in both
    arms = exp_status(where, "anytime")
    fixed = exp_status(where, "fixed")
    assert np.allclose(exp_status(where, "anytime", "resolved")["mean"],
                       exp_status(where, "fixed", "resolved")["mean"])
    assert (arms["mean"] >= fixed["mean"] - 1e-12).all()
    assert not np.allclose(arms["mean"], fixed["mean"])


def exp_status(where, intervals, count="recorded"):
    with where.open() as exp:
        return exp.status(intervals=intervals, count=count).arms


def test_overflow_arms_come_from_their_own_stream_in_the_design_shares(tmp_path):
    # the same calls on two files give the same overflow arms; another seed other arms
    def arms_of(seed: int) -> list[int]:
        with Experiment.create(tmp_path / f"s{seed}-{np.random.default_rng().integers(1e9)}"
                               ".sqlite", **{**DEFINITION, "seed": seed}) as exp:
            exp.assign(18)  # the first batch: 3 arms x 6 pulls
            units = exp.assign(3000)
            assert units.attrs["overflow_units"] == units["unit"].tolist()
            more = exp.assign(7)  # the stream goes on where the first call left it
            return units["arm_index"].tolist() + more["arm_index"].tolist()

    first, again, other = arms_of(3), arms_of(3), arms_of(4)
    assert first == again and first != other
    # the stream is banditkit.rng.stream(seed, "live-overflow", drawn before), written out
    # here rather than through draw_arms: a change of stream there must fail this test
    shares = np.full(3, 1 / 3)

    def expected(drawn: int, count: int) -> list[int]:
        u = stream(3, "live-overflow", drawn).random(count)
        return np.searchsorted(np.cumsum(shares), u * shares.sum(), side="right").tolist()

    assert first == expected(0, 3000) + expected(3000, 7)
    assert first[:3000] == draw_arms(3, 0, shares, 3000).tolist()
    first = first[:3000]
    counts = np.bincount(first, minlength=3) / 3000
    assert np.abs(counts - 1 / 3).max() < 0.04  # the first round's equal shares


def test_design_shares_follow_the_batch_and_fall_back_to_uniform():
    from banditkit.protocol import Batch

    batch = Batch(np.array([0, 2]), np.array([30, 10]))
    # no active set: every arm is in play, and a batch that misses one is no design over them
    assert design_shares("design", batch, 3, 0, None).tolist() == pytest.approx([1 / 3] * 3)
    assert design_shares("design", batch, 3, 0, [0, 2]).tolist() == [0.75, 0.0, 0.25]
    assert design_shares("uniform", batch, 4, 0, [0, 2]).tolist() == [0.5, 0.0, 0.5, 0.0]
    assert design_shares("control", batch, 3, 1, None).tolist() == [0.0, 1.0, 0.0]


def test_sticky_keys_keep_their_arm_across_overflow_and_rollout(where):
    with where.create(**DEFINITION) as exp:
        first = exp.assign(keys=[f"u{i}" for i in range(30)])  # 18 slots, 12 overflow
        assert len(first) == 30 and len(first.attrs["overflow_units"]) == 12
        again = exp.assign(keys=[f"u{i}" for i in range(30)])
        assert again["repeated"].all() and again["unit"].tolist() == first["unit"].tolist()
        assert again["arm"].tolist() == first["arm"].tolist()
        stopped = exp.stop("b", who="alice")
        assert stopped["arm"] == "b"
        # after the stop: new keys roll out b, known keys keep their unit and arm
        mixed = exp.assign(keys=["u0", "u29", "new1", "new2"])
        assert mixed["arm"].tolist()[:2] == [first["arm"][0], first["arm"][29]]
        assert mixed["repeated"].tolist() == [True, True, False, False]
        assert mixed["arm"].tolist()[2:] == ["b", "b"]
        assert exp.units(ids=mixed["unit"][2:].tolist())["kind"].tolist() == ["rollout"] * 2


def test_stop_pause_resume_archive_delete_are_audited(where):
    with where.create(**DEFINITION, who="carol") as exp:
        assert exp.pause("checking the tracking", who="bob")
        paused = exp.assign(5)
        assert paused.empty and "paused by bob" in paused.attrs["reason"]
        assert "paused by bob" in exp.status().paused
        assert exp.resume(who="bob") == 1
        assert len(exp.assign(5)) == 5
        with pytest.raises(ExperimentError, match="arm must be one of"):
            exp.stop("z")
        assert exp.audit()["action"].tolist() == ["create", "pause", "resume"]  # refused: none
        exp.stop(rollout=False, who="alice")
        none = exp.assign(5)
        assert none.empty and "stopped by alice" in none.attrs["reason"]
        with pytest.raises(ExperimentError, match="not archived"):
            Experiment.delete(where.target, name=where.name)
        assert exp.archive(who="alice") and not exp.archive(who="alice")
        state = exp.status()
        assert state.archived and state.decision is not None
        log = exp.audit()
        assert log["action"].tolist() == ["create", "pause", "resume", "stop", "archive"]
        assert log["who"].tolist() == ["carol", "bob", "bob", "alice", "alice"]
        assert log["at"].is_monotonic_increasing
    Experiment.delete(where.target, name=where.name)
    with pytest.raises(ExperimentError, match="no experiment"):
        where.open()


def test_a_finished_experiment_shows_its_decision_first(tmp_path):
    _, table = _simulated()
    with Experiment.create(tmp_path / "e.sqlite", **DEFINITION) as exp:
        _drive(exp, str(tmp_path / "e.sqlite"), table, np.random.default_rng(2),
               calls_after_end=1)
        state = exp.status()
    text = str(state)
    assert text.splitlines()[0].startswith(f"FINISHED: winner {state.leader}")
    table = text[text.index("per arm: "):].splitlines()[1]
    assert "active" in table and "assigned" in table
    # the winner alone gets units now: active says so, in the data as in the print
    assert state.arms["active"].to_dict() == {a: a == state.leader for a in "abc"}
    d = state.decision
    assert d["control"] == "a" and d["diff_low"] <= d["diff"] <= d["diff_high"]
    assert d["diff"] == pytest.approx(state.arms.loc[state.leader, "diff"])
    # the arms the algorithm eliminated, all among those that no longer get units
    assert set(d["eliminated"]) <= {a for a in "abc" if a != state.leader}


def test_a_horizon_below_the_first_round_is_warned_at_create(tmp_path):
    with Experiment.create(tmp_path / "e.sqlite", algorithm="ReplicableElimination",
                           arms=["a", "b", "c"], seed=7, horizon=1000,
                           params={"rho": 0.2}) as exp:
        warning = exp.status().warnings[0]
    assert "horizon (1000) is too small" in warning and "['a']" in warning
    with Experiment.create(tmp_path / "ok.sqlite", algorithm="ReplicableElimination",
                           arms=["a", "b", "c"], seed=7, horizon=30_000,
                           params={"rho": 0.2}) as exp:
        assert exp.status().warnings == []


def test_refusals_name_the_parameter_and_change_nothing(tmp_path):
    with pytest.raises(ExperimentError, match="overflow must be one of"):
        Experiment.create(tmp_path / "e.sqlite", **DEFINITION, overflow="random")
    assert not (tmp_path / "e.sqlite").exists()
    with Experiment.create(tmp_path / "e.sqlite", **DEFINITION) as exp:
        with pytest.raises(ExperimentError, match="at most 1000000 overflow"):
            exp.assign(10**7)
        assert exp.units().empty  # the refused call assigned nothing
        with pytest.raises(ExperimentError, match="who must be"):
            exp.pause(who="")
        with pytest.raises(ExperimentError, match="rollout must be"):
            exp.stop(rollout="yes")


def test_a_format_5_experiment_is_upgraded_on_open_and_refused_read_only(where):
    with where.create(**DEFINITION, overflow="off") as exp:
        units = exp.assign(10)
    conn = where.connect()  # back to format 5's layout, as an older banditkit wrote it
    for statement in DOWNGRADE_TO_5:
        conn.execute(statement)
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match=r"format 5.*readonly=False"):
        where.open(readonly=True)
    with where.open() as exp:
        assert exp.units()["unit"].tolist() == units["unit"].tolist()
        more = exp.assign(20)
        assert len(more) == 20 and len(more.attrs["overflow_units"]) == 12
    with where.open(readonly=True) as exp:
        assert exp.units()["kind"].value_counts().to_dict() == {"algorithm": 18,
                                                                "overflow": 12}
        assert exp.audit().empty  # the upgrade adds the table; no action was logged before


def test_expired_overflow_units_free_no_slot_and_leave_the_batch_alone(where):
    with where.create(**DEFINITION) as exp:
        first = exp.assign(30)  # the first round's 18 slots, 12 overflow units
        extra = first.attrs["overflow_units"]
        assert exp.expire(extra) == 12
        again = exp.assign(5)  # the batch still waits: overflow again, no slot re-offered
        assert again.attrs["overflow_units"] == again["unit"].tolist()
        mine = [u for u in first["unit"].tolist() if u not in extra]
        exp.record(mine, [1.0] * 18)
        assert exp.status().batches_observed == 1  # the 18 rewards completed the batch
        assert exp.verify() == 18 + 5  # live units; the totals agree with them
        state = exp.status()
        assert int(state.arms["overflow"].sum()) == 5 and int(state.arms["assigned"].sum()) == 18
    check_consistent(where)


def test_overflow_during_a_commit_batch_goes_to_the_committed_arm(tmp_path):
    """Issue 26's rule: overflow follows "the current design's shares among the arms still in
    play". Once ReplicableElimination has committed (the next exploration batch no longer
    fits the horizon), its commit batch plays the lowest surviving index for the rest of the
    horizon while its ``active`` set still lists every survivor: the overflow of that batch
    goes to the committed arm (propensity 1), not uniformly over the survivors."""
    definition = {**DEFINITION, "horizon": 30}  # 18 pulls, then 12 committed to one arm
    with Experiment.create(tmp_path / "c.sqlite", **definition) as exp:
        first = exp.assign(18)
        exp.record(first["unit"].tolist(), [1.0] * 18)  # no arm eliminated
        commit = exp.assign(12)
        assert exp._algorithm.committed and len(exp._algorithm.active) == 3
        assert set(commit["arm"]) == {"a"}
        overflow = exp.assign(300)
        assert overflow.attrs["overflow_units"] == overflow["unit"].tolist()
        assert set(overflow["arm"]) == {"a"}
        units = exp.units().set_index("unit").loc[overflow["unit"]]
        assert (units["propensity"] == 1.0).all()
