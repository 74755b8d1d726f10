"""Figures and reports say what was run (issue 17, §4): titles, labels and notes filled from
the spec actually run, no panel without data, log-axis intervals inside the plot, paper values
only where measured, per-trial outcomes summarised as outcomes."""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from banditkit.experiments import plots
from banditkit.experiments.describe import fill, format_number, run_line, values_text
from banditkit.experiments.figures import all_figures, get_figure
from banditkit.experiments.records import TrialRecord
from banditkit.experiments.report import _paper_table, _summary_table
from banditkit.experiments.results import summarise, trials_frame
from banditkit.experiments.runner import run_config

FIGURES = all_figures()


def _config(spec, quick):
    spec = spec.quick_version() if quick else spec
    return spec, run_config(spec, quick=quick, seed=0, fingerprint="0" * 64)


def _forms(v):
    """How a value may be written in a title: digits, a·10ᵏ, %g, 1e4-style."""
    out = {str(v), format_number(v)}
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        out |= {f"{v:g}", f"{float(v):.0e}".replace("e+0", "e").replace("e+", "e"),
                f"{int(v):,}" if float(v).is_integer() else str(v)}
    return {f for f in out if len(f) >= 2}  # one digit would match anything


_DIGITS = "0-9⁰¹²³⁴⁵⁶⁷⁸⁹·."


def _quotes(text, form):
    """Whether ``text`` names the number ``form`` as a whole number (not inside 110 or 10⁵)."""
    return re.search(rf"(?<![{_DIGITS}\w]){re.escape(form)}(?![{_DIGITS}\w])", text) is not None


def _values(spec, key):
    vals = set()
    for p in spec.points:
        merged = {**dict(p.get("algorithm_params", {})), **p}
        if key in merged and isinstance(merged[key], (int, float)):
            vals.add(merged[key])
    return vals


# --- placeholders ---------------------------------------------------------------------------

def test_fill_replaces_run_quantities_and_point_parameters_and_keeps_other_braces():
    points = [{"s": 0, "L": 900, "algorithm_params": {"T": 2000}},
              {"s": 4, "L": 900, "algorithm_params": {"T": 2000}}]
    text = fill("T = {T}, s = {s}, L = {L}, {trials} trials, {pairs} pairs, horizon {horizon}, "
                "I ~ U{0, 1}, X = {e_1..e_d}", trials=6, points=points, horizons=[2000, 2000])
    assert text == ("T = 2000, s = 0, 4, L = 900, 6 trials, 3 pairs, horizon 2000, "
                    "I ~ U{0, 1}, X = {e_1..e_d}")
    with pytest.raises(ValueError, match=r"\{Tx\}"):
        fill("T = {Tx}", trials=1, points=points, horizons=[1])


def test_numbers_and_ranges_are_written_as_in_titles():
    assert format_number(10_000) == "10⁴" and format_number(500_000_000) == "5·10⁸"
    assert format_number(21_000) == "21000" and format_number(2100) == "2100"
    assert format_number(0.05) == "0.05"
    assert values_text([300, 600, 900, 1200, 3000]) == "300–3000"
    assert values_text([0.2, 0.05, 0.1]) == "0.05, 0.1, 0.2"


@pytest.mark.parametrize("spec", FIGURES, ids=[s.name for s in FIGURES])
def test_every_figure_fills_its_text_in_both_modes(spec):
    for quick in (False, True):
        _, config = _config(spec, quick)
        for text in (config["title"], config["notes"], config["plot"]["xlabel"] or "",
                     config["plot"]["ylabel"] or ""):
            assert "{T}" not in text and "{trials}" not in text and "{horizon}" not in text


@pytest.mark.parametrize("spec", FIGURES, ids=[s.name for s in FIGURES])
def test_a_quick_title_quotes_its_own_run_not_the_full_one(spec):
    """The quick run's title and run line never name a horizon, budget or size of the full
    run that the quick run does not have (p1-rage:fig3 said T = 10⁴ and ran 2000)."""
    quick, config = _config(spec, True)
    shown = config["title"] + "\n" + run_line(config) + "\n" + (config["plot"]["ylabel"] or "")
    assert f"{quick.trials} trials" in run_line(config)
    assert "quick run" in run_line(config)
    for key in ("T", "n", "K", "d", "D"):
        full_only = _values(spec, key) - _values(quick, key)
        for v in full_only:
            for form in _forms(v):
                assert not _quotes(shown, form), (key, form)
    horizons = {h for h in config["horizons"] if h is not None}
    full_horizons = {spec.horizon_at(p) for p in spec.points} - horizons - {None}
    for h in full_horizons:
        assert not _quotes(run_line(config), format_number(h))


