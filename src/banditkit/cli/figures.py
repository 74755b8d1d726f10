"""``banditkit list``, ``run``, ``plot`` and ``report``: the paper figures, run into a folder
(database, plots, report) and redrawn from it."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .args import non_negative_int, positive_int
from .output import json_default, refuse

__all__ = ["list_arguments", "list_figures", "plot", "report", "run", "run_arguments",
           "run_dir_arguments", "summary_json"]


# ---------------------------------------------------------------------------------------------
# banditkit list

def list_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def list_figures(args: argparse.Namespace) -> int:
    from ..experiments.describe import fill
    from ..experiments.figures import all_figures

    figures = all_figures()
    width = max((len(f.name) for f in figures), default=0)
    marks = {spec.name: _list_marks(spec) for spec in figures}
    mark_width = max((len(m) for m in marks.values()), default=0)
    for spec in figures:
        # the full run's numbers (placeholders such as {T} filled from the spec)
        title = fill(spec.title, trials=spec.trials, points=spec.points,
                     horizons=[spec.horizon_at(p) for p in spec.points])
        print(f"{spec.name:<{width}}  {marks[spec.name]:<{mark_width}}  {title}")
    print("\n[data]: needs MovieLens-100k first (`make data`); [~N min] or [~N s]: the full run's "
          "measured wall time with --workers 2 on a 2-core machine (--quick runs take seconds)")
    return 0


def _list_marks(spec: Any) -> str:
    """``[data]`` for a figure that needs a data set, ``[~N min]`` (``[~N s]`` under a minute)
    for its measured full run (``FigureSpec.full_minutes``)."""
    marks = []
    if spec.requires is not None:
        marks.append("[data]")
    if isinstance(spec.full_minutes, str):
        marks.append(f"[{spec.full_minutes}]")
    elif spec.full_minutes is not None and spec.full_minutes >= 1:
        marks.append(f"[~{spec.full_minutes:.0f} min]")
    elif spec.full_minutes is not None:
        marks.append(f"[~{max(1, round(60 * spec.full_minutes))} s]")
    return " ".join(marks)


# ---------------------------------------------------------------------------------------------
# banditkit run

def add_execution_arguments(parser: argparse.ArgumentParser) -> None:
    """Where and how trials run, the same for ``run`` and ``reproduce``: --workers, --backend,
    --scheduler, --seed."""
    from ..experiments.backends import BACKENDS

    parser.add_argument("--workers", type=positive_int, default=None,
                        help="worker processes (default: all cores)")
    parser.add_argument("--backend", choices=BACKENDS, default="processes",
                        help="where trials run (default: processes)")
    parser.add_argument("--scheduler", default=None, metavar="ADDR",
                        help="Dask scheduler address (dask backend; default: a local cluster)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="root seed (default 0)")


def run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("figure", help="figure name (see `banditkit list`)")
    parser.add_argument("--quick", action="store_true",
                        help="few trials and short horizons (seconds to a minute)")
    parser.add_argument("--trials", type=positive_int, default=None,
                        help="trials per (point, algorithm) (default: the figure's)")
    add_execution_arguments(parser)
    parser.add_argument("--out", type=_run_folder, default=None, metavar="DIR",
                        help="run folder (default: runs/<figure>[-quick])")
    parser.add_argument("--json", action="store_true",
                        help="print a machine-readable summary on stdout")
    parser.add_argument("--retry-failed", action="store_true",
                        help="run again the trials stored as failed")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _run_folder(text: str) -> Path:
    """``--out``: a non-empty path (``--out ""`` would write into the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the run folder must be a non-empty path")
    return Path(text)


def run(args: argparse.Namespace) -> int:
    from ..experiments.backends import BackendUnavailable
    from ..experiments.figures import figure_names
    from ..experiments.plots import write_plots
    from ..experiments.report import write_report
    from ..experiments.runner import default_out, run_figure
    from ..experiments.store import ConfigurationMismatch, StoreError

    if args.figure not in figure_names():
        return refuse(f"argument figure: unknown figure {args.figure!r}; known figures: "
                       f"{', '.join(figure_names())}")
    cores = os.cpu_count() or 1
    if args.backend == "processes" and args.workers is not None and args.workers > 4 * cores:
        return refuse(f"argument --workers: {args.workers} worker processes on {cores} "
                       f"cores (at most {4 * cores}; trials are CPU-bound, more only adds "
                       "memory and start-up time)")
    if args.scheduler is not None and args.backend != "dask":
        return refuse(f"argument --scheduler: only used with --backend dask, not "
                       f"{args.backend!r}")
    out = args.out if args.out is not None else default_out(args.figure, args.quick)
    try:
        result = run_figure(args.figure, quick=args.quick, trials=args.trials,
                            workers=args.workers, backend=args.backend,
                            scheduler=args.scheduler, seed=args.seed, out=out,
                            progress=not args.no_progress, retry_failed=args.retry_failed)
    except (ConfigurationMismatch, StoreError, FileNotFoundError, BackendUnavailable) as error:
        return refuse(str(error))
    except ValueError as error:  # the run folder (a file, not creatable...)
        if "run folder" not in str(error):
            raise
        return refuse(f"argument --out: {error}")
    except KeyboardInterrupt:
        print(f"\nbanditkit: interrupted; finished trials are kept in {out}; run the same "
              "command again to resume", file=sys.stderr)
        return 130
    plots = write_plots(result)
    report = write_report(result)
    where = sys.stderr if args.json else sys.stdout
    failed = result.n_failed
    print(f"{result.figure}: {len(result.trials)} trials ({result.ran} run now, "
          f"{failed} failed) in {out}", file=where)
    print(f"  database: {out / 'results.sqlite'}", file=where)
    for path in plots:
        print(f"  plot:     {path}", file=where)
    print(f"  report:   {report}", file=where)
    if args.json:
        json.dump(summary_json(result, plots, report), sys.stdout, indent=2,
                  default=json_default)
        print()
    return 0


def summary_json(result: Any, plots: Sequence[Path], report: Path) -> dict[str, Any]:
    """The ``--json`` document: where the files are, one row per (point, algorithm), and for
    figures run as replicability pairs the identical pairs with their Clopper–Pearson
    interval (``pairs``)."""
    rows = []
    for row in result.summary.to_dict(orient="records"):
        rows.append({k: _clean(v) for k, v in row.items()})
    pairs = None
    if getattr(result, "pairs", None) is not None:
        pairs = [{k: _clean(v) for k, v in row.items()}
                 for row in result.pairs.to_dict(orient="records")]
    return {
        "figure": result.figure, "out": str(result.out),
        "database": str(result.out / "results.sqlite") if result.out else None,
        "report": str(report), "plots": [str(p) for p in plots],
        "seed": result.config["seed"], "quick": result.config["quick"],
        "trials": result.config["trials"], "n_trials": len(result.trials),
        "n_failed": result.n_failed, "ran": result.ran, "summary": rows,
        **({"pairs": pairs} if pairs is not None else {}),
    }


def _clean(value: Any) -> Any:
    """JSON cell: NaN/NA become null, numpy scalars Python numbers."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple)):
        value = value.item()
    if value is None or value is _pd_na():
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return [_clean(v) for v in value]
    return value


def _pd_na() -> Any:
    import pandas as pd

    return pd.NA


# ---------------------------------------------------------------------------------------------
# banditkit plot / report

def run_dir_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                        help="a run folder written by `banditkit run`")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="write into DIR instead of the run folder (e.g. when the run "
                             "folder is read-only)")


def _writable_out(args: argparse.Namespace) -> Path | None:
    """The folder to write into, refusing an --out that cannot be one (None: refused)."""
    out = args.out if args.out is not None else args.run_dir
    if args.out is not None and (str(args.out) == "" or args.out.is_file()):
        refuse(f"argument --out: {str(args.out)!r} is not a folder name")
        return None
    return out


def _write_failed(error: OSError, out: Path) -> int:
    return refuse(f"cannot write into {str(out)!r} ({error.strerror or error}); write "
                   "elsewhere with --out DIR")


def _load(run_dir: Path) -> Any:
    from ..experiments.runner import load_run
    from ..experiments.store import DB_NAME

    if not (run_dir / DB_NAME).exists():
        refuse(f"argument RUN_DIR: no {DB_NAME} in {run_dir}")
        return None
    try:
        return load_run(run_dir)
    except ValueError as error:  # not a run database, damaged, or holding no run
        refuse(f"argument RUN_DIR: {error}")
        return None


def plot(args: argparse.Namespace) -> int:
    from ..experiments.plots import write_plots

    result = _load(args.run_dir)
    out = _writable_out(args)
    if result is None or out is None:
        return 2
    try:
        paths = write_plots(result, out)
    except OSError as error:
        return _write_failed(error, out)
    for path in paths:
        print(path)
    return 0


def report(args: argparse.Namespace) -> int:
    from ..experiments.report import write_report

    result = _load(args.run_dir)
    out = _writable_out(args)
    if result is None or out is None:
        return 2
    try:
        print(write_report(result, out))
    except OSError as error:
        return _write_failed(error, out)
    return 0
