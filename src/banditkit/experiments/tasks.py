"""Trials as tasks: the seeds of a trial, the unit of work sent to a backend, and its execution.

Seeds (DESIGN.md, "Randomness") derive from the run's root seed and the trial's place in the
figure, never from the algorithm's name (common random numbers across algorithms) nor from which
worker runs it:

* algorithm stream ξ: ``stream(seed, figure, point, trial, "algorithm")`` (keyed by the pair
  ``trial // 2`` instead for a ``paired`` spec, so both executions of a pair share ξ);
* environment noise: the ``SeedSequence`` of ``stream(seed, figure, point, trial,
  "environment")`` (:func:`noise_seed`);
* instance: ``stream(seed, figure, point, "instance")``, or keyed by the trial too when the spec
  draws a new instance per trial, or by the figure alone (``stream(seed, figure, "instance")``)
  when its points share their random draws (``shared_instance``).

A task is all trials of one (point, algorithm) when the algorithm declares a lock-step engine
(:mod:`banditkit.engines`: the runner asks one algorithm of the point), one trial otherwise.
Trials run through :func:`banditkit.simulate` and :func:`banditkit.simulate.run_trials`, so
each takes the fastest exact engine its algorithm declares; a spec names no engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..blas import single_threaded_blas
from ..envs.base import Environment
from ..rng import STREAMS, derive_seed, stream
from ..simulate import run_trials, simulate, trials_engine
from ..trial import Trial
from .records import TrialRecord, failed_record, record_from_trial
from .spec import FigureSpec

__all__ = ["Task", "algorithm_rng", "execute", "instance_rng", "make_tasks", "noise_seed",
           "run_grouped"]


def algorithm_rng(seed: int, figure: str, point: int, trial: int) -> np.random.Generator:
    """The algorithm's internal randomness ξ of one trial."""
    return stream(seed, figure, point, trial, "algorithm")


def noise_seed(seed: int, figure: str, point: int, trial: int) -> np.random.SeedSequence:
    """The environment noise seed of one trial (same as ``stream(..., "environment")``)."""
    return derive_seed(seed, figure, point, trial, STREAMS["environment"])


def instance_rng(seed: int, figure: str, point: int, trial: int | None) -> np.random.Generator:
    """The stream a random instance is drawn from (``trial=None``: one instance per point)."""
    if trial is None:
        return stream(seed, figure, point, "instance")
    return stream(seed, figure, point, trial, "instance")


@dataclass(frozen=True)
class Task:
    """Trials ``trials`` of algorithm number ``algorithm`` at sweep point ``point``.

    ``spec_id`` identifies the spec's content (its fingerprint), so that a worker caching
    environments never mixes up two specs of the same name (a figure and its quick version).
    """

    point: int
    algorithm: int
    trials: tuple[int, ...]
    seed: int
    spec_id: str


def make_tasks(spec: FigureSpec, seed: int, todo: Iterable[tuple[int, int, int]],
               spec_id: str) -> list[Task]:
    """Group ``(point, algorithm index, trial)`` triples into tasks: one per trial, or one per
    (point, algorithm) for lock-step algorithms; with ``spec.chunk``, runs of at most
    ``chunk`` trials of one (point, algorithm)."""
    groups: dict[tuple[int, int], list[int]] = {}
    tasks = []
    grouped: dict[tuple[int, int], bool] = {}
    for point, algo, trial in sorted(todo):
        if (point, algo) not in grouped:
            grouped[point, algo] = _grouped(spec, seed, point, algo, spec_id)
        if grouped[point, algo]:
            groups.setdefault((point, algo), []).append(trial)
        else:
            tasks.append(Task(point, algo, (trial,), seed, spec_id))
    size = spec.chunk
    for (p, a), trials in groups.items():
        step = len(trials) if size is None else size
        tasks += [Task(p, a, tuple(trials[i:i + step]), seed, spec_id)
                  for i in range(0, len(trials), step)]
    return sorted(tasks, key=lambda t: (t.point, t.algorithm, t.trials))


