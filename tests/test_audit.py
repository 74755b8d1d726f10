"""The replicability audit, its CLI and paired figures."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from scipy import stats

from banditkit.cli import main
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.experiments.replicability import audit, clopper_pearson, pair_statistics
from banditkit.registry import get_policy, make_policy, policy_names

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
    from banditkit.rng import STREAMS, derive_seed, stream

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


def test_audit_ucb1_lockstep_equals_sequential_and_ucb_does_not_replicate():
    entry = get_policy("UCB1")
    factory = functools.partial(entry.factory, horizon=3000)
    seq = audit(factory, ENV, pairs=3, seed=0, horizon=3000)
    lock = audit(factory, ENV, pairs=3, seed=0, horizon=3000, lockstep=entry.lockstep)
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
    assert pairs.loc["UCB1", "identical"] == 0 and pairs.loc["UCB1", "pairs"] == 2
    assert pairs.loc["ReplicableElimination (Alg. 2)", "identical"] == 2
    assert "Replicability of the pairs" in render_report(result)
    # the two executions of a pair share ξ: the first pair of Alg. 2 is identical even though
    # the trials' noise streams differ
    assert pairs.loc["BatchedElimination", "pairs"] == 2
