"""The public API type-checks as users see it (the package ships py.typed).

Scope, honestly: ``mypy --strict`` runs on a user's program over every name of
``banditkit.__all__`` (tests/typing/public_api.py: the README's quick starts, an Experiment's
calls, an Algorithm subclass), with the package analysed for its types but its own bodies not
reported (``--follow-imports=silent``): the package's internals are not mypy-strict clean yet
(about 120 findings in live/ and protocol.py, listed in docs/layout.md). Every public callable
of those names must also carry complete annotations (checked below with ``inspect``), so a
user's strict checker never meets an untyped call."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import banditkit

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("mypy", reason="mypy is in the test extra (make test installs it)")


def test_a_users_program_over_the_public_api_passes_mypy_strict():
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}  # this checkout, not an installed copy
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                           "--ignore-missing-imports", "--no-error-summary",
                           "tests/typing/public_api.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_user_program_covers_every_public_name():
    text = (ROOT / "tests" / "typing" / "public_api.py").read_text()
    for name in banditkit.__all__:
        assert name in text, name


def _public_callables():
    for name in banditkit.__all__:
        obj = getattr(banditkit, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for klass in obj.__mro__:
                if not klass.__module__.startswith("banditkit"):
                    continue
                for attr, member in vars(klass).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    func = member.__func__ if isinstance(member, (classmethod,
                                                                  staticmethod)) else member
                    if isinstance(func, property):
                        func = func.fget
                    if inspect.isfunction(func):
                        yield f"{name}.{attr} ({klass.__name__})", func


def test_every_public_callable_is_fully_annotated():
    missing = []
    for label, func in _public_callables():
        sig = inspect.signature(func)
        params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
        untyped = [p.name for p in params if p.annotation is inspect.Parameter.empty]
        if untyped or sig.return_annotation is inspect.Signature.empty:
            missing.append((label, untyped, sig.return_annotation is inspect.Signature.empty))
    assert not missing, missing
