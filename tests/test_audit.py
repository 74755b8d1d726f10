"""The replicability audit, its CLI and paired figures."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from scipy import stats

from banditkit.cli import main
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.experiments.replicability import audit, clopper_pearson, pair_statistics
from banditkit.protocol import Batch
from banditkit.registry import get_policy, make_policy, policy_names
from banditkit.rng import STREAMS, as_generator, derive_seed, stream

ENV = BernoulliBandit(np.array([0.4, 0.5, 0.6]))


def test_clopper_pearson_matches_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (7, 80)]:
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        assert clopper_pearson(k, n) == pytest.approx((ci.low, ci.high))


def test_pair_statistics_on_hand_made_decisions():
    a = (np.array([0, 1]), np.array([5, 5]))
    same = (np.array([0, 1]), np.array([5, 5]))
    shifted = (np.array([0, 1]), np.array([3, 7]))  # differs at pulls 4 and 5
    st = pair_statistics([a, same, a, shifted], [1.0, 1.0, 2.0, 3.0], rho=0.5)
    assert st.identical.tolist() == [True, False]
    assert st.differences.tolist() == [0, 2]
    assert st.regret.tolist() == [[1.0, 1.0], [2.0, 3.0]]
    assert st.non_replication == 0.5 and st.verdict == "inconclusive"


def test_audit_tiny_case_and_keying():
    factory = functools.partial(get_policy("ReplicableElimination").factory, horizon=10**6)
    res = audit(factory, ENV, pairs=6, seed=3, horizon=10**6, params={"rho": 0.3, "beta": 20})
    assert res.pairs == 6 and res.rho == 0.3 and res.regret.shape == (6, 2)
    # recompute pair 4 by hand: shared ξ, noise keyed by (pair, execution)
    from banditkit import simulate

    runs = [simulate(factory(ENV, stream(3, "audit", 4, "algorithm"), rho=0.3, beta=20), ENV,
                     horizon=10**6, seed=derive_seed(3, "audit", 4, e, STREAMS["environment"]))
            for e in (0, 1)]
    assert res.identical[4] == runs[0].decisions.same_as(runs[1].decisions)
    assert res.differences[4] == runs[0].decisions.count_differences(runs[1].decisions)
    assert res.regret[4].tolist() == [runs[0].final_regret, runs[1].final_regret]
    # the same numbers with two worker processes
    par = audit(factory, ENV, pairs=6, seed=3, horizon=10**6, params={"rho": 0.3, "beta": 20},
                workers=2)
    assert np.array_equal(par.differences, res.differences)


def _paper_algorithm2(means: np.ndarray, T: int, beta: int, xi: np.random.Generator,
                      noise: np.random.Generator) -> tuple[list, float]:
    """Algorithm 2 of Esfandiari et al. (2023) written out from the paper, independently of
    the library: (pull sequence, pseudo-regret). Noise is drawn batch by batch through the
    environment, as :func:`banditkit.simulate` does."""
    K = means.size
    B = math.ceil(math.log(T))
    q = T ** (1 / B)
    log_term = math.log(2 * K * T * B)
    active, sums, r, c, pulls = np.arange(K), np.zeros(K), T, 0, []
    for i in range(1, B):
        m = beta * math.floor(q**i)
        if active.size < 2 or m * active.size > r:
            break
        alloc = np.zeros(K, dtype=np.int64)
        alloc[active] = m
        sums[active] += BernoulliBandit(means).pull(Batch.from_allocation(alloc), noise).rewards
        pulls += [(int(a), m) for a in active]
        r -= m * active.size
        c += math.floor(q**i)
        u_tilde = math.sqrt(2 * log_term / (beta * c))  # Ũ_i, with c̃_i = βc_i
        u = math.sqrt(2 * log_term / c)  # U_i
        u_bar = u * (0.5 + 0.5 * xi.random())  # Ū_i ~ Uni[U_i/2, U_i], from ξ
        mu = sums[active] / (beta * c)
        active = active[~(mu + u_tilde < mu.max() - u_bar)]
    pulls.append((int(active[0]), r))  # the rest of the horizon: the lowest surviving index
    gaps = means.max() - means
    return pulls, float(sum(n * gaps[a] for a, n in pulls))


def test_audit_algorithm2_where_decisions_depend_on_the_data():
    """Algorithm 2 with β = ⌊K²/ρ²⌋ = 100 (the proof's replicability term, without the 2304
    floor) at T = 10⁶: arms are eliminated after batches that vary with the rewards, so the
    audit tests the elimination rule. Measured (seed 1, 100 pairs): 3 of 100 pairs differ;
    5 distinct regrets. A threshold drawn outside ξ gave 66 of 100, one from Ũ instead of U 36,
    and the radius U in place of Ũ eliminated nothing (one regret, 152,360)."""
    T, rho, beta, seed = 10**6, 0.3, 100, 1
    factory = functools.partial(get_policy("ReplicableElimination").factory, horizon=T)
    res = audit(factory, ENV, pairs=100, seed=seed, horizon=T,
                params={"rho": rho, "beta": beta})
    # the decisions depend on the data: several elimination patterns, far apart in regret
    assert len(np.unique(res.regret)) >= 3
    assert res.regret.min() < 0.5 * res.regret.max()
    # and yet pairs sharing ξ replicate: the whole 95% interval lies below ρ
    assert res.verdict == "replicable"
    # every execution is the paper's rule, replayed by hand from the same streams
    for j in range(25):
        runs = [_paper_algorithm2(ENV.means, T, beta, stream(seed, "audit", j, "algorithm"),
                                  as_generator(derive_seed(seed, "audit", j, e,
                                                           STREAMS["environment"])))
                for e in (0, 1)]
        assert res.regret[j].tolist() == pytest.approx([runs[0][1], runs[1][1]], rel=1e-12)
        assert res.identical[j] == (runs[0][0] == runs[1][0])


def test_audit_ucb1_engine_equals_the_protocol_loop_and_ucb_does_not_replicate():
    entry = get_policy("UCB1")
    factory = functools.partial(entry.factory, horizon=3000)
    seq = audit(factory, ENV, pairs=3, seed=0, horizon=3000, engine="reference")
    lock = audit(factory, ENV, pairs=3, seed=0, horizon=3000)
    assert np.array_equal(seq.differences, lock.differences)
    assert np.allclose(seq.regret, lock.regret)
    assert lock.n_identical == 0 and lock.differences.min() > 300


def test_every_registered_policy_can_be_audited():
    for name in policy_names():
        entry = get_policy(name)
        env = ENV
        try:
            make_policy(name, env, np.random.default_rng(0), horizon=2000)
        except (ValueError, TypeError):
            continue  # a policy for another kind of environment (linear, constrained...)
        res = audit(functools.partial(entry.factory, horizon=2000), env, pairs=2, seed=0,
                    horizon=2000)
        assert res.pairs == 2 and res.n_pulls.min() > 0


def test_cli_audit_json_and_refusals(capsys):
    code = main(["audit", "ReplicableElimination", "--instance", "bernoulli", "--pairs", "12",
                 "--horizon", "45000", "--param", "rho=0.3", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["identical_pairs"] == 12 and out["verdict"] == "replicable"
    assert out["regret"]["mean"] == pytest.approx(4608 * 0.45 + 17352 * 0.15)
    for argv, match in [
        (["audit", "Nope", "--instance", "bernoulli", "--pairs", "2"], "unknown policy"),
        (["audit", "UCB1", "--instance", "nope", "--pairs", "2"], "unknown instance"),
        (["audit", "ReplicableElimination", "--instance", "bernoulli", "--pairs", "2",
          "--horizon", "100", "--param", "rho=2"], "rho"),
        (["audit", "ReplicableElimination", "--instance", "bernoulli", "--pairs", "2",
          "--horizon", "100", "--param", "zz=1"], "zz"),
        (["audit", "BatchedElimination", "--instance", "bernoulli", "--pairs", "2",
          "--horizon", "3"], "T >= K"),
    ]:
        assert main(argv) == 2
        assert match in capsys.readouterr().err


def test_paired_figure_reports_identical_pairs(tmp_path):
    from banditkit.experiments.report import render_report
    from banditkit.experiments.runner import run_figure

    result = run_figure("replicable-bandits:fig1", quick=True, backend="serial",
                        out=tmp_path / "run", progress=False)
    pairs = result.pairs.set_index("algorithm")
    assert pairs.loc["UCB1 (c = 2)", "identical"] == 0 and pairs.loc["UCB1 (c = 2)", "pairs"] == 2
    assert pairs.loc["ReplicableElimination (Alg. 2)", "identical"] == 2
    assert "Replicability of the pairs" in render_report(result)
    # the two executions of a pair share ξ: the first pair of Alg. 2 is identical even though
    # the trials' noise streams differ
    assert pairs.loc["BatchedElimination", "pairs"] == 2


def test_audit_reports_progress_as_pairs_finish(capsys):
    from banditkit.envs import BernoulliBandit
    from banditkit.experiments.replicability import audit as run_audit
    from banditkit.policies.named import replicable_elimination

    run_audit(functools.partial(replicable_elimination, horizon=2000),
              BernoulliBandit([0.3, 0.6]), pairs=3, horizon=2000, params={"rho": 0.3},
              progress=True, name="R")
    err = capsys.readouterr().err
    assert "audit R: 3/3 pairs (100%)" in err and "\r" not in err


def test_audit_passes_its_horizon_to_a_factory_that_takes_one():
    """audit(registered_factory, horizon=T) plans the policy for T, as the CLI's
    functools.partial does, instead of failing with "needs the horizon T"; a horizon the
    caller bound (in params or a partial) is left alone, and a factory without one gets none."""
    factory = get_policy("ReplicableElimination").factory
    plain = audit(factory, ENV, pairs=3, seed=5, horizon=2000, params={"rho": 0.3, "beta": 20})
    bound = audit(functools.partial(factory, horizon=2000), ENV, pairs=3, seed=5, horizon=2000,
                  params={"rho": 0.3, "beta": 20})
    given = audit(factory, ENV, pairs=3, seed=5, horizon=2000,
                  params={"rho": 0.3, "beta": 20, "horizon": 2000})
    for other in (bound, given):
        assert np.array_equal(plain.regret, other.regret)
        assert plain.differences.tolist() == other.differences.tolist()
    assert plain.params == {"rho": 0.3, "beta": 20}  # the report shows what the caller gave
    # a partial bound to another horizon keeps it: built for 1000, run for 2000 is refused
    with pytest.raises(ValueError, match="exceeds the 1000 pulls"):
        audit(functools.partial(factory, horizon=1000), ENV, pairs=1, seed=5, horizon=2000,
              params={"rho": 0.3, "beta": 20})

    def no_horizon(env, rng, rho):
        from banditkit.policies import ReplicableElimination
        return ReplicableElimination(env.n_arms, 2000, rho, rng, beta=20)

    mine = audit(no_horizon, ENV, pairs=3, seed=5, horizon=2000, params={"rho": 0.3})
    assert np.array_equal(mine.regret, plain.regret)
    with pytest.raises(ValueError, match="needs the horizon T"):
        audit(factory, ENV, pairs=1, seed=5, params={"rho": 0.3})
