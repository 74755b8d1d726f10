"""``banditkit reproduce``: every figure of the named papers, one report with the papers'
numbers beside ours (:mod:`banditkit.experiments.reproduce`)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from .figures import add_execution_arguments
from .output import refuse

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..experiments.paper_references import PAPERS

    parser.add_argument("papers", nargs="*", metavar="PAPER",
                        help=f"papers to reproduce: {', '.join(PAPERS)}, or all (default)")
    parser.add_argument("--quick", action="store_true",
                        help="each figure's quick version (seconds; mostly not the paper's "
                             "points, so most references are not compared)")
    add_execution_arguments(parser)
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="folder of the run folders and the report (default: "
                             "runs/reproduce[-quick])")
    parser.add_argument("--markdown", type=Path, default=None, metavar="FILE",
                        help="also write the markdown report to FILE (docs/reproduction.md)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def run(args: argparse.Namespace) -> int:
    from ..experiments.backends import BackendUnavailable
    from ..experiments.reproduce import paper_keys, reproduce
    from ..experiments.reproduce_report import write_reproduce_report
    from ..experiments.store import ConfigurationMismatch, StoreError

    try:
        papers = paper_keys(args.papers)
    except ValueError as error:
        return refuse(f"argument PAPER: {error}")
    cores = os.cpu_count() or 1
    if args.backend == "processes" and args.workers is not None and args.workers > 4 * cores:
        return refuse(f"argument --workers: {args.workers} worker processes on {cores} "
                       f"cores (at most {4 * cores})")
    if args.scheduler is not None and args.backend != "dask":
        return refuse(f"argument --scheduler: only used with --backend dask, not "
                       f"{args.backend!r}")
    if args.out is not None and (not str(args.out).strip() or args.out.is_file()):
        return refuse(f"argument --out: {str(args.out)!r} is not a folder name")
    if args.markdown is not None and (args.markdown.is_dir() or args.markdown.suffix != ".md"):
        return refuse(f"argument --markdown: {str(args.markdown)!r} must be a .md file name")
    command = "banditkit reproduce " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
        if len(sys.argv) > 1 and sys.argv[1] == "reproduce" else _command(args, papers)
    try:
        result = reproduce(papers, quick=args.quick, workers=args.workers,
                           backend=args.backend, scheduler=args.scheduler, seed=args.seed,
                           out=args.out, progress=not args.no_progress, command=command)
    except (ConfigurationMismatch, StoreError, BackendUnavailable) as error:
        return refuse(str(error))
    except KeyboardInterrupt:
        print("\nbanditkit: interrupted; finished trials are kept; run the same command again "
              "to resume", file=sys.stderr)
        return 130
    md, page = write_reproduce_report(result, markdown_copy=args.markdown)
    c = result.counts()
    print(f"{c['figures']} figures ({c['skipped']} skipped), {c['references']} references at "
          f"{c['points']} points: {c['within noise']} within noise, "
          f"{c['differs, explained']} differ (explained), {c['differs, unexplained']} differ "
          f"(unexplained), {c['not compared']} not compared; {result.seconds:.1f} s")
    print(f"  report: {md}")
    print(f"  page:   {page}")
    if args.markdown is not None:
        print(f"  copy:   {args.markdown}")
    return 0


def _command(args: argparse.Namespace, papers: list[str]) -> str:
    """The command line as given (for a call through :func:`banditkit.cli.main`)."""
    parts = ["banditkit", "reproduce", *(args.papers or ["all"])]
    if args.quick:
        parts.append("--quick")
    if args.workers is not None:
        parts += ["--workers", str(args.workers)]
    if args.backend != "processes":
        parts += ["--backend", args.backend]
    if args.scheduler:
        parts += ["--scheduler", args.scheduler]
    if args.seed:
        parts += ["--seed", str(args.seed)]
    if args.out is not None:
        parts += ["--out", str(args.out)]
    return " ".join(parts)
