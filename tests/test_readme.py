"""The README is a front door: at most 150 lines, every link in it leads to a file of the
checkout, and its Python quick starts run as printed, each on its own (a user pastes one at a
time) with the results the text around them states."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEXT = README.read_text()
BLOCKS = re.findall(r"^```python\n(.*?)^```", TEXT, flags=re.DOTALL | re.MULTILINE)


def test_the_readme_is_at_most_150_lines():
    assert len(TEXT.splitlines()) <= 150


def test_every_link_of_the_readme_leads_to_a_file_of_the_checkout():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXT)
    local = [t for t in targets if "://" not in t]
    assert len(local) >= 10  # the picture, the guides, the family pages, licence, citation
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_the_readme_has_its_two_python_quick_starts():
    assert len(BLOCKS) == 2
    assert "simulate(" in BLOCKS[0] and "Experiment.create(" in BLOCKS[1]


@pytest.mark.parametrize("block", BLOCKS, ids=["simulation", "live"])
def test_readme_snippet_runs_alone(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the Experiment snippet creates its file in the working folder
    exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()  # it prints what the text says it prints


def test_the_simulation_quick_start_finds_the_best_arm(tmp_path, monkeypatch, capsys):
    """UCB1 over 45,000 rounds pulls the best arm (0.59, the last) most; the replicable
    policy's trial spends the whole horizon."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(BLOCKS[0], "README.md", "exec"), namespace)
    ucb_line = capsys.readouterr().out.splitlines()[0]
    counts = [int(c) for c in re.findall(r"\d+", ucb_line.split("[", 1)[1])]
    assert len(counts) == 6 and sum(counts) == 45_000
    assert max(range(6), key=counts.__getitem__) == 5, counts
    assert namespace["trial"].counts.sum() == 45_000
