"""The final commit of Algorithms 1, 2 and 3 (Esfandiari et al., ICLR 2023): the ``commit``
option of :mod:`banditkit.policies.commit`.

Most tests drive the algorithms by hand (ask/tell) with chosen reward sums, so the empirical
means at the commit are known exactly and each rule's choice can be checked against its
definition.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.estimation.least_squares import LeastSquares
from banditkit.estimation.replicable_mean import grid_round, grid_width
from banditkit.experiments.replicability import audit
from banditkit.policies import (
    BatchedElimination,
    ReplicableBatchedElimination,
    ReplicableElimination,
    ReplicableLinearElimination,
)
from banditkit.policies.commit import (
    COMMIT_DELTA_FRACTION,
    COMMIT_RULES,
    commit_batch,
    linear_commit_values,
    replicable_commit_means,
    split_rho,
)
from banditkit.policies.elimination.replicable import paper_beta
from banditkit.policies.named import replicable_elimination
from banditkit.rng import as_generator

APPENDIX_H = np.array([0.44, 0.47, 0.50, 0.53, 0.56, 0.59])


def _drive(alg, means: np.ndarray):
    """Answer every batch with reward sums count × mean (the empirical mean of every arm is
    then exactly ``means``); returns the batches asked."""
    batches = []
    while (b := alg.next_batch()) is not None:
        batches.append(b)
        alg.observe(b, np.asarray(means)[b.arms] * b.counts)
    return batches


# ---- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda **kw: ReplicableElimination(3, 1000, 0.3, 0, **kw),
    lambda **kw: ReplicableBatchedElimination(3, 1000, 0.3, 0, **kw),
    lambda **kw: ReplicableLinearElimination(np.eye(3), 1000, 0.3, rng=0, **kw),
])
def test_bad_commit_options_refused(make):
    with pytest.raises(ValueError, match="commit must be one of"):
        make(commit="smallest_index")  # the old name of the paper's rule
    with pytest.raises(ValueError, match="commit_share only applies"):
        make(commit="argmax", commit_share=0.5)
    with pytest.raises(ValueError, match="commit_share"):
        make(commit="replicable-argmax", commit_share=1.0)


def test_policy_without_internal_randomness_refuses_the_replicable_commit():
    with pytest.raises(ValueError, match="needs internal randomness"):
        BatchedElimination(3, 1000, commit="replicable-argmax")
    assert BatchedElimination(3, 1000, commit="argmax").commit == "argmax"


def test_beta_floor_option():
    assert ReplicableElimination(6, 45_000, 0.3, 0, beta_floor=False).beta == 400
    assert ReplicableElimination(6, 45_000, 0.3, 0).beta == 2304 == paper_beta(6, 0.3)
    with pytest.raises(ValueError, match="not both"):
        ReplicableElimination(6, 45_000, 0.3, 0, beta=100, beta_floor=False)


# ---- the rules on Algorithm 2 (Appendix H, where no arm can be eliminated) ---------------------

def test_rules_on_appendix_h_closed_forms():
    """T = 45003: one batch of 4608 pulls per arm, no elimination (U_1 > 1), then 17355 rounds
    for the commit (not a multiple of K = 6)."""
    T = 45_003
    regrets = {}
    for rule in COMMIT_RULES:
        alg = ReplicableElimination(6, T, 0.3, 0, commit=rule)
        last = _drive(alg, APPENDIX_H)[-1]
        assert alg.batch == 1 and alg.active.tolist() == list(range(6))
        counts = last.allocation(6)
        if rule == "round-robin":
            # 17355 = 6·2892 + 3: the three lowest indices get one more, pulled in index order
            assert counts.tolist() == [2893, 2893, 2893, 2892, 2892, 2892]
            assert last.arms.tolist() == list(range(6))
        elif rule == "lowest-index":
            assert last.arms.tolist() == [0] and counts[0] == 17_355
        elif rule == "argmax":
            assert last.arms.tolist() == [5]  # the empirical best (= true best here)
        regrets[rule] = float((APPENDIX_H.max() - APPENDIX_H) @ (4608 + counts))
    assert regrets["lowest-index"] == pytest.approx(4608 * 0.45 + 17_355 * 0.15)
    assert regrets["argmax"] == pytest.approx(4608 * 0.45)
    assert regrets["round-robin"] == pytest.approx((4608 + 17_355 / 6) * 0.45, abs=0.2)


@pytest.mark.parametrize("cls", [ReplicableElimination, ReplicableBatchedElimination])
def test_argmax_plays_the_empirical_best_with_ties_to_the_lowest_index(cls):
    # Algorithm 1 must run a batch: literal batches at a horizon where one fits
    kw = {"sample_rule": "literal"} if cls is ReplicableBatchedElimination else {}
    truth_best_last = np.array([0.50, 0.53, 0.53, 0.51, 0.49, 0.52])
    alg = cls(6, 45_000, 0.3, 0, commit="argmax", **kw)
    last = _drive(alg, truth_best_last)[-1]
    assert alg.active.size == 6  # nothing eliminated: the commit chooses among all six
    assert last.arms.tolist() == [1]  # arms 1 and 2 tie at the best empirical mean
    np.testing.assert_array_equal(alg.commit_scores, truth_best_last)


def test_argmax_rules_without_data_play_the_lowest_index():
    for rule in ("argmax", "replicable-argmax"):
        alg = ReplicableElimination(6, 5000, 0.3, 0, commit=rule)  # 6·4608 > 5000: no batch
        [only] = _drive(alg, APPENDIX_H)
        assert only.arms.tolist() == [0] and alg.commit_scores is None


# ---- replicable-argmax: ρ budget, closed form, replicability by construction ---------------------

def test_replicable_argmax_spends_its_share_of_rho():
    assert split_rho(0.3, "replicable-argmax", None) == pytest.approx((0.15, 0.15))
    assert split_rho(0.3, "replicable-argmax", 0.25) == pytest.approx((0.225, 0.075))
    assert split_rho(0.3, "argmax", None) == (0.3, 0.0)
    a2 = ReplicableElimination(10, 10**6, 0.3, 0, commit="replicable-argmax", commit_share=0.25)
    assert a2.rho_commit == pytest.approx(0.075) and a2.beta == 2304  # K²/ρ_e² = 1975 < 2304
    a2 = ReplicableElimination(20, 10**6, 0.3, 0, commit="replicable-argmax")
    assert a2.beta == paper_beta(20, 0.15) == 17_777  # K²/ρ_e² above the 2304 floor
    a1 = ReplicableBatchedElimination(4, 10**6, 0.2, 0, commit="replicable-argmax")
    assert a1.rho_per_estimate == pytest.approx(0.1 / (4 * a1.n_batches))
    a3 = ReplicableLinearElimination(np.eye(2), 10**6, 0.02, rng=0, commit="replicable-argmax")
    assert a3.beta == math.floor(4 / 0.01**2)


def _replicable_commit(means: np.ndarray, xi_seed: int):
    """Algorithm 2 (K = 2, ρ = 1, 90% of it on the commit) driven to its commit; T = 10⁹ gives
    about 10⁸ pulls per arm, so the commit's grid cells are narrow (~10⁻³)."""
    alg = ReplicableElimination(2, 10**9, 1.0, xi_seed, commit="replicable-argmax",
                                commit_share=0.9)
    last = _drive(alg, means)[-1]
    return alg, last


