"""The frame every fixed-budget identifier shares: what it refuses, before any work."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from banditkit import simulate
from banditkit.cli import main
from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.identification import GBAI, P1RAGE, MixedPeace, ODLinBAI, P1Peace, Peace
from banditkit.identification.fixed_budget import check_budget_problem
from banditkit.registry import get_policy

X = np.vstack([np.eye(3), [[0.6, 0.8, 0.0]]])


@pytest.mark.parametrize("cls", [GBAI, P1RAGE, P1Peace, MixedPeace, Peace, ODLinBAI])
@pytest.mark.parametrize(("X_", "Z", "budget", "error", "match"), [
    (X, None, 3, ValueError, r"budget must be at least the number of arms \(4\)"),
    (X, None, 10.5, TypeError, "budget must be an integer"),
    (X, None, 0, ValueError, "budget"),
    (X[:, :2] @ np.ones((2, 3)), None, 100, ValueError, "X must span R"),
    (X, np.vstack([X[:2], X[:1]]), 100, ValueError, "Z must have distinct rows"),
    (X, np.ones((2, 2)), 100, ValueError, "Z must have d = 3 columns"),
    (np.where(X > 0.5, np.nan, X), None, 100, ValueError, "X must contain only finite"),
])
def test_bad_problems_are_refused_naming_the_parameter(cls, X_, Z, budget, error, match):
    with pytest.raises(error, match=match):
        cls(X_, Z, budget)


def test_arrays_are_private_read_only_copies():
    user = X.copy()
    Xc, Zc, budget = check_budget_problem(user, None, 4)
    assert Zc is Xc and budget == 4
    assert not Xc.flags.writeable and Xc.flags.owndata
    user[0, 0] = 5.0  # the caller's array changes; the problem does not
    assert Xc[0, 0] == 1.0


# --- a fixed-budget identifier that spent its budget has stopped (issue 17 §4) -------------

CLASSES = [GBAI, P1RAGE, P1Peace, MixedPeace, Peace, ODLinBAI]
SOARE4 = make_instance("soare", d=4, omega=0.3)


@pytest.mark.parametrize("cls", CLASSES)
def test_a_run_to_the_budget_has_stopped_with_or_without_the_horizon(cls):
    T = 60
    free = simulate(cls(SOARE4.X, None, T, rng=1), SOARE4, seed=2)
    capped = simulate(cls(SOARE4.X, None, T, rng=1), SOARE4, horizon=T, seed=2)
    beyond = simulate(cls(SOARE4.X, None, T, rng=1), SOARE4, horizon=T + 7, seed=2)
    for trial in (free, capped, beyond):
        assert trial.stopped and trial.n_pulls == T
        assert trial.recommendation == free.recommendation is not None
    # cut before the budget is spent: not stopped, no answer
    short = simulate(cls(SOARE4.X, None, T, rng=1), SOARE4, horizon=T - 5, seed=2)
    assert not short.stopped and short.recommendation is None and short.n_pulls == T - 5


def test_a_cut_at_a_batch_boundary_is_not_a_stop():
    # G-BAI asks for its whole budget at once: a horizon of one pull less cuts that batch, and
    # a policy cut exactly where its batch ends (Peace's first epoch) is not stopped either
    algo = Peace(SOARE4.X, None, 60, rng=1)
    first = algo.next_batch().n_pulls
    trial = simulate(Peace(SOARE4.X, None, 60, rng=1), SOARE4, horizon=first, seed=2)
    assert trial.n_pulls == first < 60 and not trial.stopped


def test_audit_at_the_budget_reports_no_cut_executions():
    # the README line `banditkit audit P1RAGE --instance malicious --instance-param T=3000
    # --horizon 3000 --pairs 20`, smaller: every execution spends its budget and stops
    env = make_instance("malicious", T=300)
    result = audit(get_policy("P1RAGE").factory, env, pairs=3, horizon=300, name="P1RAGE",
                   instance="malicious")
    assert result.capped == 0
    assert "cut at the horizon" not in result.render()
    # the registry's factory takes the horizon as its budget, so a shorter horizon is a
    # shorter budget (still no cut); cut runs come from a factory bound to a larger budget
    assert audit(get_policy("P1RAGE").factory, env, pairs=2, horizon=200).capped == 0
    bound = functools.partial(get_policy("P1RAGE").factory, horizon=300)
    cut = audit(bound, env, pairs=2, horizon=200)
    assert cut.capped == 4 and "raise --horizon" in cut.render()


def test_audit_refuses_a_horizon_beyond_the_schedule_before_any_work():
    env = make_instance("malicious", T=300)
    calls = []

    def factory(env, rng, **params):
        calls.append(1)
        return get_policy("P1RAGE").factory(env, rng, **params)

    with pytest.raises(ValueError, match=r"^horizon = 301 exceeds the schedule of malicious, "
                                         r"which defines θ_t for 300 pulls"):
        audit(factory, env, pairs=2, horizon=301, instance="malicious")
    assert not calls
    # a periodic schedule is defined at every time: no limit
    assert make_instance("oscillating-soare", s=1.0, L=50, T=300).schedule_length is None
    assert env.schedule_length == 300


def test_cli_audit_line_of_the_readme(capsys):
    code = main(["audit", "P1RAGE", "--instance", "malicious", "--instance-param", "T=600",
                 "--horizon", "600", "--pairs", "2"])
    out = capsys.readouterr()
    assert code == 0 and "warning" not in out.out and "identical pairs" in out.out
    code = main(["audit", "P1RAGE", "--instance", "malicious", "--instance-param", "T=600",
                 "--horizon", "601", "--pairs", "2"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "horizon = 601 exceeds the schedule" in err
