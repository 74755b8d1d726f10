"""The ``banditkit`` command line.

Subcommands are registered in :data:`SUBCOMMANDS`: each is a name, a help line, a function adding
its arguments to its parser and a function running it (returning the exit status). Adding a
subcommand is adding one :class:`Subcommand` entry and its two functions.

Bad input is refused before any work with a message naming the parameter (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SUBCOMMANDS", "Subcommand", "build_parser", "main"]


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------------------------------------
# Argument types: argparse reports their errors as "argument --trials: ...", naming the option.

def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}"
                                         ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {value}")
    return value


# ---------------------------------------------------------------------------------------------
# banditkit list

def _list_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _list(args: argparse.Namespace) -> int:
    from .experiments.describe import fill
    from .experiments.figures import all_figures

    figures = all_figures()
    width = max((len(f.name) for f in figures), default=0)
    marks = {spec.name: _list_marks(spec) for spec in figures}
    mark_width = max((len(m) for m in marks.values()), default=0)
    for spec in figures:
        # the full run's numbers (placeholders such as {T} filled from the spec)
        title = fill(spec.title, trials=spec.trials, points=spec.points,
                     horizons=[spec.horizon_at(p) for p in spec.points])
        print(f"{spec.name:<{width}}  {marks[spec.name]:<{mark_width}}  {title}")
    print("\n[data]: needs MovieLens-100k first (`make data`); [~N min]: the full run's measured "
          "wall time with --workers 2 on a 2-core machine (--quick runs take seconds)")
    return 0


def _list_marks(spec: Any) -> str:
    """``[data]`` for a figure that needs a data set, ``[~N min]`` for a full run measured at a
    minute or more (``FigureSpec.full_minutes``)."""
    marks = []
    if spec.requires is not None:
        marks.append("[data]")
    if isinstance(spec.full_minutes, str):
        marks.append(f"[{spec.full_minutes}]")
    elif spec.full_minutes is not None and spec.full_minutes >= 1:
        marks.append(f"[~{spec.full_minutes:.0f} min]")
    return " ".join(marks)


# ---------------------------------------------------------------------------------------------
# banditkit run

def _run_arguments(parser: argparse.ArgumentParser) -> None:
    from .experiments.backends import BACKENDS

    parser.add_argument("figure", help="figure name (see `banditkit list`)")
    parser.add_argument("--quick", action="store_true",
                        help="few trials and short horizons (seconds to a minute)")
    parser.add_argument("--trials", type=positive_int, default=None,
                        help="trials per (point, algorithm) (default: the figure's)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="worker processes (default: all cores)")
    parser.add_argument("--backend", choices=BACKENDS, default="processes",
                        help="where trials run (default: processes)")
    parser.add_argument("--scheduler", default=None, metavar="ADDR",
                        help="Dask scheduler address (dask backend; default: a local cluster)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="root seed (default 0)")
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


def _run(args: argparse.Namespace) -> int:
    from .experiments.backends import BackendUnavailable
    from .experiments.figures import figure_names
    from .experiments.plots import write_plots
    from .experiments.report import write_report
    from .experiments.runner import default_out, run_figure
    from .experiments.store import ConfigurationMismatch, StoreError

    if args.figure not in figure_names():
        return _refuse(f"argument figure: unknown figure {args.figure!r}; known figures: "
                       f"{', '.join(figure_names())}")
    cores = os.cpu_count() or 1
    if args.backend == "processes" and args.workers is not None and args.workers > 4 * cores:
        return _refuse(f"argument --workers: {args.workers} worker processes on {cores} "
                       f"cores (at most {4 * cores}; trials are CPU-bound, more only adds "
                       "memory and start-up time)")
    if args.scheduler is not None and args.backend != "dask":
        return _refuse(f"argument --scheduler: only used with --backend dask, not "
                       f"{args.backend!r}")
    out = args.out if args.out is not None else default_out(args.figure, args.quick)
    try:
        result = run_figure(args.figure, quick=args.quick, trials=args.trials,
                            workers=args.workers, backend=args.backend,
                            scheduler=args.scheduler, seed=args.seed, out=out,
                            progress=not args.no_progress, retry_failed=args.retry_failed)
    except (ConfigurationMismatch, StoreError, FileNotFoundError, BackendUnavailable) as error:
        return _refuse(str(error))
    except ValueError as error:  # the run folder (a file, not creatable...)
        if "run folder" not in str(error):
            raise
        return _refuse(f"argument --out: {error}")
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
                  default=_json_default)
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


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (tuple, set)):
        return list(value)
    return str(value)


# ---------------------------------------------------------------------------------------------
# banditkit plot / report

def _run_dir_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                        help="a run folder written by `banditkit run`")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="write into DIR instead of the run folder (e.g. when the run "
                             "folder is read-only)")


def _writable_out(args: argparse.Namespace) -> Path | None:
    """The folder to write into, refusing an --out that cannot be one (None: refused)."""
    out = args.out if args.out is not None else args.run_dir
    if args.out is not None and (str(args.out) == "" or args.out.is_file()):
        _refuse(f"argument --out: {str(args.out)!r} is not a folder name")
        return None
    return out


def _write_failed(error: OSError, out: Path) -> int:
    return _refuse(f"cannot write into {str(out)!r} ({error.strerror or error}); write "
                   "elsewhere with --out DIR")


def _load(run_dir: Path) -> Any:
    from .experiments.runner import load_run
    from .experiments.store import DB_NAME

    if not (run_dir / DB_NAME).exists():
        _refuse(f"argument RUN_DIR: no {DB_NAME} in {run_dir}")
        return None
    try:
        return load_run(run_dir)
    except ValueError as error:  # not a run database, damaged, or holding no run
        _refuse(f"argument RUN_DIR: {error}")
        return None


def _plot(args: argparse.Namespace) -> int:
    from .experiments.plots import write_plots

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


def _report(args: argparse.Namespace) -> int:
    from .experiments.report import write_report

    result = _load(args.run_dir)
    out = _writable_out(args)
    if result is None or out is None:
        return 2
    try:
        print(write_report(result, out))
    except OSError as error:
        return _write_failed(error, out)
    return 0


# ---------------------------------------------------------------------------------------------
# banditkit audit

def key_value(text: str) -> tuple[str, Any]:
    """``k=v`` with ``v`` read as a Python literal (number, tuple, True/None...) or a string;
    ``true``/``false`` in any case are the booleans (``beta_floor=false``)."""
    import ast

    key, sep, raw = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"must look like name=value, got {text!r}")
    if raw.strip().lower() in ("true", "false"):
        return key, raw.strip().lower() == "true"
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        import re

        if re.search(r"(?<![a-z])(nan|inf|infinity)(?![a-z])", raw, re.IGNORECASE):
            raise argparse.ArgumentTypeError(
                f"{key}: NaN and infinity are not valid values, got {raw!r}") from None
        value = raw
    return key, value


def unique_params(pairs: list[tuple[str, Any]], option: str = "--param") -> dict[str, Any]:
    """``k=v`` pairs as a dict, refusing a name given twice (the last would silently win)."""
    names = [k for k, _ in pairs]
    twice = sorted({k for k in names if names.count(k) > 1})
    if twice:
        raise ValueError(f"argument {option}: {', '.join(twice)} given more than once")
    return dict(pairs)


def _audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("policy", metavar="POLICY",
                        help="policy name (UCB1, ReplicableElimination, ...)")
    parser.add_argument("--instance", required=True, metavar="NAME",
                        help="named instance (e.g. bernoulli)")
    parser.add_argument("--param", type=key_value, action="append", default=[],
                        metavar="K=V", help="policy parameter (repeatable), e.g. rho=0.1")
    parser.add_argument("--instance-param", type=key_value, action="append", default=[],
                        metavar="K=V", help="instance parameter (repeatable), e.g. K=4")
    parser.add_argument("--pairs", type=positive_int, required=True,
                        help="pairs of executions sharing the internal randomness")
    parser.add_argument("--horizon", type=positive_int, default=None, metavar="T",
                        help="pulls per execution (required for regret policies)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="root seed (default 0)")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="processes over which pairs are spread (default 1)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter

    def format_help() -> str:
        # the registries import every algorithm module: read them only when help is asked
        from .envs.instances import instance_names
        from .registry import policy_names

        parser.epilog = _wrapped("policies: " + ", ".join(policy_names())) + "\n\n" + \
            _wrapped("instances: " + ", ".join(instance_names()))
        return argparse.ArgumentParser.format_help(parser)

    parser.format_help = format_help  # type: ignore[method-assign]


def _wrapped(text: str, width: int = 78) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ",
                                   break_on_hyphens=False))


def _audit(args: argparse.Namespace) -> int:
    import functools

    from .envs.instances import instance_names, make_instance
    from .experiments.replicability import audit
    from .registry import check_policy_params, get_policy, policy_names
    from .rng import stream

    if args.policy not in policy_names():
        return _refuse(f"argument POLICY: unknown policy {args.policy!r}; known: "
                       f"{', '.join(policy_names())}")
    if args.instance not in instance_names():
        return _refuse(f"argument --instance: unknown instance {args.instance!r}; known: "
                       f"{', '.join(instance_names())}")
    entry = get_policy(args.policy)
    try:
        params = unique_params(args.param)
        unique_params(args.instance_param, "--instance-param")
    except ValueError as error:
        return _refuse(str(error))
    try:
        check_policy_params(entry, params)
    except ValueError as error:
        return _refuse(f"argument --param: {error}")
    try:
        env = make_instance(args.instance, rng=stream(args.seed, "audit", "instance"),
                            **dict(args.instance_param))
    except (ValueError, TypeError) as error:
        return _refuse(f"argument --instance-param: {error}")
    rho = params.get("rho", entry.parameters().get("rho"))
    factory = functools.partial(entry.factory, horizon=args.horizon)
    try:
        # build one first so that bad parameter values are refused before any work
        probe = factory(env, stream(args.seed, "audit", 0, "algorithm"), **params)
        if args.horizon is not None:
            # every execution's log is kept (and a lock-step runner holds each pull sequence)
            from .simulate import check_memory

            check_memory(probe, args.horizon, executions=2 * args.pairs,
                         bytes_per_pull=8 if entry.lockstep is not None else 0)
        result = audit(factory, env, pairs=args.pairs, seed=args.seed, horizon=args.horizon,
                       params=params, rho=rho,
                       lockstep=entry.lockstep if args.horizon is not None else None,
                       workers=args.workers, progress=not args.json, name=args.policy,
                       instance=args.instance)
    except (ValueError, TypeError) as error:
        return _refuse(str(error))
    if args.json:
        json.dump(result.summary(), sys.stdout, indent=2, default=_json_default)
        print()
    else:
        print(result.render())
    return 0


# ---------------------------------------------------------------------------------------------

SUBCOMMANDS: list[Subcommand] = [
    Subcommand("list", "list the figures that can be run", _list_arguments, _list),
    Subcommand("run", "run (or resume) a figure: database, plots and report in its folder",
               _run_arguments, _run),
    Subcommand("plot", "redraw the plots of a run folder from its database",
               _run_dir_arguments, _plot),
    Subcommand("report", "rewrite the report of a run folder from its database",
               _run_dir_arguments, _report),
    Subcommand("audit", "replicability audit: pairs of executions sharing internal randomness",
               _audit_arguments, _audit),
    Subcommand("experiment", "a live experiment: create, assign, record, status, units, expire "
               "(CSV)",
               lambda p: _experiment_module().add_arguments(p),
               lambda a: _experiment_module().run(a)),
    # service: the HTTP API over live experiments (imported only when used)
    Subcommand("serve", "serve live experiments over HTTP (JSON API and a page to watch them)",
               lambda p: _serve_module().add_arguments(p), lambda a: _serve_module().run(a)),
]


def _serve_module() -> Any:
    from .service import server

    return server


def _experiment_module() -> Any:
    from . import cli_experiment

    return cli_experiment


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="banditkit",
        description="Adaptive experiments with bandits: reproduce paper figures.")
    parser.add_argument("--version", action="version", version=f"banditkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(p)
        p.set_defaults(_run=command.run)
    return parser


def _refuse(message: str) -> int:
    print(f"banditkit: error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``banditkit`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    return int(args._run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