def test_replicable_argmax_is_repmean_of_the_cumulative_sums_with_offsets_from_xi():
    means = np.array([0.5, 0.5004])
    alg, last = _replicable_commit(means, 11)
    assert alg.active.size == 2 and alg.batch >= 2
    # ξ: one threshold per exploration batch, then the commit grid's one offset
    xi = as_generator(11)
    xi.random(alg.batch)
    offset = xi.random()
    rho_a = 0.9 / 2
    pulls = alg.pulls - last.allocation(2)  # what was known at the commit: the batches before
    # one grid for both arms, as wide as the widest arm's RepMean grid (Lemma 2.5)
    alpha = max(grid_width(n, COMMIT_DELTA_FRACTION * rho_a, rho_a) for n in pulls)
    expected = np.clip(grid_round(means, alpha, offset), 0, 1)
    np.testing.assert_array_equal(alg.commit_scores, expected)
    assert np.all(np.abs(alg.commit_scores - means) < 0.01)  # narrow cells: a real estimate
    assert last.arms.tolist() == [int(np.argmax(expected))]


def test_replicable_argmax_executions_sharing_xi_agree_within_the_rounding_window():
    """Two executions with the same ξ whose means differ by far less than a grid cell commit
    identically (bit-identical rounded means); with another ξ the rounded means differ."""
    base = np.array([0.5, 0.5004])
    a, last_a = _replicable_commit(base, 3)
    b, last_b = _replicable_commit(base + np.array([2e-6, -2e-6]), 3)
    np.testing.assert_array_equal(a.commit_scores, b.commit_scores)
    assert last_a.arms.tolist() == last_b.arms.tolist()
    assert a.decisions.same_as(b.decisions)
    c, _ = _replicable_commit(base, 4)
    assert not np.array_equal(a.commit_scores, c.commit_scores)


