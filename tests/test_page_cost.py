"""The experiment page is drawn from running totals (issue 26 §3): its cost does not grow with
the units (it read all of them: 0.7–0.9 s at 30,000), and it shows the status' numbers.

The database work is measured exactly, as SQLite virtual-machine steps (a progress handler on
the experiment's own connection, counted while the page is rendered): deterministic on any
machine, unlike a time on a shared one. The render time is printed beside it."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.service.page import render_page
from live_support import vm_steps

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 11,
              "horizon": 1_000_000, "params": {"rho": 0.3, "beta": 3}}


def _grown(path, units: int) -> Experiment:
    """An experiment with at least ``units`` units: assign and record in calls of 1,000
    (0/1 rewards from a seeded stream; the overflow beyond the batch's slots included)."""
    exp = Experiment.create(path, **DEFINITION)
    rng = np.random.default_rng(5)
    total = 0
    while total < units:
        got = exp.assign(1_000)
        exp.record(got["unit"].tolist(), (rng.random(len(got)) < 0.3).astype(float).tolist())
        total += len(got)
    return exp


def _cost(exp: Experiment) -> tuple[int, float, str]:
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn = exp._journal.conn
    conn.set_progress_handler(count, 100)
    try:
        start = time.perf_counter()
        page = render_page(exp, title="cost")
        seconds = time.perf_counter() - start
    finally:
        conn.set_progress_handler(None, 100)
    return steps[0] * 100, seconds, page


def _arm_rows(page: str) -> dict[str, list[str]]:
    table = page[page.index("<table id='arms'>"):]
    table = table[:table.index("</table>")]
    head = re.findall(r"<th>(.*?)</th>", table)
    rows = {}
    for row in re.findall(r"<tr>(<td>.*?)</tr>", table):
        cells = re.findall(r"<td>(.*?)</td>", row)
        rows[cells[0]] = dict(zip(head, cells, strict=True))
    return rows


def test_the_page_costs_the_same_at_1000_and_30000_units_and_shows_the_status(tmp_path,
                                                                               capsys):
    small, large = _grown(tmp_path / "s.sqlite", 1_000), _grown(tmp_path / "l.sqlite", 30_000)
    try:
        assert len(large.units()) >= 30 * len(small.units()) * 0.9
        render_page(small, title="warm")  # matplotlib's first figure: imports, fonts
        (s_steps, s_time, _), (l_steps, l_time, page) = _cost(small), _cost(large)
        with capsys.disabled():
            print(f"\npage at {len(small.units()):,} units: {s_steps:,} SQLite steps, "
                  f"{s_time:.2f} s; at {len(large.units()):,}: {l_steps:,} steps, "
                  f"{l_time:.2f} s")
        # the database work does not follow the units (30x more): reading them all would
        assert l_steps < 4 * s_steps + 5_000
        status, history = large.status(), large.history(40)
    finally:
        small.close()
        large.close()
    # the numbers shown: the status' table, and curves that end where the status is
    rows = _arm_rows(page)
    for arm, values in status.arms.iterrows():
        assert rows[arm]["assigned"] == str(int(values["assigned"]))
        assert rows[arm]["recorded"] == str(int(values["recorded"]))
        assert rows[arm]["mean"] == f"{values['mean']:.4g}"
    assert history.assigned.sum(axis=0).tolist() == status.arms["assigned"].tolist()
    assert history.recorded.sum(axis=0).tolist() == status.arms["recorded"].tolist()
    assert len(history.asked_at) <= 40


def test_history_groups_batches_and_refuses_a_bad_points(tmp_path):
    with _grown(tmp_path / "h.sqlite", 3_000) as exp:
        full, two = exp.history(1_000), exp.history(2)
        assert full.first_batch.tolist() == list(range(len(full.first_batch)))
        assert two.first_batch[0] == 0 and two.last_batch[-1] == full.last_batch[-1]
        assert two.first_batch[1] == two.last_batch[0] + 1
        np.testing.assert_array_equal(two.assigned.sum(axis=0), full.assigned.sum(axis=0))
        np.testing.assert_array_equal(two.reward.sum(axis=0), full.reward.sum(axis=0))
        for bad in (0, -1, 1.5, True, "40"):
            with pytest.raises(Exception, match="points must be an integer >= 1"):
                exp.history(bad)


def _record_steps(tmp_path, n: int) -> int:
    """SQLite steps of one ``record`` of ``n`` units just assigned (ReplicableElimination)."""
    exp = Experiment.create(tmp_path / f"r{n}.sqlite", algorithm="ReplicableElimination",
                            arms=["a", "b", "c"], seed=7, horizon=30_000, params={"rho": 0.2})
    got = exp.assign(n)
    try:
        return 100 * vm_steps(exp, lambda: exp.record(got["unit"].tolist(), [1.0] * len(got)))
    finally:
        exp.close()


def test_a_record_costs_in_proportion_to_its_units(tmp_path):
    """The resolved prefix's set-based advance (one statement for all arms) must stay linear
    in the units it passes over: SQLite re-evaluated its correlated spans per joined unit
    (10,000 units: 9 s) until the spans were materialised."""
    small, large = _record_steps(tmp_path, 1_000), _record_steps(tmp_path, 10_000)
    assert large < 20 * small, (small, large)


def _record_one_steps(tmp_path, n: int, which: int) -> int:
    """SQLite steps of a ``record`` of one unit (index ``which``) among ``n`` just assigned
    and all still waiting."""
    exp = Experiment.create(tmp_path / f"one{n}-{which}.sqlite",
                            algorithm="ReplicableElimination", arms=["a", "b", "c"], seed=7,
                            horizon=30_000, params={"rho": 0.2})
    got = exp.assign(n)
    try:
        return 100 * vm_steps(exp, lambda: exp.record([int(got["unit"].iloc[which])], [1.0]))
    finally:
        exp.close()


def test_a_record_of_one_unit_does_not_read_the_units_still_waiting(tmp_path):
    """The one cursor G moves from its stored value to the next unit still waiting through
    the primary key (issue 23): recording the first unit (G moves by one) or the last (G
    stays) among 10,000 waiting units costs about what it costs among 1,000."""
    for which in (0, -1):
        small = _record_one_steps(tmp_path, 1_000, which)
        large = _record_one_steps(tmp_path, 10_000, which)
        assert large < 2 * small + 2_000, (which, small, large)
