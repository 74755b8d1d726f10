"""Replicable best-arm identification (issue 25): the rule, replicable successive elimination
and ReplicableRAGE."""

import itertools
import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs import BernoulliBandit
from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.identification.rage import RAGE
from banditkit.identification.replicable_rage import ReplicableRAGE
from banditkit.identification.replicable_rule import (
    WINDOW_FLIPS,
    ReplicableGapRule,
    empirical_gaps,
)
from banditkit.identification.replicable_se import ReplicableSuccessiveElimination
from banditkit.registry import get_policy, make_policy

# --- the rule ------------------------------------------------------------------------------


def test_window_split_accuracy_is_rho_q_eps_over_2_5_per_item():
    # ρ = 0.3, δ = 0.05: δ_s = min(δ, ρ/4) = 0.05, ρ_q = ρ − 2δ_s = 0.2; |Z| = 6
    rule = ReplicableGapRule(0.3, 0.05, 6)
    assert rule.sample_delta == 0.05 and rule.rho_rounding == pytest.approx(0.2)
    for t in (1, 2, 7):
        assert rule.accuracy(t, 6) == pytest.approx(0.2 * 2.0**-t / 12.5)
        assert rule.accuracy(t, 2) == rule.accuracy(t, 6)  # |Z|, not the active set
        assert rule.blowup(t, 3) == pytest.approx(62.5**2)
    # ρ = 0.1: δ_s = ρ/4 = 0.025 < δ, so ρ_q = ρ/2
    small = ReplicableGapRule(0.1, 0.05, 6)
    assert small.sample_delta == pytest.approx(0.025)
    assert small.accuracy(1, 6) == pytest.approx(0.05 * 0.5 / 12.5)


def test_phases_split_gives_phase_t_six_rho_q_over_pi2_t2_on_its_active_items():
    rule = ReplicableGapRule(0.3, 0.05, 6, split="phases")
    for t, m in ((1, 6), (3, 4), (9, 2)):
        rho_t = 6 * 0.2 / (math.pi**2 * t * t)
        assert rule.rho_t(t, m) == pytest.approx(rho_t)
        assert rule.accuracy(t, m) == pytest.approx(rho_t * 2.0**-t / (2 * (m - 1)))
    assert sum(rule.rho_t(t, 6) for t in range(1, 10_000)) == pytest.approx(0.2, rel=1e-3)


def test_window_split_spends_at_most_rho_q_over_the_droppable_items():
    rule = ReplicableGapRule(0.3, 0.05, 6)
    # each droppable item (5) hangs on the offsets with probability ≤ 2.5 ε̃/ε over all phases
    assert 5 * WINDOW_FLIPS * rule.accuracy_ratio(4, 6) == pytest.approx(rule.rho_rounding)
    assert rule.rho_t(4, 6) == pytest.approx(5 * 2 * rule.rho_rounding / 12.5)


@pytest.mark.parametrize("r", [0.01, 0.1, 0.25, 0.4])
def test_an_item_hangs_on_the_offsets_at_most_2_5_r_over_all_phases(r):
    # the window lemma: Σ_t |[Δ − rε_t, Δ + rε_t] ∩ (ε_t, 2ε_t]| / ε_t ≤ 2.5 r for every gap Δ,
    # and the bound is attained (at Δ = 2ε_s − rε_s)
    eps = 2.0 ** -np.arange(1, 40)
    deltas = np.concatenate([np.geomspace(2.0**-12, 2.0, 40_001),
                             (2 - r) * 2.0 ** -np.arange(0, 12)])
    lo, hi = deltas[:, None] - r * eps, deltas[:, None] + r * eps
    overlap = np.clip(np.minimum(hi, 2 * eps) - np.maximum(lo, eps), 0.0, None) / eps
    flips = overlap.sum(axis=1)
    assert flips.max() <= WINDOW_FLIPS * r * (1 + 1e-9)
    assert flips.max() >= WINDOW_FLIPS * r * (1 - 1e-6)


def test_delta_t_sums_to_the_sample_delta():
    rule = ReplicableGapRule(0.3, 0.05, 6)
    assert rule.delta_t(1) == pytest.approx(6 * 0.05 / math.pi**2)
    assert rule.delta_t(3) == pytest.approx(rule.delta_t(1) / 9)
    assert sum(rule.delta_t(t) for t in range(1, 100_000)) == pytest.approx(0.05, rel=1e-4)
    assert ReplicableGapRule(0.3, 0.05, 6, sample_delta=0.01).delta_t(1) == pytest.approx(
        0.06 / math.pi**2)


