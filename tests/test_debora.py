"""DEBORA, DEBORA-S and DEBORA-H (Bollini et al., Algorithms 2-4): epochs, UCB choice, the LP
strategies against brute force, the epochs' draws from ξ and their stopping rule, horizons of
10¹⁵, the safety of DEBORA-H's mixture, replicability, and input checks."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest
from scipy.optimize import linprog

from banditkit.envs.constrained import ConstrainedBandit, slater_strategy
from banditkit.envs.instances import bernoulli
from banditkit.estimation.replicable_mean import replicable_means
from banditkit.experiments.replicability import clopper_pearson
from banditkit.policies.constrained.debora import DEBORA, DEBORAH, DEBORAS
from banditkit.policies.epoch_sampler import epoch_counts
from banditkit.policies.index.ucb import UCB1
from banditkit.protocol import Batch
from banditkit.simulate import simulate

RHO, DELTA = 0.2, 0.01

# K = 3, m = 1: the optimal safe strategy mixes arms 0 and 1 (0.8 x + 0.3 (1 − x) = 0.5)
R3 = np.array([0.9, 0.5, 0.2])
G3 = np.array([[0.8, 0.3, 0.1]])
A3 = np.array([0.5])
# K = 4, m = 2
R4 = np.array([0.8, 0.6, 0.5, 0.1])
G4 = np.array([[0.7, 0.4, 0.2, 0.1], [0.3, 0.6, 0.5, 0.2]])
A4 = np.array([0.45, 0.5])
# K = 4, m = 2, an expensive best arm: the optimistic set binds early, strategies mix
RM = np.array([0.9, 0.5, 0.4, 0.1])
GM = np.array([[0.95, 0.1, 0.2, 0.05], [0.5, 0.3, 0.6, 0.4]])
AM = np.array([0.3, 0.8])


def paper_constants(name: str, K: int, T: int, m: int = 0) -> tuple[float, float]:
    """ρ', δ' of line 2, written out independently of the module."""
    if name == "DEBORA":
        d = 2 * K * max(1, math.ceil(math.log(T)))
    else:
        d = 2 * (m + 1) * K**2 * max(1, math.ceil(math.log2(T)))
    return RHO / d, DELTA / d


def narrowest(name: str, K: int, T: int, m: int = 0, factor: float = 1.2) -> float:
    """``factor`` times the smallest width_scale allowed (RepMean at ρ'_c = 1)."""
    rp, dp = paper_constants(name, K, T, m)
    return factor * (rp - 2 * dp) / (1 - 2 * dp)


def zeta(N: np.ndarray, rp: float, dp: float, c: float = 1.0) -> np.ndarray:
    """Eq. (1) times the width multiplier."""
    return c * np.sqrt(2 * np.log(2 / dp) / (np.maximum(N, 1) * (rp - 2 * dp) ** 2))


def rho_c(rp: float, dp: float, c: float) -> float:
    """Replicability level at which Lemma 2.5's precision is c·ζ (module notes)."""
    return 2 * dp + (rp - 2 * dp) / c


def drive(policy, env, seed: int) -> list[tuple[Batch, np.ndarray, np.ndarray | None]]:
    """Run a policy to its end, keeping every batch and its outcome."""
    rng = np.random.default_rng(seed)
    out = []
    while (batch := policy.next_batch()) is not None:
        o = env.pull(batch, rng)
        policy.observe(batch, o.rewards, o.costs)
        out.append((batch, o.rewards, o.costs))
    return out


def hard_policy(G, alpha, T, seed, c=1.0, margins=None):
    x_safe, lam = slater_strategy(G, alpha)
    return DEBORAH(G.shape[1], T, alpha, x_safe, safe_margins=lam if margins is None else margins,
                   rho=RHO, delta=DELTA, rng=seed, width_scale=c)


# -- epochs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("T", [1, 2, 7, 64, 1000, 4097])
def test_number_of_epochs_bounded(T: int) -> None:
    """Lemmas 3.1, 4.2, 5.2: at most K⌈log₂T⌉ epoch changes (epochs 0..H)."""
    bern = bernoulli((0.3, 0.5, 0.55, 0.7))
    env3 = ConstrainedBandit(R3, G3, A3)
    env4 = ConstrainedBandit(R4, G4, A4)
    cases = [(DEBORA(4, T, rho=RHO, delta=DELTA, rng=1), bern),
             (DEBORA(4, T, rho=RHO, delta=DELTA, rng=1,
                     width_scale=narrowest("DEBORA", 4, T)), bern),
             (DEBORAS(3, T, A3, rho=RHO, delta=DELTA, rng=2), env3),
             (DEBORAS(3, T, A3, rho=RHO, delta=DELTA, rng=2,
                      width_scale=narrowest("DEBORA-S", 3, T, 1)), env3),
             (hard_policy(G4, A4, T, 3), env4),
             (hard_policy(G4, A4, T, 3, c=narrowest("DEBORA-H", 4, T, 2)), env4)]
    for policy, env in cases:
        trial = simulate(policy, env, horizon=T, seed=5)
        K = env.n_arms
        assert trial.n_pulls == T
        assert trial.info["epochs"] == trial.n_batches  # one batch per epoch
        assert trial.info["epochs"] - 1 <= K * max(0, math.ceil(math.log2(T)))


def test_debora_epochs_double_the_chosen_arm() -> None:
    T = 5000
    p = DEBORA(4, T, rho=RHO, delta=DELTA, rng=3, width_scale=0.02)
    log = drive(p, bernoulli((0.3, 0.5, 0.55, 0.7)), seed=4)
    counts = np.zeros(4, dtype=int)
    for i, (batch, _, _) in enumerate(log):
        assert batch.n_runs == 1  # one run of one arm
        a = int(batch.arms[0])
        before = counts[a]
        counts[a] += int(batch.counts[0])
        if i < len(log) - 1:
            assert counts[a] == max(2 * before, 1)
        else:  # the last epoch is cut by the horizon
            assert counts[a] <= max(2 * before, 1)
    assert counts.sum() == T
    assert log[0][0].arms[0] == 0 and log[0][0].counts[0] == 1  # a_0 = 0 (all tie), one round


@pytest.mark.parametrize("c", [1.0, 0.02])
def test_debora_ucb_choice(c: float) -> None:
    """a_h = argmax r̂_h + ζ_h (lowest index on ties), with r̂ refreshed only for a_{h−1} by
    RepMean from one offset of ξ per epoch — recomputed here from the observed sums."""
    K, T, seed = 4, 4000, 11
    p = DEBORA(K, T, rho=RHO, delta=DELTA, rng=seed, width_scale=c)
    log = drive(p, bernoulli((0.3, 0.5, 0.55, 0.7)), seed=12)
    rp, dp = paper_constants("DEBORA", K, T)
    xi = np.random.default_rng(seed)
    est = np.full(K, 0.5)
    N = np.zeros(K, dtype=int)
    S = np.zeros(K)
    prev = None
    for batch, rewards, _ in log:
        if prev is not None:
            u = xi.random()
            est[prev] = replicable_means(S[prev:prev + 1], N[prev:prev + 1], rho_c(rp, dp, c),
                                         dp, np.array([u]))[0]
        ucb = est + zeta(N, rp, dp, c)
        expected = int(np.flatnonzero(ucb == ucb.max())[0])
        assert batch.arms[0] == expected
        prev = expected
        N[expected] += batch.counts[0]
        S[expected] += rewards[0]


# -- DEBORA-S --------------------------------------------------------------------------------

def _vertices(c: np.ndarray, b: float) -> list[np.ndarray]:
    """Vertices of {x ∈ Δ_K : c·x ≤ b} (one constraint), by enumeration."""
    K = c.size
    eye = np.eye(K)
    out = [eye[k] for k in range(K) if c[k] <= b + 1e-12]
    for i, j in itertools.combinations(range(K), 2):
        if c[i] != c[j]:
            t = (b - c[j]) / (c[i] - c[j])
            if 0 < t < 1:
                out.append(t * eye[i] + (1 - t) * eye[j])
    return out


@pytest.mark.parametrize("narrow", [False, True])
def test_debora_s_strategy_is_the_optimistic_lp_optimum(narrow: bool) -> None:
    """Each epoch's strategy maximises (r̂ + ζ)ᵀx over Eq. (2)'s set, with every mean
    re-estimated by RepMean (offsets (m + 1)K per epoch, after the action stream's seed), all
    recomputed here and solved by vertex enumeration."""
    K, m, T, seed = 3, 1, 20000, 21
    c = narrowest("DEBORA-S", K, T, m, 1.5) if narrow else 1.0
    p = DEBORAS(K, T, A3, rho=RHO, delta=DELTA, rng=seed, width_scale=c)
    log = drive(p, ConstrainedBandit(R3, G3, A3), seed=22)
    rp, dp = paper_constants("DEBORA-S", K, T, m)
    xi = np.random.default_rng(seed)
    xi.integers(0, 2**63, size=4)  # the action stream's seed is read first
    r_hat, g_hat = np.full(K, 0.5), np.full(K, 0.5)
    N, S, C = np.zeros(K, dtype=int), np.zeros(K), np.zeros(K)
    mixed = 0
    for h, (batch, rewards, costs) in enumerate(log):
        z = zeta(N, rp, dp, c)
        if h == 0:
            np.testing.assert_array_equal(batch.strategy, [1, 0, 0])  # line 5
        else:
            u = xi.random((m + 1) * K).reshape(m + 1, K)
            seen = N > 0
            r_hat[seen] = replicable_means(S[seen], N[seen], rho_c(rp, dp, c), dp, u[0, seen])
            g_hat[seen] = replicable_means(C[seen], N[seen], rho_c(rp, dp, c), dp, u[1, seen])
            verts = _vertices(g_hat - z, A3[0])
            best = max(float((r_hat + z) @ v) for v in verts)
            x = batch.strategy
            assert (g_hat - z) @ x <= A3[0] + 1e-8
            assert (r_hat + z) @ x == pytest.approx(best, rel=1e-9, abs=1e-9)
            winners = [v for v in verts if (r_hat + z) @ v >= best - 1e-9 * max(1, best)]
            if len(winners) == 1:
                np.testing.assert_allclose(x, winners[0], atol=1e-9)
            mixed += int(np.count_nonzero(x) > 1)
        np.add.at(N, batch.arms, batch.counts)
        S += batch.arm_sums(rewards, K)
        C += batch.arm_sums(costs[:, 0], K)
    if c < 1:
        assert mixed > 0  # the constraint did bind: the LP was exercised, not only argmax


@pytest.mark.parametrize("kind", ["S", "H"])
def test_epochs_are_drawn_from_the_action_stream_of_xi(kind: str) -> None:
    """Each epoch is epoch_counts(x_h, max{2Ñ_h, 1} − Ñ_h, T − t, actions) with the action
    stream seeded from ξ's first draw (so equal ξ and equal strategies give equal epochs); its
    law is the per-round loop's (tests/test_epoch_sampler.py)."""
    K, T, seed = 4, 3000, 31
    env = ConstrainedBandit(RM, GM, AM)
    c = narrowest("DEBORA-" + kind, K, T, 2)
    p = (DEBORAS(K, T, AM, rho=RHO, delta=DELTA, rng=seed, width_scale=c) if kind == "S"
         else hard_policy(GM, AM, T, seed, c=c))
    log = drive(p, env, seed=32)
    assert sum(np.count_nonzero(b.strategy) > 1 for b, _, _ in log) >= 3  # mixed strategies
    actions = np.random.default_rng(np.random.default_rng(seed).integers(0, 2**63, size=4))
    N = np.zeros(K, dtype=np.int64)
    for batch, _, _ in log:
        expected = epoch_counts(batch.strategy, np.maximum(2 * N, 1) - N, T - N.sum(), actions)
        np.testing.assert_array_equal(batch.allocation(K), expected)
        assert np.all(batch.strategy[batch.arms] > 0) and np.all(np.diff(batch.arms) > 0)
        N += expected
    assert N.sum() == T


def test_epoch_ends_at_the_first_doubling() -> None:
    """Every epoch but the last ends at the round where one arm reaches max{2Ñ_h(a), 1}: that
    arm is exactly at its target and every other below its own; the last (cut by the horizon)
    has no arm beyond its target."""
    K, T = 4, 5000
    p = DEBORAS(K, T, AM, rho=RHO, delta=DELTA, rng=41,
                width_scale=narrowest("DEBORA-S", K, T, 2))
    log = drive(p, ConstrainedBandit(RM, GM, AM), seed=42)
    N = np.zeros(K, dtype=int)
    for i, (batch, _, _) in enumerate(log):
        target = np.maximum(2 * N, 1)
        N = N + batch.allocation(K)
        assert np.all(N <= target)
        if i < len(log) - 1:
            assert np.count_nonzero(N == target) == 1
    assert N.sum() == T


def test_horizon_of_1e15_with_exact_counts_in_constant_memory() -> None:
    """The O(K) epochs reach T = 10¹⁵ (the paper's constants, K = 5, m = 2): every pull is
    accounted for in int64, at most K(⌈log₂T⌉ + 1) + 1 epochs, and the environment's
    sufficient statistics answer each epoch at once (no batch is expanded pull by pull)."""
    tracemalloc.start()  # numpy reports its buffers: one array per pull would need > 8 MB
    T = 10**15
    r, G, alpha = np.array([0.9, 0.7, 0.55, 0.4, 0.2]), np.array(
        [[0.9, 0.6, 0.4, 0.3, 0.1], [0.2, 0.3, 0.65, 0.5, 0.1]]), np.array([0.5, 0.5])
    env = ConstrainedBandit(r, G, alpha)
    p = DEBORAS(5, T, alpha, rho=0.3, delta=0.05, rng=3)
    try:
        trial = simulate(p, env, horizon=T, seed=4, checkpoints=np.array([T // 10, T]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 10**6
    assert trial.n_pulls == T and p.counts.sum() == T and p.counts.dtype == np.int64
    np.testing.assert_array_equal(trial.counts, p.counts)
    assert trial.n_batches <= 5 * (math.ceil(math.log2(T)) + 1) + 1
    assert 0 < trial.violation[-1] < T


def test_horizons_past_2_to_the_53_are_exact_and_beyond_2_to_the_62_refused() -> None:
    """Counts past 2⁵³ (where float64 stops holding every integer) stay exact: the pulls per
    arm, the total and the default checkpoints' last entry are the horizon itself."""
    r, G, alpha = R4, G4, A4
    env = ConstrainedBandit(r, G, alpha)
    for T in (2**53 + 7, 2**62):
        p = DEBORAS(4, T, alpha, rho=0.3, delta=0.05, rng=3)
        trial = simulate(p, env, horizon=T, seed=4)
        assert trial.n_pulls == T and int(trial.counts.sum()) == T
        assert int(trial.checkpoints[-1]) == T
    with pytest.raises(ValueError, match=r"horizon must be at most 2\*\*62"):
        DEBORAS(4, 2**62 + 1, alpha, rho=0.3, delta=0.05, rng=3)


# -- DEBORA-H --------------------------------------------------------------------------------

def _hard_instances():
    rng = np.random.default_rng(51)
    # loose constraints: the pessimistic set soon holds x̃_h (V_h = ∅, σ_h = 0)
    out = [(R4, G4, A4), (RM, GM, AM),
           (np.array([0.3, 0.9, 0.5, 0.6]),
            np.array([[0.1, 0.3, 0.2, 0.1], [0.2, 0.1, 0.3, 0.2]]), np.array([0.9, 0.9]))]
    for _ in range(3):
        K, m = 4, 2
        G = rng.uniform(0.05, 0.95, (m, K))
        _, lam = slater_strategy(G, np.full(m, 0.6))
        alpha = np.clip(np.full(m, 0.6) - lam + 0.05, 0, 1)  # small margins: λ_min = 0.05
        out.append((rng.uniform(0, 1, K), G, alpha))
    return out


@pytest.mark.parametrize("factor", [None, 3.0, 1.2])
def test_debora_h_mixture_is_pessimistically_safe(factor: float | None) -> None:
    """σ_h(α_i − λ_i) + (1 − σ_h) min{(ĝ_{h,i} + ζ_h)ᵀx̃_h, 1} ≤ α_i for all i and h (the bound
    of Lemma 5.1's proof), 0 ≤ σ_h ≤ 1/(1 + λ_min) (Lemma E.1), x_h = σ_h x◇ + (1 − σ_h) x̃_h,
    and every strategy played is safe for the true costs (the clean event holds here)."""
    T = 20000
    branches = set()
    for idx, (r, G, alpha) in enumerate(_hard_instances()):
        x_safe, lam = slater_strategy(G, alpha)
        c = 1.0 if factor is None else narrowest("DEBORA-H", r.size, T, alpha.size, factor)
        p = DEBORAH(r.size, T, alpha, x_safe, safe_margins=lam, rho=RHO, delta=DELTA,
                    rng=60 + idx, width_scale=c)
        trial = simulate(p, ConstrainedBandit(r, G, alpha), horizon=T, seed=70 + idx)
        assert len(trial.info["sigmas"]) == trial.info["epochs"] == len(p.epochs)
        rp, dp = paper_constants("DEBORA-H", r.size, T, alpha.size)  # the proof's K²
        for rec in p.epochs:
            np.testing.assert_allclose(rec.widths, zeta(rec.counts, rp, dp, c), rtol=1e-12)
            s = rec.sigma
            assert 0 <= s <= 1 / (1 + lam.min()) + 1e-8
            w = np.minimum((rec.costs + rec.widths[None, :]) @ rec.optimistic, 1.0)
            # σ_h keeps room r = 2K·2⁻³² for the rounding of the strategy played
            assert p.rounding == 2 * r.size * 2.0**-32
            assert np.all(s * (alpha - lam) + (1 - s) * w <= alpha - p.rounding / 2)
            np.testing.assert_allclose(rec.strategy, s * p.safe_strategy
                                       + (1 - s) * rec.optimistic, atol=1e-9)
            assert np.all(G @ rec.strategy <= alpha)  # the rounded strategy, no tolerance
            if rec.start > 0 and np.all((rec.costs + rec.widths) @ rec.optimistic <= alpha):
                assert s == 0  # V_h empty
            sigma0 = np.max((1 - alpha) / (1 - alpha + lam))
            branches.add("empty" if s == 0 else "worst" if s == pytest.approx(sigma0)
                         else "between")
        assert trial.violation[-1] <= 1e-6
    if factor == 1.2:  # narrow widths reach every branch of lines 19-24
        assert branches == {"empty", "worst", "between"}


def test_debora_h_first_strategy_safe_for_any_costs() -> None:
    """Line 5: x_0 is safe for every cost matrix in [0, 1] under which x◇ has the given
    margins — the worst case of each constraint, by an LP over the costs."""
    for r, G, alpha in _hard_instances():
        x_safe, lam = slater_strategy(G, alpha)
        p = DEBORAH(r.size, 100, alpha, x_safe, safe_margins=lam, rho=RHO, delta=DELTA, rng=1)
        x0 = p.next_batch().strategy
        K = r.size
        for i in range(alpha.size):
            # max gᵀx_0 over g ∈ [0, 1]^K with gᵀx◇ ≤ α_i − λ_i
            worst = linprog(-x0, A_ub=x_safe[None, :], b_ub=[alpha[i] - lam[i]],
                            bounds=[(0, 1)] * K, method="highs")
            assert -worst.fun <= alpha[i] + 1e-9
        sigma0 = np.max((1 - alpha) / (1 - alpha + lam))
        np.testing.assert_allclose(x0, sigma0 * x_safe + (1 - sigma0) * np.eye(K)[0], atol=1e-9)


# -- replicability ---------------------------------------------------------------------------

def _identical_pairs(make, env, T: int, pairs: int, shared: bool = True) -> int:
    same = 0
    for j in range(pairs):
        a = simulate(make(j), env, horizon=T, seed=10_000 + 2 * j)
        b = simulate(make(j if shared else 50_000 + j), env, horizon=T, seed=10_001 + 2 * j)
        same += a.decisions.same_as(b.decisions)
    return same


def test_replicable_with_the_paper_constants_and_ucb1_is_not() -> None:
    env = bernoulli((0.2, 0.5, 0.8))
    T, pairs = 5000, 30
    same = _identical_pairs(lambda s: DEBORA(3, T, rho=RHO, delta=DELTA, rng=s), env, T, pairs)
    lo, _ = clopper_pearson(pairs - same, pairs)
    assert lo <= RHO  # non-replication not significantly above ρ
    assert same >= pairs - 3
    assert _identical_pairs(lambda s: UCB1(3, horizon=1000), env, 1000, 10) <= 1
    cenv = ConstrainedBandit(R4, G4, A4)
    T, pairs = 300, 6
    same_s = _identical_pairs(lambda s: DEBORAS(4, T, A4, rho=RHO, delta=DELTA, rng=s),
                              cenv, T, pairs)
    same_h = _identical_pairs(lambda s: hard_policy(G4, A4, T, s), cenv, T, pairs)
    assert clopper_pearson(pairs - same_s, pairs)[0] <= RHO
    assert clopper_pearson(pairs - same_h, pairs)[0] <= RHO


def test_replication_comes_from_the_shared_internal_randomness() -> None:
    """With narrow widths the estimates decide: pairs sharing ξ mostly replicate, pairs with
    different ξ almost never do (so the offsets and draws really come from ξ)."""
    env = bernoulli((0.2, 0.5, 0.8))
    T, pairs = 5000, 20

    def make(s):
        return DEBORA(3, T, rho=RHO, delta=DELTA, rng=s, width_scale=0.02)

    shared = _identical_pairs(make, env, T, pairs)
    apart = _identical_pairs(make, env, T, pairs, shared=False)
    assert shared >= pairs // 2
    assert apart <= 2
    cenv = ConstrainedBandit(R4, G4, A4)
    T, pairs = 1000, 6

    def make_s(s):
        return DEBORAS(4, T, A4, rho=RHO, delta=DELTA, rng=s, width_scale=0.05)

    assert _identical_pairs(make_s, cenv, T, pairs) >= pairs // 2
    assert _identical_pairs(make_s, cenv, T, pairs, shared=False) == 0


# -- input checks ----------------------------------------------------------------------------

X4 = np.array([0.0, 0.0, 0.5, 0.5])


@pytest.mark.parametrize(("build", "match"), [
    (lambda r: DEBORA(3, 100, rho=0.02, delta=0.01, rng=r), "rho must exceed 2\\*delta"),
    (lambda r: DEBORA(3, 100, rho=0.1, delta=0.0, rng=r), "delta must lie in \\(0, 1\\)"),
    (lambda r: DEBORA(3, 100, rho=1.0, delta=0.01, rng=r), "rho must lie in \\(0, 1\\)"),
    (lambda r: DEBORA(3, 0, rho=0.1, delta=0.01, rng=r), "horizon"),
    (lambda r: DEBORA(1, 10, rho=0.1, delta=0.01, rng=r), "n_arms must be >= 2"),
    (lambda r: DEBORA(3, 100, rho=0.1, delta=0.01, rng=r, width_scale=0.0), "width_scale"),
    (lambda r: DEBORA(3, 100, rho=0.1, delta=0.01, rng=r, width_scale=1e-6), "width_scale"),
    (lambda r: DEBORAS(4, 100, [0.5, 1.2], rho=0.1, delta=0.01, rng=r), "thresholds"),
    (lambda r: DEBORAS(4, 100, [[0.5]], rho=0.1, delta=0.01, rng=r), "thresholds"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], [0.5, 0.5, 0.5, 0.0], safe_margins=[0.1, 0.1],
                       rho=0.1, delta=0.01, rng=r), "safe_strategy must be a probability"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], [-0.5, 0.5, 0.5, 0.5], safe_margins=[0.1, 0.1],
                       rho=0.1, delta=0.01, rng=r), "safe_strategy"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], X4, safe_margins=[0.1, 0.0],
                       rho=0.1, delta=0.01, rng=r), "safe_margins must be > 0"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], X4, safe_margins=[0.1, 0.6],
                       rho=0.1, delta=0.01, rng=r), "safe_margins must be <= thresholds"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], X4, safe_margins=[0.1],
                       rho=0.1, delta=0.01, rng=r), "safe_margins must have one entry"),
    # text is refused, not read as numbers; widths the LP cannot hold are refused up front
    (lambda r: DEBORAS(4, 100, ["a", "b"], rho=0.1, delta=0.01, rng=r),
     "thresholds must be numbers"),
    (lambda r: DEBORAS(4, 100, "0.5", rho=0.1, delta=0.01, rng=r), "thresholds must be numbers"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], "abcd", safe_margins=[0.1, 0.1], rho=0.1,
                       delta=0.01, rng=r), "safe_strategy must be numbers"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], X4, safe_margins=["a", "b"], rho=0.1, delta=0.01,
                       rng=r), "safe_margins must be numbers"),
    (lambda r: DEBORAS(3, 1000, [0.5], rho=0.3, delta=0.15 - 1e-13, rng=r),
     r"zeta\(1\) = .* exceeds 1e\+13"),
    (lambda r: DEBORAS(3, 1000, [0.5], rho=0.3, delta=0.05, rng=r, width_scale=1e12),
     r"zeta\(1\) = .* lower width_scale"),
    (lambda r: DEBORAH(4, 100, [0.5, 0.5], X4, safe_margins=[1e-10, 0.1], rho=0.1,
                       delta=0.01, rng=r), "safe_margins must exceed 2K"),
    (lambda r: DEBORA(3, 1000, rho=0.3, delta=0.05, rng=r, width_scale=1e20),
     r"width_scale = 1e\+20 is too large"),
])
def test_bad_input_refused_before_any_work(build, match) -> None:
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=match):
        build(rng)
    assert rng.bit_generator.state == state  # ξ untouched


