"""Pages generated at build time (mkdocs-gen-files): the API reference of every public name,
one page per registered algorithm, one page per algorithm family, and the figure gallery.

Everything here is read from the package itself, so an algorithm registered on another branch
(``@register_policy`` in ``banditkit/registry.py``'s providers) gets its page, its line in the
algorithm index and its place in its family without an edit here. A family is matched by the
module of the class the factory returns (``FAMILIES[...]["modules"]``); an algorithm in no
family is listed under "Other algorithms".

The gallery shows each figure's ``--quick`` PNG, drawn at build time into a cache folder
(``BANDITKIT_DOCS_CACHE``, default ``build/docs-gallery``). ``BANDITKIT_DOCS_GALLERY`` says
whether to draw: ``run`` (the default, ``make docs``) runs ``banditkit run FIGURE --quick`` for
every figure whose PNG is not in the cache yet (``BANDITKIT_DOCS_FIGURES=a,b`` only those),
``BANDITKIT_DOCS_JOBS`` at a time (default: the CPU count), with a progress line per figure on
stderr, and copies instead the PNG of a stored quick run that is exactly this build's
(``banditkit reproduce --quick``'s ``runs/reproduce-quick/``, ``runs/<figure>-quick/``);
``cached`` uses the PNGs already there and lists the others with the command that draws them.
A figure that needs a data set (``FigureSpec.requires``: MovieLens, ``make data``) is drawn
only when cached.
"""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
import typing
from pathlib import Path

import mkdocs_gen_files

import banditkit
from banditkit.registry import _load

sys.path.insert(0, str(Path(__file__).parent))
from griffe_roles import strip_roles  # docstring text this script writes itself

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("BANDITKIT_DOCS_CACHE", ROOT / "build" / "docs-gallery"))
GALLERY_MODE = os.environ.get("BANDITKIT_DOCS_GALLERY", "run")
# Only these figures are run when missing (comma-separated names; all when unset): the test of
# the site runs one, so that drawing at build time is checked without the minutes of all.
ONLY = {f for f in os.environ.get("BANDITKIT_DOCS_FIGURES", "").split(",") if f}

# The subpackages whose ``__all__`` is public API, each on a page of its own.
SUBPACKAGES = {
    "banditkit.envs": "Environments and named instances",
    "banditkit.policies": "Regret minimisers and constrained policies",
    "banditkit.identification": "Best-arm identification",
    "banditkit.design": "Optimal experimental design",
    "banditkit.estimation": "Estimators (replicable mean, SQ, radii)",
    "banditkit.live": "Live experiments",
    "banditkit.registry": "The algorithm registry",
}