def test_drop_is_a_random_threshold_on_the_raw_gap():
    # rounded ĝ > 1.5 ε_t  ⟺  ĝ ≥ ε_t (1 + u): the grid width is ε_t and the threshold
    # uniform on (ε_t, 2ε_t]
    rule = ReplicableGapRule(0.3, 0.05, 4)
    rng = np.random.default_rng(1)
    for t in (1, 2, 5):
        eps = 2.0**-t
        u = rng.random(2000)
        b = eps * (1 + u)
        np.testing.assert_array_equal(rule.drop(b * (1 + 1e-9), t, u), np.ones(2000, bool))
        np.testing.assert_array_equal(rule.drop(b * (1 - 1e-9), t, u), np.zeros(2000, bool))
        assert not rule.drop(np.array([eps * 0.999]), t, np.array([0.0]))[0]
        assert rule.drop(np.array([2 * eps]), t, np.array([0.999999]))[0]


def test_two_gaps_are_separated_with_probability_their_distance_over_eps_t():
    # the replicability of one decision: over the shared offset, ĝ and ĝ' fall on two sides
    # of the threshold with probability |ĝ − ĝ'| / ε_t
    rule = ReplicableGapRule(0.3, 0.05, 2)
    u = np.random.default_rng(2).random(200_000)
    t, eps = 3, 2.0**-3
    g, g2 = 1.3 * eps, 1.3 * eps + 0.1 * eps
    differ = rule.drop(np.full(u.size, g), t, u) != rule.drop(np.full(u.size, g2), t, u)
    assert differ.mean() == pytest.approx(0.1, abs=0.005)


def test_empirical_gaps_are_differences_to_the_leader():
    np.testing.assert_allclose(empirical_gaps(np.array([0.2, 0.5, 0.1])), [0.3, 0.0, 0.4])
    # a common shift of the values (the direction no design controls) cancels
    np.testing.assert_allclose(empirical_gaps(np.array([1e3 + 0.2, 1e3 + 0.5])), [0.3, 0.0])


@pytest.mark.parametrize("kwargs, match", [
    ({"rho": 0.0}, "rho"), ({"rho": 1.5}, "rho"), ({"delta": 1.0}, "delta"),
    ({"split": "items"}, "split must be one of"), ({"sample_delta": 0.06}, "sample_delta"),
    ({"rho": 0.1, "sample_delta": 0.05}, "sample_delta must be < rho/2"),
    ({"n_items": 0}, "n_items")])
def test_the_rule_refuses_what_cannot_be_true(kwargs, match):
    args = {"rho": 0.3, "delta": 0.05, "n_items": 4, **kwargs}
    with pytest.raises(ValueError, match=match):
        ReplicableGapRule(**args)


# --- replicable successive elimination -------------------------------------------------------

def test_successive_elimination_phase_size_is_hoeffding_at_the_rule_accuracy():
    algo = ReplicableSuccessiveElimination(6, rho=0.3, delta=0.05, rng=0)
    batch = algo.next_batch()
    eps1 = 0.2 * 0.5 / 12.5
    delta1 = 6 * 0.05 / math.pi**2
    n1 = math.ceil(2 * math.log(2 * 6 / delta1) / eps1**2)
    assert batch.counts.tolist() == [n1] * 6
    wide = ReplicableSuccessiveElimination(6, rho=0.3, delta=0.05, rng=0,
                                           reward_range=(-1.0, 1.0))
    assert wide.next_batch().counts[0] == math.ceil(8 * math.log(2 * 6 / delta1) / eps1**2)


def test_successive_elimination_offsets_come_from_the_shared_xi():
    # two executions with the same ξ and independent rewards read the same offsets, the first
    # |K| uniforms of ξ in phase 1
    env = make_instance("bernoulli")
    runs = [ReplicableSuccessiveElimination(6, rng=np.random.default_rng(7)) for _ in (0, 1)]
    for algo, seed in zip(runs, (1, 2), strict=True):
        simulate(algo, env, seed=seed)
    np.testing.assert_array_equal(runs[0].offsets[0], np.random.default_rng(7).random(6))
    phases = min(len(r.offsets) for r in runs)
    for t in range(phases):
        np.testing.assert_array_equal(runs[0].offsets[t], runs[1].offsets[t])


def test_successive_elimination_is_correct_and_stops():
    env = make_instance("bernoulli")
    for seed in range(6):
        trial = simulate(ReplicableSuccessiveElimination(6, rng=seed), env, seed=seed)
        assert trial.stopped and trial.correct
        sizes = trial.info["active_sizes"]
        assert sizes[0] == 6 and all(a >= b for a, b in itertools.pairwise(sizes))


def _window_instance() -> BernoulliBandit:
    # gap 0.75 lies in phase 1's window (ε_1, 2ε_1] = (0.5, 1]: whether phase 1 drops arm 1
    # depends on the offset (dropped iff u ≤ 0.5), so executions with unshared offsets disagree
    # half the time
    return BernoulliBandit([0.95, 0.2])


