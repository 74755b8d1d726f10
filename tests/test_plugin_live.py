"""The plug-in's sums kept by a live experiment's resolved prefix (format 8): equal to the sums of
each arm's rewards in assignment order however the outcomes arrive, used by ``status``, checked by
``verify``, rebuilt when an older file is upgraded."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.live.errors import ExperimentError
from banditkit.live.outcomes.resolved_prefix import read_prefix
from banditkit.live.readout.plugin import PluginSums, plugin_difference, plugin_sequence
from banditkit.live.readout.statistics import plugin_sums
from banditkit.live.store.schema import FORMAT
from live_support import DOWNGRADE_TO_7


def _experiment(tmp_path, kind="bounded", name="e"):
    return Experiment.create(tmp_path / f"{name}.sqlite", algorithm="FixedAllocation",
                             arms=["control", "treatment"], seed=3,
                             params={"batch_size": 400}, reward_type=kind,
                             reward_range=(1.0, 3.0) if kind == "bounded" else None,
                             verdicts={"tune_n": 300})


def _prefix(exp):
    with exp._transaction() as conn:
        return read_prefix(conn, 2, 0)


def test_the_prefix_keeps_the_plugin_sums_of_each_arm_in_assignment_order(tmp_path):
    rng = np.random.default_rng(0)
    with _experiment(tmp_path) as exp:
        rewards: dict[int, list[float]] = {0: [], 1: []}
        for _ in range(3):
            got = exp.assign(400)
            arm = (got["arm"] == "treatment").to_numpy().astype(int)
            x = 1 + 2 * rng.beta(2, 6 + arm, arm.size)
            units = got["unit"].to_numpy()
            # value-dependent reporting: the high rewards first, the rest later, in two calls
            high = x > 1.5
            exp.record(units[high], x[high])
            middle = _prefix(exp)
            exp.record(units[~high][::-1], x[~high][::-1])
            for a in (0, 1):
                rewards[a].extend(x[arm == a].tolist())
        stored = _prefix(exp)
        want = plugin_sums([np.array(rewards[0]), np.array(rewards[1])], exp.verdict_spec)
        np.testing.assert_allclose(stored.plugin, want, rtol=1e-10)
        # before the low rewards arrived the prefix stopped at the first unit still waiting
        assert (middle.plugin[:, 0] < stored.plugin[:, 0]).all()
        assert exp.verify() == 1200
        # status's intervals are the plug-in's on those sums
        row = exp.status().arms
        sums = PluginSums.from_array(want)
        n = np.array([len(rewards[0]), len(rewards[1])], dtype=float)
        cl, ch = plugin_sequence(n[0], PluginSums.from_array(want[0]), 0.05 * 0.05)
        dl, dh = plugin_difference(n, sums, 0, cl, ch, 0.05 * 0.95)
        assert row.loc["treatment", "diff_low"] == pytest.approx(2 * dl[1], rel=1e-9)
        assert row.loc["treatment", "diff_high"] == pytest.approx(2 * dh[1], rel=1e-9)
        low, high = plugin_sequence(n, sums, 0.05 / 2)
        np.testing.assert_allclose(row["low"], 1 + 2 * low, rtol=1e-9)
        np.testing.assert_allclose(row["high"], 1 + 2 * high, rtol=1e-9)
        # a status override of tune_n leaves the exact default as it was accumulated
        same = exp.status(verdicts={"tune_n": 50}).arms
        assert same.loc["treatment", "diff_low"] == row.loc["treatment", "diff_low"]
        # the mixture stays a documented choice, on the same data
        mixture = exp.status(verdicts={"sequence": "mixture"}).arms
        assert mixture.loc["treatment", "diff_low"] != pytest.approx(
            row.loc["treatment", "diff_low"])


def test_verify_refuses_edited_plugin_sums(tmp_path):
    with _experiment(tmp_path, "binary") as exp:
        got = exp.assign(400)
        exp.record(got["unit"], (np.arange(400) % 7 == 0).astype(float))
        assert exp.verify() == 400
    conn = sqlite3.connect(tmp_path / "e.sqlite")
    conn.execute("UPDATE prefix SET plugin_pen_low = plugin_pen_low * 0.5 WHERE arm = 1")
    conn.commit()
    conn.close()
    with Experiment.open(tmp_path / "e.sqlite") as exp, \
            pytest.raises(ExperimentError, match="plug-in sums of arm 'treatment'"):
        exp.verify()


def test_a_format_7_file_is_upgraded_and_its_plugin_sums_rebuilt(tmp_path):
    path = tmp_path / "e.sqlite"
    with _experiment(tmp_path, "binary") as exp:
        got = exp.assign(800)
        exp.record(got["unit"], (np.arange(800) % 5 == 0).astype(float))
        before = exp.status().arms
    conn = sqlite3.connect(path)
    for statement in DOWNGRADE_TO_7:
        conn.execute(statement)
    conn.commit()
    conn.close()
    with pytest.raises(ExperimentError, match=r"format 7.*readonly=False"):
        Experiment.open(path, readonly=True)
    with Experiment.open(path) as exp:
        assert exp.verify() == 800
        after = exp.status().arms
    pd_cols = ["counted", "mean", "low", "high", "diff_low", "diff_high"]
    np.testing.assert_allclose(after[pd_cols].to_numpy(float), before[pd_cols].to_numpy(float),
                               rtol=1e-12)
    conn = sqlite3.connect(path)
    assert json.loads(conn.execute("SELECT value FROM meta WHERE key = 'format'")
                      .fetchone()[0]) == FORMAT
    conn.close()


def _expected_ends(rewards, spec):
    """The difference's ends from the one-pass plug-in sums of each arm's rewards in order."""
    want = plugin_sums([np.asarray(rewards[0]), np.asarray(rewards[1])], spec)
    n = np.array([len(rewards[0]), len(rewards[1])], dtype=float)
    from banditkit.live.readout.anytime import confidence_sequence

    S0 = float(np.sum(rewards[0]))
    cl, ch = confidence_sequence(S0, n[0], 0.05 * 0.05)
    return plugin_difference(n, PluginSums.from_array(want), 0, cl, ch, 0.05 * 0.95)


def test_a_read_only_status_catches_the_plugin_sums_up_in_memory(tmp_path):
    # the sums run one call behind (record does not wait for a read): the last record's
    # rewards are caught up by the next call, here a read-only open that cannot store them
    rng = np.random.default_rng(2)
    rewards: dict[int, list[float]] = {0: [], 1: []}
    with _experiment(tmp_path, "binary") as exp:
        spec = exp.verdict_spec
        for _ in range(2):
            got = exp.assign(400)
            arm = (got["arm"] == "treatment").to_numpy().astype(int)
            x = (rng.random(arm.size) < 0.1 + 0.05 * arm).astype(float)
            exp.record(got["unit"], x)
            for a in (0, 1):
                rewards[a].extend(x[arm == a].tolist())
    conn = sqlite3.connect(tmp_path / "e.sqlite")
    behind = conn.execute("SELECT COUNT(*) FROM prefix WHERE plugin_cursor < cursor").fetchone()
    conn.close()
    assert behind[0] == 2  # the last record's rewards are not in the stored sums yet
    dl, dh = _expected_ends(rewards, spec)
    with Experiment.open(tmp_path / "e.sqlite", readonly=True) as exp:
        row = exp.status().arms.loc["treatment"]
    assert row["diff_low"] == pytest.approx(dl[1], rel=1e-9)
    assert row["diff_high"] == pytest.approx(dh[1], rel=1e-9)
    with Experiment.open(tmp_path / "e.sqlite") as exp:
        assert exp.verify() == 800
        assert exp.status().arms.loc["treatment", "diff_low"] == pytest.approx(dl[1], rel=1e-9)


def test_status_catches_up_after_the_window_imputes_zeros(tmp_path):
    clock = [1_000.0]
    rng = np.random.default_rng(4)
    with Experiment.create(tmp_path / "w.sqlite", algorithm="FixedAllocation",
                           arms=["control", "treatment"], seed=1, params={"batch_size": 400},
                           reward_type="binary", outcome_window=60, missing="zero",
                           clock=lambda: clock[0]) as exp:
        spec = exp.verdict_spec
        got = exp.assign(400)
        arm = (got["arm"] == "treatment").to_numpy().astype(int)
        x = (rng.random(arm.size) < 0.2 + 0.1 * arm).astype(float)
        ones = x == 1
        exp.record(got["unit"][ones], x[ones])  # conversions at once, zeros never sent
        clock[0] += 61  # the windows close: this status imputes the zeros, then catches up
        row = exp.status().arms.loc["treatment"]
        assert row["counted"] == (arm == 1).sum()
        dl, dh = _expected_ends({a: x[arm == a] for a in (0, 1)}, spec)
        assert row["diff_low"] == pytest.approx(dl[1], rel=1e-9)
        assert row["diff_high"] == pytest.approx(dh[1], rel=1e-9)
        assert exp.verify() == 400
