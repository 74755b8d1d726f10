"""Issue 37 §2: planned looks — a group-sequential test with α-spending (planned_looks.py):
its critical values spend what they should, its repeated intervals cover at the planned looks
under adaptive allocation, are narrower there than the anytime-valid sequence, and a look
beyond the plan is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.problem import LiveArms
from banditkit.live.readout.planned_looks import GroupSequential
from banditkit.live.readout.sequences import asymptotic_difference
from banditkit.registry import make_policy
from banditkit.rng import stream


def test_pocock_spending_matches_the_published_bounds():
    # Lan-DeMets Pocock-type spending, 5 equally spaced looks, two-sided alpha 0.05 (gsDesign's
    # sfLDPocock: 2.4380 2.4268 2.4101 2.3966 2.3859)
    got = GroupSequential.plan(5, spending="pocock").bounds
    assert got == pytest.approx([2.4380, 2.4268, 2.4101, 2.3966, 2.3859], abs=3e-4)
    # one look is the fixed-n z-test
    assert GroupSequential.plan(1).bounds[0] == pytest.approx(1.959964, abs=1e-4)


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
def test_the_bounds_spend_alpha_as_planned_on_brownian_paths(spending):
    design = GroupSequential.plan(4, spending=spending, fractions=(0.2, 0.5, 0.8, 1.0))
    rng = np.random.default_rng(37)
    t = np.array(design.fractions)
    steps = rng.normal(0, np.sqrt(np.diff(t, prepend=0.0)), size=(200_000, 4))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    crossed = np.abs(z) >= np.array(design.bounds)
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
    cumulative = np.array([(first >= 0) & (first <= k) for k in range(4)]).mean(axis=1)
    if spending == "pocock":
        want = 0.05 * np.log1p((math.e - 1) * t)
    else:
        from statistics import NormalDist

        N = NormalDist()
        want = np.array([2 - 2 * N.cdf(N.inv_cdf(0.975) / math.sqrt(s)) for s in t])
    se = np.sqrt(want * (1 - want) / 200_000)
    assert np.all(np.abs(cumulative - want) < 4 * se + 1e-4)


def test_a_look_beyond_the_plan_and_bad_plans_are_refused():
    design = GroupSequential.plan(3)
    for look in (1, 2, 3):  # diff ± c_look·se
        low, high = design.interval(0.01, 0.005, look)
        c = design.bounds[look - 1]
        assert (low, high) == pytest.approx((0.01 - c * 0.005, 0.01 + c * 0.005))
    with pytest.raises(ExperimentError, match="look 4 is beyond the plan of 3 looks"):
        design.interval(0.01, 0.005, 4)
    with pytest.raises(ExperimentError, match="look must be a positive integer"):
        design.interval(0.01, 0.005, 0)
    with pytest.raises(ExperimentError, match="looks must be an integer from 1 to 50"):
        GroupSequential.plan(0)
    with pytest.raises(ExperimentError, match="spending must be one of"):
        GroupSequential.plan(3, spending="haybittle")
    with pytest.raises(ExperimentError, match="fractions must be 3 increasing"):
        GroupSequential.plan(3, fractions=(0.5, 0.4, 1.0))


def test_repeated_intervals_cover_at_the_planned_looks_under_adaptive_allocation():
    """BatchedThompson with a control floor of 0.2, five batches of 400 (the planned looks at
    its batch ends), 200 runs: a run errs when any arm's repeated interval misses the truth at
    any planned look (Bonferroni over the two differences: α/2 each). And at the last look the
    interval is narrower than the asymptotic confidence sequence's."""
    means = np.array([0.30, 0.30, 0.36])
    K, runs = 3, 200
    design = GroupSequential.plan(5, alpha=0.025)
    errs, ratio = 0, []
    for r in range(runs):
        noise = stream(37, "gs", r)
        policy = make_policy("BatchedThompson", LiveArms(K, None, None),
                             stream(37, "gs-xi", r), horizon=2000, batch_size=400,
                             draws=200, control_floor=0.2, control_arm=0)
        n, S, look, missed = np.zeros(K), np.zeros(K), 0, False
        while (batch := policy.next_batch()) is not None:
            pulls = np.bincount(batch.arms, weights=batch.counts, minlength=K)
            got = noise.binomial(pulls.astype(np.int64), means).astype(float)
            policy.observe(batch, got[batch.arms])
            n, S, look = n + pulls, S + got, look + 1
            p = S / np.maximum(n, 1)
            se = np.sqrt(p * (1 - p) / np.maximum(n, 1) + p[0] * (1 - p[0]) / max(n[0], 1))
            low, high = design.interval(p - p[0], se, look)
            truth = means - means[0]
            missed |= bool(((low[1:] > truth[1:]) | (high[1:] < truth[1:])).any())
        errs += missed
        a_low, a_high = asymptotic_difference(n, S, S, 0, 0.025, n_tune=1000)
        ratio.append((high[2] - low[2]) / (a_high[2] - a_low[2]))
    assert errs / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    assert np.median(ratio) < 0.8


