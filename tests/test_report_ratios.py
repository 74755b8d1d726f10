"""The report's ratio table (e.g. RAGE / XY-oracle): ratio of the mean plotted metric."""

from __future__ import annotations

from dataclasses import replace

import test_runner_support as support
from banditkit.experiments.report import render_report
from banditkit.experiments.runner import run_figure
from banditkit.experiments.store import spec_fingerprint


def test_ratio_table_divides_the_mean_metrics_of_the_named_algorithms(tmp_path):
    names = [a.name for a in support.SMALL.algorithms]
    spec = replace(support.SMALL, ratios=((names[0], names[-1]),))
    result = run_figure(spec, backend="serial", out=tmp_path, progress=False)
    text = render_report(result, tmp_path)
    assert "## Ratios" in text
    s = result.summary.set_index(["point", "algorithm"])["final_regret_mean"]
    for point in range(len(spec.points)):
        expected = s[(point, names[0])] / s[(point, names[-1])]
        assert f"{expected:.4g}" in text


def test_ratios_are_presentation_only():
    spec = replace(support.SMALL, ratios=(("a", "b"),))
    assert spec_fingerprint(spec) == spec_fingerprint(support.SMALL)
