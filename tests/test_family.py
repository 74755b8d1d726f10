"""Issue 37 §2: several metrics and segments with the error controlled across a stated family
(live/readout/family.py): anytime-valid p-values that match the asymptotic sequence, Holm's
step-down, and the family's error at every look under an allocation that follows the values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.readout.family import Member, anytime_p_values, family_readout, holm
from banditkit.live.readout.sequences import asymptotic_from


def test_the_p_value_is_the_level_at_which_the_sequence_excludes_zero():
    rng = np.random.default_rng(0)
    x = [rng.normal(0, 1, 3000), rng.normal(0.08, 1, 2500)]
    n = np.array([v.size for v in x], float)
    S = np.array([v.sum() for v in x])
    Q = np.array([(v * v).sum() for v in x])
    mean, var = S / n, np.array([v.var(ddof=1) for v in x])
    for tune in (0.05, 0.01):
        p = anytime_p_values(n, S, Q, 0, n_tune=2000, tune_alpha=tune)[1]
        assert 0 < p < 1
        for level, excluded in ((p * 1.001, True), (p * 0.999, False)):
            # the sequence with ρ tuned at `tune`, evaluated at `level`
            from banditkit.live.readout import sequences

            rho2 = sequences.asymptotic_rho2(4000, tune)
            N = n.sum()
            radius = math.sqrt((var[1] / n[1] + var[0] / n[0]) * 2 * (N * rho2 + 1)
                               / (N * rho2) * math.log(math.sqrt(N * rho2 + 1) / level))
            assert (abs(mean[1] - mean[0]) > radius) == excluded
        low, _ = asymptotic_from(mean - mean[0], var / n + var[0] / n[0], n, 0, tune,
                                 n_tune=2000)
        assert (low[1] > 0) == (p <= tune)


def test_holm_steps_down():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm(np.array([0.5, 0.9])) == pytest.approx([1.0, 1.0])


def test_the_family_states_itself_and_refuses_what_is_not_a_family():
    arms = ["control", "a", "b"]
    n, S = np.full(3, 5000.0), np.array([500.0, 750.0, 500.0])
    Q = S.copy()
    members = [Member("conversion", "primary", n, S, Q),
               Member("revenue", "secondary", n, S * 3, Q * 9 + 50),
               Member("latency", "guardrail", n, S, Q, segment="mobile")]
    frame = family_readout(members, arms, 0)
    assert frame.attrs["family_size"] == 6 and "6 differences" in frame.attrs["note"]
    assert frame["role"].tolist() == ["primary"] * 2 + ["secondary"] * 2 + ["guardrail"] * 2
    assert frame.loc[0, "verdict"] == "better" and frame.loc[1, "verdict"] == "undecided"
    for bad, rule in (([Member("x", "secondary", n, S, Q)], "exactly one primary"),
                      ([Member("x", "main", n, S, Q)], "role must be one of"),
                      ([Member("x", "primary", n[:2], S, Q)], "one value per arm")):
        with pytest.raises(ExperimentError, match=rule):
            family_readout(bad, arms, 0)


def test_the_family_error_at_any_look_stays_within_alpha():
    """300 null runs, 3 metrics × 2 segments × 2 arms (12 differences), 15 looks of 600 units
    per segment, the arms' shares following the primary metric's observed means (an adaptive
    allocation): the runs with any false verdict anywhere at any look (Holm on the anytime
    p-values, as family_readout computes them) stay within α, where testing each difference at
    α alone errs in far more of them."""
    rng = np.random.default_rng(37)
    runs, looks, K, step, m = 300, 15, 3, 600, 12
    n = np.zeros((runs, 2, 1, K))
    S = np.zeros((runs, 2, 3, K))
    Q = np.zeros((runs, 2, 3, K))
    share = np.full((runs, K), 1 / K)
    family_err = np.zeros(runs, bool)
    single_err = np.zeros(runs, bool)
    for _ in range(looks):
        for seg in range(2):
            counts = np.array([rng.multinomial(step, sh) for sh in share])  # (runs, K)
            # the sum and sum of squares of `counts` lognormal(0, 1) values, drawn as values
            for a in range(K):
                y = rng.lognormal(0, 1, (runs, counts[:, a].max(), 3))
                keep = np.arange(y.shape[1])[None, :] < counts[:, a, None]
                y = np.where(keep[..., None], y, 0.0)
                S[:, seg, :, a] += y.sum(1)
                Q[:, seg, :, a] += (y * y).sum(1)
            n[:, seg, 0] += counts
        N = np.broadcast_to(n, S.shape)
        p = anytime_p_values(N, S, Q, 0, n_tune=2000, tune_alpha=0.05 / m)[..., 1:]
        p = p.reshape(runs, m)
        family_err |= (holm(p) <= 0.05).any(axis=1)
        single_err |= (anytime_p_values(N, S, Q, 0, n_tune=2000)[..., 1:] <= 0.05).reshape(
            runs, m).any(axis=1)
        means = S[:, :, 0].sum(1) / np.maximum(n[:, :, 0].sum(1), 1)
        share = np.where(means == means.max(axis=1, keepdims=True), 0.5, 0.25)
        share = share / share.sum(axis=1, keepdims=True)
    assert family_err.mean() <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
    assert single_err.mean() > 2 * max(family_err.mean(), 0.02)


def test_an_experiments_family_is_its_reward_and_guardrails_in_status_cli_and_page(tmp_path,
                                                                                   capsys):
    import json

    from banditkit import Experiment
    from banditkit.service.page import render_page

    rng = np.random.default_rng(5)
    path = tmp_path / "fam.sqlite"
    with Experiment.create(path, algorithm="FixedAllocation", arms=["control", "new"], seed=0,
                           reward_type="binary", params={"batch_size": 2000},
                           guardrails=[{"metric": "latency", "rule": "max_increase",
                                        "margin": 0.0}]) as exp:
        got = exp.assign(2000)
        new = (got["arm"] == "new").to_numpy()
        exp.record(got["unit"], (rng.random(2000) < np.where(new, 0.2, 0.1)) * 1.0,
                   metrics={"latency": rng.lognormal(5, 0.3, 2000)})
        frame = exp.family()
        html = render_page(exp, title="fam")
    assert frame[["metric", "role", "arm"]].values.tolist() == [
        ["reward", "primary", "new"], ["latency", "guardrail", "new"]]
    assert frame.attrs["family_size"] == 2
    assert frame.loc[0, "verdict"] == "better" and frame.loc[1, "verdict"] == "undecided"
    assert "<h2>Metric family</h2>" in html and "2 differences" in html
    from banditkit.cli import main

    assert main(["experiment", "status", str(path), "--family", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["family"]
    assert [r["role"] for r in shown["rows"]] == ["primary", "guardrail"]
    assert main(["experiment", "status", str(path), "--family"]) == 0
    assert "metric family: 2 differences" in capsys.readouterr().out
