"""Run a figure: expand its spec into trials, run them on a backend, store each as it finishes.

:func:`run_figure` is the one entry point (the CLI's ``banditkit run`` calls it). Every trial's
randomness derives from the root seed and the trial's key (:mod:`.tasks`), so the numbers are
the same whatever the backend and the number of workers. Finished trials are committed to the
run folder's database (:mod:`.store`) at once; running the same command again after an
interruption runs only the trials that are missing.

Failed trials (the algorithm or environment raised) are recorded with their error and traceback,
and the run goes on. A restarted run keeps them as they are; ``retry_failed=True``
(``--retry-failed``) runs them again, and a success then replaces the failure.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..validation import check_positive_int
from .backends import BACKENDS, Backend, make_backend
from .describe import fill
from .figures import get_figure
from .progress import progress_bar
from .records import TrialRecord, failed_record
from .replicability import pairs_frame
from .results import curves_frame, summarise, trials_frame
from .spec import FigureSpec
from .store import RunLock, RunStore, spec_fingerprint
from .tasks import Task, execute, make_tasks

__all__ = ["RunResult", "default_out", "load_run", "reproduce_command", "run_figure"]


@dataclass
class RunResult:
    """A run's results, as tidy frames, with its configuration.

    Attributes
    ----------
    figure : str
        The figure's name.
    config : dict
        The stored configuration: identity (figure, quick, trials, seed, fingerprint, version)
        and description (title, paper, points, algorithms, plot, paper values, notes).
    trials : DataFrame
        One row per trial (see :func:`~banditkit.experiments.results.trials_frame`).
    curves : DataFrame
        Long format (point, algorithm, trial, t, regret, violation).
    summary : DataFrame
        Per (point, algorithm) means, standard errors, 95% intervals and trial counts.
    out : Path or None
        The run folder (``None`` for an in-memory run).
    sessions : list of dict
        Each invocation that worked on this run: backend, workers, wall time, trials run.
    ran : int
        Trials run by this invocation (0 when loaded from disk).
    pairs : DataFrame or None
        For paired figures, per (point, algorithm) replicability of the pairs
        (:func:`~banditkit.experiments.replicability.pairs_frame`).
    """

    figure: str
    config: dict[str, Any]
    trials: pd.DataFrame
    curves: pd.DataFrame
    summary: pd.DataFrame
    out: Path | None
    sessions: list[dict[str, Any]]
    ran: int = 0
    pairs: pd.DataFrame | None = None

    @property
    def n_failed(self) -> int:
        return int((self.trials["status"] == "failed").sum())

    @property
    def complete(self) -> bool:
        """Whether every (point, algorithm, trial) of the configuration is stored."""
        expected = (len(self.config["points"]) * len(self.config["algorithms"])
                    * int(self.config["trials"]))
        return len(self.trials) == expected


def default_out(figure: str, quick: bool) -> Path:
    """``runs/<figure name with unsafe characters replaced>[-quick]``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in figure)
    return Path("runs") / (safe + ("-quick" if quick else ""))


def reproduce_command(config: Mapping[str, Any], out: Path | str | None) -> str:
    """The ``banditkit run`` command line that reproduces (or resumes) a run."""
    parts = ["banditkit", "run", str(config["figure"])]
    if config.get("quick"):
        parts.append("--quick")
    parts += ["--trials", str(config["trials"]), "--seed", str(config["seed"])]
    if out is not None:
        parts += ["--out", str(out)]
    return " ".join(parts)