def _independent_look(units, names, control, k, every, bound):
    """Look k recomputed from ``Experiment.units()`` alone: the first k·every units assigned,
    their (corrected) rewards, diff ± bound·se."""
    first = units.sort_values("unit").head(k * every)
    first = first[first["reward"].notna()]
    out = {}
    for name in names:
        x = first.loc[first["arm"] == name, "reward"].to_numpy(float)
        out[name] = (x.size, x.mean(), x.var(ddof=1) / x.size)
    _, m_c, v_c = out[names[control]]
    return {a: (n, m - m_c, m - m_c - bound * math.sqrt(v + v_c),
                m - m_c + bound * math.sqrt(v + v_c))
            for a, (n, m, v) in out.items() if a != names[control]}


def test_status_shows_the_latest_complete_planned_look_in_every_form(where, capsys):
    """Through Experiment under adaptive allocation (BatchedThompson): status shows look k on
    the first k·look_every units assigned (corrections counted, a look with a unit still
    waiting not yet shown), as an independent recomputation from units() gives it; the CLI's
    text and JSON and the page show it; a look beyond the plan or not complete is refused by
    name, and units beyond the plan are warned about. On SQLite and PostgreSQL."""
    import json

    from banditkit.cli import main
    from banditkit.service.page import render_page

    names = ["control", "a", "b"]
    rng = np.random.default_rng(11)
    with where.create(algorithm="BatchedThompson", arms=names, seed=3,
                      horizon=900, reward_type="binary",
                      params={"batch_size": 300, "draws": 100, "control_floor": 0.2},
                      verdicts={"looks": 3, "look_every": 300, "spending": "pocock"}) as exp:
        assert exp.status().planned.look == 0
        truth = np.array([0.1, 0.35, 0.1])
        got = exp.assign(300)
        exp.record(got["unit"], (rng.random(300) < truth[got["arm_index"]]) * 1.0)
        got = exp.assign(300)
        held = int(got["unit"].iloc[5])  # look 2 waits for this unit's outcome
        rest = got[got["unit"] != held]
        exp.record(rest["unit"], (rng.random(299) < truth[rest["arm_index"]]) * 1.0)
        state = exp.status()
        bound1 = exp.status(look=1).planned.bound
        assert state.planned.look == 1 and state.planned.waiting == 1
        with pytest.raises(ExperimentError, match="look 2 is not complete"):
            exp.status(look=2)
        exp.record([held], [1.0])
        fixed = int(got["unit"].iloc[0])
        exp.correct([fixed], [1.0 - float(exp.units(ids=[fixed])["reward"].iloc[0])],
                    reason="test")
        planned = exp.status().planned
        assert planned.look == 2 and planned.units == 600 and not planned.beyond
        design = GroupSequential.plan(3, alpha=0.05 / 2, spending="pocock")
        assert planned.bound == pytest.approx(design.bounds[1])
        assert bound1 == pytest.approx(design.bounds[0])
        units = exp.units()
        units.loc[units["unit"] == fixed, "reward"] = 1.0 - units.loc[
            units["unit"] == fixed, "reward"]
        want = _independent_look(units, names, 0, 2, 300, planned.bound)
        for row in planned.arms.itertuples():
            n, diff, low, high = want[row.arm]
            assert (row.n, row.diff, row.diff_low, row.diff_high) == pytest.approx(
                (n, diff, low, high), rel=1e-9)
            assert row.verdict == ("better" if low > 0 else "worse" if high < 0
                                   else "undecided")
        assert "better" in planned.arms["verdict"].tolist()  # arm a at 0.3 against 0.1
        with pytest.raises(ExperimentError, match="look 4 is beyond the plan of 3 looks"):
            exp.status(look=4)
        with pytest.raises(ExperimentError, match="look must be a positive integer"):
            exp.status(look=0)
        html = render_page(exp, title="looks")
        assert "<h2>Planned looks</h2>" in html and "look 2 of 3" in html
        got = exp.assign(300)
        exp.record(got["unit"], (rng.random(300) < 0.2) * 1.0)
        last = exp.status()
        assert last.planned.look == 3 and not last.planned.beyond  # 900 units: the plan's end
        assert not any("plan ended" in w for w in last.warnings)
    cli = ["experiment", "status", where.target] + (
        [] if where.name is None else ["--name", where.name])
    assert main([*cli, "--json", "--look", "2"]) == 0
    shown = json.loads(capsys.readouterr().out)["planned"]
    assert shown["look"] == 2 and [r["arm"] for r in shown["arms"]] == ["a", "b"]
    assert main(cli) == 0
    assert "look 3 of 3 (the first 900 units" in capsys.readouterr().out
    assert main([*cli, "--look", "4"]) != 0
    assert "look 4 is beyond the plan of 3 looks" in capsys.readouterr().err


