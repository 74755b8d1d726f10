"""Reproduce the papers' figures from one call: run every figure, compare with the references.

:func:`reproduce` runs each figure of the named papers through :func:`~.runner.run_figure` into
``<out>/<figure>`` (resumable as ``banditkit run`` is: a killed reproduction continues where it
stopped), draws its plots and writes its own report there, skips a figure whose data set is
missing (with the command that fetches it), and compares every reference number
(:mod:`.paper_references`) with ours (:mod:`.reproduce_compare`). :mod:`.reproduce_report`
writes the whole as markdown and a self-contained HTML page (``banditkit reproduce``).
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends import BACKENDS, Backend, make_backend
from .figures import get_figure
from .paper_references import PAPERS, FigureReferences, paper_figures
from .reproduce_compare import VERDICTS, Comparison, compare_figure
from .runner import default_out, run_figure

__all__ = ["DATA_COMMAND", "FigureOutcome", "ReproduceResult", "default_reproduce_out",
           "machine_description", "paper_keys", "reproduce"]

#: The command that installs the data sets of the ``[data]`` figures.
DATA_COMMAND = "make data"


@dataclass
class FigureOutcome:
    """One figure of a reproduction.

    Attributes
    ----------
    figure : str
    paper : str
        Paper key (``"rage"``).
    entry : FigureReferences
    status : str
        ``"run"`` or ``"skipped"`` (its data set is missing: ``skip_reason``).
    seconds : float
        Wall time of this invocation's work on it (running, plotting, its report).
    result : RunResult or None
    comparisons : list of Comparison
    plots : list of Path
        The PNG plots of the run folder.
    folder : Path or None
    skip_reason : str
    """

    figure: str
    paper: str
    entry: FigureReferences
    status: str
    seconds: float
    result: Any | None
    comparisons: list[Comparison]
    plots: list[Path] = field(default_factory=list)
    folder: Path | None = None
    skip_reason: str = ""

    @property
    def trials(self) -> int:
        return 0 if self.result is None else len(self.result.trials)

    @property
    def run_seconds(self) -> float:
        """Wall time of all the runs of its folder (the runner's sessions, resumed ones too)."""
        if self.result is None:
            return 0.0
        return float(sum(s["wall_seconds"] or 0.0 for s in self.result.sessions))


@dataclass
class ReproduceResult:
    """A reproduction: its figures, in paper then name order, and how it was run."""

    papers: list[str]
    quick: bool
    seed: int
    out: Path
    backend: str
    workers: int | None
    figures: list[FigureOutcome]
    seconds: float
    started: str
    machine: str
    commit: str
    command: str

    def counts(self, outcomes: Sequence[FigureOutcome] | None = None) -> dict[str, Any]:
        """Figures, points with a reference, references and verdict counts."""
        outcomes = self.figures if outcomes is None else outcomes
        comparisons = [c for f in outcomes for c in f.comparisons]
        points = {(c.reference.figure, c.reference.point) for c in comparisons}
        counts: dict[str, Any] = {
            "figures": len(outcomes),
            "run": sum(f.status == "run" for f in outcomes),
            "skipped": sum(f.status == "skipped" for f in outcomes),
            "points": len(points), "references": len(comparisons),
            "trials": sum(f.trials for f in outcomes),
            "seconds": sum(f.seconds for f in outcomes),
            "run_seconds": sum(f.run_seconds for f in outcomes),
        }
        for v in VERDICTS:
            counts[v] = sum(c.verdict == v for c in comparisons)
        return counts


def paper_keys(names: Sequence[str]) -> list[str]:
    """The papers named (``"all"``: every one), in :data:`PAPERS` order, each once;
    ``ValueError`` naming the unknown ones."""
    if not names:
        names = ["all"]
    unknown = [n for n in names if n != "all" and n not in PAPERS]
    if unknown:
        raise ValueError(f"unknown paper(s) {', '.join(map(repr, unknown))}; known papers: "
                         f"{', '.join(PAPERS)}, or all")
    if "all" in names:
        return list(PAPERS)
    return [p for p in PAPERS if p in names]


def default_reproduce_out(quick: bool) -> Path:
    """``runs/reproduce`` (``runs/reproduce-quick`` for ``--quick``)."""
    return Path("runs") / ("reproduce-quick" if quick else "reproduce")


def reproduce(papers: Sequence[str] = ("all",), *, quick: bool = False,
              workers: int | None = None, backend: str | Backend = "processes",
              scheduler: str | None = None, seed: int = 0, out: str | Path | None = None,
              progress: bool = True, command: str = "",
              only: Sequence[str] | None = None) -> ReproduceResult:
    """Run (or resume) every figure of ``papers`` and compare with the references.

    Parameters
    ----------
    papers : sequence of str
        Paper keys (:data:`~.paper_references.PAPERS`) or ``"all"``.
    quick : bool
        Each figure's ``--quick`` version (its points mostly differ from the paper's, so most
        references are then "not compared"; for tests and a first look).
    workers, backend, scheduler, seed, progress
        As :func:`~.runner.run_figure`; one backend (one Dask cluster) serves every figure.
    out : str or Path, optional
        Folder of the reproduction; each figure runs in ``out/<figure>`` (default
        :func:`default_reproduce_out`).
    command : str
        The command line, recorded in the report.
    only : sequence of str, optional
        Run only these figures of the papers (a subset, e.g. for comparing backends).

    Returns
    -------
    ReproduceResult

    Raises
    ------
    ValueError
        An unknown paper or backend; a run folder holding another configuration.
    """
    keys = paper_keys(list(papers))
    if only is not None:
        known = {e.figure for p in keys for e in paper_figures(p)}
        unknown = sorted(set(only) - known)
        if unknown:
            raise ValueError(f"only: {', '.join(unknown)} not a figure of "
                             f"{', '.join(keys)}")
    if not isinstance(backend, Backend) and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if scheduler is not None and backend != "dask":
        raise ValueError(f"scheduler is only used by the dask backend, not {backend!r}")
    root = Path(out) if out is not None else default_reproduce_out(quick)
    if root.exists() and not root.is_dir():
        raise ValueError(f"the reproduction folder {str(root)!r} is a file")
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    start = time.perf_counter()
    runner = backend if isinstance(backend, Backend) else make_backend(backend, workers,
                                                                       scheduler)
    outcomes = []
    try:
        for paper in keys:
            for entry in paper_figures(paper):
                if only is not None and entry.figure not in only:
                    continue
                outcomes.append(_figure(entry, paper, quick=quick, seed=seed, root=root,
                                        runner=runner, progress=progress))
    finally:
        if not isinstance(backend, Backend):
            runner.close()
    return ReproduceResult(
        papers=keys, quick=quick, seed=seed, out=root, backend=runner.name,
        workers=runner.workers, figures=outcomes, seconds=time.perf_counter() - start,
        started=started, machine=machine_description(), commit=_commit(), command=command)


def _figure(entry: FigureReferences, paper: str, *, quick: bool, seed: int, root: Path,
            runner: Backend, progress: bool) -> FigureOutcome:
    from .plots import write_plots
    from .report import write_report

    full = get_figure(entry.figure)
    run = full.quick_version() if quick else full
    folder = root / default_out(entry.figure, False).name
    start = time.perf_counter()
    if full.requires is not None:
        try:
            full.requires()
        except (FileNotFoundError, ValueError) as error:
            reason = (f"needs a data set that is not installed: run `{DATA_COMMAND}`, then "
                      f"the same command again ({str(error).splitlines()[0]})")
            return FigureOutcome(entry.figure, paper, entry, "skipped", 0.0, None,
                                 compare_figure(full, None, entry.references, None,
                                                f"figure skipped, `{DATA_COMMAND}` first"),
                                 skip_reason=reason)
    result = run_figure(entry.figure, quick=quick, backend=runner, seed=seed, out=folder,
                        progress=progress)
    plots = [p for p in write_plots(result) if p.suffix == ".png"]
    write_report(result)
    comparisons = compare_figure(full, run, entry.references, result)
    # the curves were for the plots; a full reproduction keeps 24 figures' results in memory
    result.curves = result.curves.iloc[0:0]
    return FigureOutcome(entry.figure, paper, entry, "run", time.perf_counter() - start, result,
                         comparisons, plots, folder)


def machine_description() -> str:
    """This machine in one line: CPU model (Linux), cores, OS and Python."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def _commit() -> str:
    """The git commit of the banditkit source (``+dirty`` with uncommitted changes), or
    ``"unknown"`` outside a checkout."""
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here,
                             capture_output=True, text=True, timeout=10, check=True).stdout
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "."],
                               cwd=here.parent, capture_output=True, text=True, timeout=10,
                               check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha.strip() + ("+dirty" if dirty.strip() else "")
