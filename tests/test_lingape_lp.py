"""LinGapE's arm-selection program min ‖w‖₁ s.t. Xᵀw = y: column generation finds the optimum of
the full linear program (same weights, objective, and p*), with a dual certificate, and LinGapE
trials (simulate and the block driver) make the same decisions with either solver."""

import itertools
from functools import partial

import numpy as np
import pytest

from banditkit.envs.instances import make_instance
from banditkit.envs.instances.rage import soare
from banditkit.identification import lingape, lingape_blocks
from banditkit.identification.lingape import make_lingape, pair_ratios, solve_min_l1
from banditkit.identification.lingape_blocks import simulate_lingape
from banditkit.rng import derive_seed, stream
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")


def random_arms(rng, K, d, kind):
    if kind == "gaussian":
        return rng.normal(size=(K, d))
    if kind == "sphere":
        X = rng.normal(size=(K, d))
        return X / np.linalg.norm(X, axis=1, keepdims=True)
    # many-arms-like: a cone of near-parallel arms plus a basis, widely different norms
    X = np.vstack([np.eye(d), np.ones(d) + 0.05 * rng.normal(size=(K - d, d))])
    return X * rng.uniform(0.2, 3.0, size=(K, 1))


def assert_certified(X, y, sol):
    """Primal feasibility, dual feasibility |x_aᵀu| ≤ 1 and strong duality ‖w‖₁ = yᵀu."""
    w, u = sol.weights, sol.dual
    scale = max(1.0, np.abs(y).max())
    np.testing.assert_allclose(X.T @ w, y, atol=1e-9 * scale)
    assert np.abs(X @ u).max() <= 1.0 + 1e-9
    assert sol.objective == pytest.approx(float(y @ u), rel=1e-9, abs=1e-12)
    assert np.count_nonzero(w) <= X.shape[1]  # a vertex


def assert_same_optimum(X, y):
    cg = solve_min_l1(X, y)
    full = solve_min_l1(X, y, lp="full")
    assert_certified(X, y, cg)
    assert_certified(X, y, full)
    assert cg.objective == pytest.approx(full.objective, rel=1e-9, abs=1e-12)
    p_cg, p_full = np.abs(cg.weights) / cg.objective, np.abs(full.weights) / full.objective
    np.testing.assert_allclose(p_cg, p_full, rtol=0, atol=1e-9)
    return cg, full


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("kind", ["gaussian", "sphere", "cone"])
def test_column_generation_equals_the_full_program_on_random_instances(d, kind):
    rng = np.random.default_rng(derive_seed(0, "lp", d, kind))
    rounds = []
    for K in (d + 1, 20, 300, 3000):
        for _ in range(4):
            X = random_arms(rng, K, d, kind)
            i, j = rng.choice(K, 2, replace=False)
            y = X[i] - X[j] if rng.random() < 0.5 else rng.normal(size=d)
            cg, _ = assert_same_optimum(X, y)
            rounds.append(cg.rounds)
            assert cg.columns <= K
    if d == 5 and kind == "gaussian":
        # the pricing loop is exercised: the starting master is not always optimal
        assert max(rounds) > 1


def test_column_generation_matches_brute_force_over_bases():
    rng = np.random.default_rng(11)
    for _ in range(10):
        X = rng.normal(size=(9, 3))
        y = rng.normal(size=3)
        best = min(np.abs(np.linalg.solve(X[list(c)].T, y)).sum()
                   for c in itertools.combinations(range(9), 3))
        sol = solve_min_l1(X, y, batch=1)  # one arm per round: the most pricing rounds
        assert sol.objective == pytest.approx(best, rel=1e-9)
        assert_certified(X, y, sol)


@pytest.mark.parametrize("d", [2, 5])
def test_every_pair_of_the_soare_instance(d):
    env = soare(d, omega=0.1)
    M = env.Z.shape[0]
    for lo, hi in itertools.combinations(range(M), 2):
        assert_same_optimum(env.X, env.Z[lo] - env.Z[hi])
        s_cg, r_cg = pair_ratios(env.X, env.Z, lo, hi)
        s_full, r_full = pair_ratios(env.X, env.Z, lo, hi, lp="full")
        np.testing.assert_array_equal(s_cg, s_full)
        np.testing.assert_allclose(r_cg, r_full, rtol=1e-9)


