"""The P1 family pinned to Xiong et al.'s text (issue 17 §2): the design of the first pull, the
constructors' defaults, the figure's algorithms and constants, Mixed-Peace's halving and its
nested survivors. Expected values are derived here from the paper, in closed form where the
instance allows it, not read from the code."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from banditkit.envs.instances import make_instance
from banditkit.experiments.figures import p1_rage as figures
from banditkit.identification import GBAI, P1RAGE, MixedPeace, ODLinBAI, P1Peace, Peace
from banditkit.identification.fixed_budget import iid_arms
from banditkit.protocol import Batch

SOARE = make_instance("soare", d=10, omega=0.1)


def _identity_rho(size: int) -> float:
    """inf_λ ρ(S, λ) (Eq. (5)) for S a set of ``size`` standard basis vectors among the arms
    X = I: max_{i≠j∈S} 1/λ_i + 1/λ_j is least for λ uniform on S, where it is 2|S|."""
    return 2.0 * size if size > 1 else 0.0


# --- the first pull: λ_1 = λ* (Algorithm 2 line 2, Algorithm 4 line 3) ----------------------

@pytest.mark.parametrize("cls", [P1RAGE, P1Peace])
def test_the_first_pull_is_drawn_from_the_g_optimal_design(cls):
    # λ* is G-optimal (Eq. (3)); on the Soare arms the Kiefer–Wolfowitz bound
    # max_x ||x||²_{A(λ)⁻¹} ≥ d holds with equality only at a G-optimal λ, and uniform weight on
    # e_1..e_10 attains it, so λ_1 must satisfy the bound up to the solver's gap
    d = SOARE.X.shape[1]
    algo = cls(SOARE.X, None, 1010, rng=5)
    lam = algo.sampling_weights
    A = SOARE.X.T @ (lam[:, None] * SOARE.X)
    g_value = np.max(np.einsum("ij,jk,ik->i", SOARE.X, np.linalg.inv(A), SOARE.X))
    assert d - 1e-9 <= g_value <= d * 1.01
    # an XY design of the items would not do: it spends less on the arms the items agree on
    assert not np.allclose(lam, np.full(SOARE.n_arms, 1 / SOARE.n_arms))
    first = algo.next_batch()
    assert first.n_pulls == 1  # Algorithm 4 line 8: t − 1 = 0 refreshes after pull 1
    shadow = np.random.default_rng(5)
    assert np.array_equal(first.sequence(), iid_arms(shadow, lam, 1))


def test_the_first_pull_is_the_g_design_on_an_instance_with_a_closed_form():
    # X = {e_1, e_2, (e_1 + e_2)/√2·1.2}: λ* is not the XY design of Z = X, and the G-optimal
    # design of {e_1, e_2, v} with ||v|| > 1 must put weight on v; ρ and λ* differ
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.85, 0.85]])
    for cls in (P1RAGE, P1Peace):
        lam = cls(X, None, 100, rng=0).sampling_weights
        A = X.T @ (lam[:, None] * X)
        g_value = np.max(np.einsum("ij,jk,ik->i", X, np.linalg.inv(A), X))
        assert 2 - 1e-9 <= g_value <= 2 * 1.01  # Kiefer–Wolfowitz: d = 2 at the optimum


# --- the constructors' defaults (Appendix D; Algorithm 3 and 4 as printed) -----------------

def test_p1_rage_defaults_are_the_papers():
    algo = P1RAGE(SOARE.X, None, 1000, rng=0)
    assert algo.m == 15  # "We take m = 15 for P1-RAGE" (Appendix D)
    assert algo.update == "periodic"  # "update λ_t in the same frequency as P1-Peace"
    assert algo.phases == "paper" and algo.epoch_rule == "paper"


def test_p1_default_epoch_length_is_floor_T_over_log2_rho():
    # Algorithm 4 line 2: R = ⌊T / log₂ inf_λ ρ(X, λ)⌋. On X = I_5, ρ = 10 (closed form), so
    # R = ⌊1000 / 3.32⌋ = 301; the code's ⌈log₂ ρ⌉ = 4 would give 250
    X = np.eye(5)
    expected = math.floor(1000 / math.log2(_identity_rho(5)))
    assert expected == 301
    for cls in (P1RAGE, P1Peace):
        algo = cls(X, None, 1000, rng=0)
        assert algo.epoch_length == expected
        # the refreshes: after pull 1 and then every R pulls (t − 1 = cR)
        sizes = []
        while (batch := algo.next_batch()) is not None:
            sizes.append(batch.n_pulls)
            algo.observe(batch, np.zeros(batch.n_runs))
        assert sizes[:3] == [1, expected, expected] and sum(sizes) == 1000


@pytest.mark.parametrize(("m", "sizes"), [(15, [5, 4, 2, 2]), (1, [5, 4])])
def test_p1_rage_default_virtual_phases_follow_algorithm_3_as_printed(m, sizes):
    # θ̂ on X = I_5 with estimated gaps (0, 0.2, 0.55, 0.8, 2). Algorithm 3: X^(0) = all;
    # while |X^(i)| > 1 and i ≤ m: design X^(i), then keep gaps ≤ 2^{-i}: i = 0 keeps gaps
    # ≤ 1 (4 items), i = 1 ≤ 1/2 (2), i = 2 ≤ 1/4 (2), i = 3 ≤ 1/8 (1): designs of sizes
    # 5, 4, 2, 2. With m = 1 the loop runs for i = 0, 1 only (m + 1 designs).
    theta = np.array([1.0, 0.8, 0.45, 0.2, -1.0])
    algo = P1RAGE(np.eye(5), None, 1000, m=m, rng=0)
    virtual = algo._virtual(theta)
    assert [s.size for s in virtual.sets] == sizes
    assert all(np.isin(b, a).all() for a, b in itertools.pairwise(virtual.sets))


# --- the figure's algorithms and constants (Section 6, Appendix D) ---------------------------

EXPECTED = {"P1-RAGE": P1RAGE, "P1-Peace": P1Peace, "G-BAI": GBAI,
            "Mixed-Peace": MixedPeace, "Peace": Peace, "OD-LinBAI": ODLinBAI}


@pytest.mark.parametrize("figure", figures.FIGURES, ids=lambda f: f.name)
def test_every_figure_runs_the_papers_six_algorithms_with_its_constants(figure):
    assert [a.name for a in figure.algorithms] == list(EXPECTED)
    point = figure.points[0]
    T = int(point["T"])
    env = SOARE  # the factories only read X and Z
    for spec in figure.algorithms:
        algo = spec.factory(env, np.random.default_rng(0),
                            **{**spec.params, **point["algorithm_params"]})
        assert type(algo) is EXPECTED[spec.name], spec.name
        assert algo.budget == T
        if spec.name in ("P1-RAGE", "P1-Peace"):
            # Appendix D: P1-RAGE with m = 15, both refreshed as Algorithm 4 does
            assert algo.update == "periodic" and algo.epoch_rule == "paper"
        if spec.name == "P1-RAGE":
            assert algo.m == 15 and algo.phases == "paper"


# --- Mixed-Peace (Algorithm 6): halving threshold and nested survivors ----------------------

def _drive(algo, means_of_epoch):
    """Run ``algo`` answering each batch with noiseless rewards, the arm means of the epoch;
    returns the survivors after each epoch."""
    survivors = [algo.active.copy()]
    epoch = 0
    while (batch := algo.next_batch()) is not None:
        mu = means_of_epoch(epoch)
        algo.observe(batch, batch.counts * mu[batch.arms])
        # lines 12–14: the survivors are the best of X_r by the running estimate θ̂_t
        values = algo.Z @ algo.theta_hat
        dropped = np.setdiff1d(survivors[-1], algo.active)
        if dropped.size:
            assert values[algo.active].min() >= values[dropped].max()
        survivors.append(algo.active.copy())
        epoch += 1
    return survivors


def test_mixed_peace_halves_rho_and_keeps_a_nested_prefix_of_the_ranking():
    # X = I_7: ρ(S) = 2|S| (closed form), R = ⌈log₂ 14⌉ = 4. Lines 11–14 keep the largest
    # prefix with ρ(prefix) ≤ ρ(X_r)/2, i.e. 2k ≤ |X_r|: 7 → 3 → 1.
    K, T = 7, 700
    algo = MixedPeace(np.eye(K), None, T, rng=3)
    assert algo.n_epochs == math.ceil(math.log2(_identity_rho(K))) == 4
    # epoch 0 favours items 0..2; afterwards items 3..6 look far better, so that a ranking of
    # *all* items (not of the survivors X_r) would bring eliminated items back
    early = np.array([0.9, 0.8, 0.7, 0.1, 0.1, 0.1, 0.1])
    late = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 5.0, 5.0])
    survivors = _drive(algo, lambda r: early if r == 0 else late)
    assert [s.size for s in survivors[:3]] == [7, 3, 1]
    assert set(survivors[1]) == {0, 1, 2}
    for before, after in itertools.pairwise(survivors):
        assert set(after) <= set(before)  # X_{r+1} ⊆ X_r
    assert algo.t == T


@pytest.mark.parametrize("K", [5, 11])
def test_mixed_peace_survivor_counts_follow_the_halving_closed_form(K):
    # |X_{r+1}| = the largest k with 2k ≤ |X_r| (ρ of k basis items is 2k), until one is left.
    # Odd sizes (5 → 2 → 1, 11 → 5 → 2 → 1) keep every comparison strict: at an even |X_r|,
    # k = |X_r|/2 meets the threshold with equality and the design solver's gap decides.
    algo = MixedPeace(np.eye(K), None, 40 * K, rng=1)
    mu = np.linspace(1.0, 0.1, K)
    survivors = _drive(algo, lambda r: mu)
    sizes = [s.size for s in survivors]
    expected = [K]
    while expected[-1] > 1:
        expected.append(expected[-1] // 2)
    assert sizes[:len(expected)] == expected
    assert all(s == 1 for s in sizes[len(expected):])


def test_mixed_peace_pulls_mix_the_current_survivors_design_with_g():
    # line 5: λ_r = (arginf ρ(X_r, λ) + λ*)/2; on X = I_7 both are uniform on their sets:
    # λ* = 1/7 everywhere, the XY design 1/|X_r| on X_r
    algo = MixedPeace(np.eye(7), None, 700, rng=2)
    mu = np.linspace(1.0, 0.1, 7)
    while (batch := algo.next_batch()) is not None:
        active = algo.active
        expected = np.full(7, 1 / 14)
        if active.size > 1:
            expected[active] += 0.5 / active.size
        else:
            expected += 1 / 14  # a single survivor: the uniform design (the authors' code)
        np.testing.assert_allclose(algo.distribution, expected, atol=2e-3)
        algo.observe(batch, batch.counts * mu[batch.arms])


def test_batches_answered_here_are_the_ones_asked():
    algo = MixedPeace(np.eye(3), None, 30, rng=0)
    batch = algo.next_batch()
    with pytest.raises(ValueError, match="batch must be"):
        algo.observe(Batch(np.array([0]), np.array([batch.n_pulls + 1])), np.zeros(1))
