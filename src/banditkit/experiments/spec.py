"""Figure specifications: what a paper figure runs, declared as data.

A :class:`FigureSpec` names the instances (a sweep of points over a parameter), the algorithms
with their parameters, the horizon or confidence, the number of trials, the metrics and how to
plot. The runner expands it into trials; nothing in a spec knows how trials are executed.

Every callable in a spec must be picklable (a module-level function or a ``functools.partial``
of one), because trials run in other processes or on a Dask cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..protocol import Algorithm

__all__ = ["AlgorithmSpec", "FigureSpec", "PaperValue", "PlotSpec"]

#: ``make_env(rng, **point) -> Environment``; ``rng`` comes from the instance stream.
EnvFactory = Callable[..., Environment]
#: ``make_algorithm(env, rng, **params) -> Algorithm``; ``rng`` is the algorithm stream ξ.
AlgorithmFactory = Callable[..., Algorithm]


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm of a figure.

    Attributes
    ----------
    name : str
        Label in results, plots and reports (e.g. ``"RAGE"``).
    factory : callable
        ``factory(env, rng, **params)`` returning a fresh :class:`~banditkit.protocol.Algorithm`;
        ``params`` are :attr:`params` updated with the sweep point's ``algorithm_params``.
    params : mapping
        Keyword parameters for the factory (constants, δ, ρ...).
    lockstep : callable, optional
        Not for engines: every trial already takes the fastest exact engine its algorithm
        declares (:mod:`banditkit.engines`; a compiled kernel, a block driver, a lock-step
        runner across the point's trials), so a spec names none. This is for keeping the
        trials of a point together for another reason (a per-process memo:
        :func:`~banditkit.experiments.tasks.run_grouped`).
        ``lockstep(envs, rngs, seeds, horizon, checkpoints, **params) -> list[Trial]``: runs all
        trials of one sweep point together. Trial i runs on
        ``envs[i]`` (the same object for every trial of a fixed instance, its own instance
        with ``instance_per_trial``) with algorithm stream ``rngs[i]`` and noise seed
        ``seeds[i]``, exactly as a single trial would, so the numbers never depend on how
        trials are grouped onto workers.
    simulator : callable, optional
        Drop-in replacement for :func:`banditkit.simulate` with the same signature,
        ``simulator(algorithm, env, *, horizon, seed, checkpoints) -> Trial``, used for every
        trial of this algorithm (fixed or per-trial instances): for a trial recorded
        differently (its own checkpoints), never for speed (engines are the algorithm's).
    """

    name: str
    factory: AlgorithmFactory
    params: Mapping[str, Any] = field(default_factory=dict)
    lockstep: Callable[..., list] | None = None
    simulator: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if self.lockstep is not None and self.simulator is not None:
            raise ValueError(f"algorithm {self.name!r}: give lockstep or simulator, not both")


@dataclass(frozen=True)
class PaperValue:
    """A number the paper states or plots, for the report's comparison table.

    Attributes
    ----------
    algorithm : str
    point : int
        Index of the sweep point it belongs to.
    metric : str
        Column of the results it compares with (``"n_pulls"``, ``"final_regret"``...).
    value : float
    source : str
        Where in the paper it comes from, and whether stated in the text or read off a plot.
    """

    algorithm: str
    point: int
    metric: str
    value: float
    source: str


@dataclass(frozen=True)
class PlotSpec:
    """How to draw a figure.

    ``kind="curve"`` plots a per-checkpoint metric (cumulative regret) against time, one line per
    algorithm with a 95% band, one panel per sweep point (and per metric of ``metrics``, when
    several are drawn side by side, e.g. regret and violation); ``kind="sweep"`` plots a per-trial
    metric (sample complexity) against the swept parameter, mean with a 95% interval.

    For curves, ``families`` (pairs of a panel title and the algorithm names it draws) split
    many algorithms into panels of a few each; ``summaries`` names per-trial outcomes drawn in
    a row below the curves, per algorithm with a 95% interval, against the point parameter
    ``summary_x``: trial facts (``"unsafe_rounds"``) or ``"non_replication"`` (the pairs of a
    paired figure).
    """

    kind: str = "curve"
    metric: str = "regret"
    x: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    xscale: str = "linear"
    yscale: str = "linear"
    panels: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    facts: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    families: tuple[tuple[str, tuple[str, ...]], ...] = ()
    summaries: tuple[str, ...] = ()
    summary_x: str | None = None
    #: The curves' metric cannot be negative in this figure (the pseudo-regret of an
    #: unconstrained problem, which the signed ``regret`` metric is not in general): bands
    #: are clipped at 0, as for the metrics of ``results.NONNEGATIVE``.
    nonnegative: bool = False