def test_the_quick_runs_the_issue_names_quote_their_own_configuration():
    _, c = _config(get_figure("p1-rage:fig3"), True)
    assert "T = 2000" in c["title"] and "10⁴" not in c["title"]
    _, c = _config(get_figure("p1-rage:fig2b"), True)
    assert "T = 2100" in c["title"] and "21000" not in c["title"]
    _, c = _config(get_figure("rage:fig2b"), True)
    assert "10 arms" in c["title"] and "40 arms" not in c["title"]
    _, c = _config(get_figure("rage:fig1a"), True)
    assert "2 trials" in c["notes"] and "20 trials" not in c["notes"]
    assert "Horizon 5·10⁷" in c["notes"] and "5e8" not in c["notes"] and "5·10⁸" not in c["notes"]
    _, c = _config(get_figure("replicable-bandits:fig1"), True)
    assert c["title"].startswith("Cumulative regret, T = 5000")
    assert "This run: T = 5000, 4 executions of each algorithm (2 pairs)" in c["notes"]
    # its legend names match the title's UCB1 (c = 2) and UCB1 (c = 4.5)
    assert {"UCB1 (c = 2)", "UCB1 (c = 4.5)"} <= set(c["algorithms"])
    _, c = _config(get_figure("rage:fig1a"), False)
    assert "20 trials" in c["notes"] and "Horizon 5·10⁸" in c["notes"]


# --- paper values ---------------------------------------------------------------------------

def test_quick_paper_values_follow_their_points_and_the_report_lists_only_measured_ones():
    full = get_figure("rage:fig1a")
    quick = full.quick_version()
    # quick points are d = 5, 10 at ω = 0.3, not the paper's instances: every value dropped
    assert quick.paper_values == () and quick.paper_values_not_run == len(full.paper_values)
    d = get_figure("rage:fig1d").quick_version()  # its quick point d = 20 is the paper's
    assert {v.point for v in d.paper_values} == {0} and len(d.paper_values) == 3
    assert d.paper_values_not_run == 9
    config = {"paper_values": [{"algorithm": "RAGE", "point": 0, "metric": "failure_rate",
                                "value": 0.0, "source": "s"},
                               {"algorithm": "RAGE", "point": 1, "metric": "failure_rate",
                                "value": 0.0, "source": "s"}],
              "paper_values_not_run": 9, "quick": True}
    summary = pd.DataFrame({"point": [0], "algorithm": ["RAGE"], "failure_rate_mean": [0.0],
                            "failure_rate_lo": [0.0], "failure_rate_hi": [0.8]})
    lines = _paper_table(config, summary)
    assert sum(line.startswith("| RAGE") for line in lines) == 1
    assert not any("not measured" in line for line in lines)
    assert "9 of the paper's numbers belong to sweep points this quick run" in lines[-1]
    assert "1 have no finished successful trial" in lines[-1]


# --- plots ----------------------------------------------------------------------------------

def _result(summary, config, curves=None, pairs=None):
    return SimpleNamespace(summary=summary, config=config, pairs=pairs,
                           curves=curves if curves is not None else pd.DataFrame())


def _error_config(panels):
    return {"figure": "x:y", "title": "t", "trials": 20, "quick": True, "points": [{}, {}],
            "horizons": [2000, 2000], "algorithms": ["A", "B"],
            "plot": {"kind": "error", "x": "s", "xlabel": "s", "xscale": "linear",
                     "panels": panels, "facts": ["min_gap"]}}


