"""Drive one algorithm against one environment: the simulation side of the ask/tell protocol."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .envs.base import Environment
from .protocol import Algorithm, Batch, DecisionLog
from .rng import SeedLike, as_generator
from .trial import Trial
from .validation import check_positive_int

__all__ = ["default_checkpoints", "simulate"]

_MAX_EMPTY_BATCHES = 10_000


def default_checkpoints(horizon: int, n: int = 100) -> np.ndarray:
    """``n`` evenly spaced checkpoints in (0, horizon], always ending at ``horizon``."""
    horizon = check_positive_int(horizon, "horizon")
    # ⌈horizon·i/n⌉ in integers: floats would miss the horizon itself beyond 2⁵³
    return np.unique(np.array([-(-horizon * i // n) for i in range(1, n + 1)], dtype=np.int64))


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
             seed: SeedLike = 0, checkpoints: np.ndarray | None = None) -> Trial:
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
        Times at which cumulative regret (and violation) are recorded; defaults to 100 evenly
        spaced times up to ``horizon`` (or up to the pulls made, when there is no horizon).

    Returns
    -------
    Trial
    """
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
    if not (stopped or cut) and t == horizon and algorithm.stops_by_itself:
        # the horizon came with the end of a whole batch: a fixed-budget identifier whose
        # budget is the horizon has stopped all the same (its next ask is None); one cut
        # mid-batch, or asking for more, has not
        stopped = algorithm.next_batch() is None
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
