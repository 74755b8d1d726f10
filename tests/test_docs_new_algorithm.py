"""docs/new-algorithm.md runs as written: its python blocks, in order, in one namespace, in a
temporary working directory (the guide's promise, issue 28 §4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from banditkit import registry

PAGE = Path(__file__).resolve().parents[1] / "docs" / "new-algorithm.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_guide_runs_as_written(tmp_path, monkeypatch):
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 9  # the class, simulate, by hand, the kit (twice), trials, audit,
    # a figure, live
    monkeypatch.chdir(tmp_path)
    # the guide registers EpsilonGreedy: keep it out of the registry the other tests see
    registry.policy_names()  # every provider imported first, so the copy misses none
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    namespace: dict = {"__name__": "guide"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{PAGE.name}[block {i}]", "exec"), namespace)
        except Exception as error:  # name the block that failed
            pytest.fail(f"block {i} of {PAGE.name} failed: {type(error).__name__}: {error}")
    assert (tmp_path / "epsilon_greedy_regret.png").stat().st_size > 1000
    assert (tmp_path / "greedy.sqlite").exists()
    report = namespace["report"]
    assert report.reads_xi and report.n_pulls == 300
    assert namespace["status"].algorithm == "EpsilonGreedy"
    assert namespace["status"].pulls_observed == 150
    assert "EpsilonGreedy" in registry.policy_names()


def test_the_guide_leaves_the_registry_as_it_found_it():
    assert "EpsilonGreedy" not in registry.policy_names()
