"""``banditkit reproduce all --quick`` (issue 24 §1, §3): one report, markdown and a
self-contained HTML page, listing every figure of the four papers with each reference number,
its source, ours with a 95% interval and trial count, and a verdict; the page opened in headless
Chromium with its plots loaded; the same numbers from a 2-worker local Dask cluster."""

from __future__ import annotations

import re
import time

import pytest

from banditkit.cli import main
from banditkit.envs.datasets import movielens_100k_dir
from banditkit.experiments.backends import DaskBackend
from banditkit.experiments.figures import get_figure
from banditkit.experiments.numbers import short_number
from banditkit.experiments.paper_references import PAPERS, all_figure_references
from banditkit.experiments.reproduce import reproduce
from banditkit.experiments.reproduce_compare import compare_figure, judge
from banditkit.experiments.reproduce_report import render_markdown, report_blocks
from banditkit.experiments.runner import default_out, load_run
from browser_support import chromium


def _has_movielens() -> bool:
    try:
        movielens_100k_dir()
    except (FileNotFoundError, ValueError):
        return False
    return True


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The whole quick reproduction, through the command line, with its wall time."""
    out = tmp_path_factory.mktemp("reproduce")
    copy = out / "copy" / "reproduction.md"
    start = time.perf_counter()
    assert main(["reproduce", "all", "--quick", "--workers", "2", "--out", str(out / "runs"),
                 "--no-progress", "--markdown", str(copy)]) == 0
    seconds = time.perf_counter() - start
    md = (out / "runs" / "reproduction.md").read_text()
    page = (out / "runs" / "reproduction.html").read_text()
    return {"out": out, "md": md, "page": page, "copy": copy.read_text(), "seconds": seconds}


def _tables(md: str) -> dict[str, list[list[str]]]:
    """Per figure heading, the rows of its reference table (cells split on unescaped |)."""
    out: dict[str, list[list[str]]] = {}
    figure = None
    for line in md.splitlines():
        m = re.match(r"### (\S+) — ", line)
        if m:
            figure = m.group(1)
            out[figure] = []
        elif figure and line.startswith("| ") and not line.startswith("| point"):
            out[figure].append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return out


def test_the_report_lists_every_figure_and_reference_with_source_ours_and_verdict(quick):
    md = quick["md"]
    assert "**QUICK RUN**" in md and "`banditkit reproduce all --quick --workers 2" in md
    tables = _tables(md)
    entries = all_figure_references()
    assert sorted(tables) == sorted(e.figure for e in entries)
    header = ("| point | parameters | quantity | algorithm | reference | source | "
              "ours (95% interval) | trials | verdict |")
    assert md.count(header) == sum(bool(e.references) for e in entries)
    for entry in entries:
        rows = tables[entry.figure]
        assert len(rows) == len(entry.references), entry.figure
        for row, ref in zip(rows, entry.references, strict=True):
            point, _, _, algorithm, stated, source, ours, trials, verdict = row
            assert (int(point), algorithm) == (ref.point, ref.algorithm)
            assert re.search(r"\d", stated) and stated == ref.stated
            assert re.fullmatch(r"(paper text|read off the paper's plot|authors' stored "
                                r"results|authors' code rerun here) \[\d+\]", source)
            assert verdict.split(" (")[0].split(":")[0] in (
                "within noise", "differs, explained", "differs, unexplained", "not compared")
            if not verdict.startswith("not compared"):
                assert re.fullmatch(r"-?[\d.e+−-]+ \[-?[\d.e+−-]+, -?[\d.e+−-]+\] \(.+\)", ours)
                assert re.fullmatch(r"\d+( vs \d+)?( pairs)?", trials)
    # each figure's sources are spelled out below its table
    assert md.count("Sources: [1] paper text: ") == sum(bool(e.references) for e in entries)


def test_the_summary_counts_agree_with_the_rows(quick):
    md = quick["md"]
    rows = [r for t in _tables(md).values() for r in t]
    head = md.split("## Summary", 1)[1].splitlines()
    cells = [c.strip() for c in head[4].split("|")[1:-1]]
    figures, run, skipped, points, references, within, explained, unexplained, none = (
        int(c) for c in cells[:9])
    assert figures == len(all_figure_references()) == run + skipped
    assert references == len(rows)
    assert within == sum(r[-1].split(" (")[0] == "within noise" for r in rows)
    assert explained == sum(r[-1].startswith("differs, explained") for r in rows)
    assert unexplained == sum(r[-1] == "differs, unexplained" for r in rows)
    assert none == sum(r[-1].startswith("not compared") for r in rows)
    assert within + explained + unexplained + none == references
    assert points == len({(f, r[0]) for f, t in _tables(md).items() for r in t})
    assert len(cells) == 10  # narrow: the run's times, commit and machine come below
    run = [c.strip() for c in head[8].split("|")[1:-1]]
    assert all(re.fullmatch(r"\d+\.\d (s|min)", c) for c in run[:2])
    assert re.fullmatch(r"`([0-9a-f]{12}(\+dirty)?|unknown)`", run[2])
    assert head[10].startswith("Machine: ") and "cores" in head[10]
    paper_rows = [line for line in head if line.startswith("| ") and
                  line.split("|")[1].strip() in PAPERS]
    assert len(paper_rows) == len(PAPERS)


def test_quick_comparisons_are_real_where_the_quick_point_is_the_papers(quick):
    tables = _tables(quick["md"])
    # rage:fig1d's quick point d = 20 is the paper's (the horizon is only a cap): RAGE,
    # XY-static and XY-oracle identified the best arm in both trials; the claims ("nearly
    # matches the oracle", "outperforms the static allocation") and the authors' code rerun at
    # d = 20 (its RAGE, its oracle, their ratio) are compared there too
    fig1d = [r for r in tables["rage:fig1d"] if r[1] == "d=20"]
    assert len(fig1d) == 8 and all(r[-1] == "within noise" for r in fig1d[:3])
    authors = [r for r in fig1d if r[5].startswith("authors' code")]
    assert len(authors) == 3 and not any(r[-1].startswith("not compared") for r in authors)
    assert fig1d[0][6].startswith("0 [0, ") and fig1d[0][7] == "2"
    # p1-rage:fig2a at T = 1010 is the paper's point: compared; T = 11 is not in the quick run
    fig2a = tables["p1-rage:fig2a"]
    assert all(not r[-1].startswith("not compared") for r in fig2a if r[1] == "T=1010")
    assert all(r[-1].startswith("not compared") for r in fig2a if r[1] == "T=11")
    # a regret at another horizon is never compared with the paper's
    assert all(r[-1].startswith("not compared") for r in tables["replicable-bandits:fig1"])
    # every compared row prints ours as the stored trials give it, with the verdict's rule
    checked = 0
    for entry in all_figure_references():
        folder = quick["out"] / "runs" / default_out(entry.figure, False).name
        if not (folder / "results.sqlite").exists():
            continue
        full = get_figure(entry.figure)
        run = load_run(folder)
        for cmp, row in zip(compare_figure(full, full.quick_version(), entry.references, run),
                            tables[entry.figure], strict=True):
            if cmp.ours is None:
                assert row[6] == "–" and row[-1].startswith("not compared")
                continue
            o = cmp.ours
            value, lo, hi = (short_number(x) for x in (o.value, o.lo, o.hi))
            assert row[6] == f"{value} [{lo}, {hi}] ({o.interval})"
            assert row[-1].startswith(judge(cmp.reference, o))
            checked += 1
    assert checked == 22  # as the Dask test counts them below


def test_figures_needing_data_are_skipped_with_the_command_or_run(quick):
    md = quick["md"]
    for figure in ("rage:fig2b", "p1-rage:fig2b"):
        section = md.split(f"### {figure} — ", 1)[1].split("\n### ", 1)[0]
        if _has_movielens():
            assert "**Skipped**" not in section
        else:
            assert "**Skipped**: needs a data set that is not installed: run `make data`" \
                in section
            assert all(r[-1] == "not compared: figure skipped, `make data` first"
                       for r in _tables(md)[figure])


def test_the_markdown_copy_links_the_docs_from_where_it_is(quick):
    links = re.findall(r"\]\(([^)]+\.md#[^)]+)\)", quick["copy"])
    assert links
    for link in links:
        assert (quick["out"] / "copy" / link.split("#")[0]).resolve().is_file(), link
    # issue 35 §5: no path of the building machine (plots relative to the reproduction folder)
    for md in (quick["copy"], quick["md"]):
        assert re.search(r"^Plot: `[^/`][^`]*\.png`", md, re.M)
        assert not re.search(r"^Plot: `/", md, re.M)


def test_the_command_line_is_printed_without_the_machine_s_paths():
    from banditkit.experiments.reproduce_report import _portable

    assert (_portable("banditkit reproduce all --out /work/x/out --markdown docs/r.md")
            == "banditkit reproduce all --out DIR --markdown docs/r.md")
    assert _portable("") == ""


def test_the_html_page_is_self_contained_and_its_plots_load_in_a_browser(quick, tmp_path):
    page = quick["page"]
    images = re.findall(r'<img [^>]*src="([^"]*)"', page)
    run_figures = len(re.findall(r"<h3 ", page)) - page.count("<strong>Skipped</strong>")
    assert len(images) >= run_figures > 0  # one plot at least per figure run
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing loaded from elsewhere
    assert "<script" not in page and "<link" not in page
    # the browser decodes every image: a copy of the page reports it in its title on load
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", (
        "<script>window.addEventListener('load', () => { const i = [...document.images];"
        "document.title = 'images ' + i.length + ' decoded ' + i.filter(x => x.complete && "
        "x.naturalWidth > 100 && x.naturalHeight > 100).length; });</script></body>")))
    dom = chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    title = re.search(r"<title>(.*?)</title>", dom).group(1)
    assert title == f"images {len(images)} decoded {len(images)}", title
    # and the page as a picture: tables and coloured plots on screen, not a blank page
    shot = tmp_path / "page.png"
    chromium(tmp_path, "--window-size=1400,6000", f"--screenshot={shot}",
              (quick["out"] / "runs" / "reproduction.html").as_uri())
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    ink = (pixels < 0.9).any(axis=2)
    assert ink.mean() > 0.02
    colour = pixels.max(axis=2) - pixels.min(axis=2) > 0.3
    assert colour.mean() > 0.002


def test_unknown_papers_and_bad_options_are_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "never"
    assert main(["reproduce", "rage", "fiez", "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "argument PAPER: unknown paper(s) 'fiez'" in err and "Traceback" not in err
    assert "rage, p1-rage, replicable-bandits, replicable-constrained, or all" in err
    assert main(["reproduce", "--quick", "--scheduler", "tcp://x:1", "--out", str(out)]) == 2
    assert "argument --scheduler" in capsys.readouterr().err
    assert main(["reproduce", "--markdown", str(tmp_path), "--out", str(out)]) == 2
    assert "argument --markdown" in capsys.readouterr().err
    assert not out.exists()


#: One small figure per paper, with references compared at the quick run's points.
SUBSET = ["rage:fig1d", "p1-rage:fig2a", "replicable-bandits:infinite",
          "replicable-constrained:unconstrained"]


def test_a_two_worker_dask_cluster_gives_the_same_numbers(quick, tmp_path):
    """The subset on a 2-worker local Dask cluster against the same figures of the quick run
    above (the processes backend with 2 workers): identical summaries, pairs and
    comparisons."""
    with DaskBackend(workers=2) as cluster:
        dask = reproduce(["all"], quick=True, backend=cluster, out=tmp_path / "d",
                         progress=False, only=SUBSET)
    assert dask.backend == "dask" and [f.figure for f in dask.figures] == SUBSET
    compared = 0
    for b in dask.figures:
        a = load_run(quick["out"] / "runs" / default_out(b.figure, False).name)
        assert a.sessions[-1]["backend"] == "processes" and a.sessions[-1]["workers"] == 2
        assert a.summary.equals(b.result.summary), b.figure
        assert (a.pairs is None) == (b.result.pairs is None)
        if a.pairs is not None:
            assert a.pairs.equals(b.result.pairs), b.figure
        full = get_figure(b.figure)
        ours = compare_figure(full, full.quick_version(), b.entry.references, a)
        for ca, cb in zip(ours, b.comparisons, strict=True):
            assert (ca.ours, ca.verdict) == (cb.ours, cb.verdict)
            compared += ca.ours is not None
    # fig1d's d = 20 (8: three failure rates, two claims, the authors' code's three), fig2a's
    # T = 1010 (11: the paper's five, the authors' stored results' six), Alg. 4 at T = 10^6,
    # 10^9, 10^12
    assert compared == 22


def test_a_stopped_reproduction_resumes_where_it_stopped(tmp_path):
    """The run folders are ``banditkit run``'s: a second call runs only what is missing."""
    first = reproduce(["rage"], quick=True, backend="serial", out=tmp_path, progress=False,
                      only=["rage:fig1d"])
    [fig] = first.figures
    assert fig.result.ran == len(fig.result.trials) > 0
    again = reproduce(["rage"], quick=True, backend="serial", out=tmp_path, progress=False,
                      only=["rage:fig1d"])
    assert again.figures[0].result.ran == 0
    assert again.figures[0].result.summary.equals(fig.result.summary)
    assert [c.ours for c in again.figures[0].comparisons] == [c.ours for c in fig.comparisons]
    with pytest.raises(ValueError, match="only: rage:fig1c"):
        reproduce(["p1-rage"], quick=True, out=tmp_path, only=["rage:fig1c"])