def _grouped(spec: FigureSpec, seed: int, point: int, algo: int, spec_id: str) -> bool:
    """Whether the trials of (point, algorithm) run as one task: a spec's own lock-step
    function or ``chunk``, or an algorithm that declares a lock-step engine
    (:func:`banditkit.simulate.trials_engine`), asked of the point's first trial's algorithm
    (built here once; anything it raises is left for the trial to record)."""
    a = spec.algorithms[algo]
    if a.lockstep is not None or spec.chunk is not None:
        return True
    if a.simulator is not None:
        return False
    try:
        task = Task(point, algo, (0,), seed, spec_id)
        env = _environment(spec, task, 0)
        params = spec.algorithm_params(a, spec.points[point])
        algorithm = a.factory(env, algorithm_rng(seed, spec.name, point, spec.xi_trial(0)),
                              **params)
        return trials_engine([algorithm], [env], spec.horizon_at(spec.points[point])) \
            is not None
    except Exception:  # the trial itself records what went wrong
        return False


# Environments built in this process, so that the trials of one point share one instance
# object instead of rebuilding it (instances may be costly: designs, random arm sets).
_ENV_CACHE: dict[tuple[str, int, int], Environment] = {}
_ENV_CACHE_SIZE = 8


def _environment(spec: FigureSpec, task: Task, trial: int) -> Environment:
    seed, point = task.seed, task.point
    params = spec.env_params(spec.points[point])
    figure = spec.instance_of or spec.name  # whose instance streams
    if spec.instance_per_trial:
        return spec.make_env(instance_rng(seed, figure, point, trial), **params)
    key = (task.spec_id, seed, point)
    env = _ENV_CACHE.get(key)
    if env is None:
        rng = (stream(seed, figure, "instance") if spec.shared_instance
               else instance_rng(seed, figure, point, None))
        env = spec.make_env(rng, **params)
        if len(_ENV_CACHE) >= _ENV_CACHE_SIZE:
            _ENV_CACHE.pop(next(iter(_ENV_CACHE)))
        _ENV_CACHE[key] = env
    return env


def execute(spec: FigureSpec, task: Task) -> list[TrialRecord]:
    """Run one task; a trial that raises becomes a ``"failed"`` record, never an exception.

    Runs with one BLAS thread (:mod:`banditkit.blas`), so no backend changes a number.
    """
    with single_threaded_blas():
        return _execute(spec, task)


def _execute(spec: FigureSpec, task: Task) -> list[TrialRecord]:
    algo = spec.algorithms[task.algorithm]
    point = spec.points[task.point]
    params = spec.algorithm_params(algo, point)
    horizon = spec.horizon_at(point)
    checkpoints = spec.checkpoint_times(point)
    if algo.lockstep is not None:
        return _execute_lockstep(spec, task, params, horizon, checkpoints)
    if algo.simulator is None and len(task.trials) > 1:
        grouped = _execute_engine(spec, task, params, horizon, checkpoints)
        if grouped is not None:
            return grouped
    run = simulate if algo.simulator is None else algo.simulator
    records = []
    for i in task.trials:
        start = time.perf_counter()
        try:
            env = _environment(spec, task, i)
            rng = algorithm_rng(task.seed, spec.name, task.point, spec.xi_trial(i))
            algorithm = algo.factory(env, rng, **params)
            result = run(algorithm, env, horizon=horizon,
                         seed=noise_seed(task.seed, spec.name, task.point, i),
                         checkpoints=checkpoints)
            records.append(_record(spec, task.point, algo.name, i, result, env))
        except Exception as error:  # recorded with its traceback; the run goes on
            records.append(failed_record(task.point, algo.name, i, error,
                                         time.perf_counter() - start))
    return records


