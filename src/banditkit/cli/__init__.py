"""The ``banditkit`` command line.

Layers (imports go down only, so the package has no import cycle):

* :mod:`.args` (argument types: ``--param K=V``, integers) and :mod:`.output` (the one-line
  refusal, JSON of numpy values) import nothing of banditkit;
* the command modules import those two and the library: :mod:`.figures` (``list``, ``run``,
  ``plot``, ``report``), :mod:`.reproduce`, :mod:`.audit`, :mod:`.experiment`
  (``experiment create|assign|...``), :mod:`.serve` (the HTTP service);
* this module, the dispatch, imports the command modules and none of them imports it.

Subcommands are registered in :data:`SUBCOMMANDS`: each is a name, a help line, a function adding
its arguments to its parser and a function running it (returning the exit status). Adding a
subcommand is adding one :class:`Subcommand` entry and its two functions. Every command module
keeps its heavy imports (numpy, pandas, the library's algorithms, Starlette) inside its
functions, so a call imports only what it uses (``tests/test_startup.py``).

Bad input is refused before any work with a message naming the parameter (exit status 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import audit, experiment, figures, reproduce, serve
from .args import key_value, non_negative_int, positive_int, unique_params

__all__ = ["SUBCOMMANDS", "Subcommand", "build_parser", "key_value", "main", "non_negative_int",
           "positive_int", "unique_params"]


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: list[Subcommand] = [
    Subcommand("list", "list the figures that can be run", figures.list_arguments,
               figures.list_figures),
    Subcommand("run", "run (or resume) a figure: database, plots and report in its folder",
               figures.run_arguments, figures.run),
    Subcommand("plot", "redraw the plots of a run folder from its database",
               figures.run_dir_arguments, figures.plot),
    Subcommand("report", "rewrite the report of a run folder from its database",
               figures.run_dir_arguments, figures.report),
    Subcommand("reproduce", "run every figure of the papers and compare with the papers' "
               "numbers: one report (markdown and HTML)", reproduce.add_arguments,
               reproduce.run),
    Subcommand("audit", "replicability audit: pairs of executions sharing internal randomness",
               audit.add_arguments, audit.run),
    Subcommand("experiment", "a live experiment: create, assign, record, status, units, expire "
               "(CSV)", experiment.add_arguments, experiment.run),
    Subcommand("serve", "serve live experiments over HTTP (JSON API and a page to watch them)",
               serve.add_arguments, serve.run),
]


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``banditkit`` command; returns the exit status.

    A reader that goes away (``banditkit experiment status x.sqlite | head -1``) ends the
    command quietly, as it ends other Unix tools: the rest of the output is dropped, with the
    exit status 141 of a command ended by SIGPIPE, and no traceback."""
    args = build_parser().parse_args(argv)
    try:
        status = int(args._run(args))
        sys.stdout.flush()  # here, not at exit: a closed pipe is then an error we can catch
    except BrokenPipeError:
        return _pipe_closed()
    return status


def _pipe_closed() -> int:
    # Python flushes stdout once more at exit, which would fail again and print "Exception
    # ignored": send what is left to /dev/null instead (the recipe of Python's signal docs)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + 13  # SIGPIPE, as a shell reports a command a closed pipe ended

