"""The README's Python snippets run as printed, each on its own (a user pastes one at a time)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
# The ask/tell sketch talks to the reader's own system (`my_system`): shown, not runnable. The
# PostgreSQL snippet needs a server: tests/test_readme_postgres.py runs it against the suite's.
RUNNABLE = [b for b in BLOCKS if "my_system" not in b and "postgresql://" not in b]


def test_the_readme_has_runnable_snippets():
    assert len(RUNNABLE) >= 4


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"snippet{i}" for i in range(len(RUNNABLE))])
def test_readme_snippet_runs_alone(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the Experiment snippet creates its file in the working folder
    exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
