"""The replicable-bandits figures (Appendix H of Esfandiari et al., ICLR 2023): what fig1 runs,
what the --json summary says about replicability, and that the plots show every curve."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pytest

from banditkit.cli import main
from banditkit.experiments import plots
from banditkit.experiments.figures.replicable_bandits import FIG1, UCB_CONSTANTS
from banditkit.experiments.replicability import clopper_pearson
from banditkit.experiments.runner import load_run
from banditkit.policies.commit import COMMIT_RULES

matplotlib.use("Agg")


def _run_json(figure: str, out, capsys) -> dict:
    assert main(["run", figure, "--quick", "--backend", "serial", "--json", "--no-progress",
                 "--out", str(out)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def fig1_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig1") / "run"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["run", "replicable-bandits:fig1", "--quick", "--backend", "serial",
                     "--json", "--no-progress", "--out", str(out)]) == 0
    return out, json.loads(buf.getvalue())


def test_fig1_runs_every_commit_rule_of_algorithms_1_and_2_and_two_ucb_constants():
    names = [a.name for a in FIG1.algorithms]
    params = {a.name: dict(a.params) for a in FIG1.algorithms}
    for family, extra in (("Alg. 2", {}), ("Alg. 2", {"beta_floor": False}), ("Alg. 1", {})):
        rules = [p["commit"] for n, p in params.items()
                 if (n.startswith(family) or n.endswith(f"({family})"))
                 and p.get("beta_floor", True) == extra.get("beta_floor", True)]
        assert sorted(rules) == sorted(COMMIT_RULES), family
    ucb = sorted(p["exploration"] for p in params.values() if "exploration" in p)
    assert ucb == sorted(UCB_CONSTANTS) and 2.0 in ucb
    # every algorithm's ratio to UCB1 with Auer's c = 2 is reported
    assert {den for _, den in FIG1.ratios} == {"UCB1 (c = 2)"}
    assert params["UCB1 (c = 2)"]["exploration"] == 2.0
    assert {num for num, _ in FIG1.ratios} == set(names) - {"UCB1 (c = 2)"}
    assert FIG1.paired and FIG1.trials == 20  # 10 pairs, as the paper


def test_fig1_json_gives_identical_pairs_with_an_interval_per_algorithm(fig1_run):
    _, doc = fig1_run
    pairs = {row["algorithm"]: row for row in doc["pairs"]}
    assert set(pairs) == {a.name for a in FIG1.algorithms}
    for row in pairs.values():
        assert row["pairs"] == 2 and 0 <= row["ci_lo"] <= row["non_replication"] <= row["ci_hi"]
    assert pairs["UCB1 (c = 2)"]["identical"] == 0  # UCB1 never replicates 5000 rounds
    assert pairs["ReplicableElimination (Alg. 2)"]["identical"] == 2
    assert pairs["ReplicableElimination (Alg. 2)"]["rho"] == 0.3


def test_rho_sweep_json_and_plot_show_measured_non_replication(tmp_path, capsys):
    doc = _run_json("replicable-bandits:rho-sweep", tmp_path / "run", capsys)
    assert len(doc["pairs"]) == len(doc["summary"])  # one replicability row per cell
    result = load_run(tmp_path / "run")
    # a few pairs of the quick run rarely differ: give each cell its own count of differing
    # pairs (of 4), so the panel's points and intervals can be told apart
    pairs = result.pairs.copy()
    differ = np.arange(len(pairs)) % 5
    pairs["non_replication"] = differ / 4
    cp = [clopper_pearson(int(k), 4) for k in differ]
    pairs["ci_lo"], pairs["ci_hi"] = [c[0] for c in cp], [c[1] for c in cp]
    result.pairs = pairs
    plt = matplotlib.pyplot
    fig = plots._sweep_figure(plt, result, result.config["plot"])
    try:
        regret_ax, rep_ax = fig.axes
        # the right panel plots the measured rates, one series per (algorithm, K), with their
        # Clopper–Pearson intervals as error bars
        drawn = sorted((float(y), float(seg[0][1]), float(seg[1][1]))
                       for c in rep_ax.containers
                       for y, seg in zip(c.lines[0].get_ydata(), c.lines[2][0].get_segments(),
                                         strict=True))
        expected = sorted(zip(pairs["non_replication"], pairs["ci_lo"], pairs["ci_hi"],
                              strict=True))
        np.testing.assert_allclose(drawn, expected)
        assert "non-replication" in rep_ax.get_ylabel()
        # colour per K, line style per algorithm
        series = [(c.get_label(), c.lines[0]) for c in regret_ax.containers]
        by_k: dict[str, set] = {}
        by_alg: dict[str, set] = {}
        for label, line in series:
            alg, k = label.rsplit(" (K=", 1)
            by_k.setdefault(k, set()).add(matplotlib.colors.to_hex(line.get_color()))
            by_alg.setdefault(alg, set()).add(str(line.get_linestyle()))
        assert len(series) == 4 and all(len(c) == 1 for c in by_k.values())
        assert len({next(iter(c)) for c in by_k.values()}) == len(by_k)
        assert all(len(s) == 1 for s in by_alg.values())
        assert len({next(iter(s)) for s in by_alg.values()}) == len(by_alg)
        # the legend is outside the axes, and the ticks are the swept rho values only
        assert regret_ax.get_legend() is None and rep_ax.get_legend() is None and fig.legends
        fig.canvas.draw()
        legend_box = fig.legends[0].get_window_extent()
        assert legend_box.x0 >= rep_ax.get_window_extent().x1
        labels = [t.get_text() for t in regret_ax.get_xticklabels(minor=False)]
        assert labels == ["0.1", "0.3"]
        assert not any(t.get_text() for t in regret_ax.get_xticklabels(minor=True))
    finally:
        plt.close(fig)


def test_fig1_plot_gives_every_algorithm_its_own_style(fig1_run):
    """Fig. 1's 15 curves in panels by family (the UCB1 reference in each), every algorithm
    named in a legend entry, curves that coincide drawn once with all their names, and no
    two lines of a panel alike."""
    out, _ = fig1_run
    result = load_run(out)
    plt = matplotlib.pyplot
    fig = plots._curve_figure(plt, result, result.config["plot"])
    try:
        axes = [a for a in fig.axes if a.get_visible()]
        assert len(axes) == len(FIG1.plot.families) == 4
        named = set()
        for ax in axes:
            lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
            assert len(lines) <= 6  # a panel a referee can read
            styles = {(matplotlib.colors.to_hex(ln.get_color()), str(ln.get_linestyle()),
                       ln.get_marker()) for ln in lines}
            assert len(styles) == len(lines)
            for ln in lines:
                named |= set(ln.get_label().removesuffix(" (identical curves)").split(" ≡ "))
        assert named == {a.name for a in FIG1.algorithms}
        # Alg. 2's lowest-index (the paper's) and argmax rules play the same arm at this quick
        # horizon: one line, both names
        labels = [ln.get_label() for ax in axes for ln in ax.get_lines()]
        merged = next(lb for lb in labels if lb.startswith("ReplicableElimination (Alg. 2) ≡ "))
        assert merged.endswith("(identical curves)") and "Alg. 2, argmax" in merged
        assert all(ax.get_legend() is None for ax in axes) and fig.legends
    finally:
        plt.close(fig)