def test_replicable_argmax_beats_argmax_on_replication_where_the_best_arm_is_ambiguous():
    """Two arms of equal mean: the empirical argmax is a coin flip per execution (pairs differ
    about half the time), the replicable argmax's pairs differ with probability ≤ ρ."""
    from banditkit.envs.instances import make_instance

    env = make_instance("bernoulli", means=(0.5, 0.5))
    res = {rule: audit(replicable_elimination, env, pairs=40, seed=5, horizon=100_000,
                       params={"rho": 0.3, "horizon": 100_000, "commit": rule})
           for rule in ("argmax", "replicable-argmax")}
    assert res["argmax"].non_replication >= 0.25
    assert res["replicable-argmax"].interval[0] <= 0.3 and \
        res["replicable-argmax"].non_replication <= 0.3 / 2


# ---- Algorithm 3 ---------------------------------------------------------------------------------

def test_linear_commit_values_grid_and_disagreement_rate():
    values = np.array([0.3, -0.2, 0.7])
    norms2 = np.array([1e-4, 4e-4, 0.0])
    rho_c = 0.3
    u = 0.25
    out = linear_commit_values(values, norms2, rho_c, u)
    rho_a = rho_c / 3
    delta_a = rho_a / 20
    # one grid, as wide as the widest arm needs (arm 1: ‖a‖² = 4e-4)
    alpha = 2 * np.sqrt(4e-4 * math.log(2 / delta_a)) / (rho_a - delta_a)
    np.testing.assert_allclose(out, grid_round(values, alpha, u))
    k = (out - u * alpha) / alpha - 0.5
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)  # centres of the shifted cells
    assert np.all(np.abs(out - values) <= alpha / 2 + 1e-12)
    # over the offset, two values d apart are split with probability d/α
    rng = np.random.default_rng(0)
    offs = rng.random(20_000)
    d = 0.3 * alpha
    split = grid_round(0.3, alpha, offs) != grid_round(0.3 + d, alpha, offs)
    assert abs(split.mean() - 0.3) < 0.02


def _linear(commit: str, theta: np.ndarray, xi: int = 0, noise: float = 0.0):
    X = np.eye(3)
    alg = ReplicableLinearElimination(X, 10**6, 0.3, rng=xi, commit=commit)
    batches = []
    while (b := alg.next_batch()) is not None:
        batches.append(b)
        mean = X[b.arms] @ theta
        alg.observe(b, b.counts * mean + noise * np.sqrt(b.counts))
    return alg, batches


