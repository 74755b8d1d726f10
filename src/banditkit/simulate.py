"""Drive algorithms against environments: the simulation side of the ask/tell protocol.

:func:`simulate` runs one trial, :func:`simulate_trials` the trials of one point. Both take the
algorithm's fastest exact engine (:mod:`banditkit.engines`: a compiled kernel, a block driver,
a lock-step runner across trials), which gives the protocol loop's trial bit for bit;
``engine="reference"`` forces the protocol loop itself.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence

import numpy as np

from .engines import Engine, check_engine
from .envs.base import Environment
from .protocol import Algorithm, Batch, DecisionLog
from .rng import STREAMS, SeedLike, as_generator, derive_seed, stream
from .trial import Trial
from .validation import check_positive_int

__all__ = ["check_checkpoints", "check_memory", "default_checkpoints", "run_trials",
           "simulate", "simulate_trials", "trials_engine"]

_MAX_EMPTY_BATCHES = 10_000

#: Bytes a trial holds per run of its decision log: arms and counts (int64, 16 B) in arrays that
#: double as they grow (the old and new copies coexist: 32 B), the merged runs (16 B), the
#: per-run regret and its intermediates (gap per run, times count: 16 B) and the cumulative
#: sums that the checkpoints interpolate (ends and totals: 16 B).
BYTES_PER_RUN = 80


def default_checkpoints(horizon: int, n: int = 100) -> np.ndarray:
    """``n`` evenly spaced checkpoints in (0, horizon], always ending at ``horizon``."""
    horizon = check_positive_int(horizon, "horizon")
    # ⌈horizon·i/n⌉ in integers: floats would miss the horizon itself beyond 2⁵³
    return np.unique(np.array([-(-horizon * i // n) for i in range(1, n + 1)], dtype=np.int64))


def check_checkpoints(checkpoints: object, horizon: int | None) -> np.ndarray:
    """``checkpoints`` as int64, refused unless they are strictly increasing integers in
    [1, horizon] (in [1, ∞) without a horizon)."""
    arr = np.asarray(checkpoints)
    if arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) and np.all(
            arr == np.round(arr)):
        arr = arr.astype(np.int64)  # 200.0 is the integer 200
    top = "horizon" if horizon is None else f"horizon = {horizon}"
    if (arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu" or arr.dtype == bool
            or int(arr.min()) < 1 or (horizon is not None and int(arr.max()) > horizon)
            or np.any(np.diff(arr) <= 0)):
        shown = repr(checkpoints) if len(repr(checkpoints)) <= 60 else \
            f"{type(checkpoints).__name__} of {arr.size} values"
        raise ValueError(f"checkpoints must be strictly increasing integers in [1, {top}], got "
                         f"{shown}")
    return arr.astype(np.int64)


def _available_memory() -> int:
    """Bytes of memory this process could still get (MemAvailable on Linux, else the
    machine's physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**63 - 1  # unknown: refuse nothing


def check_memory(algorithm: Algorithm, horizon: int, executions: int = 1,
                 bytes_per_pull: int = 0) -> None:
    """Refuse a horizon whose decision logs cannot fit in memory, before the run.

    A trial keeps its decision log. Only algorithms that declare how it grows are checked:
    ``runs_per_pull`` (a class attribute) is 1 for a fully sequential policy (UCB1, KL-UCB,
    Thompson sampling: one run per pull) and for the fixed-budget identifiers, whose epochs of
    i.i.d. or shuffled pulls are mostly runs of one pull; the batched eliminations, DEBORA and
    the fixed-confidence identifiers (whose horizon is a safety cap they stop far below) declare
    nothing, since their logs grow with their batches, not with the horizon, and a first batch
    says nothing reliable about later ones. ``executions`` trials held at once (an audit keeps
    all its pairs) and ``bytes_per_pull`` more per pull and execution (a lock-step runner's pull
    sequence) are added.
    """
    rate = getattr(algorithm, "runs_per_pull", None)
    if rate is None:
        return
    runs = min(horizon, math.ceil(horizon * rate))
    need = executions * (runs * BYTES_PER_RUN + horizon * bytes_per_pull)
    if need <= 2**28:
        return  # a quarter of a GiB: not worth reading the machine's memory for
    have = _available_memory()
    if need > have:
        fits = max(1, int(horizon * have / need))
        raise ValueError(
            f"horizon = {horizon} cannot fit in memory: {type(algorithm).__name__} keeps about "
            f"{rate:g} run(s) per pull in its decision log, so {executions} execution(s) would "
            f"keep about {runs:.3g} runs each, {need / 2**30:.3g} GiB against "
            f"{have / 2**30:.3g} GiB available; use a horizon below about {fits:.2g}")


def _cumulative_at(per_run: np.ndarray, counts: np.ndarray, checkpoints: np.ndarray
                   ) -> np.ndarray:
    """Cumulative sum of per-run quantities evaluated at pull-count checkpoints.

    Quantities accrue linearly within a run (every pull of a run costs the same in expectation
    for stationary environments, and is the run's average otherwise), so linear interpolation
    between run ends is exact at run ends and at every pull of a stationary run.
    """
    ends = np.r_[0, np.cumsum(counts)]
    totals = np.r_[0.0, np.cumsum(per_run)]
    return np.interp(checkpoints, ends, totals)


def simulate(algorithm: Algorithm, env: Environment, *, horizon: int | None = None,
             seed: SeedLike = 0, checkpoints: np.ndarray | None = None,
             engine: str = "auto") -> Trial:
    """Run one trial of ``algorithm`` on ``env``.

    Parameters
    ----------
    algorithm : Algorithm
        A fresh algorithm (its own internal randomness ξ was given at construction).
    env : Environment
        The environment; its noise comes from ``seed``.
    horizon : int, optional
        Maximum number of pulls. A regret policy runs exactly ``horizon`` pulls (the last batch
        is cut to fit); an identifier stops by itself or is cut off at ``horizon`` (a budget
        cap; the trial then has ``stopped=False`` unless the algorithm would have stopped
        there anyway, as a fixed-budget identifier with ``budget = horizon`` does). Required
        unless the algorithm stops by itself.
    seed : int, SeedSequence or Generator
        The environment's noise stream.
    checkpoints : array of int, optional
        Times at which cumulative regret (and violation) are recorded: strictly increasing
        integers in [1, horizon]; defaults to 100 evenly spaced times up to ``horizon`` (or up
        to the pulls made, when there is no horizon; checkpoints past them then hold the
        final totals).
    engine : {"auto", "reference"}
        ``"auto"`` (default): the engine the algorithm declares for this environment
        (:meth:`Algorithm.engine <banditkit.protocol.Algorithm.engine>`: a compiled kernel, a
        block driver), which returns the protocol loop's trial bit for bit — the same pulls,
        counts, regret, recommendation and stopping time — or the protocol loop when it
        declares none. ``"reference"``: the protocol loop (``next_batch`` / ``pull`` /
        ``observe``), which also leaves the algorithm object in its final state (an engine
        may leave it untouched).

    A horizon whose decision log cannot fit in memory (:func:`check_memory`: UCB1 keeps one
    run per pull) is refused before the run.

    Returns
    -------
    Trial
    """
    engine = check_engine(engine)
    horizon, checkpoints = _check_trial(algorithm, env, horizon, checkpoints)
    if horizon is not None:
        check_memory(algorithm, horizon)
    if engine == "auto" and algorithm.fresh:
        chosen = algorithm.engine(env, horizon)
        if chosen is not None and chosen.run is not None:
            return chosen.run(algorithm, env, horizon=horizon, seed=seed,
                              checkpoints=checkpoints)
        if chosen is not None and chosen.run_trials is not None and not isinstance(
                seed, np.random.Generator):
            # a lock-step engine of one trial (it may read the noise stream ahead, so not
            # with a Generator the caller keeps using: that takes the loop)
            return chosen.run_trials([algorithm], [env], [seed], horizon, checkpoints)[0]
    return _protocol_loop(algorithm, env, horizon, seed, checkpoints)


def _check_trial(algorithm: Algorithm, env: Environment, horizon: int | None,
                 checkpoints: np.ndarray | None) -> tuple[int | None, np.ndarray | None]:
    """Refuse a trial that cannot run, before any work; the validated horizon and
    checkpoints."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"algorithm must be a banditkit Algorithm, got {type(algorithm).__name__}")
    if not isinstance(env, Environment):
        raise TypeError(f"env must be a banditkit Environment, got {type(env).__name__}")
    if algorithm.n_arms != env.n_arms:
        raise ValueError(f"algorithm has {algorithm.n_arms} arms but env has {env.n_arms}")
    if algorithm.n_costs and getattr(env, "n_costs", 0) != algorithm.n_costs:
        raise ValueError(f"algorithm observes m = {algorithm.n_costs} cost(s) per pull but env "
                         f"has {getattr(env, 'n_costs', 0)}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
        own = getattr(algorithm, "horizon", None)
        if algorithm.kind == "regret" and isinstance(own, int) and horizon > own:
            raise ValueError(f"horizon = {horizon} exceeds the {own} pulls that "
                             f"{type(algorithm).__name__} was built for (its own horizon T): "
                             "it would stop early and leave the rest of the run unplayed")
    elif not algorithm.stops_by_itself:
        raise ValueError(f"simulate needs a horizon for {type(algorithm).__name__}: it does "
                         "not stop by itself (pass horizon=T)")
    if checkpoints is not None:
        checkpoints = check_checkpoints(checkpoints, horizon)
    return horizon, checkpoints


def trials_engine(algorithms: Sequence[Algorithm], envs: Sequence[Environment],
                  horizon: int | None) -> Engine | None:
    """The lock-step engine that runs these trials together, or ``None``: the engine the first
    algorithm declares, when it has ``run_trials`` and every algorithm is fresh and of the
    first one's class (one factory's products)."""
    if not algorithms:
        return None
    first = algorithms[0]
    if not all(type(a) is type(first) and a.fresh for a in algorithms):
        return None
    chosen = first.engine(envs[0], horizon)
    return chosen if chosen is not None and chosen.run_trials is not None else None


def run_trials(algorithms: Sequence[Algorithm], envs: Sequence[Environment],
               seeds: Sequence[SeedLike], *, horizon: int | None = None,
               checkpoints: np.ndarray | None = None, engine: str = "auto") -> list[Trial]:
    """Trial ``i`` of ``algorithms[i]`` on ``envs[i]`` with noise seed ``seeds[i]``: each equal
    to ``simulate(algorithms[i], envs[i], horizon=horizon, seed=seeds[i],
    checkpoints=checkpoints, engine=engine)``, through a lock-step engine
    (:func:`trials_engine`) when the algorithms declare one and ``engine="auto"``.

    The algorithms are fresh and built by one factory with the same parameters (each its own
    ξ); everything is validated before any trial runs.
    """
    engine = check_engine(engine)
    if not len(algorithms) == len(envs) == len(seeds):
        raise ValueError(f"algorithms, envs and seeds must have the same length, got "
                         f"{len(algorithms)}, {len(envs)} and {len(seeds)}")
    checked = None
    for algorithm, env in zip(algorithms, envs, strict=True):
        horizon_i, checked = _check_trial(algorithm, env, horizon, checkpoints)
        if horizon_i is not None:
            check_memory(algorithm, horizon_i, executions=len(algorithms))
    horizon = None if horizon is None else check_positive_int(horizon, "horizon")
    chosen = trials_engine(algorithms, envs, horizon) if engine == "auto" else None
    if chosen is not None and chosen.run_trials is not None and (
            len(algorithms) > 1 or chosen.run is None):
        return chosen.run_trials(algorithms, envs, seeds, horizon, checked)
    return [simulate(a, e, horizon=horizon, seed=s, checkpoints=checked, engine=engine)
            for a, e, s in zip(algorithms, envs, seeds, strict=True)]


def simulate_trials(factory: Callable[[Environment, np.random.Generator], Algorithm],
                    env: Environment | Sequence[Environment], *, n_trials: int | None = None,
                    seed: int = 0, horizon: int | None = None,
                    checkpoints: np.ndarray | None = None, engine: str = "auto",
                    rngs: Sequence[np.random.Generator] | None = None,
                    seeds: Sequence[SeedLike] | None = None) -> list[Trial]:
    """Run the trials of one point: the public way to run many trials of one algorithm.

    Trial ``i`` is ``simulate(factory(env_i, ξ_i), env_i, horizon=horizon, seed=noise_i,
    checkpoints=checkpoints, engine=engine)``; with ``engine="auto"`` the trials run together
    through the algorithm's lock-step engine when it declares one (:mod:`banditkit.engines`),
    else one by one through :func:`simulate` (its compiled kernel or block driver, if any). The
    numbers are the same either way.

    Parameters
    ----------
    factory : callable
        ``factory(env, rng)`` returning a fresh algorithm whose internal randomness ξ is
        ``rng`` (use ``functools.partial`` to fix its parameters).
    env : Environment or sequence of Environment
        One environment for every trial, or one per trial.
    n_trials : int, optional
        Number of trials (default: the number of environments, or of ``seeds``, given).
    seed : int
        Root seed: trial ``i`` has ξ = ``stream(seed, "trials", i, "algorithm")`` and noise
        ``derive_seed(seed, "trials", i, STREAMS["environment"])`` (:mod:`banditkit.rng`).
    horizon, checkpoints
        As in :func:`simulate`.
    engine : {"auto", "reference"}
        As in :func:`simulate`.
    rngs, seeds : sequences, optional
        Explicit ξ Generators and noise seeds, one per trial, instead of those derived from
        ``seed`` (the figure runner passes its own streams).

    Returns
    -------
    list of Trial
    """
    engine = check_engine(engine)
    envs = [env] if isinstance(env, Environment) else list(env)
    if n_trials is None:
        n_trials = max((len(x) for x in (envs, rngs, seeds) if x is not None), default=1)
    n_trials = check_positive_int(n_trials, "n_trials")
    if len(envs) == 1:
        envs = envs * n_trials
    for name, values in (("env", envs), ("rngs", rngs), ("seeds", seeds)):
        if values is not None and len(values) != n_trials:
            raise ValueError(f"{name} must hold one entry per trial ({n_trials}), got "
                             f"{len(values)}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if rngs is None:
        rngs = [stream(int(seed), "trials", i, "algorithm") for i in range(n_trials)]
    if seeds is None:
        seeds = [derive_seed(int(seed), "trials", i, STREAMS["environment"])
                 for i in range(n_trials)]
    algorithms = [factory(e, r) for e, r in zip(envs, rngs, strict=True)]
    return run_trials(algorithms, envs, seeds, horizon=horizon, checkpoints=checkpoints,
                      engine=engine)


def _protocol_loop(algorithm: Algorithm, env: Environment, horizon: int | None,
                   seed: SeedLike, checkpoints: np.ndarray | None) -> Trial:
    """The reference engine: ``next_batch`` / ``pull`` / ``observe`` until the algorithm stops
    or the horizon is reached."""
    rng = as_generator(seed)
    start = time.perf_counter()
    t = 0
    stopped = cut = False
    empty = 0
    while horizon is None or t < horizon:
        batch = algorithm.next_batch()
        if batch is None:
            stopped = True
            break
        if batch.n_pulls == 0:
            empty += 1
            if empty > _MAX_EMPTY_BATCHES:
                raise RuntimeError(f"{type(algorithm).__name__} asked for {empty} empty batches "
                                   "in a row")
        else:
            empty = 0
        if horizon is not None and t + batch.n_pulls > horizon:
            batch = batch.truncated(horizon - t)
            cut = True
        outcome = env.pull(batch, rng, t)
        algorithm.observe(batch, outcome.rewards, outcome.costs)
        t += batch.n_pulls
    if not (stopped or cut) and t == horizon and getattr(algorithm, "remaining", None) == 0:
        # the horizon came with the end of a whole batch and a fixed-budget identifier has no
        # pull left: it has stopped all the same (read from its budget, not by asking again,
        # which would advance a sequential identifier's state past the run); one cut
        # mid-batch has not
        stopped = True
    seconds = time.perf_counter() - start

    log = algorithm.decisions
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else max(t, 1))
    checkpoints = np.asarray(checkpoints, dtype=np.int64)

    regret = violation = None
    if algorithm.kind == "regret":
        per_run, run_counts = _per_run(log, env, env.regret)
        regret = _cumulative_at(per_run, run_counts, checkpoints)
    if env.n_costs:
        per_run, run_counts = _per_run(log, env, env.violation)
        violation = np.max(np.column_stack([
            _cumulative_at(per_run[:, i], run_counts, checkpoints)
            for i in range(env.n_costs)]), axis=1)

    recommendation = algorithm.recommendation
    correct = None
    if algorithm.kind == "identification":
        correct = recommendation is not None and recommendation == env.best_item(horizon)
    return Trial(
        counts=Batch(*log.runs()).allocation(env.n_arms), n_pulls=t, decisions=log,
        checkpoints=checkpoints, regret=regret, violation=violation,
        recommendation=recommendation, correct=correct, stopped=stopped,
        n_batches=log.n_batches, seconds=seconds, info=algorithm.info)


def _per_run(log: DecisionLog, env: Environment,
             metric: Callable[[Batch, int], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A per-run metric (regret, violation) over the whole decision record, with run lengths.

    Without strategies the merged runs are scored in one call (a sequential policy's thousands
    of one-pull batches cost one vectorised call). Strategies differ per batch, so batches that
    carry one are scored batch by batch.
    """
    strategies = log.strategies()
    if strategies is None:
        arms, counts = log.runs()
        return metric(Batch(arms, counts), 0), counts
    if strategies.shape[0] != log.n_batches:
        raise ValueError("either every batch carries a strategy or none does")
    values, counts, t0 = [], [], 0
    for batch in log.batches():
        values.append(metric(batch, t0))
        counts.append(batch.counts)
        t0 += batch.n_pulls
    return np.concatenate(values), np.concatenate(counts)
