"""The papers' reference numbers as data (issue 24 §1): every reference has a complete source
and names a real figure, point and algorithm; every figure of the four papers has one per point
it reports; verdicts and intervals are right at their boundaries."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from banditkit.experiments.figures import figure_names, get_figure
from banditkit.experiments.paper_references import (
    PAPERS,
    all_figure_references,
    all_references,
    figure_references,
)
from banditkit.experiments.reference import (
    SOURCE_KINDS,
    Reference,
    ReferenceError,
    heading_anchors,
    validate_reference,
    validate_references,
)
from banditkit.experiments.reproduce_compare import Ours, judge, ours_for, run_point_of
from banditkit.intervals import wilson_interval

DOCS = Path(__file__).resolve().parents[1] / "docs"
REF = Reference("rage:fig1a", 0, "RAGE", "failure_rate", 0.0, "paper-text", "Section 5")


def test_every_reference_has_a_source_and_names_what_exists():
    refs = all_references()
    assert len(refs) > 300
    assert validate_references(refs, DOCS) == len(refs)
    assert {r.kind for r in refs} <= set(SOURCE_KINDS)
    # the explanations link real headings of the docs pages that keep them
    assert sum(r.explained is not None for r in refs) >= 5


def test_every_figure_of_the_four_papers_has_an_entry_and_a_reference_per_reported_point():
    listed = [f.figure for f in all_figure_references()]
    assert len(listed) == len(set(listed))
    registered = [n for n in figure_names() if n.split(":")[0] in PAPERS]
    assert sorted(listed) == registered  # a new figure must say what it is compared with
    papers_figures = [f for f in all_figure_references() if f.paper_figure is not None]
    assert len(papers_figures) == 13  # RAGE 6, P1-RAGE 6, Replicable Bandits' Figure 1
    for entry in papers_figures:
        points = {r.point for r in entry.references}
        assert points == set(range(len(get_figure(entry.figure).points))), entry.figure
    for entry in all_figure_references():
        assert entry.paper_figure is not None or entry.note, entry.figure
        assert all(r.figure == entry.figure for r in entry.references)


@pytest.mark.parametrize("change, message", [
    ({"kind": "paper"}, "kind must be one of"),
    ({"kind": ""}, "kind must be one of"),
    ({"where": " "}, "where must say"),
    ({"kind": "authors-code", "command": None, "date": "2026-11-26"}, "command is required"),
    ({"kind": "authors-code", "command": "python run.py", "date": "yesterday"}, "ISO date"),
    ({"figure": "rage:fig9"}, "not a registered figure"),
    ({"point": 7}, "index in [0, 7)"),
    ({"algorithm": "TaS-paper"}, "not an algorithm of the figure"),
    ({"versus": "LinGame"}, "versus 'LinGame' is not an algorithm"),
    ({"metric": "regret"}, "metric must be one of"),
    ({"relation": "<"}, "relation must be one of"),
    ({"value": math.nan}, "value must be finite"),
    ({"tolerance": -1.0}, "tolerance finite and >= 0"),
    ({"explained": "rage.md#figures"}, "explained must be"),
    ({"explained": "docs/rage.md#no-such-heading"}, "not a heading of docs/rage.md"),
    ({"explained": "docs/nowhere.md#figures"}, "does not exist"),
    ({"cannot_fail": " "}, "cannot_fail must say why"),
])
def test_a_reference_without_a_complete_source_or_target_is_refused(change, message):
    bad = dataclasses.replace(REF, **change)
    with pytest.raises(ReferenceError, match=re.escape(message)):
        validate_reference(bad, DOCS)


def test_the_registry_is_checked_as_it_is_shipped():
    """A reference dropped of its source in the shipped data fails the suite (the check above
    runs over ``all_references()``; here one shipped reference, altered)."""
    shipped = all_references()[0]
    validate_reference(shipped, DOCS)
    with pytest.raises(ReferenceError):
        validate_reference(dataclasses.replace(shipped, where=""), DOCS)
    rerun = dataclasses.replace(shipped, kind="authors-code", command="python run.py",
                                date="2026-11-26")
    validate_reference(rerun, DOCS)
    assert "authors' code rerun here" in rerun.source and "2026-11-26" in rerun.source


def test_anchors_follow_mkdocs_slugs():
    anchors = heading_anchors("# A/B: `x` (y)\n```\n# not a heading\n```\n## The paper's "
                              "claims on our runs\n")
    assert anchors == {"ab-x-y", "the-papers-claims-on-our-runs"}


@pytest.mark.parametrize("relation, value, tol, lo, hi, verdict", [
    ("=", 0.5, 0.0, 0.4, 0.6, "within noise"),
    ("=", 0.5, 0.0, 0.5, 0.6, "within noise"),      # the boundary is inside
    ("=", 0.5, 0.0, 0.51, 0.6, "differs"),
    ("=", 0.5, 0.02, 0.51, 0.6, "within noise"),    # the reference's own tolerance counts
    ("=", 0.5, 0.0, 0.3, 0.49, "differs"),
    ("<=", 0.3, 0.0, 0.0, 0.9, "within noise"),      # not significantly above the bound
    ("<=", 0.3, 0.0, 0.3, 0.9, "within noise"),
    ("<=", 0.3, 0.0, 0.31, 0.9, "differs"),
    (">=", 100.0, 0.0, 50.0, 100.0, "within noise"),
    (">=", 100.0, 0.0, 50.0, 99.0, "differs"),
    (">=", 100.0, 5.0, 50.0, 96.0, "within noise"),
    ("<=", 0.3, 0.05, 0.34, 0.9, "within noise"),
])
def test_verdict_at_the_boundaries(relation, value, tol, lo, hi, verdict):
    ref = dataclasses.replace(REF, relation=relation, value=value, tolerance=tol)
    ours = Ours((lo + hi) / 2, lo, hi, 20, "Student t")
    expected = verdict if verdict != "differs" else "differs, unexplained"
    assert judge(ref, ours) == expected
    if verdict == "differs":
        linked = dataclasses.replace(ref, explained="docs/rage.md#figures")
        assert judge(linked, ours) == "differs, explained"
    assert judge(ref, None) == "not compared"


def _result(summary_rows, trials_rows=(), pairs=None):
    return type("R", (), {"summary": pd.DataFrame(summary_rows),
                          "trials": pd.DataFrame(list(trials_rows)), "pairs": pairs})()


def test_ours_intervals_are_the_stated_ones():
    x = np.array([10.0, 12, 9, 14, 11])
    y = np.array([20.0, 25, 22, 21, 24])
    t = stats.t.ppf(0.975, 4)
    rows = [{"point": 0, "algorithm": a, "n_ok": 5, "n_pulls_mean": v.mean(),
             "n_pulls_se": v.std(ddof=1) / np.sqrt(5),
             "n_pulls_lo": v.mean() - t * v.std(ddof=1) / np.sqrt(5),
             "n_pulls_hi": v.mean() + t * v.std(ddof=1) / np.sqrt(5)}
            for a, v in (("RAGE", x), ("ALBA", y))]
    # a value: the run's own Student-t interval, as stored
    ref = dataclasses.replace(REF, metric="n_pulls", value=11.0)
    o = ours_for(ref, 0, _result(rows))
    assert (o.value, o.lo, o.hi, o.n) == (rows[0]["n_pulls_mean"], rows[0]["n_pulls_lo"],
                                          rows[0]["n_pulls_hi"], 5)
    # a ratio: the delta method
    ratio = dataclasses.replace(ref, versus="ALBA", by="ratio", value=1.0)
    o = ours_for(ratio, 0, _result(rows))
    r = x.mean() / y.mean()
    se = r * math.hypot(rows[0]["n_pulls_se"] / x.mean(), rows[1]["n_pulls_se"] / y.mean())
    assert o.value == pytest.approx(r) and o.hi - o.value == pytest.approx(1.959964 * se)
    assert o.trials == "5 vs 5"
    # a difference of error rates: Newcombe's interval from the two Wilson intervals
    trials = [{"point": 0, "algorithm": a, "status": "ok", "correct": c}
              for a, k in (("RAGE", 3), ("ALBA", 10)) for c in [False] * k + [True] * (40 - k)]
    frows = [{"point": 0, "algorithm": a, "n_ok": 40, "failure_rate_mean": k / 40}
             for a, k in (("RAGE", 3), ("ALBA", 10))]
    diff = dataclasses.replace(REF, versus="ALBA", relation="<=")
    o = ours_for(diff, 0, _result(frows, trials))
    (l1, u1), (l2, u2) = wilson_interval(3, 40), wilson_interval(10, 40)
    p1, p2 = 3 / 40, 10 / 40
    assert o.value == pytest.approx(p1 - p2)
    assert o.lo == pytest.approx(p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2))
    assert o.hi == pytest.approx(p1 - p2 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))
    assert judge(diff, o) == "within noise"
    # the pairs: Clopper-Pearson from the pairs frame, differing rounds as the min-max range
    pairs = pd.DataFrame([{"point": 0, "algorithm": "RAGE", "pairs": 10, "identical": 10,
                           "non_replication": 0.0, "ci_lo": 0.0, "ci_hi": 0.308,
                           "diff_mean": 20000.0, "diff_min": 19082, "diff_max": 23117}])
    nr = ours_for(dataclasses.replace(REF, metric="non_replication"), 0,
                  _result(rows, pairs=pairs))
    assert (nr.value, nr.lo, nr.hi, nr.trials) == (0.0, 0.0, 0.308, "10 pairs")
    rounds = dataclasses.replace(REF, metric="differing_rounds", value=27105.0,
                                 tolerance=897.0)
    dr = ours_for(rounds, 0, _result(rows, pairs=pairs))
    assert (dr.lo, dr.hi) == (19082, 23117)
    assert judge(rounds, dr) == "differs, unexplained"  # 23117 < 26208


def test_a_spread_spans_every_point_of_the_figure():
    """``failure_rate_spread`` (issue 35 §3, "ranges from near 0 to 1"): the highest error rate
    over every point minus the lowest, Newcombe's interval of those two; with ``versus`` the
    difference of two spreads; not compared when a point is missing (a quick run)."""
    from banditkit.experiments.reproduce_compare import compare_figure

    full = get_figure("p1-rage:fig6")
    rates = {"Peace": [0, 40, 2, 39] + [20] * (len(full.points) - 4),
             "P1-RAGE": [0, 3, 1, 2] + [1] * (len(full.points) - 4)}
    trials = [{"point": j, "algorithm": a, "status": "ok", "correct": c}
              for a, ks in rates.items() for j, k in enumerate(ks)
              for c in [False] * k + [True] * (40 - k)]
    result = _result([{"point": 0, "algorithm": "Peace"}], trials)
    wide = Reference("p1-rage:fig6", 0, "Peace", "failure_rate_spread", 0.8, "paper-text", "x",
                     relation=">=")
    (cmp,) = compare_figure(full, full, [wide], result)
    (lo, hi) = (cmp.ours.lo, cmp.ours.hi)
    assert cmp.ours.value == 1.0 and cmp.verdict == "within noise"  # 40/40 - 0/40
    from banditkit.experiments.results import error_difference
    assert (lo, hi) == pytest.approx(error_difference(40, 40, 0, 40)[1:])
    calm = dataclasses.replace(wide, algorithm="P1-RAGE", value=0.0, relation="<=",
                               versus="Peace")
    (cmp,) = compare_figure(full, full, [calm], result)
    assert cmp.ours.value == pytest.approx(3 / 40 - 1.0) and cmp.verdict == "within noise"
    # the stable one is not unstable: its own spread is far below 0.8
    (cmp,) = compare_figure(full, full, [dataclasses.replace(wide, algorithm="P1-RAGE")],
                            result)
    assert cmp.verdict == "differs, unexplained"
    (cmp,) = compare_figure(full, full.quick_version(), [wide], result)
    assert cmp.verdict == "not compared"
    with pytest.raises(ReferenceError, match="point must be 0"):
        validate_reference(dataclasses.replace(wide, point=1))


def test_a_quick_point_is_the_papers_only_with_the_same_parameters_and_horizon():
    fig1d = get_figure("rage:fig1d")  # fixed confidence: the horizon is only a budget cap
    assert run_point_of(fig1d, fig1d.quick_version(), 0) == 0
    assert run_point_of(fig1d, fig1d.quick_version(), 1) is None
    fig2a = get_figure("p1-rage:fig2a")  # fixed budget: T is the experiment
    quick = fig2a.quick_version()  # T = 110 and 1010: only 1010 is one of the paper's
    assert [run_point_of(fig2a, quick, p) for p in range(len(fig2a.points))] == [
        None, 1, None, None, None, None]
    assert run_point_of(fig2a, fig2a, 3) == 3
    fig4 = get_figure("p1-rage:fig4")  # same parameters but T = 3000, not 10^4
    assert run_point_of(fig4, fig4.quick_version(), 0) is None
    fig1 = get_figure("replicable-bandits:fig1")  # regret at another horizon is not the paper's
    assert run_point_of(fig1, fig1.quick_version(), 0) is None
    ucb = get_figure("replicable-bandits:ucb-baseline")  # same point, only the horizon differs
    assert ucb.quick_version().points == ucb.points
    assert run_point_of(ucb, ucb.quick_version(), 0) is None


def test_figure_references_lookup():
    assert figure_references("replicable-bandits:fig1").paper_figure.startswith("Figure 1")
    with pytest.raises(ValueError):
        figure_references("replicable-bai:cost")


def test_one_number_rule_for_every_report_table():
    """The run reports, the reproduction report and the reference values share one rule."""
    from banditkit.experiments.numbers import short_number
    from banditkit.experiments.report import _fmt as run_report_number

    cases = {0.0: "0", 12.0: "12", 3.14159: "3.142", 0.0004321: "0.000432",
             123456.0: "1.23e+05", -2.5: "-2.5", float("nan"): "–",
             float("inf"): "inf", float("-inf"): "-inf"}
    for x, text in cases.items():
        assert short_number(x) == text, x
    # a run report has no one-sided interval: an infinite value shows as no number
    assert run_report_number(float("inf")) == "–" and run_report_number(3.14159) == "3.142"


def test_the_authors_interval_has_width_at_zero_errors_and_widens_with_their_dispersion():
    """Their 0 of 1000 is not a rate of exactly 0 (our 1 of 1000 agrees with it: Fisher's exact
    p = 1), their 552 of 1000 keeps the normal half-width, and a dispersion D > 1 widens it by
    sqrt(D) (P1-RAGE authors' stored results, docs/p1-rage.md)."""
    from banditkit.experiments.paper_references.p1_rage import _authors

    zero, mid, dispersed = _authors(
        "p1-rage:fig6", [0, 1, 2],
        {"Peace": ((0, 1000, 1.0), (552, 1000, 0.5), (552, 1000, 4.0))},
        lambda a, i: "file", set())
    assert zero.value == 0.0 and 0.002 < zero.tolerance < 0.004
    k, n = 1, 1000
    lo, hi = wilson_interval(k, n)
    assert judge(zero, Ours(k / n, lo, hi, n, "Wilson")) == "within noise"
    assert mid.value == 0.552
    assert mid.tolerance == pytest.approx(1.96 * math.sqrt(0.552 * 0.448 / 1000), rel=0.01)
    assert dispersed.tolerance == pytest.approx(2 * mid.tolerance)
