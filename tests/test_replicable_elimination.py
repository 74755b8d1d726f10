"""Algorithms 1 and 2 of Esfandiari et al. (2023) and the batched elimination baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.estimation import repmean_samples
from banditkit.policies import (
    BatchedElimination,
    ReplicableBatchedElimination,
    ReplicableElimination,
)
from banditkit.policies.elimination.replicable import paper_beta
from banditkit.rng import stream

EASY = BernoulliBandit(np.array([0.3, 0.5, 0.7]))


@pytest.mark.parametrize("cls", [ReplicableElimination, ReplicableBatchedElimination])
@pytest.mark.parametrize("kwargs, match", [
    (dict(rho=0.0), "rho"), (dict(rho=1.5), "rho"), (dict(horizon=2), "T >= K"),
    (dict(n_arms=1), "n_arms"), (dict(commit="best"), "commit"),
    (dict(q=1.0), "q"), (dict(n_batches=1), "n_batches"),
])
def test_bad_input_refused(cls, kwargs, match):
    args = dict(n_arms=3, horizon=1000, rho=0.3, rng=0) | kwargs
    with pytest.raises(ValueError, match=match):
        cls(**args)


def test_bad_constants_refused():
    with pytest.raises(ValueError, match="beta"):
        ReplicableElimination(3, 1000, 0.3, 0, beta=0)
    with pytest.raises(ValueError, match="2\\*delta"):
        ReplicableBatchedElimination(3, 1000, 0.3, 0, rho_per_estimate=0.01, delta=0.01)
    with pytest.raises(ValueError, match="sample_rule"):
        ReplicableBatchedElimination(3, 1000, 0.3, 0, sample_rule="x")
    with pytest.raises(ValueError, match="T >= K"):
        BatchedElimination(3, 2)


def test_algorithm2_batches_thresholds_and_last_batch_follow_the_paper():
    K, T, rho = 3, 10**7, 0.3
    alg = ReplicableElimination(K, T, rho, stream(0, "xi"))
    B = math.ceil(math.log(T))
    q = T ** (1 / B)
    assert (alg.n_batches, alg.q, alg.beta) == (B, q, paper_beta(K, rho)) == (B, q, 2304)
    assert paper_beta(10, 0.1) == 10_000
    trial = simulate(alg, EASY, horizon=T, seed=1)
    batches = [(b.arms, b.counts) for b in alg.decisions.batches()]
    c = 0
    for i, (_, counts) in enumerate(batches[:-1], start=1):
        c += math.floor(q**i)
        assert np.all(counts == alg.beta * math.floor(q**i))  # β⌊q^i⌋ pulls per active arm
        u_bar = alg.thresholds[i - 1]
        u = math.sqrt(2 * math.log(2 * K * T * B) / c)
        assert u / 2 <= u_bar <= u  # Ū_i ~ Uni[U_i/2, U_i]
    # the last batch: the rest of the horizon on the smallest active index, which is the best
    last_arms, last_counts = batches[-1]
    assert last_arms.tolist() == [2] and last_counts.sum() == T - sum(c.sum() for _, c in
                                                                    batches[:-1])
    assert trial.n_pulls == T


def test_algorithm1_lemma_rule_tops_up_to_the_lemma_sample_size():
    K, T, rho = 2, 10**8, 0.3
    alg = ReplicableBatchedElimination(K, T, rho, stream(0, "xi"))
    simulate(alg, BernoulliBandit(np.array([0.3, 0.7])), horizon=T, seed=2)
    B = alg.n_batches
    rho1, delta = rho / (K * B), 1 / (2 * K * T * B)
    assert alg.rho_per_estimate == pytest.approx(rho1) and alg.delta == pytest.approx(delta)
    first = alg.decisions.batches()[0].counts
    tau1 = min(1.0, math.sqrt(math.log(2 * K * T * B) / math.floor(alg.q)))  # line 9's cap
    assert np.all(first == repmean_samples(tau1, delta, rho1))
    # with the theory constants and a small horizon no batch fits: arm 0 for the whole horizon
    small = ReplicableBatchedElimination(6, 45_000, 0.3, 0)
    tr = simulate(small, BernoulliBandit(np.linspace(0.44, 0.59, 6)), horizon=45_000, seed=0)
    assert tr.counts.tolist() == [45_000, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("make", [
    lambda rng: ReplicableElimination(3, 10**8, 0.3, rng),
    lambda rng: ReplicableBatchedElimination(3, 10**9, 0.3, rng),
    lambda rng: ReplicableBatchedElimination(3, 10**9, 0.3, rng, sample_rule="literal"),
    lambda rng: BatchedElimination(3, 10**6),
])
def test_best_arm_never_eliminated_and_others_are(make):
    eliminated_any = 0
    for seed in range(25):
        alg = make(stream(seed, "xi"))
        simulate(alg, EASY, horizon=alg.horizon, seed=seed)
        assert 2 in alg.active.tolist()
        eliminated_any += len(alg.eliminated) > 0
    assert eliminated_any >= 20  # and the horizon is long enough for eliminations to happen


def test_regret_is_sublinear():
    env = BernoulliBandit(np.array([0.3, 0.7]))
    per_round = []
    for T in (10**6, 10**7, 10**8):
        regrets = [simulate(ReplicableElimination(2, T, 0.3, stream(s, "xi")), env, horizon=T,
                            seed=s).final_regret for s in range(5)]
        per_round.append(np.mean(regrets) / T)
    assert per_round[0] > per_round[1] > per_round[2]
    assert per_round[2] < 0.01 < 0.2  # 0.2 = the regret per round of uniform play


def test_shared_random_threshold_makes_decisions_replicate():
    """Executions sharing ξ agree far more often than executions with independent ξ (small β
    so that the decisions depend on the data)."""
    env = BernoulliBandit(np.array([0.5, 0.55, 0.6]))
    T, n = 10**6, 120
    shared = independent = 0
    for j in range(n):
        runs = [simulate(ReplicableElimination(3, T, 0.3, stream(2, j, xi), beta=20), env,
                         horizon=T, seed=stream(2, j, e, "environment"))
                for xi, e in ((0, 0), (0, 1), (1, 1))]
        shared += runs[0].decisions.same_as(runs[1].decisions)
        independent += runs[0].decisions.same_as(runs[2].decisions)
    assert shared >= 0.75 * n
    assert independent <= 0.5 * n


def test_paper_constants_replicate_where_decisions_depend_on_data():
    env = BernoulliBandit(np.linspace(0.3, 0.7, 10))
    T, rho, n = 10**7, 0.5, 60
    differ = 0
    elimination_batches = set()
    for j in range(n):
        a, b = (ReplicableElimination(10, T, rho, stream(3, j, "algorithm")) for _ in (0, 1))
        simulate(a, env, horizon=T, seed=stream(3, j, 0, "environment"))
        simulate(b, env, horizon=T, seed=stream(3, j, 1, "environment"))
        differ += not a.decisions.same_as(b.decisions)
        elimination_batches.add(tuple(sorted(a.eliminated.items())))
    assert len(elimination_batches) > 1  # the decisions really depend on the rewards
    assert differ / n <= rho


@pytest.mark.parametrize("cls", [ReplicableElimination, ReplicableBatchedElimination,
                                 BatchedElimination])
@pytest.mark.parametrize("kwargs, name", [
    (dict(confidence="1"), "confidence"), (dict(confidence=None), "confidence"),
    (dict(confidence=True), "confidence"), (dict(q="2"), "q"), (dict(q="abc"), "q"),
    (dict(q=None, confidence=-1.0), "confidence"),
])
def test_non_numbers_are_refused_naming_the_parameter(cls, kwargs, name):
    """Text, None and booleans for q and confidence are refused with the parameter's name, as
    rho='0.3' is (not numpy's "ufunc 'isfinite' not supported", nor accepted via float())."""
    with pytest.raises((TypeError, ValueError), match=rf"^{name} must be"):
        cls(3, 1000, **kwargs)


def test_short_horizon_refusal_names_what_the_user_set():
    """With the default ρ' = ρ/(KB) and δ = 1/(2KTB), Lemma 2.5's ρ' > 2δ is T > 1/ρ: the
    refusal names the horizon and ρ, not two quantities the user never set."""
    with pytest.raises(ValueError, match=r"^horizon T=3 is too short for rho=0\.3: .*"
                                         r"T > 1/rho = 3\.333"):
        ReplicableBatchedElimination(2, 3, 0.3, 0)
    assert ReplicableBatchedElimination(2, 4, 0.3, 0).rho_per_estimate > 0  # T = 4 > 1/ρ
    with pytest.raises(ValueError, match=r"^horizon T=5 is too short for rho=0\.3 \(rho_e = "
                                         r"rho - rho_c = 0\.15.*T > 1/rho_e = 6\.667"):
        ReplicableBatchedElimination(2, 5, 0.3, 0, commit="replicable-argmax")
    with pytest.raises(ValueError, match=r"^rho_per_estimate=1e-06 must exceed 2\*delta = "
                                         r"1/\(KTB\).*raise rho_per_estimate or the horizon"):
        ReplicableBatchedElimination(2, 10**4, 0.3, 0, rho_per_estimate=1e-6)
    with pytest.raises(ValueError, match=r"^delta=0\.2 is too large for rho=0\.3"):
        ReplicableBatchedElimination(2, 1000, 0.3, 0, delta=0.2)