def _visible(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def test_an_error_figure_draws_no_panel_for_a_series_the_run_does_not_have():
    rows = [{"point": p, "s": s, "L": 900, "algorithm": a, "min_gap": 0.04,
             "failure_rate_mean": 0.1, "failure_rate_lo": 0.02, "failure_rate_hi": 0.3}
            for p, s in enumerate((0, 4)) for a in ("A", "B")]
    result = _result(pd.DataFrame(rows), _error_config([["s", {"L": 900}], ["L", {"s": 2}]]))
    fig = plots._error_figure(plt, result, result.config["plot"])
    try:
        assert len(_visible(fig)) == 2  # one error panel and its Δ(1) panel
        assert "not drawn (no point in this run): L series (s=2)" in fig._suptitle.get_text()
        assert "quick run, 20 trials" in fig._suptitle.get_text()
    finally:
        plt.close(fig)


def test_error_bars_stay_inside_a_log_error_axis():
    rows = [{"point": p, "s": s, "algorithm": a, "min_gap": 0.04, "failure_rate_mean": m,
             "failure_rate_lo": lo, "failure_rate_hi": hi}
            for p, s in enumerate((0, 4)) for a, m, lo, hi in
            (("A", 0.025, 0.0044, 0.13), ("B", 0.0, 0.0, 0.16))]
    result = _result(pd.DataFrame(rows), _error_config([]))
    fig = plots._error_figure(plt, result, result.config["plot"])
    try:
        ax = _visible(fig)[0]
        bottom, top = ax.get_ylim()
        for coll in ax.collections:  # the error bars
            for seg in coll.get_segments():
                assert bottom <= seg[:, 1].min() and seg[:, 1].max() <= top
        assert bottom <= 0.0044  # the Wilson lower end is drawn, not cut by the frame
    finally:
        plt.close(fig)


def _sweep_result(lo):
    rows = [{"point": p, "d": d, "algorithm": "A", "n_ok": 2, "n_failed": 0,
             "n_pulls_mean": 1000.0 * (p + 1), "n_pulls_se": 1.0, "n_pulls_lo": lo,
             "n_pulls_hi": 5000.0 * (p + 1)} for p, d in enumerate((5, 10))]
    config = {"figure": "x:y", "title": "t", "trials": 2, "quick": True, "points": [{}, {}],
              "horizons": [10**7, 10**7], "algorithms": ["A"],
              "plot": {"kind": "sweep", "metric": "n_pulls", "x": "d", "xlabel": "d",
                       "xscale": "linear", "yscale": "log", "ylabel": None}}
    return _result(pd.DataFrame(rows), config)


def test_log_axis_intervals_reaching_zero_are_cut_at_the_axis_and_said_so():
    result = _sweep_result(lo=-3000.0)  # 2 trials: a Student-t interval below 0
    fig = plots._sweep_figure(plt, result, result.config["plot"])
    try:
        ax = _visible(fig)[0]
        bottom, top = ax.get_ylim()
        assert bottom > 0
        for coll in ax.collections:
            for seg in coll.get_segments():
                assert seg[:, 1].min() >= bottom * (1 - 1e-9) and seg[:, 1].max() <= top
        assert "2 interval(s) reach 0 or below: cut" in ax.get_title()
    finally:
        plt.close(fig)
    result = _sweep_result(lo=500.0)
    fig = plots._sweep_figure(plt, result, result.config["plot"])
    try:
        assert "cut" not in _visible(fig)[0].get_title()
    finally:
        plt.close(fig)


def _curves(values):
    rows = []
    for algorithm, v in values.items():
        for trial in range(2):
            for t in (10, 100, 1000):
                rows.append({"point": 0, "algorithm": algorithm, "trial": trial, "t": t,
                             "regret": v(t, trial), "violation": np.nan})
    return pd.DataFrame(rows)


def _curve_config(algorithms, families=(), yscale="log"):
    return {"figure": "x:y", "title": "t", "trials": 2, "quick": True, "points": [{}],
            "horizons": [1000], "algorithms": algorithms,
            "plot": {"kind": "curve", "metric": "regret", "xscale": "log", "yscale": yscale,
                     "metrics": [], "families": families, "summaries": []}}


def test_identical_curves_are_drawn_once_with_all_their_names_and_families_split_panels():
    curves = _curves({"A": lambda t, i: t * 0.5 + i, "B": lambda t, i: t * 0.5 + i,
                      "C": lambda t, i: t ** 0.5 + i, "U": lambda t, i: t ** 0.7})
    config = _curve_config(["U", "A", "B", "C"],
                           families=[["one", ["U", "A", "B"]], ["two", ["U", "C"]]])
    fig = plots._curve_figure(plt, _result(pd.DataFrame(), config, curves),
                              config["plot"])
    try:
        axes = _visible(fig)
        assert [ax.get_title() for ax in axes] == ["one", "two"]
        labels = [[ln.get_label() for ln in ax.get_lines()] for ax in axes]
        assert labels == [["U", "A ≡ B (identical curves)"], ["U", "C"]]
    finally:
        plt.close(fig)


def test_a_curve_panel_without_data_is_not_drawn():
    curves = _curves({"A": lambda t, i: 0.0, "B": lambda t, i: 0.0, "C": lambda t, i: t + i})
    config = _curve_config(["A", "B", "C"], families=[["zero", ["A", "B"]], ["grows", ["C"]]])
    fig = plots._curve_figure(plt, _result(pd.DataFrame(), config, curves), config["plot"])
    try:
        axes = _visible(fig)
        assert [ax.get_title() for ax in axes] == ["grows"]  # all-zero on a log axis: no panel
        assert "not drawn (no data): cumulative regret; zero" in fig._suptitle.get_text()
    finally:
        plt.close(fig)


# --- trial facts ----------------------------------------------------------------------------

def _record(point, algorithm, trial, unsafe):
    return TrialRecord(point=point, algorithm=algorithm, trial=trial, status="ok",
                       n_pulls=100, final_regret=1.0,
                       info={"facts": {"unsafe_rounds": float(unsafe),
                                       "any_unsafe": float(unsafe > 0)},
                             "instance": {"min_gap": 0.1}})


def test_trial_facts_are_summarised_as_outcomes_not_listed_as_parameters():
    records = [_record(0, "A", i, u) for i, u in enumerate((0, 0, 0, 0))]
    records += [_record(0, "B", i, u) for i, u in enumerate((0, 5, 0, 3))]
    trials = trials_frame("x:y", records, [{"lambda_min": 0.1}], ["A", "B"])
    summary = summarise(trials)
    a = summary.set_index("algorithm").loc["A"]
    b = summary.set_index("algorithm").loc["B"]
    # a count that is 0 in every trial is a count: a zero-width interval, not Wilson's
    assert a["unsafe_rounds_mean"] == 0 and a["unsafe_rounds_hi"] == 0
    assert b["unsafe_rounds_mean"] == 2 and b["unsafe_rounds_lo"] == 0  # clipped at 0
    assert b["any_unsafe_mean"] == 0.5 and 0 < b["any_unsafe_lo"] < 0.5 < b["any_unsafe_hi"] < 1
    assert a["any_unsafe_hi"] > 0  # Wilson: 0 of 4 does not prove 0
    assert "min_gap" in summary and "min_gap_mean" not in summary  # instance fact: a parameter
    header = _summary_table(summary)[0]
    params = header.split("| algorithm |")[0]
    assert "unsafe_rounds" not in params and "lambda_min" in params
    assert "unsafe_rounds" in header.split("| algorithm |")[1]


def test_the_hard_figure_draws_unsafe_rounds_and_non_replication_under_its_regret():
    spec = get_figure("replicable-constrained:hard")
    assert spec.plot.summaries == ("unsafe_rounds", "non_replication")
    assert spec.plot.summary_x == "lambda_min" and spec.trial_facts is not None
    assert spec.algorithms[1].name == "Optimistic + Eq. (4) mixing (non-replicable)"
    assert "Pacchiano" not in spec.title


def test_the_old_baseline_name_builds_the_renamed_policy_with_a_warning():
    from banditkit.envs.instances import make_instance
    from banditkit.policies.constrained.baselines import OptimisticMixingConstrained
    from banditkit.registry import make_policy
    from banditkit.simulate import simulate

    env = make_instance("constrained-hard", lambda_min=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = make_policy("OptimisticMixingConstrained", env, np.random.default_rng(3),
                          horizon=3000)
    with pytest.warns(DeprecationWarning, match="OptimisticMixingConstrained"):
        old = make_policy("SafeOptimisticConstrained", env, np.random.default_rng(3),
                          horizon=3000)
    assert type(old) is OptimisticMixingConstrained and type(new) is OptimisticMixingConstrained
    a = simulate(new, env, horizon=3000, seed=5)
    b = simulate(old, env, horizon=3000, seed=5)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert new.sigmas == old.sigmas


def test_a_log_curve_band_reaching_zero_is_cut_at_the_axis_and_said_so():
    # two trials far apart: the Student-t band of their mean reaches below 0
    curves = _curves({"A": lambda t, i: t * (1 + 20 * i), "B": lambda t, i: t + i})
    config = _curve_config(["A", "B"])
    fig = plots._curve_figure(plt, _result(pd.DataFrame(), config, curves), config["plot"])
    try:
        [ax] = _visible(fig)
        bottom = ax.get_ylim()[0]
        assert bottom > 0
        lows = [path.vertices[:, 1].min() for coll in ax.collections  # the bands
                for path in coll.get_paths()]
        assert min(lows) >= bottom * (1 - 1e-9)
        # A's band reaches 0: drawn down to the axis bottom, not shrunk to look tight
        assert np.isclose(min(lows), bottom)
        assert "bands reaching 0 are cut at the log axis' bottom" in fig._suptitle.get_text()
    finally:
        plt.close(fig)
