"""Every ```python block of the documentation runs as printed: the blocks of one page in order,
in one namespace, in a fresh working folder (a reader follows a page top to bottom). Anything
that is not runnable Python is fenced ```text or ```bash.

A block that talks to PostgreSQL runs against the suite's own server
(tests/postgres_support.py): every ``postgresql://`` URL of the page is replaced by that
server's (socket form), nothing else changes.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")  # a block that plots must not open a window

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_gen" not in p.parts)
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
URL = re.compile(r"""(["'])postgresql://[^"']*\1""")


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a markdown text, in order (only those opened at a line start:
    an indented or quoted fence is an example of markdown, not code)."""
    return FENCE.findall(text)


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if python_blocks(p.read_text())]


def test_the_block_finder_reads_fences_as_markdown_does():
    text = "a\n```python\nx = 1\n```\n```text\nnot = code\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x + 1\n"]


def test_the_docs_have_runnable_pages():
    pages = {p.relative_to(DOCS).as_posix() for p in _pages_with_code()}
    # the guides and the live reference teach by running code; they must keep doing so
    assert {"guides/researcher.md", "guides/practitioner.md", "experiment.md"} <= pages


@pytest.mark.parametrize("page", _pages_with_code(),
                         ids=[p.relative_to(DOCS).as_posix() for p in _pages_with_code()])
def test_every_python_block_of_the_page_runs_in_order(page, tmp_path, monkeypatch, request,
                                                      capsys):
    text = page.read_text()
    if "postgresql://" in "".join(python_blocks(text)):
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(socket=True)
        text = URL.sub(lambda m: f"{m.group(1)}{url}{m.group(1)}", text)
    monkeypatch.chdir(tmp_path)
    # a page may register an algorithm (docs/new-algorithm.md): keep it out of the registry the
    # other tests of this process see
    from banditkit import registry

    registry.policy_names()  # every provider imported first, so the copy misses none
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    namespace: dict = {"__name__": "__docs__"}
    seconds = []
    for i, block in enumerate(python_blocks(text)):
        start = time.perf_counter()
        try:
            exec(compile(block, f"{page.name}[block {i}]", "exec"), namespace)
        except Exception as error:  # name the page and the block, then the error itself
            raise AssertionError(f"{page.relative_to(DOCS)}, python block {i} (from 0) failed:"
                                 f"\n{block}") from error
        seconds.append(time.perf_counter() - start)
    print(page.name, [round(s, 2) for s in seconds])
