"""The CLI's start-up: ``import banditkit`` and ``banditkit --version`` import neither numpy,
pandas, scipy, matplotlib nor numba, and a call on a small K-armed experiment imports no scipy or
matplotlib (they cost each call seconds: issue 15 §3). Checked in fresh interpreters, since
this test session has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from banditkit import Experiment

# numba: the compiled kernels (banditkit.jit) load it on first use, never at start-up
HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "numba")

_PROBE = """
import contextlib, io, json, sys
{code}
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))))
"""


def _imported(code: str, heavy: tuple[str, ...] = HEAVY) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(code=code, heavy=heavy)],
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_package_imports_nothing_heavy():
    assert _imported("import banditkit\nassert banditkit.__version__") == set()


def test_version_and_help_import_nothing_heavy():
    code = ("from banditkit.cli import main\n"
            "for argv in (['--version'], ['experiment', '--help'], ['run', '--help']):\n"
            "    try:\n"
            "        with contextlib.redirect_stdout(io.StringIO()):\n"
            "            main(argv)\n"
            "    except SystemExit as done:\n"
            "        assert done.code == 0\n")
    assert _imported(code) == set()


def test_the_public_names_are_still_there():
    """Lazily imported, the same objects as before."""
    import banditkit
    from banditkit.live.experiment import Experiment as direct
    from banditkit.simulate import simulate

    assert banditkit.Experiment is Experiment is direct
    assert banditkit.simulate is simulate
    assert set(banditkit.__all__) <= set(dir(banditkit))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = banditkit.Nope


@pytest.mark.parametrize("action", [["status"], ["units"], ["assign", "3"]])
def test_a_call_on_a_small_experiment_imports_no_scipy_or_matplotlib(tmp_path, action):
    path = tmp_path / "ab.sqlite"
    with Experiment.create(path, algorithm="ReplicableElimination", arms=["a", "b", "c"],
                           seed=7, horizon=30_000, params={"rho": 0.2}) as exp:
        exp.assign(10)
    argv = ["experiment", action[0], str(path), *action[1:]]
    code = ("from banditkit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main({argv!r}) == 0\n")
    assert _imported(code) == {"numpy", "pandas"}


def test_serve_help_and_experiment_calls_import_no_driver_server_or_compiler(tmp_path):
    """psycopg (PostgreSQL), Starlette/uvicorn (the service) and numba are imported only by
    the calls that use them: not by ``serve --help``, not by a call on an SQLite file."""
    path = tmp_path / "ab.sqlite"
    with Experiment.create(path, algorithm="ReplicableElimination", arms=["a", "b"], seed=1,
                           horizon=1000) as exp:
        exp.assign(2)
    code = ("from banditkit.cli import main\n"
            f"for argv in (['serve', '--help'], ['experiment', 'status', {str(path)!r}],\n"
            f"             ['experiment', 'assign', {str(path)!r}, '1']):\n"
            "    try:\n"
            "        with contextlib.redirect_stdout(io.StringIO()):\n"
            "            main(argv)\n"
            "    except SystemExit as done:\n"
            "        assert done.code == 0\n")
    assert _imported(code, ("psycopg", "starlette", "uvicorn", "numba", "scipy")) == set()