# One page per family, with its paper. ``modules``: where the family's classes live.
FAMILIES: dict[str, dict[str, typing.Any]] = {
    "replicable-bandits": {
        "title": "Replicable bandits",
        "paper": "Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni & Velegkas, "
                 "*Replicable Bandits*, ICLR 2023",
        "intro": "A policy is ρ-replicable when two executions that share its internal "
                 "randomness ξ and see independent rewards pull exactly the same arms with "
                 "probability at least 1 − ρ. Algorithms 1–2 (K arms), 3 (linear, finitely "
                 "many arms) and 4 (linear, infinitely many arms), with their non-replicable "
                 "batched baselines.",
        "pages": ["replicable.md", "replicable-linear.md"],
        "modules": ["banditkit.policies.elimination.replicable",
                    "banditkit.policies.elimination.batched",
                    "banditkit.policies.linear.replicable",
                    "banditkit.policies.linear.elimination"],
    },
    "replicable-constrained": {
        "title": "Replicable constrained bandits",
        "paper": "Bollini, Genalti, Stradi, Castiglioni & Marchesi, "
                 "*Replicable Constrained Bandits* (preprint, 2025)",
        "intro": "Replicable policies under cost constraints: DEBORA for unconstrained "
                 "problems, DEBORA-S (soft constraints: regret and violation) and DEBORA-H "
                 "(hard constraints: never unsafe with high probability), with optimistic "
                 "non-replicable baselines.",
        "pages": ["constrained.md"],
        "modules": ["banditkit.policies.constrained.debora",
                    "banditkit.policies.constrained.baselines",
                    "banditkit.policies.constrained.oplb"],
    },
    "transductive-identification": {
        "title": "Transductive linear identification (RAGE)",
        "paper": "Fiez, Jain, Jamieson & Ratliff, *Sequential Experimental Design for "
                 "Transductive Linear Bandits*, NeurIPS 2019",
        "intro": "Fixed-confidence best-arm identification when the measured vectors X differ "
                 "from the items Z to rank: RAGE's XY-optimal designs, rounded efficiently, and "
                 "the paper's baselines (static, oracle and adaptive XY allocations, LinGapE, "
                 "ALBA).",
        "pages": ["rage.md", "benchmarks-design.md"],
        "modules": ["banditkit.identification.rage", "banditkit.identification.xy",
                    "banditkit.identification.alba", "banditkit.identification.lingape"],
    },
    "optimal-identification": {
        "title": "Asymptotically optimal identification",
        "paper": "Jedra & Proutière, NeurIPS 2020; Wang, Tzeng & Proutière, NeurIPS 2021; "
                 "Degenne, Ménard, Shang & Valko, ICML 2020; Russo, Operations Research 2020; "
                 "Garivier & Kaufmann, COLT 2016; Jourdan, Degenne & Kaufmann, 2023; "
                 "Kalyanakrishnan, Tewari, Auer & Stone, ICML 2012; Kaufmann & "
                 "Kalyanakrishnan, COLT 2013; You, Qin, Wang & Yang, COLT 2023",
        "intro": "Identifiers whose sample complexity matches the lower bound as δ → 0: "
                 "linear Track-and-Stop, Frank-Wolfe Sampling, LinGame (GLR stopping), "
                 "top-two Thompson sampling, and for K arms Track-and-Stop, EB-TCε and the "
                 "LUCB / KL-LUCB baselines, and identifiers assembled from interchangeable "
                 "sampling, stopping and recommendation rules.",
        "pages": ["rage.md", "k-armed.md"],
        "modules": ["banditkit.identification.track_and_stop",
                    "banditkit.identification.fw_sampling", "banditkit.identification.lingame",
                    "banditkit.identification.top_two",
                    "banditkit.identification.k_armed.track_and_stop",
                    "banditkit.identification.k_armed.eb_tc",
                    "banditkit.identification.k_armed.lucb",
                    "banditkit.identification.k_armed.racing",
                    "banditkit.identification.k_armed.composed",
                    "banditkit.identification.k_armed.rules",
                    "banditkit.identification.k_armed.fw_rule",
                    "banditkit.identification.k_armed.stopping",
                    "banditkit.identification.k_armed.thresholds",
                    "banditkit.identification.linear_composed"],
    },
    "replicable-identification": {
        "title": "Replicable best-arm identification (ours)",
        "paper": "banditkit's construction from Esfandiari et al., ICLR 2023 (replicable "
                 "queries) and Fiez et al., NeurIPS 2019 (RAGE)",
        "intro": "Identifiers whose every data-dependent decision is a replicable query: "
                 "gap estimates rounded on a grid with offsets from the shared ξ, so two "
                 "executions on independent data recommend the same item with probability at "
                 "least 1 − ρ.",
        "pages": ["replicable-bai.md"],
        "modules": ["banditkit.identification.replicable_se",
                    "banditkit.identification.replicable_rage",
                    "banditkit.identification.replicable_g_bai"],
    },
    "nonstationary-identification": {
        "title": "Fixed-budget identification robust to non-stationarity (P1-RAGE)",
        "paper": "Xiong, Camilleri, Fazel, Jain & Jamieson, *A/B Testing and Best-arm "
                 "Identification for Linear Bandits with Robustness to Non-stationarity*, "
                 "AISTATS 2024",
        "intro": "A/B/n tests whose arms' values drift: every algorithm spends exactly its "
                 "budget T and recommends the item best on average over the test. G-BAI, "
                 "P1-RAGE, P1-Peace, Mixed-Peace and the stationary baselines Peace and "
                 "OD-LinBAI.",
        "pages": ["p1-rage.md"],
        "modules": ["banditkit.identification.g_bai", "banditkit.identification.p1",
                    "banditkit.identification.peace", "banditkit.identification.od_linbai"],
    },
    "regret-minimisers": {
        "title": "Regret minimisers (baselines)",
        "paper": "Auer, Cesa-Bianchi & Fischer 2002; Audibert & Bubeck 2009; Garivier & "
                 "Cappé 2011; Kaufmann, Cappé & Garivier 2012; Neu 2015; Agrawal & Goyal "
                 "2012, 2013; Abbasi-Yadkori, Pál & Szepesvári 2011",
        "intro": "The classical policies the papers compare against and a practitioner may "
                 "run live: UCB1, MOSS, KL-UCB, Bayes-UCB, Thompson sampling (sequential and "
                 "batched), EXP3-IX, OFUL / LinUCB and linear Thompson sampling, and the "
                 "fixed-split A/B/n test they are compared with.",
        "pages": ["regret.md", "linear-regret.md"],
        "modules": ["banditkit.policies.index.ucb", "banditkit.policies.index.kl_ucb",
                    "banditkit.policies.index.thompson", "banditkit.policies.batched_thompson",
                    "banditkit.policies.linear.oful", "banditkit.policies.linear.thompson",
                    "banditkit.policies.index.moss", "banditkit.policies.index.bayes_ucb",
                    "banditkit.policies.exp3_ix", "banditkit.policies.fixed_allocation"],
    },
}


