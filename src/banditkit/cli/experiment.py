"""``banditkit experiment``: run a live experiment from the shell, with CSV in and out.

    banditkit experiment create ab.sqlite --algorithm ReplicableElimination \\
        --arms control,blue,green --horizon 100000 --seed 7 --param rho=0.1 \\
        --outcome-window 86400 --missing zero    # the defaults for 0/1 conversions
        # or --arms-file names.txt (one name per line), or --features arms.csv (linear)
    banditkit experiment assign ab.sqlite 500 --out today.csv      # unit,arm,arm_index,batch
    banditkit experiment assign ab.sqlite --keys users.txt         # sticky: ...,key,repeated
    banditkit experiment assign ab.sqlite 500 --covariates before.txt   # CUPED: one per line
        # guardrails: --guardrail latency:max_increase:50:0:2000 (metric:rule:margin:lo:hi)
    banditkit experiment record ab.sqlite answers.csv   # unit,reward[,cost_1,...][,metric_latency]
    banditkit experiment resume ab.sqlite               # lift a guardrail's pause
    banditkit experiment status ab.sqlite
    banditkit experiment units ab.sqlite --unanswered --out waiting.csv   # recovery
    banditkit experiment expire ab.sqlite --older-than 86400

Every refusal is one line naming what is wrong (exit status 2), never a traceback.

No assigned unit is lost: ``--out`` is reserved before anything is assigned (an exclusive
``OUT.partial`` beside it; a second call on the same name is refused), written there, synced
and only then given its name, so the file is complete or absent; a closed standard output
(``| head``) ends the call with one line saying how to list the units it assigned.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from .args import key_value, non_negative_int, positive_int, unique_params
from .ingest import add_ingest, ingest_command
from .output import json_default, refuse

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    create.add_argument("--guardrail", type=_guardrail, action="append", default=None,
                        metavar="METRIC:RULE:MARGIN[:LO:HI]",
                        help="pause the experiment when an arm's mean of METRIC exceeds "
                        "(RULE max_increase) or falls below (max_decrease) the control's by "
                        "more than MARGIN with confidence; METRIC lies in [LO, HI] (omit them "
                        "for an unbounded metric) and is recorded in CSV column metric_METRIC "
                        "(repeatable)")
    create.add_argument("--guardrail-alpha", type=float, default=0.05, metavar="ALPHA",
                        help="probability that a guardrail which holds ever pauses the "
                        "experiment, over all guardrails, arms and looks (default 0.05)")
    create.add_argument("--order", choices=("shuffled", "batch"), default="shuffled",
                        help="order in which a batch's pulls go to units (default shuffled)")
    create.add_argument("--outcome-window", type=float, default=None, metavar="SECONDS",
                        help="how long a unit's outcome is awaited after its assignment "
                        "(default 86400: a day); a unit unanswered when it closes is resolved "
                        "by --missing on the next call, so a batch never waits longer")
    create.add_argument("--missing", default=None, metavar="RULE",
                        help="zero (such a unit scores reward 0: a conversion that did not "
                        "happen; the default for rewards in [0, 1]) or expire (it is withdrawn "
                        "and its slot handed to another unit; the default otherwise)")
    create.add_argument("--reward-type", choices=("binary", "bounded", "continuous"),
                        default=None, help="what the rewards are, for the verdicts (default: "
                        "bounded on the algorithm's reward range, else continuous)")
    create.add_argument("--reward-range", type=float, nargs=2, default=None,
                        metavar=("LO", "HI"), help="the rewards' bounds (--reward-type bounded)")
    create.add_argument("--sequence", choices=("exact", "mixture", "asymptotic", "msprt"),
                        default=None,
                        help="the confidence sequence of the verdicts (default: exact for "
                        "bounded rewards, asymptotic for continuous ones)")
    create.add_argument("--tune-n", type=float, default=None, metavar="N",
                        help="units per arm where the sequences are narrowest (default 10000)")
    create.add_argument("--tau", type=float, default=None,
                        help="the mSPRT's mixture s.d. (with --sequence msprt)")
    create.add_argument("--winsorize", type=float, default=None, metavar="Q",
                        help="cap continuous rewards at their pooled Q quantile (0.5 < Q < 1) "
                        "at each look")
    create.add_argument("--cuped", action="store_true", default=None,
                        help="CUPED: each unit's pre-experiment covariate (CSV column "
                        "'covariate' of record) reduces the variance")
    create.add_argument("--ratio", action="store_true", default=None,
                        help="a ratio metric: sum of rewards / sum of denominators (CSV column "
                        "'denominator' of record), delta method")
    create.add_argument("--looks", type=int, default=None, metavar="K",
                        help="a group-sequential plan: K planned looks, one every "
                        "--look-every units assigned (status shows the latest complete one)")
    create.add_argument("--look-every", type=int, default=None, metavar="UNITS",
                        help="units assigned (every arm) between two planned looks")
    create.add_argument("--segment", action="append", default=None, metavar="LABEL",
                        help="a segment label units may carry (repeat for each; status "
                        "--family then compares the arms in each segment)")
    create.add_argument("--spending", choices=("obrien-fleming", "pocock"), default=None,
                        help="the plan's alpha-spending function (default obrien-fleming)")

    plan = actions.add_parser("plan", help="expected and 90th-percentile units and days to a "
                              "verdict of the sequential test (simulated; writes nothing)")
    what = plan.add_mutually_exclusive_group(required=True)
    what.add_argument("--base-rate", type=float, help="the control's conversion rate (0/1)")
    what.add_argument("--mean", type=float, help="the control's mean (with --variance)")
    plan.add_argument("--variance", type=float, default=None, help="per-unit variance")
    plan.add_argument("--mde", type=float, required=True,
                      help="minimum detectable effect (absolute difference of means)")
    plan.add_argument("--daily-units", type=float, required=True,
                      help="units a day over both arms")
    plan.add_argument("--alpha", type=float, default=0.05)
    plan.add_argument("--look-every", type=int, default=None, metavar="UNITS",
                      help="units per arm between looks (default: a day's)")
    plan.add_argument("--sequence", choices=("exact", "mixture", "asymptotic", "msprt"),
                      default=None)
    plan.add_argument("--tune-n", type=float, default=10_000)
    plan.add_argument("--reward-range", type=float, nargs=2, default=None,
                      metavar=("LO", "HI"))
    plan.add_argument("--runs", type=int, default=1000)
    plan.add_argument("--seed", type=int, default=0)
    plan.add_argument("--cuped-rho", type=float, default=None, metavar="RHO",
                      help="with CUPED: the expected correlation (0 <= RHO < 1) of the metric "
                      "and each unit's pre-experiment covariate (variance x (1 - RHO^2))")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")

    assign = actions.add_parser("assign", help="assign arms to the next N units (CSV out)")
    assign.add_argument("path", help="the experiment file")
    assign.add_argument("n", type=positive_int, metavar="N", nargs="?", default=None,
                        help="units to assign (may be omitted with --keys)")
    assign.add_argument("--keys", type=Path, default=None, metavar="FILE",
                        help="sticky units: a text file of unit keys (user ids), one per line, "
                             "one unit each; a key assigned before gets its unit and arm again "
                             "(columns key and repeated are added to the CSV)")
    assign.add_argument("--out", type=Path, default=None, metavar="CSV",
                        help="write the CSV here (a new file) instead of standard output")
    assign.add_argument("--covariates", type=Path, default=None, metavar="FILE",
                        help="CUPED (create --cuped): a text file of each unit's "
                             "pre-experiment value, one number per line, one line per unit "
                             "asked for in order (with --keys: line i is key i's)")

    record = actions.add_parser("record", help="record rewards from a CSV (unit,reward[,cost"
                                "_1,...])")
    record.add_argument("path", help="the experiment file")
    record.add_argument("csv", type=Path, help="CSV with columns unit, reward (and cost_1, "
                        "..., cost_m for constrained policies; metric_NAME for guardrails; "
                        "covariate (CUPED), denominator (ratio metrics))")
    record.add_argument("--skip-expired", action="store_true",
                        help="record the other units and list the ones skipped: expired, or "
                             "resolved by the outcome window (default: a file with such a "
                             "unit is refused whole)")

    resume = actions.add_parser("resume", help="lift the pause of a guardrail breach: assign "
                                "hands out units again")
    resume.add_argument("path", help="the experiment file")

    status = actions.add_parser("status", help="per-arm counts, means, intervals; the state "
                                "(reads only: works on a read-only file)")
    status.add_argument("path", help="the experiment file")
    status.add_argument("--json", action="store_true", help="print the status as JSON")

    units = actions.add_parser("units", help="list assigned units (CSV out; reads only)",
                               description="List assigned units: unit, arm, arm_index, batch "
                               "as `assign` prints them, then slot, reward, assigned_at, "
                               "recorded_at, expired_at. The way back to the units of an "
                               "`assign` whose output was lost (killed, closed pipe).")
    units.add_argument("path", help="the experiment file")
    units.add_argument("--out", type=Path, default=None, metavar="CSV",
                       help="write the CSV here (a new file) instead of standard output")
    units.add_argument("--unanswered", action="store_true",
                       help="only units waiting for a reward (none recorded, not expired)")
    units.add_argument("--after", type=non_negative_int, default=None, metavar="ID",
                       help="only units with a higher id (the next page)")
    units.add_argument("--limit", type=positive_int, default=None, metavar="N",
                       help="at most N units, lowest ids first")

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
    create.add_argument("--overflow", choices=("design", "uniform", "control", "off"),
                        default="design",
                        help="units beyond the algorithm's slots: drawn from the current "
                             "design's shares (default), uniform over the arms in play, all "
                             "on the control, or off (assign then hands out fewer units)")
    status.add_argument("--csv", action="store_true",
                        help="print the per-arm table as CSV")
    status.add_argument("--look", type=int, default=None, metavar="K",
                        help="with planned looks declared at create, show planned look K "
                        "(default: the latest complete one)")
    status.add_argument("--family", action="store_true",
                        help="also the metric family: the reward (primary), the guardrails' "
                             "metrics and the reward in each declared segment, Holm across all "
                             "of them (banditkit.live.readout.family)")
    pause = actions.add_parser("pause", help="pause by hand: assign hands out nothing until "
                               "resume")
    pause.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    pause.add_argument("--reason", default="paused by hand", help="why (status shows it)")
    stop = actions.add_parser("stop", help="conclude: the algorithm stops; later units are "
                              "rollout units of the winner (or none with --no-rollout)")
    stop.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    stop.add_argument("--arm", default=None, help="the arm to roll out (default: the "
                      "recommended or committed arm, else the leader)")
    stop.add_argument("--no-rollout", action="store_true",
                      help="assign hands out nothing after the stop")
    archive = actions.add_parser("archive", help="stop for good, without rollout (then it may "
                                 "be deleted)")
    archive.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    delete = actions.add_parser("delete", help="delete an archived experiment")
    delete.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    correct = actions.add_parser("correct", help="record the right reward of units recorded "
                                 "wrong, beside the recorded one "
                                 "(banditkit.live.outcomes.corrections)")
    correct.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    correct.add_argument("csv", type=Path, help="CSV with columns unit,reward (the right ones)")
    correct.add_argument("--reason", required=True, help="why the recorded rewards are wrong "
                         "(kept in the audit log)")
    audit = actions.add_parser("audit", help="every operator action: who, what, when (CSV)")
    audit.add_argument("path", help="the experiment file (or postgresql:// URL with --name)")
    add_ingest(actions)  # cli/ingest.py
    for sub in actions.choices.values():  # every action reaches PostgreSQL too
        sub.add_argument("--name", default=None, metavar="NAME",
                         help="with a postgresql:// URL as PATH: the experiment's name in "
                              "that database")
        sub.add_argument("--who", default="local", metavar="WHO",
                         help="who acts, for the audit log (default: local)")


def run(args: argparse.Namespace) -> int:
    from ..live import ExperimentError

    try:
        return _ACTIONS[args.action](args)
    except ExperimentError as error:
        return _refuse(str(error))


def _refuse(message: str) -> int:
    return refuse(message, "banditkit experiment")


def _create(args: argparse.Namespace) -> int:
    from ..live import Experiment

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
    with Experiment.create(args.path, name=args.name, algorithm=args.algorithm, arms=arms,
                           seed=args.seed, horizon=args.horizon, params=params,
                           thresholds=args.threshold, order=args.order,
                           guardrails=args.guardrail,
                           guardrail_alpha=args.guardrail_alpha,
                           outcome_window=args.outcome_window, missing=args.missing,
                           overflow=args.overflow, who=args.who,
                           reward_type=args.reward_type, reward_range=args.reward_range,
                           verdicts={k: v for k, v in (("sequence", args.sequence),
                                                        ("tune_n", args.tune_n),
                                                        ("tau", args.tau),
                                                        ("winsorize", args.winsorize),
                                                        ("cuped", args.cuped),
                                                        ("ratio", args.ratio),
                                                        ("looks", args.looks),
                                                        ("look_every", args.look_every),
                                                        ("spending", args.spending),
                                                        ("segments", args.segment))
                                    if v is not None}
                           ) as exp:
        print(f"created {_label(exp)} ({args.algorithm}, {len(exp.arm_names)} arms)")
        for warning in exp.create_warnings:
            print(f"banditkit experiment: warning: {warning}", file=sys.stderr)
    return 0


def _label(exp: Any) -> str:
    """How messages name an experiment: its file, or its name and database."""
    return str(exp.path) if exp.path is not None else f"{exp.name!r} in {exp.url}"


def _plan(args: argparse.Namespace) -> int:
    import json

    from ..live.readout.plan import plan

    result = plan(mde=args.mde, daily_units=args.daily_units, base_rate=args.base_rate,
                  mean=args.mean, variance=args.variance, alpha=args.alpha,
                  look_every=args.look_every, sequence=args.sequence, tune_n=args.tune_n,
                  reward_range=None if args.reward_range is None else tuple(args.reward_range),
                  runs=args.runs, seed=args.seed, cuped_rho=args.cuped_rho)
    print(json.dumps(result.as_json()) if args.json else str(result))
    return 0


def _open(args: argparse.Namespace, readonly: bool = False) -> Any:
    """The experiment of ``args.path`` (reading commands open it read-only: nothing is
    written, so a read-only file or folder can be read)."""
    from ..live import Experiment, ExperimentError
    from ..live.store import is_url

    if is_url(args.path):  # an experiment of a PostgreSQL database: by --name
        if args.name is None:
            raise ExperimentError("argument --name: required with a postgresql:// URL (a "
                                  "database holds several experiments)")
        return Experiment.open(args.path, readonly=readonly, name=args.name)
    if args.name is not None:
        raise ExperimentError("argument --name: only with a postgresql:// URL (a file holds "
                              "one experiment)")
    if not Path(args.path).is_file():
        raise ExperimentError(f"argument path: no experiment at {args.path!r} (create one with "
                              "`banditkit experiment create`)")
    return Experiment.open(args.path, readonly=readonly)


def _assign(args: argparse.Namespace) -> int:
    # reserve --out before anything is assigned: refused now, nothing is lost
    target = None if args.out is None else _Reserved.take(args.out, args.path)
    if isinstance(target, str):
        return _refuse(target)
    from ..live import ExperimentError

    units = None
    try:
        keys = None if args.keys is None else _read_keys(args.keys)
        if keys is None and args.n is None:
            raise ExperimentError("argument N: give the number of units to assign (or --keys "
                                  "FILE)")
        covariates = None if args.covariates is None else _read_covariates(args.covariates)
        with _open(args) as exp:
            units = exp.assign(args.n, keys=keys, covariates=covariates)
            asked = len(keys) if keys is not None else args.n
            if len(units) < asked:
                reason = units.attrs.get("reason")
                if reason:
                    print(f"banditkit experiment: {len(units)} of {asked} unit(s) assigned: "
                          f"{reason}", file=sys.stderr)
                elif units.empty:
                    state = exp.status()
                    why = ("the algorithm has finished" if state.finished else
                           f"the current batch waits for {state.batch_pending} reward(s) before "
                           "the algorithm can ask for more")
                    print(f"banditkit experiment: no units assigned: {why}", file=sys.stderr)
    except BaseException:
        if target is not None and units is None:
            target.abandon()  # nothing was assigned: the name is free again
        raise
    recover = (f"banditkit experiment units {args.path} --unanswered" if units.empty else
               f"they are units {units['unit'].min()} to {units['unit'].max()}: `banditkit "
               f"experiment units {args.path} --unanswered` lists them")
    if target is None:
        return _to_stdout(units, f"{len(units)} unit(s) were assigned; {recover}")
    try:
        target.write(units)
    except OSError as error:
        target.abandon()
        print(f"banditkit experiment: error: {len(units)} unit(s) were assigned but "
              f"{str(args.out)!r} could not be written ({error.strerror or error}); "
              f"{recover}", file=sys.stderr)
        return 1
    print(f"assigned {len(units)} unit(s) -> {args.out}", file=sys.stderr)
    return 0


def _read_keys(path: Path) -> list[str]:
    """The keys of ``--keys FILE``: one per line, as written (a trailing newline ends the last
    line; a blank line is refused by its number)."""
    from ..live import ExperimentError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ExperimentError(f"argument --keys: {str(path)!r} cannot be read as UTF-8 text "
                              f"({getattr(error, 'strerror', None) or error})") from None
    keys = text.splitlines()
    if not keys:
        raise ExperimentError(f"argument --keys: {str(path)!r} holds no keys (one per line)")
    blank = next((i for i, k in enumerate(keys) if not k.strip()), None)
    if blank is not None:
        raise ExperimentError(f"argument --keys: line {blank + 1} of {str(path)!r} is blank; "
                              "one non-empty key per line")
    return keys


def _read_covariates(path: Path) -> list[float]:
    """The values of ``--covariates FILE``: one number per line (as Python's ``float`` reads
    it, surrounding spaces dropped). A blank line or text is refused by its line number; the
    count and the values themselves (finite) are checked by ``Experiment.assign``, so the
    messages are the Python API's."""
    from ..live import ExperimentError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ExperimentError(f"argument --covariates: {str(path)!r} cannot be read as UTF-8 "
                              f"text ({getattr(error, 'strerror', None) or error})") from None
    lines = text.splitlines()
    if not lines:
        raise ExperimentError(f"argument --covariates: {str(path)!r} holds no values (one "
                              "number per line)")
    values = []
    for i, line in enumerate(lines):
        try:
            values.append(float(line))
        except ValueError:
            raise ExperimentError(f"argument --covariates: line {i + 1} of {str(path)!r} is "
                                  f"not a number ({line!r}); one number per line") from None
    return values