@dataclass(frozen=True)
class FigureSpec:
    """A reproducible experiment: one paper figure (or one new figure of ours).

    Attributes
    ----------
    name : str
        ``"paper:figure"``, e.g. ``"replicable-bandits:ucb-baseline"``.
    title : str
        May name the run's own numbers by placeholders (``{T}``, ``{trials}``,
        ``{horizon}``...; :func:`~banditkit.experiments.describe.fill`), replaced from the spec
        actually run; so may :attr:`notes` and the plot's axis labels.
    paper : str
        Citation (paper and figure/section).
    make_env : callable
        ``make_env(rng, **point)`` → environment for a sweep point.
    points : sequence of mapping
        The sweep: each point's parameters for ``make_env``. A point may carry
        ``"algorithm_params"`` (a mapping) merged into every algorithm's params.
    algorithms : sequence of AlgorithmSpec
    trials : int
        Trials per (point, algorithm) at the paper's counts.
    horizon : int or callable or None
        Pulls per trial (regret) or budget cap (identification); a callable takes the point.
    instance_per_trial : bool
        Draw a new random instance for every trial (keyed by trial) rather than one per point.
    shared_instance : bool
        Draw every point's random instance from one stream keyed by the figure alone, so the
        points of a sweep share their random draws (Xiong et al.'s Fig. 3 scales one random
        oscillation by s) instead of one independent instance per point.
    instance_of : str, optional
        Draw the random instances from the streams of the figure so named instead of this
        one's: its point i's instance for the same root seed (``make_env`` and the points'
        parameters must match), so a figure can run other algorithms on another figure's
        instance (``replicable-bandits:linear-regret`` on ``replicable-bandits:linear``'s).
    checkpoints : int
        Number of checkpoints for curves.
    plot : PlotSpec
    paper_values : sequence of PaperValue
        The paper's numbers, for the report.
    quick : mapping
        Overrides for ``--quick`` mode (``trials``, ``points``, ``horizon``...): seconds to a
        minute, used by tests and the demo.
    notes : str
        What differs from the paper and why; printed in the report.
    ratios : sequence of (str, str)
        Pairs (numerator, denominator) of algorithm names whose ratio of mean ``plot.metric``
        the report gives at every point (e.g. ``("RAGE", "XY-oracle")``).
    comparisons : sequence of (str, str)
        Pairs (a, b) of identifiers whose error rates the report compares at every point:
        the difference a − b with Newcombe's 95% interval, and whether a is significantly
        worse, better, or neither (the paper's claims are statements of this kind).
    chunk : int or None
        Trials per task. ``None``: one trial per task (all trials of a point for a lock-step
        algorithm). Figures of 10^4 trials per point of a few milliseconds each use chunks, so
        that a task's overhead (pickling, a database transaction) is paid once per chunk;
        trials keep their own streams, so the numbers do not depend on the chunking.
    store_decisions : bool
        Keep every trial's decision log (runs of pulls and batch sizes). Fixed-budget trials
        sample arms i.i.d., so their logs are thousands of one-pull runs; figures of 10^6
        trials keep only the pulls per arm and the scalar metrics (``False``).
    trial_facts : callable, optional
        ``trial_facts(trial, env) -> dict`` of scalar facts about a finished trial that need
        the instance's truth (e.g. the rounds a constrained policy played an unsafe strategy),
        stored in the trial's ``info["facts"]`` and summarised per (point, algorithm) as
        metrics with a 95% interval (a fact named ``any_*``, 0 or 1, as a proportion).
    requires : callable, optional
        ``requires()`` raises (``FileNotFoundError``, ``ValueError``) with a message saying
        what to do when something the figure needs is missing — a data set — so a run is
        refused before any work instead of recording every trial as failed.
    instance_facts : callable, optional
        ``instance_facts(env) -> dict`` of scalar facts about a trial's instance (e.g. the
        minimum gap Δ(1)), stored in the trial's ``info["instance"]`` and given as columns of
        the trials frame.
    paper_values_not_run : int
        Paper values left out because their sweep point is not run (set by
        :meth:`quick_version`; the report says so instead of listing them as not measured).
    full_minutes : float or str, optional
        Measured wall time in minutes of the full run (``--workers 2`` on this project's
        2-core machine; the source is cited where the spec sets it), for ``banditkit list``;
        or a short text where no full run has been measured since the figure changed.
    paired : bool
        Run the trials as replicability pairs: trials 2j and 2j + 1 share the algorithm stream
        ξ (keyed by the pair j) and have independent noise, so the report can count the pairs
        that made identical decisions (Esfandiari et al., Appendix H: "consecutive
        executions"). Use an even number of trials.
    """

    name: str
    title: str
    paper: str
    make_env: EnvFactory
    points: Sequence[Mapping[str, Any]]
    algorithms: Sequence[AlgorithmSpec]
    trials: int
    horizon: int | Callable[[Mapping[str, Any]], int] | None = None
    instance_per_trial: bool = False
    shared_instance: bool = False
    instance_of: str | None = None
    checkpoints: int = 100
    plot: PlotSpec = field(default_factory=PlotSpec)
    paper_values: Sequence[PaperValue] = ()
    quick: Mapping[str, Any] = field(default_factory=dict)
    notes: str = ""
    paired: bool = False
    ratios: Sequence[tuple[str, str]] = ()
    comparisons: Sequence[tuple[str, str]] = ()
    chunk: int | None = None
    store_decisions: bool = True
    instance_facts: Callable[[Environment], Mapping[str, float]] | None = None
    trial_facts: Callable[[Any, Environment], Mapping[str, float]] | None = None
    requires: Callable[[], Any] | None = None
    paper_values_not_run: int = 0
    full_minutes: float | str | None = None

    def __post_init__(self) -> None:
        if self.shared_instance and self.instance_per_trial:
            raise ValueError(f"figure {self.name!r}: shared_instance and instance_per_trial "
                             "exclude each other")
        if self.chunk is not None and (isinstance(self.chunk, bool)
                                       or not isinstance(self.chunk, int) or self.chunk < 1):
            raise ValueError(f"figure {self.name!r}: chunk must be an integer >= 1 or None, "
                             f"got {self.chunk!r}")

    def xi_trial(self, trial: int) -> int:
        """The trial index the algorithm stream ξ is keyed by (the pair, for paired specs)."""
        return trial // 2 if self.paired else trial

    def quick_version(self) -> FigureSpec:
        """The ``--quick`` variant: this spec with :attr:`quick`'s overrides applied.

        Paper values follow their sweep point: a value stays (re-indexed) when the quick
        points include its point with the same parameters, and is dropped otherwise (a quick
        point at another horizon or instance is not the paper's), counted in
        :attr:`paper_values_not_run` so the report can say why it is missing.
        """
        quick = replace(self, **dict(self.quick), quick={})
        if quick.points is self.points:
            return quick
        where = {}
        for j, p in enumerate(quick.points):
            where.setdefault(_point_key(p), j)
        kept = []
        for v in self.paper_values:
            j = where.get(_point_key(self.points[v.point])) if v.point < len(self.points) else None
            if j is not None:
                kept.append(replace(v, point=j))
        return replace(quick, paper_values=tuple(kept),
                       paper_values_not_run=len(self.paper_values) - len(kept))

    def horizon_at(self, point: Mapping[str, Any]) -> int | None:
        if callable(self.horizon):
            return int(self.horizon(point))
        return self.horizon

    def env_params(self, point: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in point.items() if k != "algorithm_params"}

    def algorithm_params(self, algo: AlgorithmSpec, point: Mapping[str, Any]) -> dict[str, Any]:
        return {**algo.params, **dict(point.get("algorithm_params", {}))}

    def checkpoint_times(self, point: Mapping[str, Any]) -> np.ndarray | None:
        from ..simulate import default_checkpoints

        h = self.horizon_at(point)
        return None if h is None else default_checkpoints(h, self.checkpoints)


def _point_key(point: Mapping[str, Any]) -> str:
    """A point's parameters as a canonical string (points are compared by value)."""
    return repr(sorted((k, _point_key(v) if isinstance(v, Mapping) else repr(v))
                       for k, v in point.items()))