def test_planned_looks_are_declared_whole_and_refused_where_they_cannot_hold(tmp_path):
    from banditkit import Experiment

    def create(name, **verdicts):
        return Experiment.create(tmp_path / f"{name}.sqlite", algorithm="FixedAllocation",
                                 arms=["c", "t"], seed=0, reward_type="binary",
                                 params={"batch_size": 10}, verdicts=verdicts)

    for name, verdicts, message in [
            ("half", {"looks": 3}, r"verdicts\['look_every'\] must be an integer >= 1"),
            ("zero", {"looks": 0, "look_every": 5}, r"verdicts\['looks'\] must be an integer "
             "from 1 to 50"),
            ("spend", {"looks": 2, "look_every": 5, "spending": "haybittle"},
             r"verdicts\['spending'\] must be one of"),
            ("side", {"looks": 2, "look_every": 5, "alternative": "greater"},
             "a planned test is two-sided"),
    ]:
        with pytest.raises(ExperimentError, match=message):
            create(name, **verdicts)
    with create("none") as exp, pytest.raises(ExperimentError,
                                              match="look: this experiment declared no "
                                                    "planned looks"):
        exp.status(look=1)
    with create("beyond", looks=1, look_every=10) as exp:
        got = exp.assign(20)
        exp.record(got["unit"], np.ones(20))
        state = exp.status()
    assert state.planned.beyond and any("the plan ended at look 1 (10 units); the 10 units "
                                        "assigned since" in w for w in state.warnings)
    from banditkit.cli import main

    path = tmp_path / "cli.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "FixedAllocation",
                 "--arms", "c,t", "--seed", "0", "--reward-type", "binary", "--looks", "4",
                 "--look-every", "50", "--spending", "pocock", "--segment", "US",
                 "--segment", "EU"]) == 0
    with Experiment.open(path, readonly=True) as exp:
        spec = exp.verdict_spec
    assert (spec.looks, spec.look_every, spec.spending, spec.segments) == (
        4, 50, "pocock", ("US", "EU"))


def test_planned_verdicts_through_experiment_under_adaptive_allocation_are_rarely_false(
        tmp_path):
    """30 null experiments (three arms at 0.3) through Experiment, BatchedThompson with a
    control floor of 0.2 shifting units to the arms that lead by chance, five planned looks of
    200 units, status read after every 100 units (twice per look: reading more often is not
    looking more often): a run errs when any planned verdict at any look is not undecided.
    At α = 0.05 at most 4 of 30 (P(more) ≈ 0.016 at 5%; the fixed-n 1.96 at each look errs in
    about a quarter of runs). The longer run: ``benchmarks/bench_readout.py looks``."""
    from banditkit import Experiment
    from banditkit.rng import stream

    errs = 0
    for r in range(30):
        noise = stream(37, "planned-null", r)
        with Experiment.create(tmp_path / f"n{r}.sqlite", algorithm="BatchedThompson",
                               arms=["c", "a", "b"], seed=r, horizon=1000,
                               reward_type="binary",
                               params={"batch_size": 200, "draws": 100, "control_floor": 0.2},
                               verdicts={"looks": 5, "look_every": 200}) as exp:
            wrong = False
            for _ in range(10):
                got = exp.assign(100)
                exp.record(got["unit"], (noise.random(len(got)) < 0.3) * 1.0)
                wrong |= bool((exp.status().planned.arms["verdict"] != "undecided").any())
        errs += wrong
    assert errs <= 4