def _to_stdout(frame: Any, lost: str) -> int:
    """Print ``frame`` as CSV; a reader that closes the pipe early (``| head``) ends the call
    with one line on stderr (``lost``: what was not seen and how to get it back) and exit
    status 1, not a BrokenPipeError traceback."""
    try:
        frame.to_csv(sys.stdout, index=False)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's own advice: point stdout at devnull so the flush at exit does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        print(f"banditkit experiment: standard output was closed before everything was "
              f"written: {lost}", file=sys.stderr)
        return 1
    return 0


class _Reserved:
    """An output file reserved before any work: ``OUT.partial`` created exclusively (O_EXCL:
    of two calls naming one file, the second is refused), written, synced to disk, then
    linked to ``OUT`` (which fails rather than replace a file that appeared meanwhile) and
    unlinked. ``OUT`` is therefore complete or absent, never truncated; a killed call leaves
    only ``OUT.partial``, which blocks the name until removed."""

    def __init__(self, out: Path, partial: Path, fd: int) -> None:
        self.out, self.partial, self.fd = out, partial, fd

    @classmethod
    def take(cls, out: Path, experiment: str) -> _Reserved | str:
        """The reservation, or the refusal (a message) when ``out`` cannot be written."""
        if not out.name or not out.parent.is_dir():
            return f"argument --out: folder {str(out.parent)!r} does not exist"
        partial = out.with_name(out.name + ".partial")
        try:
            fd = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return (f"argument --out: {str(partial)!r} exists: another call is writing "
                    f"{str(out)!r} now, or one was killed before it finished (`banditkit "
                    f"experiment units {experiment} --unanswered` lists the units it "
                    "assigned); remove it to use the name")
        except OSError as error:
            return f"argument --out: {str(out)!r} cannot be written ({error.strerror or error})"
        reserved = cls(out, partial, fd)
        if out.exists():  # checked after the reservation: no call can create it in between
            reserved.abandon()
            return f"argument --out: {str(out)!r} exists; name a new file"
        return reserved

    def write(self, frame: Any) -> None:
        with os.fdopen(self.fd, "w", encoding="utf-8", newline="") as handle:
            self.fd = -1
            frame.to_csv(handle, index=False)
            handle.flush()
            os.fsync(handle.fileno())  # on disk before it has its name
        try:
            os.link(self.partial, self.out)  # never replaces: fails if OUT appeared meanwhile
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            if self.out.exists():  # a file system without hard links: check, then rename
                raise FileExistsError(errno.EEXIST, "exists", str(self.out)) from None
            os.rename(self.partial, self.out)
        self.partial.unlink(missing_ok=True)
        _sync_folder(self.out.parent)

    def abandon(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.partial.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that a name given to a file survives a crash (POSIX only)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync folders; the data itself was synced
    finally:
        os.close(fd)


def _record(args: argparse.Namespace) -> int:
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
    metric_columns = [c for c in frame.columns if str(c).startswith("metric_")]
    import pandas as pd

    unit_columns = [c for c in ("covariate", "denominator") if c in frame.columns]
    for column in ["unit", "reward", *cost_columns, *metric_columns, *unit_columns]:
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
    if args.skip_expired and frame["unit"].duplicated().any():
        return _refuse("argument CSV: each unit may appear once (unit "
                       f"{frame.loc[frame['unit'].duplicated(), 'unit'].iloc[0]} repeats)")
    skipped: list[int] = []
    with _open(args) as exp:
        if args.skip_expired:
            # only the units of this file are looked up (O(rows)), expired ones set aside;
            # record stays all-or-nothing for the rest
            known = exp.units(ids=frame["unit"].to_numpy())
            skipped = known.loc[known["expired_at"].notna() | known["imputed"],
                                "unit"].tolist()
            frame = frame[~frame["unit"].isin(skipped)]
        costs = frame[cost_columns].to_numpy(dtype=float) if cost_columns else None
        metrics = ({str(c)[len("metric_"):]: frame[c].to_numpy(dtype=float)
                    for c in metric_columns} if metric_columns else None)
        per_unit = {f"{c}s": frame[c].to_numpy(dtype=float) for c in unit_columns}
        n = 0 if frame.empty else exp.record(frame["unit"].to_numpy(),
                                             frame["reward"].to_numpy(dtype=float), costs,
                                             metrics=metrics, **per_unit)
        state = exp.status()
    print(f"recorded {n} new reward(s) ({len(frame) - n} already recorded); "
          f"{state.pulls_observed} pulls observed, "
          + ("finished" if state.finished
             else f"{state.batch_pending} pull(s) of the current batch without a reward"))
    if state.paused is not None:
        print(f"banditkit experiment: WARNING: PAUSED: {state.paused}", file=sys.stderr)
    if skipped:
        print(f"banditkit experiment: skipped {len(skipped)} unit(s) expired or resolved by "
              f"the outcome window (their rewards are not recorded): "
              f"{','.join(map(str, skipped))}", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    with _open(args, readonly=True) as exp:
        state = exp.status(look=args.look)
        family = exp.family() if args.family else None
    if args.csv:
        sys.stdout.write(state.arms.to_csv())
        return 0
    if args.json:
        summary = {"algorithm": state.algorithm, "batches_observed": state.batches_observed,
                   "pulls_observed": state.pulls_observed, "batch_pending": state.batch_pending,
                   "batch_unassigned": state.batch_unassigned, "budget_left": state.budget_left,
                   "finished": state.finished, "recommendation": state.recommendation,
                   "intervals": state.intervals, "alpha": state.alpha,
                   "control": state.control, "warnings": state.warnings,
                   "paused": state.paused, "count": state.count,
                   "outcome_window": state.outcome_window, "missing": state.missing,
                   "uncounted": state.uncounted,
                   "waiting_units": dataclasses.asdict(state.waiting_units),
                   "stopped": state.stopped, "archived": state.archived,
                   "overflow": state.overflow,
                   "verdicts": state.verdicts,
                   "planned": None if state.planned is None else state.planned.as_json(),
                   "guardrails": json.loads(state.guardrails.to_json(orient="records")),
                   "arms": json.loads(state.arms.reset_index().to_json(orient="records")),
                   **({} if family is None else {"family": {
                       "note": family.attrs["note"],
                       "rows": json.loads(family.to_json(orient="records"))}})}
        json.dump(summary, sys.stdout, indent=2, default=json_default)
        print()
    else:
        print(state)
        if family is not None:
            print(f"metric {family.attrs['note']}")
            print(family.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def _units(args: argparse.Namespace) -> int:
    target = None if args.out is None else _Reserved.take(args.out, args.path)
    if isinstance(target, str):
        return _refuse(target)
    try:
        with _open(args, readonly=True) as exp:
            frame = exp.units(unanswered=args.unanswered, after=args.after, limit=args.limit)
    except BaseException:
        if target is not None:
            target.abandon()
        raise
    # the columns of `assign` first, so the list can stand in for a lost assign file
    first = ["unit", "arm", "arm_index", "batch", "slot", "reward"]
    stored = [json.loads(c) if isinstance(c, str) else None for c in frame["costs"]]
    m = max((len(c) for c in stored if c is not None), default=0)  # constrained policies
    if m:
        import pandas as pd

        costs = pd.DataFrame([[None] * m if c is None else c for c in stored],
                             columns=[f"cost_{i + 1}" for i in range(m)], index=frame.index)
        frame = pd.concat([frame, costs], axis=1)
        first += list(costs.columns)
    frame = frame[[*first, "assigned_at", "recorded_at", "expired_at", "imputed", "key", "kind",
                   "propensity"]]
    if target is None:
        return _to_stdout(frame, f"`banditkit experiment units {args.path} --out FILE` "
                          "writes the list to a file")
    try:
        target.write(frame)
    except OSError as error:
        target.abandon()
        return _refuse(f"argument --out: {str(args.out)!r} could not be written "
                       f"({error.strerror or error})")
    print(f"{len(frame)} unit(s) -> {args.out}", file=sys.stderr)
    return 0


def _expire(args: argparse.Namespace) -> int:
    units = None
    if args.units is not None:
        try:
            units = [int(u) for u in args.units.split(",")]
        except ValueError:
            return _refuse(f"argument --units: must be unit ids separated by commas, got "
                           f"{args.units!r}")
    with _open(args) as exp:
        n = exp.expire(units, older_than=args.older_than, who=args.who)
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
    from ..service.page import write_page

    print(f"wrote {write_page(args.path, args.html)}")
    return 0


def _resume(args: argparse.Namespace) -> int:
    with _open(args) as exp:
        lifted = exp.resume(who=args.who)
    print(f"resumed {_label(exp)}: {lifted} pause(s) lifted" if lifted
          else f"{_label(exp)} was not paused; nothing to resume")
    return 0


def _correct(args: argparse.Namespace) -> int:
    frame = _read_csv(args.csv, "CSV")
    if frame is None:
        return 2
    missing = [c for c in ("unit", "reward") if c not in frame.columns]
    if missing:
        return _refuse(f"argument CSV: {str(args.csv)!r} lacks column(s) {missing} (it has "
                       f"{list(frame.columns)})")
    if frame.empty or frame["unit"].dtype.kind not in "iu" \
            or frame["reward"].dtype.kind not in "iuf":
        return _refuse("argument CSV: it needs rows of integer unit ids and numeric rewards")
    with _open(args) as exp:
        n = exp.correct(frame["unit"].tolist(), frame["reward"].to_numpy(float),
                        reason=args.reason, who=args.who)
    print(f"corrected {n} unit(s) of {_label(exp)}")
    return 0


def _pause(args: argparse.Namespace) -> int:
    with _open(args) as exp:
        done = exp.pause(args.reason, who=args.who)
    print(f"paused {_label(exp)}" if done else f"{_label(exp)} was paused already")
    return 0


def _stop(args: argparse.Namespace) -> int:
    with _open(args) as exp:
        stopped = exp.stop(args.arm, rollout=not args.no_rollout, who=args.who)
    print(f"stopped {_label(exp)}: "
          + (f"rolling out {stopped['arm']} ({stopped['why']})" if stopped["rollout"]
             else f"decided {stopped['arm']} ({stopped['why']}); no more units are assigned"))
    return 0


def _archive(args: argparse.Namespace) -> int:
    with _open(args) as exp:
        done = exp.archive(who=args.who)
    print(f"archived {_label(exp)}" if done else f"{_label(exp)} was archived already")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from ..live import Experiment

    with _open(args, readonly=True) as exp:
        label = _label(exp)
    Experiment.delete(args.path, name=args.name)
    print(f"deleted {label}")
    return 0


def _audit(args: argparse.Namespace) -> int:
    with _open(args, readonly=True) as exp:
        sys.stdout.write(exp.audit().to_csv(index=False))
    return 0


def _guardrail(text: str) -> dict[str, Any]:
    """``METRIC:RULE:MARGIN:LO:HI`` (a bounded metric) or ``METRIC:RULE:MARGIN`` (a
    continuous one) as the dict of ``Experiment.create(guardrails=...)`` (the rule and range
    are checked there, by name)."""
    parts = text.split(":")
    try:
        if len(parts) == 3:
            metric, rule, margin = parts
            return {"metric": metric, "rule": rule, "margin": float(margin)}
        if len(parts) != 5:
            raise ValueError
        metric, rule, margin, low, high = parts
        return {"metric": metric, "rule": rule, "margin": float(margin),
                "range": [float(low), float(high)]}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected METRIC:RULE:MARGIN:LO:HI or METRIC:RULE:MARGIN (e.g. "
            f"latency:max_increase:50:0:2000, or latency:max_increase:20 for an unbounded "
            f"metric), got {text!r}") from None


_ACTIONS = {"create": _create, "assign": _assign, "record": _record, "status": _status,
            "correct": _correct,
            "expire": _expire, "units": _units, "report": _report, "resume": _resume,
            "pause": _pause, "stop": _stop, "archive": _archive, "delete": _delete,
            "audit": _audit, "plan": _plan,
            "ingest": lambda args: ingest_command(args, _open)}