def test_bad_observations_refused() -> None:
    env = ConstrainedBandit(R4, G4, A4)
    p = DEBORAS(4, 100, A4, rho=0.1, delta=0.01, rng=0)
    batch = p.next_batch()
    o = env.pull(batch, np.random.default_rng(1))
    with pytest.raises(ValueError, match="costs must have shape \\(runs, m=2\\)"):
        p.observe(batch, o.rewards, o.costs[:, :1])
    with pytest.raises(ValueError, match="costs are required"):
        p.observe(batch, o.rewards, None)
    with pytest.raises(ValueError, match="rewards must be sums"):
        p.observe(batch, o.rewards + batch.counts + 1, o.costs)
    with pytest.raises(ValueError, match="must be the batch next_batch"):
        p.observe(Batch(np.array([3]), np.array([5])), np.zeros(1), np.zeros((1, 2)))
    q = DEBORA(3, 100, rho=0.1, delta=0.01, rng=0)
    b = q.next_batch()
    with pytest.raises(ValueError, match="must be the batch next_batch"):
        q.observe(Batch(np.array([1]), b.counts), np.zeros(1))


def test_truncated_batch_ends_the_policy() -> None:
    p = DEBORAS(4, 1000, A4, rho=0.1, delta=0.01, rng=0, width_scale=0.01)
    env = ConstrainedBandit(R4, G4, A4)
    rng = np.random.default_rng(2)
    for _ in range(6):
        b = p.next_batch()
        o = env.pull(b, rng)
        p.observe(b, o.rewards, o.costs)
    b = p.next_batch()
    part = b.truncated(max(b.n_pulls - 1, 1))
    o = env.pull(part, rng)
    p.observe(part, o.rewards, o.costs)
    if part.n_pulls < b.n_pulls:
        assert p.next_batch() is None


