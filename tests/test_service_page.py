"""The page to watch an experiment, loaded by a real browser (Debian's headless Chromium, which
``make test`` installs) from a real server on 127.0.0.1: its text holds the arms and the numbers
of the status, and its screenshot is a picture, not a blank page."""

from __future__ import annotations

import re

import numpy as np
import pytest

from banditkit.cli import main
from browser_support import chromium
from service_support import Server, call

ARMS = ["control", "blue-button", "green-copy"]
MEANS = {0: 0.2, 1: 0.5, 2: 0.8}


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    """A server and an experiment run for a few batches through it."""
    db = tmp_path_factory.mktemp("page")
    server = Server(db)
    assert call(server.port, "POST", "/experiments", {
        "name": "checkout", "algorithm": "ReplicableElimination", "arms": ARMS, "seed": 7,
        "horizon": 30_000, "params": {"rho": 0.3, "beta": 3}})[0] == 201
    rng = np.random.default_rng(0)
    for _ in range(12):
        _, answer = call(server.port, "POST", "/experiments/checkout/assign", {"n": 400})
        units = answer["units"]
        rewards = [float(rng.random() < MEANS[u["arm_index"]]) for u in units]
        assert call(server.port, "POST", "/experiments/checkout/record",
                    {"units": [u["unit"] for u in units], "rewards": rewards})[0] == 200
    yield server, db
    server.stop()


def test_a_browser_shows_the_arms_numbers_and_plots_of_the_status(watched, tmp_path):
    server, _ = watched
    _, status = call(server.port, "GET", "/experiments/checkout/status")
    assert status["batches_observed"] >= 3  # enough history for the plots to mean something
    url = f"http://127.0.0.1:{server.port}/experiments/checkout"
    dom = chromium(tmp_path, "--dump-dom", url)
    text = re.sub(r"<[^>]+>", " ", dom)
    for arm in status["arms"]:
        # the decision first (the verdict, then the numbers), the counts after
        row = re.search(rf"{arm['arm']}\s+{arm['verdict']}\s.*?{arm['mean']:.4g}\s.*?"
                        rf"{arm['assigned']}\s+{arm['recorded']}\s+{arm['counted']}\s+"
                        rf"{arm['imputed']}\b", " ".join(text.split()))
        assert row, f"the row of {arm['arm']} is not in the page"
    assert f"{status['pulls_observed']}" in text and f"{status['budget_left']}" in text
    eliminated = [a["arm"] for a in status["arms"] if not a["active"]]
    assert re.search(r"eliminated arms\s+" + (", ".join(eliminated) or "none"),
                     " ".join(text.split()))
    assert dom.count("<svg") == 3  # units, means, allocation
    for title in ("units assigned (cumulative)", "mean reward", "share of the batch"):
        assert title in dom  # the plots' axis labels (SVG text)
    shot = tmp_path / "page.png"
    chromium(tmp_path, "--window-size=1000,1800", f"--screenshot={shot}", url)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1800, 1000)
    ink = (pixels < 0.9).any(axis=2)
    assert ink.mean() > 0.02  # text, tables and plots, not a blank page
    # the plots' colours (the arms' lines and bars) are on screen, not only black text
    colour = pixels.max(axis=2) - pixels.min(axis=2) > 0.3
    assert colour.mean() > 0.005


def test_the_page_is_written_offline_self_contained(watched, tmp_path, capsys):
    _, db = watched
    out = tmp_path / "report.html"
    assert main(["experiment", "report", str(db / "checkout.sqlite"), "--html", str(out)]) == 0
    page = out.read_text()
    assert page.count("<svg") == 3 and all(arm in page for arm in ARMS)
    # nothing fetched from elsewhere: no external script, style sheet, image or font
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", page)
    assert "<link" not in page and "<script" not in page and "@import" not in page
    assert main(["experiment", "report", str(db / "checkout.sqlite"), "--html", str(out)]) == 2
    assert "exists" in capsys.readouterr().err


def test_a_page_before_any_unit_says_so_instead_of_empty_plots(tmp_path):
    from banditkit import Experiment
    from banditkit.service.page import render_page

    with Experiment.create(tmp_path / "e.sqlite", algorithm="UCB1", arms=["a", "b"], seed=1,
                           horizon=10) as exp:
        page = render_page(exp, title="fresh")
    assert "<svg" not in page and page.count("No units assigned yet") == 3