def _record(spec: FigureSpec, point: int, algorithm: str, trial: int, result: Trial,
            env: Environment) -> TrialRecord:
    """The record of a finished trial, with what the spec keeps (decision logs, instance
    facts)."""
    record = record_from_trial(point, algorithm, trial, result,
                               decisions=spec.store_decisions)
    if spec.instance_facts is not None:
        record.info["instance"] = {str(k): float(v)
                                   for k, v in dict(spec.instance_facts(env)).items()}
    if spec.trial_facts is not None:
        record.info["facts"] = {str(k): float(v)
                                for k, v in dict(spec.trial_facts(result, env)).items()}
    return record


def run_grouped(factory: Callable[..., Any], envs: Sequence[Environment],
                rngs: Sequence[np.random.Generator], seeds: Sequence[int], horizon: int | None,
                checkpoints: np.ndarray | None, **params: Any) -> list[Trial]:
    """A lock-step function that runs a point's trials one after another in one task.

    ``AlgorithmSpec(..., lockstep=functools.partial(run_grouped, factory))`` keeps the trials of
    a fixed instance together, so a per-process memo (the greedy phases of XY-adaptive, the
    designs of RAGE) is computed once per point instead of once per worker. Each trial is
    exactly ``simulate(factory(envs[i], rngs[i], **params), envs[i], seed=seeds[i], ...)``.
    """
    return [simulate(factory(env, rng, **params), env, horizon=horizon, seed=seed,
                     checkpoints=checkpoints)
            for env, rng, seed in zip(envs, rngs, seeds, strict=True)]


def _execute_engine(spec: FigureSpec, task: Task, params: dict, horizon: int | None,
                    checkpoints: np.ndarray | None) -> list[TrialRecord] | None:
    """The task's trials through their algorithm's lock-step engine (:func:`run_trials`), or
    ``None`` when it declares none for them (the trials then run one by one)."""
    algo = spec.algorithms[task.algorithm]
    start = time.perf_counter()
    try:
        envs = [_environment(spec, task, i) for i in task.trials]
        algorithms = [algo.factory(env, algorithm_rng(task.seed, spec.name, task.point,
                                                      spec.xi_trial(i)), **params)
                      for env, i in zip(envs, task.trials, strict=True)]
        if trials_engine(algorithms, envs, horizon) is None:
            return None
        seeds = [noise_seed(task.seed, spec.name, task.point, i) for i in task.trials]
        results = run_trials(algorithms, envs, seeds, horizon=horizon, checkpoints=checkpoints)
        return [_record(spec, task.point, algo.name, i, r, env)
                for i, r, env in zip(task.trials, results, envs, strict=True)]
    except Exception as error:  # the whole group failed: every trial of it is recorded
        seconds = time.perf_counter() - start
        return [failed_record(task.point, algo.name, i, error, seconds) for i in task.trials]


def _execute_lockstep(spec: FigureSpec, task: Task, params: dict, horizon: int | None,
                      checkpoints: np.ndarray | None) -> list[TrialRecord]:
    algo = spec.algorithms[task.algorithm]
    start = time.perf_counter()
    try:
        envs = [_environment(spec, task, i) for i in task.trials]
        rngs = [algorithm_rng(task.seed, spec.name, task.point, spec.xi_trial(i))
                for i in task.trials]
        seeds = [noise_seed(task.seed, spec.name, task.point, i) for i in task.trials]
        results: Sequence[Trial] = algo.lockstep(envs, rngs, seeds, horizon, checkpoints,
                                                 **params)
        if len(results) != len(task.trials):
            raise RuntimeError(f"lockstep function of {algo.name!r} returned {len(results)} "
                               f"trials for {len(task.trials)} seeds")
        return [_record(spec, task.point, algo.name, i, r, env)
                for i, r, env in zip(task.trials, results, envs, strict=True)]
    except Exception as error:  # the whole group failed: every trial of it is recorded
        seconds = time.perf_counter() - start
        return [failed_record(task.point, algo.name, i, error, seconds) for i in task.trials]