def _built_class(entry) -> type | None:
    """The class a registered factory returns (its return annotation), or None."""
    try:
        ret = typing.get_type_hints(entry.factory).get("return")
    except Exception:  # an annotation that does not resolve: document the factory only
        return None
    return ret if isinstance(ret, type) else None


def _family_of(cls: type | None) -> str | None:
    module = cls.__module__ if cls is not None else ""
    for slug, family in FAMILIES.items():
        if module in family["modules"]:
            return slug
    return None


def _write(path: str, text: str) -> None:
    with mkdocs_gen_files.open(path, "w") as f:
        f.write(text)


def _params_table(entry) -> str:
    rows = ["| parameter | default |", "|---|---|"]
    for name, default in entry.parameters().items():
        rows.append(f"| `{name}` | `{default!r}` |")
    return "\n".join(rows) if len(rows) > 2 else "No parameters besides the horizon."


def algorithm_pages() -> dict[str | None, list[str]]:
    """reference/algorithms/<Name>.md for every registered name; returns names by family."""
    by_family: dict[str | None, list[str]] = {}
    lines = ["# All registered algorithms", "",
             "Every name that `Experiment.create(algorithm=...)`, `banditkit audit` and "
             "`banditkit.registry.make_policy` accept, read from `banditkit/registry.py` when "
             "this site was built.", "", "| name | family | what |", "|---|---|---|"]
    documented: dict[type, str] = {}  # a class on the page of the first name that builds it
    for name, entry in sorted(_load().items(),
                              key=lambda item: ("deprecated" in item[1].description, item[0])):
        cls = _built_class(entry)
        family = _family_of(cls)
        by_family.setdefault(family, []).append(name)
        target = f"{cls.__module__}.{cls.__qualname__}" if cls else \
            f"{entry.factory.__module__}.{entry.factory.__qualname__}"
        fam = (f"[{FAMILIES[family]['title']}](../../families/{family}.md)" if family
               else "other")
        lines.append(f"| [`{name}`]({name}.md) | {fam} | {strip_roles(entry.description)} |")
        factory = f"{entry.factory.__module__}.{entry.factory.__qualname__}"
        _write(f"reference/algorithms/{name}.md", "\n".join([
            f"# `{name}`", "",
            strip_roles(entry.description), "",
            f"Registered name `{name}`: build it with "
            f"`banditkit.registry.make_policy(\"{name}\", env, rng, horizon=T, **params)`, run "
            f"it live with `Experiment.create(..., algorithm=\"{name}\")`, audit it with "
            f"`banditkit audit {name}`." + (f" Family: [{FAMILIES[family]['title']}]"
                                            f"(../../families/{family}.md)." if family else ""),
            "", "## Parameters of the registered name", "",
            "The keyword parameters the registry accepts and their defaults (a live "
            "experiment may replace some by its live defaults, shown by `status`):", "",
            _params_table(entry), "",
            "## The class", "",
            *([f"`{name}` builds the class documented on the page of "
               f"[`{documented[cls]}`]({documented[cls]}.md).", ""] if cls in documented else
              [f"::: {target}", "    options:", "      heading_level: 3",
               "      show_root_heading: true", "      show_root_full_path: false", ""]),
            "## The factory", "",
            f"::: {factory}", "    options:", "      heading_level: 3",
            "      show_root_heading: true", "      show_root_full_path: false", ""]))
        if cls is not None:
            documented.setdefault(cls, name)
    _write("reference/algorithms/index.md", "\n".join(lines) + "\n")
    return by_family


