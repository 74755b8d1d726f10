"""The checks of :func:`banditkit.testing.check_algorithm` on what an algorithm returns (issue 36
§3), beside those on the protocol: counts that agree with the pulls, rewards at the ends of
their range, a copy or a pickle that behaves as the original, constructor arguments left as
given, and an identifier that stops."""

from __future__ import annotations

import copy
import inspect
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..protocol import Algorithm
from ..simulate import simulate
from ._core import Run, describe, fail, guarded, n_items, run, same_batch

__all__ = ["check_copies", "check_counts", "check_ends", "check_parameters", "check_stops",
           "parameters"]

#: Attributes that, when an algorithm has them as one number per arm, count its pulls.
COUNT_ATTRIBUTES = ("pulls", "counts")


def check_counts(done: Run, n_arms: int, name: str, what: str = "") -> None:
    """``t`` and any per-arm count the algorithm exposes agree with the pulls it observed."""
    alg = done.algorithm
    if alg.t != done.n_pulls:
        raise fail("counts consistent with pulls", f"{name}.t is {alg.t} after {done.n_pulls} "
                   f"pulls{what}")
    observed = np.zeros(n_arms, dtype=np.int64)
    for batch in done.batches:
        observed += batch.allocation(n_arms)
    for attr in COUNT_ATTRIBUTES:
        value = vars(alg).get(attr)
        if not isinstance(value, np.ndarray) or value.shape != (n_arms,):
            continue
        if not np.array_equal(value, observed):
            raise fail("counts consistent with pulls", f"{name}.{attr} is "
                       f"{_show(value)} but the pulls observed{what} are {observed.tolist()}")


def _show(value: np.ndarray) -> str:
    return str(value.tolist()) if value.size <= 12 else f"an array summing to {value.sum():g}"


def check_ends(build: Callable[[], Algorithm], env: Environment, horizon: int, noise: int,
               name: str) -> None:
    """Runs where every reward is the lowest, then the highest, of ``reward_range`` ([0, 1]
    when the algorithm states none)."""
    promise = "rewards at the ends of their range"
    probe = build()
    low, high = probe.reward_range if probe.reward_range is not None else (0.0, 1.0)
    for value in (low, high):
        alg = guarded("builds", name, "factory(rng)", build)
        done = run(alg, env, horizon, noise, constant=float(value), promise=promise)
        check_counts(done, env.n_arms, name, f" when every reward is {value:g}")


def parameters(algorithm: Algorithm) -> dict[str, Any]:
    """The constructor's arguments that the algorithm keeps as attributes of the same name,
    copied (plain values and arrays only: a Generator or an environment is state)."""
    try:
        signature = inspect.signature(type(algorithm).__init__)
    except (TypeError, ValueError):
        return {}
    own = vars(algorithm)
    kept = {}
    for p in list(signature.parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name not in own:
            continue
        value = own[p.name]
        if _plain(value) and _may_be_the_argument(p.default, value):
            kept[p.name] = copy.deepcopy(value)
    return kept


def _may_be_the_argument(default: object, value: object) -> bool:
    """Whether an attribute can hold the argument of the same name: not when its kind differs
    from the default's (a counter ``forced = 0`` beside an argument ``forced="sqrt"``)."""
    if default is inspect.Parameter.empty or default is None:
        return True
    numbers = (int, float, np.number)
    if isinstance(default, numbers) and not isinstance(default, bool):
        return isinstance(value, numbers) and not isinstance(value, bool)
    if isinstance(default, (str, bool, tuple, list)):
        return isinstance(value, type(default)) or (
            isinstance(default, (tuple, list)) and isinstance(value, (tuple, list, np.ndarray)))
    return True


def _plain(value: object) -> bool:
    if value is None or isinstance(value, (bool, int, float, str, np.number, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    return False


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f")))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and bool(a == b)


def check_parameters(before: dict[str, Any], algorithm: Algorithm, name: str) -> None:
    """Each kept constructor argument has the value it had when the algorithm was built."""
    own = vars(algorithm)
    for key, value in before.items():
        now = own.get(key, "<deleted>")
        if not _same(value, now):
            raise fail("parameters kept", f"{name}.{key} was {value!r} when built and is "
                       f"{now!r} after {algorithm.t} pulls")


def check_copies(build: Callable[[], Algorithm], first: Run, name: str) -> None:
    """Replay the first half of ``first``; a deep copy and a pickle round trip of the algorithm
    then, told the stored outcomes of the second half, ask its batches and recommend its arm."""
    promise = "copy and pickle"
    half = len(first.batches) // 2
    alg = build()
    for i in range(half):
        asked = alg.next_batch()
        assert asked is not None  # replay has checked it asks the stored batches
        stored = first.batches[i]
        alg.observe(asked.truncated(stored.n_pulls) if asked.n_pulls > stored.n_pulls
                    else asked, first.rewards[i], first.costs[i])
    copies = {"copy.deepcopy": guarded(promise, name, "copy.deepcopy", lambda: copy.deepcopy(alg))}
    if _importable(type(alg)):  # a class defined in a notebook or __main__ pickles by no name
        copies["a pickle round trip"] = guarded(promise, name, "pickle",
                                                lambda: pickle.loads(pickle.dumps(alg)))
    for how, other in copies.items():
        for i in range(half, len(first.batches)):
            stored = first.batches[i]
            asked = guarded(promise, name, "next_batch()", other.next_batch)
            if asked is not None and asked.n_pulls > stored.n_pulls:
                asked = asked.truncated(stored.n_pulls)
            if not same_batch(asked, stored):
                raise fail(promise, f"{how} of {name} after {half} batches asks "
                           f"{describe(asked)} at batch {i} where the original asked "
                           f"{describe(stored)}")
            assert asked is not None
            guarded(promise, name, "observe()",
                    lambda o=other, a=asked, r=first.rewards[i], c=first.costs[i]:
                    o.observe(a, r, c))
        rec = guarded(promise, name, "recommendation", lambda o=other: o.recommendation)
        if rec != first.algorithm.recommendation:
            raise fail(promise, f"{how} of {name} recommends {rec} where the original "
                       f"recommends {first.algorithm.recommendation}")


def _importable(cls: type) -> bool:
    try:
        pickle.dumps(cls)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def check_stops(build: Callable[[], Algorithm], env: Environment, stop_within: int,
                noise: int, name: str) -> None:
    """An identifier asks for nothing more within ``stop_within`` pulls of ``env``."""
    promise = "stops on an easy instance"
    alg = build()
    if not alg.stops_by_itself:
        return
    # simulate takes the fastest engine: a compiled identifier's cap costs little
    trial = guarded(promise, name, "simulate()",
                    lambda: simulate(alg, env, horizon=stop_within, seed=noise))
    if not trial.stopped:
        raise fail(promise, f"{name} had not stopped after {trial.n_pulls} pulls of {env!r} "
                   f"(stop_within={stop_within})")
    rec, items = trial.recommendation, n_items(env)
    if rec is None or not 0 <= int(rec) < items:
        raise fail("recommendations in range", f"{name} stopped after {trial.n_pulls} pulls "
                   f"recommending {rec!r}, not an index in [0, {items})")
