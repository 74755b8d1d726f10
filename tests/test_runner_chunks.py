"""Chunked tasks, optional decision logs, instance facts and the error plot (the runner
features the P1-RAGE figures need at 10^6 trials)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from banditkit.experiments.plots import write_plots
from banditkit.experiments.runner import load_run, run_figure
from banditkit.experiments.spec import PlotSpec
from banditkit.experiments.tasks import make_tasks
from test_runner_support import IDENTIFY, LOCKSTEP, SMALL, frames_equal


def _best_mean(env) -> dict[str, float]:
    return {"best_mean": float(np.max(env.means))}


def test_chunks_group_trials_and_cover_each_once():
    spec = replace(SMALL, chunk=4)
    todo = [(p, a, i) for p in range(2) for a in range(2) for i in range(6)]
    tasks = make_tasks(spec, 0, todo, "x")
    assert [len(t.trials) for t in tasks] == [4, 2] * 4
    seen = sorted((t.point, t.algorithm, i) for t in tasks for i in t.trials)
    assert seen == sorted(todo)
    lock = make_tasks(replace(LOCKSTEP, chunk=5), 0, [(0, 0, i) for i in range(6)], "x")
    assert [t.trials for t in lock] == [(0, 1, 2, 3, 4), (5,)]


@pytest.mark.parametrize("base", [SMALL, LOCKSTEP])
def test_chunking_changes_no_number(base):
    plain = run_figure(base, backend="serial", progress=False)
    chunked = run_figure(replace(base, chunk=4), backend="serial", progress=False)
    frames_equal(plain, chunked)


def test_decision_logs_are_optional_and_counts_kept(tmp_path):
    spec = replace(SMALL, store_decisions=False)
    run_figure(spec, backend="serial", progress=False, out=tmp_path / "a")
    run_figure(SMALL, backend="serial", progress=False, out=tmp_path / "b")
    from banditkit.experiments.store import RunStore

    with RunStore(tmp_path / "a", create=False) as store:
        lean = store.records()
    with RunStore(tmp_path / "b", create=False) as store:
        full = store.records()
    assert all(r.decision_arms is None and r.batch_sizes is None for r in lean)
    assert all(r.decision_arms is not None and r.decision_arms.size for r in full)
    for a, b in zip(sorted(lean, key=lambda r: (r.point, r.algorithm, r.trial)),
                    sorted(full, key=lambda r: (r.point, r.algorithm, r.trial)), strict=True):
        np.testing.assert_array_equal(a.counts, b.counts)
        assert a.final_regret == b.final_regret
    size_lean = (tmp_path / "a" / "results.sqlite").stat().st_size
    size_full = (tmp_path / "b" / "results.sqlite").stat().st_size
    assert size_lean < size_full


def test_instance_facts_become_columns_averaged_per_point(tmp_path):
    spec = replace(IDENTIFY, instance_facts=_best_mean,
                   plot=PlotSpec(kind="error", metric="failure_rate", x="n", xscale="log",
                                 facts=("best_mean",)))
    result = run_figure(spec, backend="serial", progress=False, out=tmp_path)
    trials = result.trials
    assert "best_mean" in trials
    # per-trial instances: the facts differ between trials of a point, and the summary
    # holds their mean
    first = trials[(trials["point"] == 0)]
    assert first["best_mean"].nunique() > 1
    s = result.summary
    assert s.loc[s["point"] == 0, "best_mean"].iloc[0] == pytest.approx(first["best_mean"].mean())
    paths = write_plots(load_run(tmp_path))
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.exists() for p in paths)


def test_error_plot_panels_select_series(tmp_path):
    points = tuple({"K": K, "algorithm_params": {"n": n}} for K in (3, 4) for n in (2, 20))
    spec = replace(IDENTIFY, points=points, trials=4,
                   plot=PlotSpec(kind="error", metric="failure_rate", x="n",
                                 panels=(("n", {"K": 3}), ("K", {"n": 20}))))
    result = run_figure(spec, backend="serial", progress=False, out=tmp_path)
    assert len(write_plots(result)) == 2
    bad = replace(spec, plot=PlotSpec(kind="error", x="n", panels=(("n", {"Q": 1}),)))
    with pytest.raises(ValueError, match="'Q'"):
        write_plots(run_figure(bad, backend="serial", progress=False, out=tmp_path / "b"))


def test_shared_instance_draws_one_stream_for_all_points():
    points = ({"K": 4, "algorithm_params": {"n": 5}}, {"K": 4, "algorithm_params": {"n": 6}})
    own = run_figure(replace(IDENTIFY, points=points, instance_per_trial=False, trials=2),
                     backend="serial", progress=False)
    shared = run_figure(replace(IDENTIFY, points=points, instance_per_trial=False, trials=2,
                                shared_instance=True, instance_facts=_best_mean),
                        backend="serial", progress=False)
    assert (shared.trials["status"] == "ok").all()
    assert shared.trials.groupby("point")["best_mean"].first().nunique() == 1
    own_facts = run_figure(replace(IDENTIFY, points=points, instance_per_trial=False, trials=2,
                                   instance_facts=_best_mean), backend="serial", progress=False)
    assert own_facts.trials.groupby("point")["best_mean"].first().nunique() == 2
    assert len(own.trials) == len(shared.trials)
    with pytest.raises(ValueError, match="exclude"):
        replace(IDENTIFY, shared_instance=True)
    with pytest.raises(ValueError, match="chunk"):
        replace(IDENTIFY, chunk=0)


def test_error_difference_newcombe_reference_values():
    from banditkit.experiments.results import error_difference

    # Newcombe (1998), Table II, example (a): 56/70 - 48/80, method 10: [0.0524, 0.3339]
    diff, lo, hi = error_difference(56, 70, 48, 80)
    assert diff == pytest.approx(0.2)
    assert (lo, hi) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    # example (d): 0/10 - 0/20 (no events), interval [-0.1611, 0.2775]
    _, lo, hi = error_difference(0, 10, 0, 20)
    assert (lo, hi) == pytest.approx((-0.1611, 0.2775), abs=1e-4)


def test_report_states_comparisons(tmp_path):
    from banditkit.experiments.report import render_report

    points = tuple({"K": 4, "algorithm_params": {"n": n}} for n in (1, 50))
    spec = replace(IDENTIFY, points=points, trials=30, comparisons=(("uniform", "uniform"),))
    result = run_figure(spec, backend="serial", progress=False, out=tmp_path)
    text = render_report(result, tmp_path)
    assert "## Error-rate comparisons" in text
    assert "2 without significant difference" in text  # a rate minus itself: 0 in its interval
    assert "| uniform − uniform | 2 | 0 | 0 | 2 |" in text


def test_log_log_curve_reports_growth_rates(tmp_path):
    from banditkit.experiments.report import render_report
    from banditkit.experiments.spec import AlgorithmSpec
    from test_runner_support import make_eps_greedy

    uniform = AlgorithmSpec("uniform", make_eps_greedy, {"eps": 1.0, "batch": 10})
    spec = replace(SMALL, horizon=4000, checkpoints=40, trials=4,
                   algorithms=(SMALL.algorithms[0], uniform),
                   plot=PlotSpec(kind="curve", metric="regret", metrics=("regret",),
                                 xscale="log", yscale="log"))
    result = run_figure(spec, backend="serial", progress=False, out=tmp_path)
    assert len(write_plots(result)) == 2
    text = render_report(result, tmp_path)
    assert "## Growth rates" in text
    rows = [line for line in text.splitlines() if line.startswith("| 0 |")]
    slopes = {r.split("|")[3].strip(): float(r.split("|")[4]) for r in rows
              if r.split("|")[4].strip() not in ("–", "– (zero)")}
    # uniform play has linear regret; UCB1's grows slower
    assert 0.9 < slopes["uniform"] < 1.1
    assert slopes["UCB1"] < 0.8


def test_intervals_of_nonnegative_metrics_stay_nonnegative():
    import pandas as pd

    from banditkit.experiments.results import summarise

    trials = pd.DataFrame({
        "figure": "x", "point": 0, "algorithm": "a", "trial": range(3), "status": "ok",
        "error": None, "n_pulls": pd.array([1, 1, 10_000], dtype="Int64"),
        "final_regret": [-5.0, 0.0, 1.0], "final_violation": [0.0, 0.0, 9.0],
        "correct": pd.array([None] * 3, dtype="boolean"),
        "recommendation": pd.array([None] * 3, dtype="Int64"),
        "stopped": pd.array([True] * 3, dtype="boolean"),
        "n_batches": pd.array([1, 1, 1], dtype="Int64"), "seconds": 0.0})
    row = summarise(trials).iloc[0]
    assert row["n_pulls_lo"] == 0.0 and row["final_violation_lo"] == 0.0
    assert row["final_regret_lo"] < 0  # regret is signed: not clipped


def test_progress_to_a_log_file_is_plain_lines(capsys):
    run_figure(replace(SMALL, trials=10), backend="serial", progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [line for line in err.splitlines() if "trials (" in line]
    assert lines and lines[-1].startswith("test:small: 40/40 trials (100%)")


def test_a_run_folder_is_locked_while_a_run_writes_into_it(tmp_path):
    import subprocess
    import sys

    from banditkit.experiments.store import LOCK_NAME, FolderBusy

    out = tmp_path / "run"
    out.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / LOCK_NAME).write_text(str(sleeper.pid))  # a live run holds the folder
        with pytest.raises(FolderBusy, match="in use by another banditkit run"):
            run_figure(SMALL, backend="serial", progress=False, out=out)
    finally:
        sleeper.kill()
        sleeper.wait()
    # its process is gone (a killed run): the lock is taken over and the run goes on
    result = run_figure(SMALL, backend="serial", progress=False, out=out)
    assert result.complete and not (out / LOCK_NAME).exists()
