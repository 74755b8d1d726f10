"""docs/replicable-bai.md's cost table comes from the code as it is (issue 35 §4): the quick
version of figure ``replicable-bai:cost`` is rerun and its table compared with the page's, and
the full table's predicted rows are recomputed from the rule."""

import re
from pathlib import Path

from banditkit.experiments.figures.replicable_bai import cost_table, predicted_factor
from banditkit.experiments.numbers import short_number
from banditkit.experiments.runner import run_figure

PAGE = Path(__file__).resolve().parents[1] / "docs" / "replicable-bai.md"


def _block(name: str) -> str:
    match = re.search(rf"<!-- {name} -->\n(.*?)\n<!-- /{name} -->", PAGE.read_text("utf-8"),
                      re.S)
    assert match, f"docs/replicable-bai.md has no {name} block"
    return match.group(1)


def test_the_page_s_quick_cost_table_is_what_the_quick_figure_gives():
    result = run_figure("replicable-bai:cost", quick=True, backend="serial", out=None,
                        progress=False)
    assert cost_table(result) == _block("cost-table-quick")


def test_the_full_table_s_predicted_rows_are_the_rule_s_factor_and_the_measured_follow_it():
    rows = {line.split(" | ")[0].lstrip("| "): line.strip("| ").split(" | ")[1:]
            for line in _block("cost-table-full").splitlines()[2:]}
    rhos = (0.05, 0.1, 0.2, 0.3, 0.5)
    for d in (5, 10):
        predicted = rows[f"d = {d}, (2.5(\\|Z\\| − 1)/ρ_q)²"]
        assert predicted == [short_number(predicted_factor(d, r)) for r in rhos]
        for measured, factor in zip(rows[f"d = {d}, measured"], predicted, strict=True):
            # one phase more than RAGE at most (4x), never fewer samples than the factor
            assert 1.0 <= float(measured) / float(factor) <= 4.0
