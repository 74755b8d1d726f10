"""The p1-rage:* figures end to end in their quick form: every algorithm spends exactly the
budget, the runs keep no decision logs, the plots and reports are written, and the reports
state the comparisons the paper's claims are about."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.envs import datasets
from banditkit.experiments.figures import get_figure
from banditkit.experiments.plots import write_plots
from banditkit.experiments.report import write_report
from banditkit.experiments.runner import run_figure
from banditkit.experiments.store import RunStore
from test_p1_instances import _write_week

ALGORITHMS = ["P1-RAGE", "P1-Peace", "G-BAI", "Mixed-Peace", "Peace", "OD-LinBAI"]


@pytest.mark.parametrize("name", ["fig2a", "fig2b", "fig3", "fig4", "fig5", "fig6"])
def test_quick_figure_runs_end_to_end(name, tmp_path, monkeypatch):
    if name == "fig2b":  # MovieLens is not installed by `make test`: a synthetic week
        data = tmp_path / "ml"
        data.mkdir()
        _write_week(data, np.random.default_rng(0))
        monkeypatch.setenv(datasets.DATA_ENV, str(data))
    figure = f"p1-rage:{name}"
    spec = get_figure(figure)
    assert [a.name for a in spec.algorithms] == ALGORITHMS
    assert spec.trials >= 1000 and not spec.store_decisions
    out = tmp_path / "run"
    result = run_figure(figure, quick=True, trials=4, backend="serial", progress=False, out=out)
    trials = result.trials
    assert (trials["status"] == "ok").all(), trials["error"].dropna().tolist()
    budgets = np.array([p["T"] for p in result.config["points"]])
    assert np.array_equal(trials["n_pulls"].to_numpy(dtype=int), budgets[trials["point"]])
    assert trials["min_gap"].gt(0).all()
    with RunStore(out, create=False) as store:
        records = store.records()
    assert all(r.decision_arms is None and r.checkpoints is None for r in records)
    assert all(int(r.counts.sum()) == r.n_pulls for r in records)
    assert len(write_plots(result)) == 2
    text = write_report(result).read_text()
    assert "## Error-rate comparisons" in text and "P1-RAGE − G-BAI" in text


def test_sweep_figures_share_their_point_and_instance():
    fig3 = get_figure("p1-rage:fig3")
    assert len(fig3.points) == 19  # 10 + 10, the point (s = 2, L = 900) once
    assert fig3.shared_instance
    fig6 = get_figure("p1-rage:fig6")
    assert len(fig6.points) == 20
    assert get_figure("p1-rage:fig2a").trials == 20_000
    assert get_figure("p1-rage:fig5").trials == 10_000
