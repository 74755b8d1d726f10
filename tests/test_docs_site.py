"""The documentation site builds with `mkdocs build --strict` (a broken link, a missing page, an
unresolved API reference or a docstring the numpy parser cannot read fails it), has a page for
every public name and every registered algorithm, draws a gallery figure at build time, and
loads nothing from another host (fonts, scripts, styles, images): it must work offline.

One build (about 20 s) serves every test of this module."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing
from html.parser import HTMLParser
from pathlib import Path

import pytest

import banditkit
from banditkit.registry import get_policy, policy_names

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("mkdocs", reason="the docs extra is not installed (make test installs it)")

FIGURE = "replicable-bandits:ucb-baseline"  # the fastest --quick figure (about 2 s)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path]),
           "BANDITKIT_DOCS_CACHE": str(out / "gallery-cache"),
           "BANDITKIT_DOCS_GALLERY": "run", "BANDITKIT_DOCS_FIGURES": FIGURE,
           "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out / "site")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    (out / "build.log").write_text(done.stderr, encoding="utf-8")
    return out / "site"


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _article(page: Path) -> str:
    text = _text(page)
    return text[text.index("<article"):text.index("</article>")]


def test_every_public_name_has_an_api_page(site):
    for name in banditkit.__all__:
        if name.startswith("_"):
            continue
        page = site / "reference" / f"{name}.html"
        assert page.exists(), name
        # the docstring was rendered: the object's own id and its first sentence are there
        obj = getattr(banditkit, name)
        assert f'id="{obj.__module__}.{obj.__qualname__}' in _text(page)
    experiment = _text(site / "reference" / "Experiment.html")
    for method in ("create", "open", "assign", "record", "status", "units", "resume"):
        assert f'id="banditkit.live.experiment.Experiment.{method}"' in experiment, method
    # the docstrings' Sphinx roles (:func:`x`) are shown as code, not printed as they are
    for page in (site / "reference").rglob("*.html"):
        # (Markdown turns the role's backticks into <code>, so either form is a raw role)
        assert not re.search(r":(func|class|meth|mod|data|attr):(`|<code>)", _article(page)), \
            page.name
    simulate = _text(site / "reference" / "simulate.html")
    assert "Parameters" in simulate and "horizon" in simulate and "checkpoints" in simulate


def test_every_registered_algorithm_has_a_page_with_its_class(site):
    names = policy_names()
    index = _text(site / "reference" / "algorithms" / "index.html")
    for name in names:
        page = site / "reference" / "algorithms" / f"{name}.html"
        assert page.exists(), name
        assert f'href="{name}.html"' in index[index.index("<article"):], name
        text = _text(page)
        assert "Parameters of the registered name" in text
        entry = get_policy(name)
        factory = f"{entry.factory.__module__}.{entry.factory.__qualname__}"
        assert f'id="{factory}"' in text, name  # the factory, rendered from its docstring
        built = typing.get_type_hints(entry.factory)["return"]
        # the class it builds, rendered here or (a deprecated alias) linked to its page
        assert (f'id="{built.__module__}.{built.__qualname__}"' in text
                or "builds the class documented on the page of" in text), name


def test_every_family_page_names_its_paper_and_its_algorithms(site):
    pages = sorted((site / "families").glob("*.html"))
    assert len(pages) >= 6
    listed = set()
    for page in pages:
        text = _article(page)  # the page itself, not the navigation that lists every page
        listed |= set(re.findall(r'algorithms/([A-Za-z0-9]+)\.html', text))
        if page.stem != "other":
            assert "Paper:" in text, page.name
    assert listed == set(policy_names())  # each algorithm in a family (or in "other")


def test_the_gallery_draws_its_figures_at_build_time(site):
    slug = FIGURE.replace(":", "_")
    png = site / "gallery" / f"{slug}.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = _text(site / "gallery" / "index.html")
    assert f'src="{slug}.png"' in text
    assert "banditkit run" in text  # the figures not drawn say how to draw them
    assert not re.search(r"\{[A-Za-z_]+\}", _article(site / "gallery" / "index.html"))  # filled
    # issue 35 §5: the build says what it draws, figure by figure (it was silent for minutes)
    log = (site.parent / "build.log").read_text(encoding="utf-8")
    assert re.search(r"gallery: drawing 1 quick figure\(s\), \d+ at a time", log)
    assert re.search(rf"gallery: \[1/1\] {re.escape(FIGURE)}: (ran|reused \S+) in [\d.]+ s",
                     log)


class _Resources(HTMLParser):
    """Every URL a page loads by itself: scripts, stylesheets, icons, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video") and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and a.get("href") and (a.get("rel") or "") not in ("canonical",):
            self.urls.append(a["href"])


def test_the_site_loads_nothing_from_another_host(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 40
    for page in pages:
        parser = _Resources()
        parser.feed(_text(page))
        remote = [u for u in parser.urls if re.match(r"^([a-z]+:)?//", u)]
        assert not remote, (page.relative_to(site), remote)
    for css in site.rglob("*.css"):
        assert not re.search(r"url\((['\"]?)(https?:)?//", _text(css)), css
    # search works without a server: the offline plugin inlines the index into a script
    assert (site / "search" / "search_index.js").read_text().startswith("var __index")
