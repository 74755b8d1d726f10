"""The experiment runner: seeds, failures, lock-step groups, resume and refusal."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import test_runner_support as support
from banditkit.experiments.runner import load_run, run_figure
from banditkit.experiments.spec import AlgorithmSpec
from banditkit.experiments.store import ConfigurationMismatch, RunStore
from banditkit.experiments.tasks import run_grouped
from banditkit.rng import stream
from banditkit.simulate import simulate

SUPPORT_DIR = str(Path(support.__file__).parent)


@pytest.fixture(scope="module")
def small():
    """SMALL run serially in memory: the reference numbers."""
    return run_figure(support.SMALL, backend="serial", progress=False)


def test_trials_use_the_documented_seed_streams(small):
    spec = support.SMALL
    for p, algo, i in [(0, 0, 0), (1, 1, 5), (0, 1, 3)]:
        point = spec.points[p]
        env = support.make_env(stream(0, spec.name, p, "instance"), **point)
        a = spec.algorithms[algo]
        rng = stream(0, spec.name, p, i, "algorithm")
        noise = stream(0, spec.name, p, i, "environment")
        trial = simulate(a.factory(env, rng, **a.params), env, horizon=spec.horizon, seed=noise,
                         checkpoints=spec.checkpoint_times(point))
        row = small.trials.query("point == @p and algorithm == @a.name and trial == @i")
        assert len(row) == 1
        assert row["final_regret"].iloc[0] == trial.final_regret
        assert row["n_batches"].iloc[0] == trial.n_batches
        curve = small.curves.query("point == @p and algorithm == @a.name and trial == @i")
        np.testing.assert_array_equal(curve["t"], trial.checkpoints)
        np.testing.assert_array_equal(curve["regret"], trial.regret)


def test_frames_are_tidy_and_complete(small):
    trials = small.trials
    assert len(trials) == 2 * 2 * 6 and small.complete
    assert not trials.duplicated(["point", "algorithm", "trial"]).any()
    assert list(trials.columns[:3]) == ["figure", "point", "means"]
    assert (trials["status"] == "ok").all() and (trials["n_pulls"] == 400).all()
    assert trials["correct"].isna().all()  # regret policies identify nothing
    # The last checkpoint of each curve is the trial's final regret.
    last = small.curves.groupby(["point", "algorithm", "trial"], sort=False).tail(1)
    assert (last["t"] == 400).all()
    merged = last.merge(trials, on=["point", "algorithm", "trial"])
    np.testing.assert_array_equal(merged["regret"], merged["final_regret"])


def test_summary_means_and_intervals(small):
    summary = small.summary
    assert len(summary) == 4 and (summary["n_ok"] == 6).all() and (summary["n_failed"] == 0).all()
    for _, row in summary.iterrows():
        x = small.trials.query("point == @row.point and algorithm == @row.algorithm")[
            "final_regret"].to_numpy()
        se = x.std(ddof=1) / np.sqrt(6)
        assert row["final_regret_mean"] == pytest.approx(x.mean())
        assert row["final_regret_se"] == pytest.approx(se)
        assert row["final_regret_hi"] - row["final_regret_mean"] == pytest.approx(
            stats.t.ppf(0.975, 5) * se)
        assert row["final_regret_lo"] < row["final_regret_mean"] < row["final_regret_hi"]


def test_numbers_do_not_depend_on_algorithm_name_or_trial_count(small):
    renamed = replace(support.SMALL, trials=3, algorithms=(
        AlgorithmSpec("another name", support.make_eps_greedy, {"eps": 0.2, "batch": 10}),))
    result = run_figure(renamed, backend="serial", progress=False)
    ours = result.trials["final_regret"].to_numpy()
    ref = small.trials.query("algorithm == 'eps-greedy' and trial < 3")["final_regret"]
    np.testing.assert_array_equal(ours, ref.to_numpy())


def test_another_seed_gives_other_numbers(small):
    other = run_figure(support.SMALL, backend="serial", progress=False, seed=1, trials=2)
    ref = small.trials.query("trial < 2")
    assert not np.array_equal(other.trials["final_regret"].to_numpy(),
                              ref["final_regret"].to_numpy())


def test_identification_metrics_and_random_instances():
    result = run_figure(support.IDENTIFY, backend="serial", progress=False)
    trials = result.trials
    assert trials["correct"].notna().all() and trials["recommendation"].notna().all()
    assert (trials["n_pulls"] == 4 * trials["n"]).all()
    assert trials["stopped"].all()
    summary = result.summary
    for _, row in summary.iterrows():
        correct = trials.query("n == @row.n")["correct"].astype(bool)
        assert row["failure_rate_mean"] == pytest.approx(1 - correct.mean())
        assert row["failure_rate_lo"] <= row["failure_rate_mean"] <= row["failure_rate_hi"]
    # A new instance per trial: the instance stream is keyed by the trial.
    envs = [support.make_random_env(stream(0, "test:identify", 0, i, "instance"), K=4)
            for i in range(2)]
    assert not np.array_equal(envs[0].means, envs[1].means)


def test_failed_trials_are_recorded_and_the_run_completes(tmp_path):
    result = run_figure(support.FAILING, backend="serial", progress=False, out=tmp_path)
    trials = result.trials
    assert len(trials) == 3 * 6 and result.complete
    flaky = trials[trials["algorithm"] == "flaky"]
    failed = flaky[flaky["status"] == "failed"]
    assert 0 < len(failed) < 6  # some trials fail, decided by each trial's own stream
    assert (failed["error"] == "RuntimeError: flaky trial refused to start").all()
    assert failed["final_regret"].isna().all()
    assert (flaky[flaky["status"] == "ok"]["n_pulls"] == 200).all()
    assert (trials[trials["algorithm"] != "flaky"]["status"] == "ok").all()
    row = result.summary.query("algorithm == 'flaky'").iloc[0]
    assert row["n_failed"] == len(failed) and row["n_ok"] == 6 - len(failed)
    with RunStore(tmp_path) as store:
        tracebacks = [r.traceback for r in store.records() if r.status == "failed"]
    assert all("make_flaky" in tb and "RuntimeError" in tb for tb in tracebacks)


def test_failed_trials_are_kept_on_resume_and_retried_on_request(tmp_path, monkeypatch):
    monkeypatch.setitem(support.BROKEN, "fail", True)
    first = run_figure(support.FAILING, backend="serial", progress=False, out=tmp_path)
    assert (first.trials.query("algorithm == 'broken'")["status"] == "failed").all()
    n_failed = first.n_failed

    monkeypatch.setitem(support.BROKEN, "fail", False)
    again = run_figure(support.FAILING, backend="serial", progress=False, out=tmp_path)
    assert again.ran == 0 and again.n_failed == n_failed

    retried = run_figure(support.FAILING, backend="serial", progress=False, out=tmp_path,
                         retry_failed=True)
    assert retried.ran == n_failed
    assert len(retried.trials) == 18
    assert not retried.trials.duplicated(["point", "algorithm", "trial"]).any()
    assert (retried.trials.query("algorithm == 'broken'")["status"] == "ok").all()
    # Deterministic failures fail again; successful trials were never touched.
    assert retried.n_failed == n_failed - 6
    fresh = run_figure(support.FAILING, backend="serial", progress=False)
    support.frames_equal(retried, fresh)


def test_lockstep_groups_give_the_numbers_of_single_trials(small):
    support.LOCKSTEP_CALLS.clear()
    result = run_figure(support.LOCKSTEP, backend="serial", progress=False)
    assert support.LOCKSTEP_CALLS == [(6, 400), (6, 400)]  # one call per point, all trials
    ref = small.trials[small.trials["algorithm"] == "UCB1"].reset_index(drop=True)
    np.testing.assert_array_equal(result.trials["final_regret"], ref["final_regret"])
    ref_curves = small.curves[small.curves["algorithm"] == "UCB1"].reset_index(drop=True)
    np.testing.assert_array_equal(result.curves["regret"], ref_curves["regret"])


@pytest.mark.parametrize("spec_name", ["SMALL", "IDENTIFY"])
def test_simulator_replaces_simulate_for_every_trial(spec_name):
    # fixed instances (SMALL) and per-trial instances (IDENTIFY) alike
    spec = getattr(support, spec_name)
    hooked = replace(spec, algorithms=tuple(replace(a, simulator=support.counting_simulator)
                                            for a in spec.algorithms))
    support.SIMULATOR_CALLS.clear()
    result = run_figure(hooked, backend="serial", progress=False)
    assert len(support.SIMULATOR_CALLS) == len(result.trials) > 0
    support.frames_equal(result, run_figure(spec, backend="serial", progress=False))
    with pytest.raises(ValueError, match="lockstep or simulator"):
        replace(spec.algorithms[0], lockstep=support.ucb_lockstep,
                simulator=support.counting_simulator)


def test_run_grouped_gives_the_numbers_of_single_trials(small):
    grouped = replace(support.SMALL, algorithms=(replace(
        support.SMALL.algorithms[0], lockstep=partial(run_grouped, support.make_ucb1)),))
    result = run_figure(grouped, backend="serial", progress=False)
    ref = small.trials[small.trials["algorithm"] == "UCB1"].reset_index(drop=True)
    np.testing.assert_array_equal(result.trials["final_regret"], ref["final_regret"])
    np.testing.assert_array_equal(result.trials["n_batches"], ref["n_batches"])


def test_lockstep_groups_per_trial_instances_with_their_own_environments():
    support.LOCKSTEP_CALLS.clear()
    grouped = replace(support.IDENTIFY, algorithms=(replace(
        support.IDENTIFY.algorithms[0],
        lockstep=partial(run_grouped, support.make_uniform_identifier)),))
    result = run_figure(grouped, backend="serial", progress=False)
    plain = run_figure(support.IDENTIFY, backend="serial", progress=False)
    assert len(result.trials) == len(plain.trials) == 24
    for column in ("n_pulls", "correct", "recommendation"):
        np.testing.assert_array_equal(result.trials[column], plain.trials[column])


def test_lockstep_resume_runs_only_missing_trials(tmp_path):
    run_figure(support.LOCKSTEP, backend="serial", progress=False, out=tmp_path, trials=6)
    with RunStore(tmp_path) as store:
        store._conn.execute("DELETE FROM trials WHERE trial IN (1, 4) AND point = 1")
        store._conn.commit()
    support.LOCKSTEP_CALLS.clear()
    resumed = run_figure(support.LOCKSTEP, backend="serial", progress=False, out=tmp_path,
                         trials=6)
    assert support.LOCKSTEP_CALLS == [(2, 400)] and resumed.ran == 2
    fresh = run_figure(support.LOCKSTEP, backend="serial", progress=False)
    support.frames_equal(resumed, fresh)


def test_interrupted_run_resumes_without_redoing_trials(small, tmp_path, monkeypatch):
    calls = {"n": 0}
    original = RunStore.add

    def add_then_interrupt(self, records):
        if calls["n"] == 5:
            raise KeyboardInterrupt  # as if Ctrl-C arrived after 5 stored trials
        calls["n"] += 1
        return original(self, records)

    monkeypatch.setattr(RunStore, "add", add_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_figure(support.SMALL, backend="processes", workers=2, progress=False, out=tmp_path)
    monkeypatch.setattr(RunStore, "add", original)
    partial = load_run(tmp_path)
    # 5 stored tasks: UCB1's trials of a point are one task (its lock-step engine), the
    # others one trial each
    stored = len(partial.trials)
    assert 5 <= stored < 24 and not partial.complete
    assert partial.sessions[0]["completed"] == 0

    resumed = run_figure(support.SMALL, backend="serial", progress=False, out=tmp_path)
    assert resumed.ran == 24 - stored
    support.frames_equal(resumed, small)
    assert [s["completed"] for s in resumed.sessions] == [0, 1]


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
    except sqlite3.OperationalError:  # the tables do not exist yet
        return 0


def test_killed_run_resumes_to_the_uninterrupted_numbers(tmp_path):
    out = tmp_path / "run"
    code = ("import sys; sys.path.insert(0, sys.argv[2]);"
            "from test_runner_support import SLOW;"
            "from banditkit.experiments.runner import run_figure;"
            "run_figure(SLOW, backend='serial', out=sys.argv[1], progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out), SUPPORT_DIR])
    db = out / "results.sqlite"
    deadline = time.monotonic() + 60
    try:
        while _stored(db) < 4:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no trial was stored within a minute"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    stored = _stored(db)
    assert 4 <= stored < 12

    resumed = run_figure(support.SLOW, backend="processes", workers=2, progress=False, out=out)
    assert resumed.ran == 12 - stored
    assert len(resumed.trials) == 12
    assert not resumed.trials.duplicated(["point", "algorithm", "trial"]).any()
    reference = run_figure(support.SLOW, backend="processes", workers=2, progress=False)
    support.frames_equal(resumed, reference)


def test_changed_configuration_is_refused(tmp_path):
    run_figure(support.SMALL, quick=True, backend="serial", progress=False, out=tmp_path)
    changes = {
        "seed": {"seed": 1},
        "trials": {"trials": 5},
        "quick": {"quick": False},
    }
    for key, kwargs in changes.items():
        args = {"quick": True, **kwargs}
        with pytest.raises(ConfigurationMismatch, match=key):
            run_figure(support.SMALL, backend="serial", progress=False, out=tmp_path, **args)
    changed = replace(support.SMALL, algorithms=(
        support.SMALL.algorithms[0],
        AlgorithmSpec("eps-greedy", support.make_eps_greedy, {"eps": 0.3, "batch": 10})))
    with pytest.raises(ConfigurationMismatch, match="fingerprint"):
        run_figure(changed, quick=True, backend="serial", progress=False, out=tmp_path)
    # The same configuration resumes (nothing left to do); notes may change freely.
    renoted = replace(support.SMALL, notes="edited notes")
    again = run_figure(renoted, quick=True, backend="serial", progress=False, out=tmp_path)
    assert again.ran == 0 and again.config["notes"] == "edited notes"


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"trials": 0}, "trials"),
    ({"workers": 0}, "workers"),
    ({"backend": "threads"}, "backend"),
    ({"seed": -1}, "seed"),
    ({"scheduler": "tcp://localhost:1"}, "scheduler"),
])
def test_bad_arguments_are_refused_naming_the_parameter(kwargs, name, tmp_path):
    with pytest.raises(ValueError, match=name):
        run_figure(support.SMALL, progress=False, out=tmp_path, **kwargs)
    assert not (tmp_path / "results.sqlite").exists()  # refused before any work


def test_unknown_figure_lists_known_ones():
    with pytest.raises(ValueError, match=r"unknown figure 'nope'.*replicable-bandits:ucb"):
        run_figure("nope")


def test_wilson_interval_matches_known_values_and_contains_the_rate():
    from banditkit.experiments.results import wilson_interval

    assert wilson_interval(3, 10) == pytest.approx((0.1078, 0.6032), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    for n in (1, 4, 20):
        for k in range(n + 1):
            lo, hi = wilson_interval(k, n)
            assert 0 <= lo <= k / n <= hi <= 1