def test_linear_round_robin_splits_evenly_and_argmax_is_the_printed_rule():
    theta = np.array([0.50, 0.52, 0.51])  # close values: nothing eliminated
    rr, batches = _linear("round-robin", theta)
    assert rr.phase >= 1 and rr.active.tolist() == [0, 1, 2]
    counts = batches[-1].allocation(3)
    assert counts.sum() == 10**6 - sum(b.n_pulls for b in batches[:-1])
    assert counts.max() - counts.min() <= 1 and counts[0] >= counts[-1]
    am, batches = _linear("argmax", theta)
    assert batches[-1].arms.tolist() == [1] and am.final_arm == 1
    _, batches = _linear("lowest-index", theta)
    assert batches[-1].arms.tolist() == [0]


def test_linear_replicable_argmax_closed_form_and_agreement_within_the_window():
    theta = np.array([0.50, 0.52, 0.51])
    a, last_a = _linear("replicable-argmax", theta, xi=7)
    b, _ = _linear("replicable-argmax", theta, xi=7, noise=1e-6)
    assert a.rho_commit == pytest.approx(0.15) and a.beta == paper_beta(3, 0.15)
    # ξ: B thresholds first, then the commit grid's offset
    xi = as_generator(7)
    xi.random(a.n_batches)
    offset = xi.random()
    alloc = last_a[-2].allocation(3)  # the last phase
    ls = LeastSquares.from_sums(np.eye(3), alloc, alloc * theta)
    expected = linear_commit_values(ls.theta, ls.norms2(np.eye(3)), 0.15, offset)
    np.testing.assert_allclose(a.commit_scores, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(a.commit_scores, b.commit_scores)
    assert a.decisions.same_as(b.decisions)
    assert last_a[-1].arms.tolist() == [int(np.argmax(expected))]


def test_commit_batch_rules():
    active = np.array([1, 3, 4])
    assert commit_batch("lowest-index", active, 10, 5).arms.tolist() == [1]
    assert commit_batch("argmax", active, 10, 5, np.array([0.2, 0.5, 0.5])).arms.tolist() == [3]
    assert commit_batch("argmax", active, 10, 5, None).arms.tolist() == [1]
    rr = commit_batch("round-robin", active, 11, 5)
    assert rr.allocation(5).tolist() == [0, 4, 0, 4, 3]


def test_every_rule_keeps_the_best_arm_and_regret_below_uniform():
    env = BernoulliBandit(np.array([0.3, 0.5, 0.7]))
    T = 10**7
    for rule in COMMIT_RULES:
        alg = ReplicableElimination(3, T, 0.3, 1, commit=rule)
        tr = simulate(alg, env, horizon=T, seed=2)
        assert 2 in alg.active.tolist()
        assert tr.final_regret < 0.2 * T


def test_replicable_argmax_rounds_on_one_grid_so_it_keeps_the_order_of_the_means():
    """Wide cells must not reorder the means: on one grid the best arm is picked unless it
    shares its cell (then the lowest index of that cell). With an offset per arm, 300 commits
    on the Appendix H means picked the best arm 3.7% of the time and the worst 42%."""
    means = np.array([0.44, 0.47, 0.50, 0.53, 0.56, 0.59])
    counts = np.full(6, 200)
    picks = []
    for u in np.random.default_rng(0).random(300):
        scores = replicable_commit_means(means * counts, counts, 0.15, u)
        assert np.all(np.diff(scores) >= 0)  # order kept (ties allowed)
        best = int(np.argmax(scores))
        assert scores[best] == scores[-1]  # the pick shares the best arm's cell
        picks.append(best)
    # the cells here are far wider than the spread of the means: mostly one cell, lowest index
    assert set(picks) <= set(range(6))
    fine = replicable_commit_means(means * 10**9, np.full(6, 10**9), 0.15, 0.3)
    assert int(np.argmax(fine)) == 5  # narrow cells: the best arm