def test_many_arms_pairs_and_their_supports():
    env = make_instance("many-arms", rng=np.random.default_rng(5), n=3000)
    rng = np.random.default_rng(6)
    for _ in range(15):
        lo, hi = sorted(rng.choice(3000, 2, replace=False).tolist())
        s_cg, r_cg = pair_ratios(env.X, env.Z, lo, hi)
        s_full, r_full = pair_ratios(env.X, env.Z, lo, hi, lp="full")
        np.testing.assert_array_equal(s_cg, s_full)
        np.testing.assert_allclose(r_cg, r_full, rtol=1e-9)
        sol = solve_min_l1(env.X, env.Z[lo] - env.Z[hi])
        assert sol.columns < 100  # a small restricted master, not the 3000 arms
        assert_certified(env.X, env.Z[lo] - env.Z[hi], sol)


def test_bad_method_is_refused():
    with pytest.raises(ValueError, match="lp must be one of"):
        solve_min_l1(np.eye(2), np.ones(2), lp="simplex")


class CountingFull:
    """pair_ratios with the full program, counting its calls (to see who calls it); each pair is
    solved once for all the runs of a test, which keeps the full program's cost bearable."""

    def __init__(self):
        self.calls = 0
        self.solved = {}

    def __call__(self, X, Z, lo, hi):
        self.calls += 1
        if (lo, hi) not in self.solved:
            self.solved[lo, hi] = pair_ratios(X, Z, lo, hi, lp="full")
        return self.solved[lo, hi]


def run_all_ways(env, seeds, monkeypatch, **params):
    rngs = [stream(0, "xi", k) for k in range(len(seeds))]
    lingape_blocks.clear_pair_cache()
    cg_sim = [simulate(make_lingape(env, g, **params), env, seed=s)
              for g, s in zip(rngs, seeds, strict=True)]
    cg_blocks = [simulate_lingape(make_lingape(env, g, **params), env, seed=s)
                 for g, s in zip(rngs, seeds, strict=True)]
    with monkeypatch.context() as m:
        full = CountingFull()
        m.setattr(lingape, "pair_ratios", full)
        full_sim = [simulate(make_lingape(env, g, **params), env, seed=s)
                    for g, s in zip(rngs, seeds, strict=True)]
        sim_calls = full.calls
        m.setattr(lingape_blocks, "pair_ratios", full)
        lingape_blocks.clear_pair_cache()  # solved anew by the full program
        full_blocks = [simulate_lingape(make_lingape(env, g, **params), env, seed=s)
                       for g, s in zip(rngs, seeds, strict=True)]
        assert sim_calls > 0 and full.calls > sim_calls  # both drivers go through pair_ratios
    lingape_blocks.clear_pair_cache()  # no full-program solution outlives the patch
    for runs in zip(cg_sim, cg_blocks, full_sim, full_blocks, strict=True):
        ref = runs[0]
        assert ref.stopped and ref.n_pulls > env.X.shape[0]
        for other in runs[1:]:
            assert other.decisions.same_as(ref.decisions)
            np.testing.assert_array_equal(other.counts, ref.counts)
            assert other.recommendation == ref.recommendation
            # the block driver's floats agree to round-off (lingape_blocks' docstring)
            for key in ("steps", "init_pulls", "pairs_solved"):
                assert other.info[key] == ref.info[key]
            np.testing.assert_allclose(other.info["B"], ref.info["B"], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("d", [2, 5])
def test_lingape_decides_the_same_on_the_soare_instance(d, monkeypatch):
    seeds = [derive_seed(1, "lp-soare", d, k) for k in range(4)]
    run_all_ways(soare(d, omega=0.3), seeds, monkeypatch, delta=0.05)


def test_lingape_decides_the_same_on_many_arms(monkeypatch):
    env = make_instance("many-arms", rng=np.random.default_rng(3), n=2000)
    seeds = [derive_seed(1, "lp-many-arms", k) for k in range(3)]
    run_all_ways(env, seeds, monkeypatch, delta=0.05)
