"""The package as users install it: a wheel built from the checkout's tracked files, installed
with its declared dependencies into a clean virtual environment, runs `banditkit --version`,
`banditkit list` and the README's two quick starts there, with nothing of the checkout on the
path. A module or data file left out of the wheel, or a dependency left out of pyproject.toml,
fails here.

Slow (a venv and numpy, scipy, pandas, matplotlib installed: about a minute on a loaded 2-core
machine, pip's cache and /opt/wheels first, then PyPI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import banditkit

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _tracked_files() -> list[str]:
    """The files a fresh clone has (git ls-files), or every file when this is no checkout."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if done.returncode == 0 and done.stdout:
        return [f for f in done.stdout.decode().split("\0") if f]
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()
            and not any(part in (".venv", ".git", "build", "site") for part in p.parts)]


def _run(args: list[str], cwd: Path, timeout: int = 600) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the clean venv's python) once for the module."""
    work = tmp_path_factory.mktemp("wheel")
    clone = work / "clone"
    tracked = _tracked_files()
    for rel in tracked:  # a copy of what a clone holds: no build/, egg-info or .venv
        if (ROOT / rel).is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, clone / rel)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
          str(clone)], cwd=work)
    (wheel,) = (work / "dist").glob("banditkit-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", str(work / "venv")], cwd=work)
    python = work / "venv" / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)],
         cwd=work)
    return wheel, python


def test_the_wheel_holds_every_module_of_the_package(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {f.removeprefix("src/") for f in _tracked_files()
               if f.startswith("src/banditkit/") and not f.endswith((".pyc",))}
    assert package, "no tracked package files found"
    missing = sorted(package - names)
    assert not missing, missing
    assert "banditkit/py.typed" in names  # type checkers read the package's hints
    assert any(n.endswith("licenses/LICENSE") for n in names)


def test_the_installed_cli_says_its_version(installed, tmp_path):
    wheel, python = installed
    out = _run([str(python.parent / "banditkit"), "--version"], cwd=tmp_path)
    # the version pyproject.toml gave the wheel is the one the package says it is
    assert out.strip() == f"banditkit {banditkit.__version__}"
    assert wheel.name.startswith(f"banditkit-{banditkit.__version__}-"), wheel.name
    listed = _run([str(python.parent / "banditkit"), "list"], cwd=tmp_path)
    assert "replicable-bandits:fig1" in listed and "rage:fig1a" in listed


def test_the_installed_package_runs_the_readme_quick_starts(installed, tmp_path):
    _, python = installed
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", readme, flags=re.DOTALL | re.MULTILINE)
    assert len(blocks) == 2
    where = _run([str(python), "-c", "import banditkit; print(banditkit.__file__)"],
                 cwd=tmp_path)
    assert str(python.parent.parent) in where and str(ROOT) not in where  # the wheel's copy
    simulation, live = blocks
    out = _run([str(python), "-c", simulation], cwd=tmp_path)
    counts = [int(c) for c in re.findall(r"\d+", out.splitlines()[0].split("[", 1)[1])]
    assert sum(counts) == 45_000 and counts.index(max(counts)) == 5
    out = _run([str(python), "-c", live], cwd=tmp_path)
    assert "leader: new-copy (committed" in out
    assert (tmp_path / "checkout.sqlite").exists()


# What the optional extras bring (pyproject.toml's serve, postgres, speed, dask, bench): a
# module may need one of these and only these; any other missing import is an undeclared
# dependency.
OPTIONAL = {"starlette", "uvicorn", "psycopg", "numba", "llvmlite", "dask", "distributed",
            "pyinstrument"}
IMPORT_ALL = """
import importlib, json, pkgutil, banditkit
failed = {}
for info in pkgutil.walk_packages(banditkit.__path__, "banditkit."):
    if info.name.endswith("__main__"):  # `python -m banditkit`: importing it runs the CLI
        continue
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError as error:
        failed[info.name] = (error.name or "").split(".")[0]
print(json.dumps(failed))
"""


def test_every_module_imports_with_the_declared_dependencies(installed, tmp_path):
    """Every module of the installed wheel imports in the clean venv, except those that need
    an optional extra (which must be one pyproject.toml offers)."""
    _, python = installed
    failed = json.loads(_run([str(python), "-c", IMPORT_ALL], cwd=tmp_path))
    undeclared = {module: name for module, name in failed.items() if name not in OPTIONAL}
    assert not undeclared, undeclared