def _page_title(page: str) -> str:
    """The first heading of a docs page (its title in the navigation)."""
    for line in (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page


def family_pages(by_family: dict[str | None, list[str]]) -> None:
    nav = []
    for slug, family in FAMILIES.items():
        names = by_family.get(slug, [])
        text = [f"# {family['title']}", "", f"**Paper:** {family['paper']}.", "",
                family["intro"], "", "## Algorithms", ""]
        text += [f"* [`{n}`](../reference/algorithms/{n}.md) — "
                 f"{strip_roles(_load()[n].description)}" for n in names] or ["(none registered)"]
        text += ["", "## Measured results, choices and deviations from the paper", ""]
        text += [f"* [{_page_title(p)}](../{p})" for p in family["pages"]]
        _write(f"families/{slug}.md", "\n".join(text) + "\n")
        nav.append(f"* [{family['title']}]({slug}.md)")
    others = by_family.get(None, [])
    text = ["# Other algorithms", "",
            "Registered algorithms that belong to no family above (add their module to "
            "`FAMILIES` in `docs/_gen/pages.py`).", ""]
    text += [f"* [`{n}`](../reference/algorithms/{n}.md) — "
             f"{strip_roles(_load()[n].description)}" for n in others] or [
        "None: every registered algorithm has its family."]
    _write("families/other.md", "\n".join(text) + "\n")
    nav.append("* [Other algorithms](other.md)")
    _write("families/SUMMARY.md", "\n".join(nav) + "\n")


def api_pages() -> None:
    """reference/<name>.md for each name of ``banditkit.__all__``, one page per subpackage."""
    nav, index = [], ["# API reference", "",
                      "The names `import banditkit` exports (`banditkit.__all__`):", ""]
    for name in sorted(n for n in banditkit.__all__ if not n.startswith("_")):
        obj = getattr(banditkit, name)
        # the defining module's docstring first: it explains the concept (Experiment's
        # durability and transactions, the ask/tell protocol) that the class docstring assumes
        _write(f"reference/{name}.md", f"# `banditkit.{name}`\n\n"
               f"::: {obj.__module__}\n    options:\n      members: false\n"
               "      show_root_heading: false\n      show_root_toc_entry: false\n\n"
               f"::: {obj.__module__}.{obj.__qualname__}\n    options:\n"
               "      heading_level: 2\n      show_root_heading: false\n"
               # a class's inherited public methods are part of its page
               "      inherited_members: true\n")
        summary = strip_roles((inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " "))
        index.append(f"* [`banditkit.{name}`]({name}.md) — {summary}")
        nav.append(f"* [{name}]({name}.md)")
    index += ["", "The subpackages' public names (each subpackage's `__all__`):", ""]
    nav.append("* Subpackages")
    for module, title in SUBPACKAGES.items():
        mod = importlib.import_module(module)
        slug = module.split(".")[-1]
        _write(f"reference/{slug}.md", f"# `{module}`: {title}\n\n::: {module}\n    options:\n"
               "      heading_level: 2\n      show_root_heading: false\n"
               "      show_submodules: false\n"
               + ("      members:\n" + "".join(f"        - {m}\n" for m in mod.__all__)
                  if getattr(mod, "__all__", None) else ""))
        index.append(f"* [`{module}`]({slug}.md) — {title}")
        nav.append(f"    * [{module}]({slug}.md)")
    index += ["", "Every registered algorithm has a page of its own: "
              "[all algorithms](algorithms/index.md).", ""]
    nav.append("* Algorithms")
    nav.append("    * [All algorithms](algorithms/index.md)")
    nav += [f"    * [{n}](algorithms/{n}.md)" for n in sorted(_load())]
    _write("reference/index.md", "\n".join(index) + "\n")
    _write("reference/SUMMARY.md", "* [Overview](index.md)\n" + "\n".join(nav) + "\n")


def _figures() -> list[tuple[str, str, bool]]:
    """(name, title, needs a data set) of every figure ``banditkit list`` shows."""
    from banditkit.experiments.describe import fill
    from banditkit.experiments.figures import all_figures

    # the full run's title, placeholders such as {T} filled as `banditkit list` fills them
    return [(f.name, fill(f.title, trials=f.trials, points=f.points,
                          horizons=[f.horizon_at(p) for p in f.points]), f.requires is not None)
            for f in all_figures()]


def _stored_png(name: str, slug: str) -> Path | None:
    """The PNG of a stored quick run of ``name`` that is this build's run exactly (same
    identity: figure, quick, trials, seed 0, spec fingerprint, version), from ``banditkit
    reproduce --quick`` (``runs/reproduce-quick/<slug>``) or ``banditkit run NAME --quick``
    (``runs/<slug>-quick``); None when there is none. A stale run (another spec or version) is
    not reused."""
    from banditkit.experiments.figures import get_figure
    from banditkit.experiments.store import IDENTITY_KEYS, spec_fingerprint

    spec = get_figure(name).quick_version()
    want = {"figure": name, "quick": True, "trials": spec.trials, "seed": 0,
            "fingerprint": spec_fingerprint(spec), "version": banditkit.__version__}
    for folder in (ROOT / "runs" / "reproduce-quick" / slug, ROOT / "runs" / f"{slug}-quick"):
        png = folder / f"{slug}.png"
        if not png.exists() or not (folder / "results.sqlite").exists():
            continue
        try:
            from banditkit.experiments.runner import load_run

            run = load_run(folder)
        except Exception:  # an unreadable folder is simply not reused
            continue
        if run.complete and all(run.config.get(k) == want[k] for k in IDENTITY_KEYS):
            return png
    return None


def _draw(name: str, slug: str) -> tuple[str, float, str]:
    """Run ``banditkit run NAME --quick`` into the cache (one worker: the gallery runs several
    figures at once); returns (name, seconds, how)."""
    import shutil
    import time

    start = time.perf_counter()
    stored = _stored_png(name, slug)
    if stored is not None:
        (CACHE / slug).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(stored, CACHE / slug / f"{slug}.png")
        return name, time.perf_counter() - start, f"reused {stored.parent.relative_to(ROOT)}"
    done = subprocess.run([sys.executable, "-m", "banditkit", "run", name, "--quick",
                           "--workers", "1", "--no-progress", "--out", str(CACHE / slug)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"banditkit run {name} --quick failed:\n{done.stderr}")
    return name, time.perf_counter() - start, "ran"


def draw_missing(figures: list[tuple[str, str, bool]]) -> None:
    """Draw every wanted figure whose PNG is not cached, ``BANDITKIT_DOCS_JOBS`` at a time
    (default: the CPU count), with a line on stderr as each finishes (the first build used to
    run 24 figures one after another in silence for half an hour)."""
    import time
    from concurrent.futures import ThreadPoolExecutor, as_completed

    todo = [(name, name.replace(":", "_")) for name, _, needs_data in figures
            if (not ONLY or name in ONLY) and not needs_data]
    todo = [(n, s) for n, s in todo if not (CACHE / s / f"{s}.png").exists()]
    if GALLERY_MODE != "run" or not todo:
        return
    jobs = int(os.environ.get("BANDITKIT_DOCS_JOBS", os.cpu_count() or 1))
    start = time.perf_counter()
    print(f"gallery: drawing {len(todo)} quick figure(s), {jobs} at a time, into {CACHE}",
          file=sys.stderr, flush=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_draw, name, slug) for name, slug in todo]
        for k, future in enumerate(as_completed(futures), 1):
            name, seconds, how = future.result()
            print(f"gallery: [{k}/{len(todo)}] {name}: {how} in {seconds:.1f} s "
                  f"({time.perf_counter() - start:.0f} s so far)", file=sys.stderr, flush=True)


def gallery() -> None:
    text = ["# Gallery", "",
            "Every figure of `banditkit list` as its `--quick` run draws it (few trials, short "
            "horizons: the shape of each figure in seconds, not the papers' numbers; the "
            "algorithm-family pages give the full runs). Rerun one with "
            "`banditkit run FIGURE --quick`.", ""]
    figures = _figures()
    draw_missing(figures)
    for name, title, needs_data in figures:
        slug = name.replace(":", "_")
        png = CACHE / slug / f"{slug}.png"
        text += [f"## `{name}`", "", f"{title} (full run; the picture is the quick run's).", ""]
        if png.exists():
            with mkdocs_gen_files.open(f"gallery/{slug}.png", "wb") as f:
                f.write(png.read_bytes())
            text += [f"![{name}, --quick]({slug}.png)", ""]
        else:
            why = ("needs MovieLens-100k (`make data`)" if needs_data
                   else "not drawn in this build")
            text += [f"*Not shown: {why}; `banditkit run {name} --quick` draws it.*", ""]
    _write("gallery/index.md", "\n".join(text) + "\n")


def intervals_picture() -> None:
    """guides/intervals-over-days.png: the practitioner's guide's picture of the statistics.

    The guide's own A/B test (rates 0.10 / 0.12 / 0.15, seed 7, ρ = 0.2) with 1,000 visitors a
    day, read every day with both kinds of interval: the anytime-valid interval of new-copy's
    difference to the control (what ``status()`` shows) beside the classical 95% one (valid
    for one planned look), the observed difference and the truth (0.05)."""
    import tempfile

    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from banditkit import Experiment

    rates = {"control": 0.10, "new-button": 0.12, "new-copy": 0.15}
    rng = np.random.default_rng(0)
    rows, verdicts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "checkout.sqlite"
        Experiment.create(path, algorithm="ReplicableElimination", arms=list(rates), seed=7,
                          horizon=30_000, params={"rho": 0.2}).close()
        with Experiment.open(path) as exp:
            for day in range(1, 31):
                units = exp.assign(1_000)
                if units.empty:
                    break
                exp.record(units["unit"],
                           rng.random(len(units)) < units["arm"].map(rates).to_numpy())
                anytime = exp.status(intervals="anytime").arms.loc["new-copy"]
                fixed = exp.status(intervals="fixed").arms.loc["new-copy"]
                rows.append((day, anytime["diff"], anytime["diff_low"], anytime["diff_high"],
                             fixed["diff_low"], fixed["diff_high"]))
                verdicts.append(anytime["verdict"])
    d = np.array(rows, dtype=float)
    fig, ax = plt.subplots(figsize=(8, 4.4), dpi=110)
    ax.fill_between(d[:, 0], d[:, 2], d[:, 3], alpha=0.25,
                    label="anytime-valid: status() (valid at every look)")
    ax.fill_between(d[:, 0], d[:, 4], d[:, 5], alpha=0.35,
                    label='classical 95%: status(intervals="fixed") (one planned look)')
    ax.plot(d[:, 0], d[:, 1], "k.-", lw=1, label="observed difference")
    ax.axhline(0.05, color="C3", ls="--", lw=1, label="true difference (0.05)")
    ax.axhline(0, color="grey", lw=0.8)
    if "better" in verdicts:
        first = int(d[verdicts.index("better"), 0])
        ax.axvline(first, color="C2", ls=":", lw=1.2, label=f"first verdict 'better': day {first}")
    ax.set_xlabel("day (1,000 visitors a day)")
    ax.set_ylabel("new-copy − control")
    ax.set_title("Conversion rate of new-copy minus control, read every day")
    fig.legend(loc="lower center", ncol=2, fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    with mkdocs_gen_files.open("guides/intervals-over-days.png", "wb") as f:
        fig.savefig(f, format="png")
    plt.close(fig)


api_pages()
family_pages(algorithm_pages())
gallery()
intervals_picture()