def test_appendix_h_at_the_papers_counts_gives_its_verdicts(tmp_path):
    """Replicable Bandits' Figure 1 in full (T = 45000, 20 executions = 10 pairs; seconds):
    the paper's replicable algorithm identical in all pairs, UCB in none; UCB1 with c = 4.5
    differs in as many rounds as the paper's UCB, Auer's c = 2 in fewer (explained), and the
    printed constants' regret is 6.2x UCB1's, not 2.5x (explained)."""
    result = reproduce(["replicable-bandits"], workers=2, out=tmp_path, progress=False,
                       only=["replicable-bandits:fig1"])
    [fig] = result.figures
    assert fig.result.config["quick"] is False and fig.trials == 15 * 20
    got = {(c.reference.algorithm, c.reference.metric): c for c in fig.comparisons}
    assert got["ReplicableElimination (Alg. 2)", "non_replication"].verdict == "within noise"
    assert got["ReplicableElimination (Alg. 2)", "non_replication"].ours.trials == "10 pairs"
    c2 = got["UCB1 (c = 2)", "differing_rounds"]
    assert (c2.ours.lo, c2.ours.hi) == (19_082, 23_117) and c2.verdict == "differs, explained"
    assert got["UCB1 (c = 4.5)", "differing_rounds"].verdict == "within noise"
    assert all(got[u, "non_replication"].ours.value == 1.0
               for u in ("UCB1 (c = 2)", "UCB1 (c = 4.5)"))
    ratio = got["ReplicableElimination (Alg. 2)", "final_regret"]
    assert 5.8 < ratio.ours.lo < ratio.ours.value < ratio.ours.hi < 6.5  # 6.17 [5.89, 6.45]
    assert ratio.ours.value == pytest.approx(4676.4 / 757.9, abs=1e-3)  # docs/replicable.md
    assert ratio.verdict == "differs, explained"
    assert result.counts()["differs, explained"] == 2
    assert result.counts()["within noise"] == 5  # with Table 1's overhead bound, K²/ρ² = 400
    [table1] = [c for c in fig.comparisons if c.reference.value == 400.0]
    assert table1.reference.relation == "<=" and table1.verdict == "within noise"
    # issue 35 §3: the identical-pairs reference cannot fail at these constants, and says so
    alg2 = fig.result.trials.query("algorithm == 'ReplicableElimination (Alg. 2)'")
    assert alg2["final_regret"].round(6).nunique() == 1  # no data-dependent decision
    assert alg2["final_regret"].iloc[0] == pytest.approx(4676.4)
    md = render_markdown(report_blocks(result))
    row = next(line for line in md.splitlines()
               if "| non_replication | ReplicableElimination (Alg. 2) |" in line)
    assert "within noise (**cannot fail**: at T = 45,000" in row
    assert sum("cannot fail" in line for line in md.splitlines()) == 1
