"""What a run writes beside its database: plots (curve and sweep) and the markdown report."""

from __future__ import annotations

import numpy as np
import pytest

import test_runner_support as support
from banditkit.experiments.plots import curve_band, write_plots
from banditkit.experiments.report import render_report, write_report
from banditkit.experiments.runner import load_run, run_figure


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("small")
    return run_figure(support.SMALL, backend="serial", progress=False, out=out, trials=4)


def test_curve_band_is_mean_and_t_interval_over_trials(small_run):
    band = curve_band(small_run.curves, "regret")
    sel = small_run.curves.query("point == 1 and algorithm == 'UCB1' and t == 400")["regret"]
    row = band.query("point == 1 and algorithm == 'UCB1' and t == 400").iloc[0]
    half = 3.182446305284263 * sel.std(ddof=1) / 2  # t_{0.975, 3} · s / sqrt(4)
    assert row["mean"] == pytest.approx(sel.mean())
    assert row["hi"] - row["mean"] == pytest.approx(half)
    assert row["mean"] - row["lo"] == pytest.approx(half)


def test_curve_and_sweep_plots_are_written_as_png_and_pdf(small_run, tmp_path):
    paths = write_plots(small_run)
    assert [p.suffix for p in paths] == [".png", ".pdf"]
    assert all(p.parent == small_run.out and p.stat().st_size > 1000 for p in paths)
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"

    sweep = run_figure(support.IDENTIFY, backend="serial", progress=False, out=tmp_path,
                       trials=3)
    paths = write_plots(sweep)
    assert [p.name for p in paths] == ["test_identify.png", "test_identify.pdf"]
    assert paths[0].stat().st_size > 1000


def test_report_holds_configuration_results_paper_comparison_notes_and_plots(small_run):
    write_plots(small_run)
    path = write_report(small_run)
    text = path.read_text()
    assert path.name == "report.md"
    for expected in ("# Small regret figure for tests", "Paper: none (test)",
                     "| root seed | 0 |", "| trials per (point, algorithm) | 4 |",
                     f"--trials 4 --seed 0 --out {small_run.out}", "## Results",
                     "## Notes", "A test figure.", "](test_small.png)", "No trial failed."):
        assert expected in text, expected
    # Paper comparison: the test spec claims UCB1's final regret at point 0 is 20.
    mean = small_run.summary.query("point == 0 and algorithm == 'UCB1'")[
        "final_regret_mean"].iloc[0]
    line = next(line for line in text.splitlines() if "made up for the test" in line)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:4] == ["UCB1", "0", "final_regret", "20"]
    assert float(cells[5]) == pytest.approx(mean / 20, rel=1e-3)


def test_report_lists_failures_and_incomplete_runs(tmp_path):
    run_figure(support.FAILING, backend="serial", progress=False, out=tmp_path)
    result = load_run(tmp_path)
    text = render_report(result, tmp_path)
    n_failed = result.n_failed
    assert n_failed > 0 and f"{n_failed} trial(s) failed" in text
    assert text.count("`RuntimeError: flaky trial refused to start`") == n_failed
    # Remove trials: the report says the run is incomplete and how to finish it.
    from banditkit.experiments.store import RunStore

    with RunStore(tmp_path) as store:
        store._conn.execute("DELETE FROM trials WHERE trial >= 4")
        store._conn.commit()
    text = render_report(load_run(tmp_path), tmp_path)
    assert "Incomplete run: 12 of 18 trials stored" in text


def test_summary_has_one_row_per_point_and_algorithm(small_run):
    summary = small_run.summary
    assert list(zip(summary["point"], summary["algorithm"], strict=True)) == [
        (0, "UCB1"), (0, "eps-greedy"), (1, "UCB1"), (1, "eps-greedy")]
    assert np.all(summary["n_ok"] == 4)


def test_panel_titles_and_report_rows_write_large_round_numbers_as_powers_of_ten():
    from banditkit.experiments.plots import point_label

    assert point_label({"T": 10**18, "K": 4, "n": 9 * 10**15, "m": 1234567}) == \
        "T=10¹⁸, K=4, n=9·10¹⁵, m=1234567"