def test_pairs_sharing_xi_replicate_and_unshared_offsets_do_not():
    env = _window_instance()
    factory = get_policy("ReplicableSuccessiveElimination").factory
    shared = audit(factory, env, pairs=40, seed=0, params={"rho": 0.3})
    assert shared.n_identical >= 36 and shared.correct.all()

    calls = itertools.count()

    def own_offsets(env, rng, **params):  # a bug: each execution draws its own ξ
        return factory(env, np.random.default_rng(1000 + next(calls)), **params)

    unshared = audit(own_offsets, env, pairs=40, seed=0, params={"rho": 0.3})
    assert unshared.n_identical <= 30


def test_successive_elimination_refuses_rewards_outside_its_range():
    algo = ReplicableSuccessiveElimination(2, rng=0)
    batch = algo.next_batch()
    with pytest.raises(ValueError):
        algo.observe(batch, batch.counts * 1.5)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_arms": 1}, "n_arms"), ({"reward_range": (1.0, 0.0)}, "reward_range"),
    ({"rho": 0.1, "delta": 0.05, "sample_delta": 0.05}, "sample_delta")])
def test_successive_elimination_refusals(kwargs, match):
    args = {"n_arms": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        ReplicableSuccessiveElimination(**args)


# --- ReplicableRAGE --------------------------------------------------------------------------

def test_replicable_rage_phase_one_is_rage_at_the_finer_accuracy():
    env = make_instance("soare", d=5, omega=0.1)
    rage, rep = RAGE(env.X, env.Z, 0.05), ReplicableRAGE(env.X, env.Z, 0.05, rho=0.3, rng=0)
    n_rage, n_rep = rage.next_batch().n_pulls, rep.next_batch().n_pulls
    value = rep.info["design_values"][0]
    delta1 = 6 * 0.05 / math.pi**2
    eps1 = 0.2 * 0.5 / 12.5
    expected = math.ceil(2 * value * 1.1 * math.log(36 / delta1) / eps1**2)
    assert abs(n_rep - expected) <= 6  # the rounding of the allocation
    # RAGE's N_1 = 2·4·ρ·1.1·log(36/δ): the ratio is the blow-up times the log ratio
    ratio = 62.5**2 * math.log(36 / delta1) / math.log(36 / 0.05)
    assert n_rep / n_rage == pytest.approx(ratio, rel=1e-3)


def test_replicable_rage_is_correct_and_its_pairs_replicate():
    env = make_instance("soare", d=3, omega=0.3)
    factory = get_policy("ReplicableRAGE").factory
    result = audit(factory, env, pairs=12, seed=5, params={"rho": 0.3, "delta": 0.05})
    assert result.correct.all() and result.capped == 0
    assert result.n_identical >= 11
    assert np.all(result.recommendations == 0)


def test_replicable_rage_reads_xi_the_same_way_whatever_the_rewards():
    env = make_instance("soare", d=3, omega=0.3)
    runs = [ReplicableRAGE(env.X, env.Z, 0.05, rng=11) for _ in (0, 1)]
    trials = [simulate(a, env, seed=s) for a, s in zip(runs, (3, 4), strict=True)]
    assert trials[0].decisions.same_as(trials[1].decisions)
    for u, v in zip(runs[0].offsets, runs[1].offsets, strict=False):
        np.testing.assert_array_equal(u, v)
    np.testing.assert_array_equal(runs[0].offsets[0], np.random.default_rng(11).random(4))


def test_replicable_rage_phases_split_costs_more_late():
    env = make_instance("soare", d=3, omega=0.3)
    window = simulate(ReplicableRAGE(env.X, env.Z, 0.05, rng=1), env, seed=2)
    phases = simulate(ReplicableRAGE(env.X, env.Z, 0.05, rng=1, split="phases"), env, seed=2)
    assert window.correct and phases.correct
    assert phases.info["split"] == "phases" and phases.n_pulls > window.n_pulls


@pytest.mark.parametrize("kwargs, match", [
    ({"rho": 2.0}, "rho"), ({"split": "x"}, "split"), ({"epsilon": 0.0}, "epsilon"),
    ({"rho": 0.1, "sample_delta": 0.05}, "sample_delta")])
def test_replicable_rage_refusals(kwargs, match):
    env = make_instance("soare", d=3, omega=0.3)
    with pytest.raises(ValueError, match=match):
        make_policy("ReplicableRAGE", env, np.random.default_rng(0), **kwargs)


def test_cli_audit_refuses_a_bad_split_in_one_line_and_reports_correctness(capsys):
    from banditkit.cli import main

    assert main(["audit", "ReplicableRAGE", "--instance", "soare", "--pairs", "2",
                 "--param", "split=foo"]) == 2
    err = capsys.readouterr().err
    assert "split must be one of" in err and "Traceback" not in err
    assert main(["audit", "ReplicableRAGE", "--instance", "soare", "--instance-param", "d=3",
                 "--instance-param", "omega=0.3", "--pairs", "3", "--param", "rho=0.3"]) == 0
    out = capsys.readouterr().out
    assert "identical pairs: 3/3" in out and "correct recommendations: 6/6 executions" in out
