"""One public name per algorithm: the registry name is the class's name; the old registry names
(registry.ALIASES) still build the same algorithm with a DeprecationWarning, because experiment
files and result stores recorded them; every constructor takes ξ as the keyword ``rng``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.envs.instances import make_instance
from banditkit.live.journal.defaults import params_in_force
from banditkit.protocol import Algorithm
from banditkit.registry import ALIASES, get_policy, make_policy, policy_names


def _current_names() -> list[str]:
    return [n for n in policy_names() if not get_policy(n).description.startswith("deprecated")]


def test_every_registry_name_is_its_class_name():
    for name in _current_names():
        returns = inspect.signature(get_policy(name).factory).return_annotation
        assert getattr(returns, "__name__", returns) == name, name


def test_every_algorithm_has_one_import_path_under_its_registry_name():
    """``from banditkit.policies import NAME`` or ``from banditkit.identification import
    NAME``, never both, for every registered algorithm (issue 36 §5)."""
    import banditkit.identification as identification
    import banditkit.policies as policies

    for name in _current_names():
        homes = [m for m in (policies, identification) if name in m.__all__]
        assert len(homes) == 1, (name, homes)
        cls = getattr(homes[0], name)
        assert cls.__name__ == name and issubclass(cls, Algorithm)


@pytest.mark.parametrize("old, new", sorted(ALIASES.items()))
def test_an_old_name_builds_the_current_algorithm_with_a_warning(old, new):
    assert old not in policy_names() and new in policy_names()
    with pytest.warns(DeprecationWarning, match=f"old registry name of '{new}'"):
        entry = get_policy(old)
    assert entry is get_policy(new)
    env = make_instance("soare", d=2, omega=0.1)
    with pytest.warns(DeprecationWarning):
        algorithm = make_policy(old, env, np.random.default_rng(0), horizon=500)
    assert type(algorithm).__name__ == new
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the current name warns nothing
        make_policy(new, env, np.random.default_rng(0), horizon=500)


def test_an_experiment_stored_under_an_old_name_reopens(tmp_path):
    features = [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]
    path = tmp_path / "old.sqlite"
    with pytest.warns(DeprecationWarning):
        with Experiment.create(path, algorithm="LinTS", arms=features, seed=1,
                               horizon=200, overflow="off") as exp:
            assert exp.status().params["v"] == 1.0  # the live default of LinearThompson
            first = exp.assign(1)
    with pytest.warns(DeprecationWarning), Experiment.open(path) as exp:
        assert exp.status().params["v"] == 1.0
        assert exp.status().algorithm == "LinTS"  # as stored, rebuilt as LinearThompson
        assert len(first) == 1 and exp.assign(1).empty  # its unit still awaits a reward
    assert params_in_force("LinearThompson", {}) == params_in_force("LinTS", {})


def _algorithm_classes() -> list[type]:
    found = set()
    for package in ("banditkit.policies", "banditkit.identification"):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            mod = importlib.import_module(info.name)
            found |= {c for c in vars(mod).values() if inspect.isclass(c)
                      and issubclass(c, Algorithm) and c.__module__ == mod.__name__}
    return sorted(found, key=lambda c: c.__qualname__)


def test_every_constructor_takes_xi_as_the_keyword_rng():
    classes = _algorithm_classes()
    assert len(classes) > 30
    for cls in classes:
        params = inspect.signature(cls.__init__).parameters
        assert not {"xi", "seed", "random_state", "generator"} & set(params), cls
        if "rng" in params:
            assert params["rng"].kind in (inspect.Parameter.KEYWORD_ONLY,
                                          inspect.Parameter.POSITIONAL_OR_KEYWORD), cls


@pytest.mark.parametrize("package", ["banditkit.identification", "banditkit.policies"])
def test_the_flat_module_names_still_import(package):
    moved = importlib.import_module(package).MOVED
    for old, new in moved.items():
        before = importlib.import_module(f"{package}.{old}")
        assert before is importlib.import_module(f"{package}.{new}"), old
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{package}.no_such_module")


@pytest.mark.parametrize("old, name", [
    ("ucb", "UCB1"), ("kl_ucb", "KLUCB"), ("sequential_kernels", "index_trial"),
    ("sequential_lockstep", "index_engine"), ("exp3_ix_kernel", "exp3_ix_trial"),
    ("exp3_ix_lockstep", "exp3_ix_engine"), ("linear_lockstep", "oful_lockstep"),
    ("replicable_elimination", "ReplicableElimination"), ("oplb", "OPLB"),
    ("constrained_baselines", "OptimisticMixingConstrained")])
def test_a_former_policies_module_still_holds_its_names(old, name):
    """What code written against the flat layout imports from the old module is there."""
    assert hasattr(importlib.import_module(f"banditkit.policies.{old}"), name)


def test_the_flat_module_names_of_identification_still_import():
    from banditkit.identification.linear_glr_run import simulate_fw_sampling

    from banditkit.identification.glr.run import simulate_fw_sampling as same

    assert simulate_fw_sampling is same
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("banditkit.identification.no_such_module")