def run_figure(spec_or_name: FigureSpec | str, *, quick: bool = False,
               trials: int | None = None, workers: int | None = None,
               backend: str | Backend = "processes", scheduler: str | None = None,
               seed: int = 0,
               out: str | Path | None = None, progress: bool = True,
               retry_failed: bool = False) -> RunResult:
    """Run (or resume) a figure and return its results.

    Parameters
    ----------
    spec_or_name : FigureSpec or str
        The figure, or its registered name (``banditkit list``).
    quick : bool
        Use the spec's ``--quick`` overrides (few trials, short horizons).
    trials : int, optional
        Trials per (point, algorithm); default the spec's (or its quick) count.
    workers : int, optional
        Worker processes for ``"processes"`` (default: all cores) and for a local Dask
        cluster.
    backend : {"serial", "processes", "dask"} or Backend
        Where trials run. A :class:`~banditkit.experiments.backends.Backend` instance is used
        as it is and left open (to share one Dask cluster between runs); ``workers`` and
        ``scheduler`` must then be left out.
    scheduler : str, optional
        Address of a Dask scheduler (``backend="dask"`` only); without it a ``LocalCluster``
        is started.
    seed : int
        Root seed (non-negative); every trial's streams derive from it.
    out : str or Path, optional
        Run folder for the database (``results.sqlite``); a folder holding finished trials of
        the same configuration is resumed, one holding another configuration is refused.
        ``None`` keeps results in memory only.
    progress : bool
        Show a progress bar on stderr (only for runs lasting over a second).
    retry_failed : bool
        Run again trials stored as failed (they are kept and skipped otherwise).

    Returns
    -------
    RunResult

    Raises
    ------
    ValueError
        Unknown figure or backend, ``trials``/``workers`` < 1, negative ``seed``, a
        ``scheduler`` without the dask backend, or a run folder of another configuration
        (:class:`~banditkit.experiments.store.ConfigurationMismatch`).
    FileNotFoundError
        A data set the figure needs is missing (``FigureSpec.requires``).
    """
    spec = _resolve(spec_or_name)
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, got {quick!r}")
    if trials is not None:
        trials = check_positive_int(trials, "trials")
    if workers is not None:
        workers = check_positive_int(workers, "workers")
    if isinstance(backend, Backend):
        if workers is not None or scheduler is not None:
            raise ValueError("workers and scheduler belong to the backend instance given as "
                             "backend; leave them out")
    elif backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if scheduler is not None and backend != "dask":
        raise ValueError(f"scheduler is only used by the dask backend, not {backend!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)

    spec = spec.quick_version() if quick else spec
    if trials is not None:
        spec = replace(spec, trials=trials)
    _check_spec(spec)
    if spec.requires is not None:
        spec.requires()  # e.g. a data set: refuse before any work
    fingerprint = spec_fingerprint(spec)
    config = run_config(spec, quick=quick, seed=seed, fingerprint=fingerprint)

    store = RunStore(out)
    lock = RunLock(store.folder) if store.folder is not None else None
    try:
        if lock is not None:
            lock.acquire()
        store.claim(config)
        skip = store.keys("ok") if retry_failed else store.keys()
        names = [a.name for a in spec.algorithms]
        todo = [(p, a, i) for p in range(len(spec.points)) for a in range(len(names))
                for i in range(spec.trials) if (p, names[a], i) not in skip]
        tasks = make_tasks(spec, seed, todo, fingerprint)
        if isinstance(backend, Backend):
            runner, owner = backend, contextlib.nullcontext()
        else:
            runner = make_backend(backend, workers, scheduler)
            owner = runner
        session = store.start_session(backend=runner.name, workers=runner.workers,
                                      command=reproduce_command(config, out))
        start = time.perf_counter()
        ran = 0
        completed = False
        try:
            with owner, progress_bar(len(todo), spec.name, progress) as bar:
                for task, result in runner.run(execute, spec, tasks):
                    records = _as_records(spec, task, result)
                    store.add(records)
                    ran += len(records)
                    bar.update(len(records))
            completed = True
        finally:
            store.finish_session(session, wall_seconds=time.perf_counter() - start,
                                 trials_run=ran, completed=completed)
        result = _load(store)
        result.ran = ran
        return result
    finally:
        if lock is not None:
            lock.release()
        store.close()


def load_run(path: str | Path) -> RunResult:
    """The results stored in a run folder (or ``.sqlite`` file), without running anything."""
    with RunStore(path, create=False) as store:
        if not store.config():
            raise ValueError(f"{store.path} holds no run")
        return _load(store)


def run_config(spec: FigureSpec, *, quick: bool, seed: int, fingerprint: str
               ) -> dict[str, Any]:
    """What the store records about a run: its identity, then a description of the spec
    sufficient to plot and report it without the spec."""
    plot = spec.plot
    horizons = [spec.horizon_at(p) for p in spec.points]

    def text(value: str | None, what: str) -> str | None:
        # the run's own numbers, never the full spec's (a --quick run's trials and horizon)
        if value is None:
            return None
        return fill(value, trials=spec.trials, points=spec.points, horizons=horizons,
                    what=f"figure {spec.name!r} {what}")

    return {
        "figure": spec.name, "quick": quick, "trials": spec.trials, "seed": seed,
        "fingerprint": fingerprint, "version": __version__,
        "title": text(spec.title, "title"), "paper": spec.paper,
        "notes": text(spec.notes, "notes"),
        "points": [_describe_point(spec, p) for p in spec.points],
        "horizons": horizons,
        "algorithms": [a.name for a in spec.algorithms],
        "algorithm_params": {a.name: _describe(dict(a.params)) for a in spec.algorithms},
        "instance_per_trial": spec.instance_per_trial,
        "shared_instance": spec.shared_instance,
        "paired": bool(spec.paired),
        "plot": {"kind": plot.kind, "metric": plot.metric, "x": plot.x,
                 "xlabel": text(plot.xlabel, "xlabel"), "ylabel": text(plot.ylabel, "ylabel"),
                 "xscale": plot.xscale, "yscale": plot.yscale,
                 "panels": [[x, _describe(dict(fixed))] for x, fixed in plot.panels],
                 "facts": list(plot.facts), "metrics": list(plot.metrics),
                 "families": [[name, list(members)] for name, members in plot.families],
                 "summaries": list(plot.summaries), "summary_x": plot.summary_x,
                 "nonnegative": plot.nonnegative},
        "paper_values": [{"algorithm": v.algorithm, "point": v.point, "metric": v.metric,
                          "value": v.value, "source": v.source} for v in spec.paper_values],
        "paper_values_not_run": int(spec.paper_values_not_run),
        "ratios": [[a, b] for a, b in spec.ratios],
        "comparisons": [[a, b] for a, b in spec.comparisons],
    }


def _describe_point(spec: FigureSpec, point: Mapping[str, Any]) -> dict[str, Any]:
    """A point's parameters (environment's and swept algorithm parameters) as JSON values."""
    params = {k: _describe(v) for k, v in dict(point.get("algorithm_params", {})).items()}
    params.update({k: _describe(v) for k, v in spec.env_params(point).items()})
    return params


def _describe(value: Any) -> Any:
    """JSON-able description; large arrays are summarised by their shape."""
    if isinstance(value, Mapping):
        return {str(k): _describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
        if arr.size > 16 or arr.ndim > 1:
            return f"<array {'x'.join(map(str, arr.shape))}>"
        return [_describe(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if callable(value) and hasattr(value, "__qualname__"):
        return value.__qualname__
    return repr(value)


def _resolve(spec_or_name: FigureSpec | str) -> FigureSpec:
    if isinstance(spec_or_name, FigureSpec):
        return spec_or_name
    if isinstance(spec_or_name, str):
        return get_figure(spec_or_name)
    raise TypeError(f"figure must be a FigureSpec or a figure name, got "
                    f"{type(spec_or_name).__name__}")


def _check_spec(spec: FigureSpec) -> None:
    check_positive_int(spec.trials, "trials")
    if not spec.points:
        raise ValueError(f"figure {spec.name!r} has no points")
    if not spec.algorithms:
        raise ValueError(f"figure {spec.name!r} has no algorithms")
    names = [a.name for a in spec.algorithms]
    if len(set(names)) != len(names):
        raise ValueError(f"figure {spec.name!r} has duplicate algorithm names: {names}")


def _as_records(spec: FigureSpec, task: Task, result: Any) -> list[TrialRecord]:
    """A task's records; a task that could not run at all fails each of its trials."""
    if isinstance(result, BaseException):
        name = spec.algorithms[task.algorithm].name
        return [failed_record(task.point, name, i, result) for i in task.trials]
    return list(result)


def _load(store: RunStore) -> RunResult:
    config = store.config()
    records = store.records()
    trials = trials_frame(config["figure"], records, config["points"], config["algorithms"])
    return RunResult(
        figure=config["figure"], config=config, trials=trials,
        curves=curves_frame(records, config["algorithms"]), summary=summarise(trials),
        out=store.folder, sessions=store.sessions(),
        pairs=pairs_frame(records, config) if config.get("paired") else None)
