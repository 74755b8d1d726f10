"""What a library people depend on carries: its licence (the one pyproject.toml declares), a
citation file naming the software and the four papers whose algorithms it implements, and a
changelog with the version being released."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the papers' texts lie in shared/ beside the checkout (a worktree one level further down)
PAPERS = next((p for p in (ROOT.parent / "shared" / "papers",
                           ROOT.parent.parent / "shared" / "papers") if p.is_dir()),
              ROOT.parent / "shared" / "papers")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_the_licence_file_is_the_declared_licence():
    assert PROJECT["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted" in text


def test_the_citation_file_names_the_software_and_the_four_papers():
    yaml = pytest.importorskip("yaml")  # PyYAML comes with the docs extra (make test)
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == PROJECT["version"] and cff["license"] == PROJECT["license"]
    titles = [_words(r["title"]) for r in cff["references"]]
    assert len(titles) == 4
    for ref in cff["references"]:
        assert ref["authors"] and ref["year"] >= 2019
    if not PAPERS.is_dir():
        pytest.skip("the papers' texts are not beside this checkout")
    texts = sorted(PAPERS.glob("*.txt"))
    assert len(texts) == 4
    for paper in texts:  # each paper's title (its first line) is one of the references
        first = next(line for line in paper.read_text().splitlines() if line.strip())
        assert _words(first) in titles, (paper.name, first)


def test_the_changelog_has_the_released_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(PROJECT['version'])}\] — \d{{4}}-\d\d-\d\d$", text,
                     flags=re.MULTILINE)
    assert "## [Unreleased]" in text