def test_log2_horizon_is_exact_past_2_to_the_53() -> None:
    """ρ' of DEBORA-S/H divides by ⌈log₂T⌉: 54 at T = 2⁵³ + 1 (math.log2 rounds it to 53)."""
    from banditkit.policies.constrained.debora import debora_parameters

    for T, log in [(2, 1), (3, 2), (4, 2), (2**53, 53), (2**53 + 1, 54), (2**62, 62)]:
        rho_p, _ = debora_parameters("DEBORA-S", 2, T, 1, 0.3, 0.05)
        assert rho_p == pytest.approx(0.3 / (2 * 2 * 4 * log), rel=1e-15)


def test_simulate_refuses_a_cost_count_or_horizon_the_policy_was_not_built_for() -> None:
    env = ConstrainedBandit(R4, G4[:1], A4[:1])  # m = 1
    with pytest.raises(ValueError, match="m = 2 cost"):
        simulate(DEBORAS(4, 100, A4, rho=0.1, delta=0.01, rng=0), env, horizon=100)
    env = ConstrainedBandit(R4, G4, A4)
    with pytest.raises(ValueError, match="exceeds the 100 pulls"):
        simulate(DEBORAS(4, 100, A4, rho=0.1, delta=0.01, rng=0), env, horizon=1000)
