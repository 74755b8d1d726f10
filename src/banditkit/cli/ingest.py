"""``banditkit experiment ingest PATH FILE``: exposures and outcomes from the edge, from a CSV
(:meth:`banditkit.Experiment.ingest`).

The CSV has a header and a column ``key``. A row with ``arm`` and ``version`` is an exposure; a
row with ``value`` is an outcome; a row with all three is both (one line per visit of a log).
Optional columns: ``time`` (seconds since the epoch, or ISO 8601 with a time zone; default: now),
``covariate``, ``denominator``, ``metric_NAME`` (a guardrail's metric) and ``cost_1``,
``cost_2``... (a constrained policy's costs, one per threshold). Each refused row is
listed on standard error with its line and reason; the others are kept (run the same file again
safely: what was kept counts as repeated).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path
from typing import Any

from .output import refuse

__all__ = ["add_ingest", "ingest_command"]

#: Refusals listed on standard error (the rest are counted).
SHOWN = 20


def add_ingest(actions: Any) -> None:
    """The ``ingest`` action's parser."""
    ingest = actions.add_parser("ingest", help="exposures and outcomes made at the edge, from a "
                                "CSV (key, arm, version, value, time)")
    ingest.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    ingest.add_argument("csv", type=Path, metavar="FILE",
                        help="CSV with columns key and arm+version (an exposure) and/or value "
                             "(an outcome); optional time, covariate, denominator, metric_NAME, "
                             "cost_1...")


def _number(text: str) -> float | str:
    """A number, or the text as it is (refused by ingest, naming the field)."""
    try:
        return float(text)
    except ValueError:
        return text


def _time(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text  # an ISO 8601 text: read (and refused if wrong) by ingest


def read_events(path: Path) -> tuple[list[dict], list[int], list[dict], list[int]] | str:
    """Exposures and outcomes of the CSV, each with its line number; or why it cannot be read
    as a whole (one line naming the argument)."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            columns = list(reader.fieldnames or [])
    except FileNotFoundError:
        return f"argument FILE: no file {str(path)!r}"
    except (UnicodeDecodeError, OSError, csv.Error) as error:
        return f"argument FILE: {str(path)!r} is not a readable CSV file ({type(error).__name__})"
    if not rows:
        return f"argument FILE: {str(path)!r} has no rows"
    if "key" not in columns or not ({"arm", "value"} & set(columns)):
        return (f"argument FILE: {str(path)!r} needs a column key and arm+version (exposures) "
                f"and/or value (outcomes); it has {columns}")
    if "arm" in columns and "version" not in columns:
        return f"argument FILE: {str(path)!r} has arm but no version column"
    exposures, exposure_lines, outcomes, outcome_lines = [], [], [], []
    for line, row in enumerate(rows, start=2):
        common: dict[str, Any] = {"key": row["key"]}
        if row.get("time"):
            common["time"] = _time(row["time"])
        if row.get("arm"):
            exposures.append({**common, "arm": row["arm"], "version": row.get("version", "")})
            exposure_lines.append(line)
        if row.get("value", "") != "":
            outcome: dict[str, Any] = dict(common)
            for column, field in (("value", "value"), ("covariate", "covariate"),
                                  ("denominator", "denominator")):
                if row.get(column, "") != "":
                    outcome[field] = _number(row[column])
            metrics = {c[len("metric_"):]: _number(v) for c, v in row.items()
                       if c.startswith("metric_") and v != ""}
            if metrics:
                outcome["metrics"] = metrics
            costs = sorted((int(c[len("cost_"):]), _number(v)) for c, v in row.items()
                           if re.fullmatch(r"cost_\d+", c) and v != "")
            if costs:
                outcome["costs"] = [v for _, v in costs]
            outcomes.append(outcome)
            outcome_lines.append(line)
    return exposures, exposure_lines, outcomes, outcome_lines


def ingest_command(args: argparse.Namespace, open_experiment: Any) -> int:
    """Run ``ingest`` (``open_experiment(args)`` opens the experiment for writing)."""
    read = read_events(args.csv)
    if isinstance(read, str):
        return refuse(read, "banditkit experiment")
    exposures, exposure_lines, outcomes, outcome_lines = read
    with open_experiment(args) as exp:
        result = exp.ingest(exposures, outcomes, who=args.who)
        state = exp.status()
    print(f"ingested {result.new} new event(s), {result.repeated} repeated, {result.refused} "
          f"refused ({result.exposures['new']} exposure(s): {result.exposures['algorithm']} in "
          f"the algorithm's slots, {result.exposures['overflow']} overflow, "
          f"{result.exposures['rollout']} rollout; {result.outcomes['recorded']} outcome(s) "
          f"recorded, {result.outcomes['waiting']} waiting for their exposure); "
          f"{state.pulls_observed} pulls observed")
    for refusal in result.refusals[:SHOWN]:
        lines = exposure_lines if refusal.kind == "exposure" else outcome_lines
        print(f"banditkit experiment: line {lines[refusal.index]}: {refusal.kind} refused: "
              f"{refusal.reason}", file=sys.stderr)
    if result.refused > SHOWN:
        print(f"banditkit experiment: and {result.refused - SHOWN} more refused",
              file=sys.stderr)
    return 0
