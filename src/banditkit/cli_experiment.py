"""``banditkit experiment``: run a live experiment from the shell, with CSV in and out.

    banditkit experiment create ab.sqlite --algorithm ReplicableElimination \\
        --arms control,blue,green --horizon 100000 --seed 7 --param rho=0.1
        # or --arms-file names.txt (one name per line), or --features arms.csv (linear)
    banditkit experiment assign ab.sqlite 500 --out today.csv      # unit,arm,arm_index,batch
    banditkit experiment record ab.sqlite answers.csv              # unit,reward[,cost_1,...]
    banditkit experiment status ab.sqlite
    banditkit experiment expire ab.sqlite --older-than 86400

Every refusal is one line naming what is wrong (exit status 2), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .cli import key_value, non_negative_int, positive_int

    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    create = actions.add_parser("create", help="create an experiment file",
                                description="Create an experiment file for a registered "
                                "algorithm (see `banditkit audit --help` for the list).")
    create.add_argument("path", help="the experiment file to create (SQLite)")
    create.add_argument("--algorithm", required=True, metavar="NAME",
                        help="registered algorithm, e.g. ReplicableElimination, RAGE, GBAI")
    arms = create.add_mutually_exclusive_group(required=True)
    arms.add_argument("--arms", metavar="A,B,...", help="arm names, comma-separated")
    arms.add_argument("--arms-file", metavar="FILE", type=Path,
                      help="arm names, one per line (names that contain commas)")
    arms.add_argument("--features", metavar="CSV", type=Path,
                      help="CSV of arm features: a first column 'arm' with the names, then "
                           "one column of numbers per feature")
    create.add_argument("--seed", type=non_negative_int, required=True,
                        help="seed of the algorithm's internal randomness")
    create.add_argument("--horizon", type=positive_int, default=None, metavar="T",
                        help="pulls (regret policies) or budget (fixed-budget identifiers)")
    create.add_argument("--param", type=key_value, action="append", default=[], metavar="K=V",
                        help="algorithm parameter (repeatable), e.g. rho=0.1")
    create.add_argument("--threshold", type=float, action="append", default=None,
                        metavar="ALPHA", help="cost threshold of a constrained policy "
                        "(repeatable: one per cost)")
    create.add_argument("--order", choices=("shuffled", "batch"), default="shuffled",
                        help="order in which a batch's pulls go to units (default shuffled)")

    assign = actions.add_parser("assign", help="assign arms to the next N units (CSV out)")
    assign.add_argument("path", help="the experiment file")
    assign.add_argument("n", type=positive_int, metavar="N", help="units to assign")
    assign.add_argument("--out", type=Path, default=None, metavar="CSV",
                        help="write the CSV here (a new file) instead of standard output")

    record = actions.add_parser("record", help="record rewards from a CSV (unit,reward[,cost"
                                "_1,...])")
    record.add_argument("path", help="the experiment file")
    record.add_argument("csv", type=Path, help="CSV with columns unit, reward (and cost_1, "
                        "..., cost_m for constrained policies)")

    status = actions.add_parser("status", help="per-arm counts, means, intervals; the state")
    status.add_argument("path", help="the experiment file")
    status.add_argument("--json", action="store_true", help="print the status as JSON")

    expire = actions.add_parser("expire", help="withdraw units that will never be answered")
    expire.add_argument("path", help="the experiment file")
    which = expire.add_mutually_exclusive_group(required=True)
    which.add_argument("--units", metavar="ID,ID,...", help="unit ids, comma-separated")
    which.add_argument("--older-than", type=float, metavar="SECONDS",
                       help="every unanswered unit assigned more than this long ago")

    # service: the page to watch an experiment, written offline (banditkit.service.page)
    report = actions.add_parser("report", help="write a self-contained HTML page: state, arms, "
                                "plots over time")
    report.add_argument("path", help="the experiment file")
    report.add_argument("--html", type=Path, required=True, metavar="OUT",
                        help="the HTML file to write (a new file)")


def run(args: argparse.Namespace) -> int:
    from .live import ExperimentError

    try:
        return _ACTIONS[args.action](args)
    except ExperimentError as error:
        return _refuse(str(error))


def _refuse(message: str) -> int:
    print(f"banditkit experiment: error: {message}", file=sys.stderr)
    return 2


def _create(args: argparse.Namespace) -> int:
    from .cli import unique_params
    from .live import Experiment

    try:
        params = unique_params(args.param)
    except ValueError as error:
        return _refuse(str(error))
    if args.arms is not None:
        arms: Any = [a.strip() for a in args.arms.split(",")]
    elif args.arms_file is not None:
        arms = _read_names(args.arms_file)
        if arms is None:
            return 2
    else:
        arms = _read_csv(args.features, "--features", index_col=0)
        if arms is None:
            return 2
        if arms.index.name != "arm":
            return _refuse(f"argument --features: the first column of {str(args.features)!r} "
                           f"must be 'arm' (the arm names), got {arms.index.name!r}")
    with Experiment.create(args.path, algorithm=args.algorithm, arms=arms, seed=args.seed,
                           horizon=args.horizon, params=params,
                           thresholds=args.threshold, order=args.order) as exp:
        print(f"created {exp.path} ({args.algorithm}, {len(exp.arm_names)} arms)")
    return 0


def _assign(args: argparse.Namespace) -> int:
    from .live import Experiment

    if args.out is not None:
        if args.out.exists():
            return _refuse(f"argument --out: {str(args.out)!r} exists; name a new file")
        if not args.out.parent.is_dir():
            return _refuse(f"argument --out: folder {str(args.out.parent)!r} does not exist")
    with Experiment.open(args.path) as exp:
        units = exp.assign(args.n)
        if units.empty:
            state = exp.status()
            why = ("the algorithm has finished" if state.finished else
                   f"the current batch waits for {state.waiting} reward(s) before the "
                   "algorithm can ask for more")
            print(f"banditkit experiment: no units assigned: {why}", file=sys.stderr)
    if args.out is None:
        units.to_csv(sys.stdout, index=False)
    else:
        units.to_csv(args.out, index=False)
        print(f"assigned {len(units)} unit(s) -> {args.out}", file=sys.stderr)
    return 0


def _record(args: argparse.Namespace) -> int:
    from .live import Experiment

    frame = _read_csv(args.csv, "CSV")
    if frame is None:
        return 2
    missing = [c for c in ("unit", "reward") if c not in frame.columns]
    if missing:
        return _refuse(f"argument CSV: {str(args.csv)!r} lacks column(s) {missing} (it has "
                       f"{list(frame.columns)})")
    if frame.empty:
        return _refuse(f"argument CSV: {str(args.csv)!r} has no rows to record")
    import re

    numbered = {int(m.group(1)): c for c in frame.columns
                if (m := re.fullmatch(r"cost_(\d+)", str(c)))}
    cost_columns = [numbered[k] for k in sorted(numbered)]
    if cost_columns and sorted(numbered) != list(range(1, len(numbered) + 1)):
        return _refuse(f"argument CSV: cost columns must be cost_1, ..., cost_m, got "
                       f"{cost_columns}")
    import pandas as pd

    for column in ["unit", "reward", *cost_columns]:
        if frame[column].dtype.kind == "b" and column != "unit":
            frame[column] = frame[column].astype(float)  # true/false read as 1/0
        elif frame[column].dtype.kind == "O" and column != "unit":
            # true/false mixed with numbers: pandas leaves the column as text
            text = frame[column].astype(str).str.strip().str.lower()
            numbers = pd.to_numeric(text.replace({"true": "1", "false": "0"}), errors="coerce")
            if frame[column].notna().all() and numbers.notna().all():
                frame[column] = numbers.astype(float)
        if frame[column].dtype.kind not in "iuf":
            return _refuse(f"argument CSV: column {column!r} must hold numbers only (a "
                           "missing value or text was found)")
    if frame["unit"].dtype.kind == "f":
        return _refuse("argument CSV: column 'unit' must hold integer unit ids")
    costs = frame[cost_columns].to_numpy(dtype=float) if cost_columns else None
    with Experiment.open(args.path) as exp:
        n = exp.record(frame["unit"].to_numpy(), frame["reward"].to_numpy(dtype=float), costs)
        state = exp.status()
    print(f"recorded {n} new reward(s) ({len(frame) - n} already recorded); "
          f"{state.pulls_observed} pulls observed, "
          + ("finished" if state.finished else f"{state.waiting} waiting in the current batch"))
    return 0


def _status(args: argparse.Namespace) -> int:
    from .live import Experiment

    with Experiment.open(args.path) as exp:
        state = exp.status()
    if args.json:
        from .cli import _json_default

        summary = {"algorithm": state.algorithm, "batches_observed": state.batches_observed,
                   "pulls_observed": state.pulls_observed, "waiting": state.waiting,
                   "unassigned": state.unassigned, "budget_left": state.budget_left,
                   "finished": state.finished, "recommendation": state.recommendation,
                   "arms": json.loads(state.arms.reset_index().to_json(orient="records"))}
        json.dump(summary, sys.stdout, indent=2, default=_json_default)
        print()
    else:
        print(state)
    return 0


def _expire(args: argparse.Namespace) -> int:
    from .live import Experiment

    units = None
    if args.units is not None:
        try:
            units = [int(u) for u in args.units.split(",")]
        except ValueError:
            return _refuse(f"argument --units: must be unit ids separated by commas, got "
                           f"{args.units!r}")
    with Experiment.open(args.path) as exp:
        n = exp.expire(units, older_than=args.older_than)
    print(f"expired {n} unit(s); their slots will be assigned again")
    return 0


def _read_names(path: Path) -> list[str] | None:
    """The arm names of ``--arms-file``: one per line, surrounding spaces and blank lines
    dropped."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM is not part of the first name
    except FileNotFoundError:
        _refuse(f"argument --arms-file: no file {str(path)!r}")
    except (UnicodeDecodeError, OSError) as error:
        _refuse(f"argument --arms-file: {str(path)!r} is not a readable UTF-8 text file "
                f"({type(error).__name__})")
    else:
        return [line.strip() for line in text.splitlines() if line.strip()]
    return None


def _read_csv(path: Path, what: str, **kwargs: Any) -> Any:
    import pandas as pd

    try:
        return pd.read_csv(path, **kwargs)
    except FileNotFoundError:
        _refuse(f"argument {what}: no file {str(path)!r}")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError,
            IsADirectoryError, PermissionError) as error:
        _refuse(f"argument {what}: {str(path)!r} is not a readable CSV file "
                f"({str(error).strip().splitlines()[0] if str(error).strip() else 'empty'})")
    return None


def _report(args: argparse.Namespace) -> int:
    from .service.page import write_page

    print(f"wrote {write_page(args.path, args.html)}")
    return 0


_ACTIONS = {"create": _create, "assign": _assign, "record": _record, "status": _status,
            "expire": _expire, "report": _report}
