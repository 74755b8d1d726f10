"""Issue 15 §4's smaller refusals: each is one message naming the parameter and the rule,
before any work, with nothing changed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from banditkit import Experiment, ExperimentError, simulate
from banditkit.cli import main
from banditkit.envs import BernoulliBandit, GaussianBandit, LinearBandit
from banditkit.envs.nonstationary import NonStationaryLinearBandit
from banditkit.identification import RAGE
from banditkit.policies import UCB1, ReplicableElimination
from banditkit.simulate import check_memory


@pytest.mark.parametrize("path", [None, 123, "", 1.5])
def test_a_path_that_is_not_a_file_name_is_refused_by_name(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    for call in (lambda: Experiment.open(path),
                 lambda: Experiment.create(path, algorithm="UCB1", arms=["a", "b"], seed=0)):
        with pytest.raises(ExperimentError, match=r"^path must be a file name \(str or "
                           r"pathlib.Path\), got "):
            call()
    assert list(tmp_path.iterdir()) == []


def test_text_unit_ids_are_described_not_dumped(tmp_path):
    with Experiment.create(tmp_path / "ab.sqlite", algorithm="ReplicableElimination",
                           arms=["a", "b"], seed=0, horizon=1000) as exp:
        ids = pd.Series([f"visitor-{i}" for i in range(500)])
        with pytest.raises(ExperimentError) as refused:
            exp.record(ids, np.ones(500))
        message = str(refused.value)
        assert message.startswith("units must be a non-empty list of unit ids (integers), got "
                                  "a Series (500 values")
        assert "\n" not in message and "visitor-" not in message and len(message) < 150
        with pytest.raises(ExperimentError, match=r"got list \['x', 'y'\]$"):
            exp.expire(["x", "y"])


@pytest.mark.parametrize("arms", [np.zeros((3, 2, 2)), [[[1.0, 0.0]], [[0.0, 1.0]]]])
def test_a_3d_feature_array_is_refused_by_its_shape(tmp_path, arms):
    with pytest.raises(ExperimentError, match=r"must be 2-D \(arms × features\), got shape"):
        Experiment.create(tmp_path / "x.sqlite", algorithm="RAGE", arms=arms, seed=0)
    assert not (tmp_path / "x.sqlite").exists()


def test_numbers_as_arm_names_are_stored_as_text(tmp_path):
    with Experiment.create(tmp_path / "n.sqlite", algorithm="UCB1", arms=[1, 2, 3], seed=0,
                           horizon=10) as exp:
        assert exp.arm_names == ["1", "2", "3"]
        assert exp.assign(1)["arm"].tolist() == ["1"]


def test_the_cli_tells_a_shell_user_the_cli_command(tmp_path, capsys):
    assert main(["experiment", "status", str(tmp_path / "missing.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "no experiment at" in err and "`banditkit experiment create`" in err
    assert "Experiment.create" not in err


@pytest.mark.parametrize("build, match", [
    (lambda: BernoulliBandit([0.5]), "means must hold at least 2 arms"),
    (lambda: GaussianBandit([0.0]), "means must hold at least 2 arms"),
])
def test_environments_need_two_arms_or_items(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_a_single_item_is_the_degenerate_case_the_identifiers_handle():
    """One item to choose from (one arm in R^1, or several arms and one item Z): the
    identifiers stop at once or spend the budget and recommend it (tests/test_alba.py,
    test_peace.py, test_p1.py), so the linear environments accept it; a K-armed bandit of one
    arm decides nothing and is refused above."""
    X = np.eye(2)
    assert LinearBandit(X, np.ones(2), Z=np.ones((1, 2))).n_items == 1
    assert NonStationaryLinearBandit(X, np.ones((3, 2)), Z=np.ones((1, 2))).n_items == 1
    assert LinearBandit(np.ones((1, 1)), np.ones(1)).n_items == 1


def test_two_arms_and_a_single_pulled_arm_with_two_items_are_fine():
    BernoulliBandit([0.5, 0.4])
    LinearBandit(np.ones((1, 1)), np.ones(1), Z=np.array([[1.0], [-1.0]]))


@pytest.mark.parametrize("checkpoints", [[200], [-1, 5], [0, 5], [5, 5], [7, 3], [[1, 2]],
                                         [1.5, 3], [], ["10"], [True, False]])
def test_checkpoints_must_be_increasing_integers_within_the_horizon(checkpoints):
    policy = UCB1(3)
    with pytest.raises(ValueError, match=r"^checkpoints must be strictly increasing integers "
                       r"in \[1, horizon = 100\], got "):
        simulate(policy, BernoulliBandit([0.2, 0.5, 0.4]), horizon=100,
                 checkpoints=checkpoints)
    assert policy.t == 0  # refused before any pull


def test_valid_checkpoints_are_used():
    env = BernoulliBandit([0.2, 0.5, 0.4])
    full = simulate(UCB1(3), env, horizon=100, seed=3)
    some = simulate(UCB1(3), env, horizon=100, seed=3, checkpoints=[1, 50.0, 100])
    assert some.checkpoints.tolist() == [1, 50, 100]
    assert some.regret[-1] == full.regret[-1]


def test_a_horizon_whose_log_cannot_fit_in_memory_is_refused_before_any_pull():
    policy = UCB1(6)
    env = BernoulliBandit(np.linspace(0.1, 0.6, 6))
    with pytest.raises(ValueError, match=r"^horizon = 1000000000000000000 cannot fit in "
                       r"memory: UCB1 keeps about 1 run\(s\) per pull"):
        simulate(policy, env, horizon=10**18)
    assert policy.t == 0
    # a batched policy keeps a few runs per batch: the same horizon fits
    check_memory(ReplicableElimination(6, 10**18, rho=0.1, rng=0), 10**18)
    # so does a fixed-confidence identifier, for which the horizon is a cap (rage:fig1a: 5e8)
    X = np.eye(3)
    check_memory(RAGE(X, X, delta=0.05), 10**18)
    # and the probe changed nothing: the run that follows is the one without it
    probed, plain = UCB1(6), UCB1(6)
    check_memory(probed, 1000)
    assert simulate(probed, env, horizon=1000, seed=1).decisions.same_as(
        simulate(plain, env, horizon=1000, seed=1).decisions)


def test_an_audit_that_cannot_fit_is_refused_naming_the_horizon(capsys):
    code = main(["audit", "UCB1", "--instance", "bernoulli", "--pairs", "100",
                 "--horizon", str(10**9)])
    err = capsys.readouterr().err
    assert code == 2 and "horizon = 1000000000 cannot fit in memory" in err
    assert "200 execution(s)" in err and len(err.strip().splitlines()) == 1
