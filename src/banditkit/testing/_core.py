"""What every check of :func:`banditkit.testing.check_algorithm` shares: the promises with their
rules, the failure that names one, and the protocol loop that keeps every outcome and turns a raw
exception of the algorithm into the failure of the promise being checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..protocol import Algorithm, ArmOutOfRangeError, Batch, IIDBatch

#: The promises :func:`check_algorithm` checks, in the order it checks them, each with its rule.
PROMISES: dict[str, str] = {
    "builds": "factory(rng) returns a fresh Algorithm with the environment's number of arms",
    "no global randomness": "numpy's legacy global random state and Python's random module "
                            "are left untouched; draw only from the ξ Generator given",
    "randomness from ξ only": "no Generator made from OS entropy or from a constant: seed "
                              "any extra Generator from ξ (xi.spawn(1)[0], or ξ's draws)",
    "runs without error": "next_batch(), observe() and recommendation raise nothing on the "
                          "outcomes the environment gives",
    "arms in range": "every batch asks for arms in [0, n_arms)",
    "decisions logged": "algorithm.decisions holds exactly the batches observed, in order "
                        "(call Algorithm.observe, which records them)",
    "determinism": "the same ξ seed and noise seed give the same batches and recommendation",
    "counts consistent with pulls": "algorithm.t is the number of pulls observed, and a "
                                    "per-arm count it exposes (pulls, counts) is the pulls "
                                    "of each arm observed",
    "recommendations in range": "recommendation is None or an item index in [0, n_items) "
                                "(n_arms without items), and an identifier that has stopped "
                                "recommends one",
    "rewards at the ends of their range": "runs in which every reward is the lowest (0) or "
                                          "the highest (1) of reward_range raise nothing and "
                                          "keep the promises above",
    "replay": "a rebuilt algorithm told the stored outcomes asks the stored batches again "
              "(what Experiment.open does); no state outside the object",
    "copy and pickle": "copy.deepcopy and a pickle round trip of a running algorithm ask the "
                       "same batches and recommend the same arm as the original",
    "parameters kept": "a constructor argument kept as an attribute of the same name has the "
                       "same value after a run (state lives in other attributes)",
    "refuses unasked batches": "observe() of a batch not asked for, or with none pending, "
                               "raises ValueError and changes nothing",
    "refuses impossible sums": "observe() of non-finite sums, the wrong number of sums, or sums "
                               "outside reward_range × pulls raises ValueError and changes "
                               "nothing",
    "stops on an easy instance": "an identifier (one that stops by itself) stops within "
                                 "stop_within pulls on the environment given",
    "same trials everywhere": "simulate_trials (the declared engines), the protocol loop and "
                              "worker processes give the same trials",
}


def fail(promise: str, detail: str) -> AssertionError:
    """The failure naming ``promise``, what was seen, and the rule."""
    return AssertionError(f"check_algorithm: promise {promise!r} is broken: {detail} "
                          f"(rule: {PROMISES[promise]})")


def guarded(promise: str, name: str, what: str, call: Callable[[], Any]) -> Any:
    """``call()``, with a raw exception of the algorithm turned into the failure of
    ``promise`` (an arm out of range is always "arms in range")."""
    try:
        return call()
    except AssertionError:
        raise
    except ArmOutOfRangeError as error:
        raise fail("arms in range", f"{name}.{what}: {error}") from error
    except ValueError as error:
        if "non-negative indices" in str(error):  # Batch's refusal of a negative arm
            raise fail("arms in range", f"{name}.{what} built a batch with a negative arm: "
                       f"{error}") from error
        raise fail(promise, f"{name}.{what} raised ValueError: {error}") from error
    except Exception as error:
        raise fail(promise, f"{name}.{what} raised {type(error).__name__}: {error}") from error


def n_items(env: Environment) -> int:
    """What a recommendation indexes: the items of a (transductive) linear environment, else
    the arms."""
    return int(getattr(env, "n_items", env.n_arms))


def check_recommendation(algorithm: Algorithm, items: int, promise: str, name: str,
                         stopped: bool) -> None:
    """The recommendation is None or an index in [0, items); an identifier that stopped by
    itself recommends one."""
    rec = guarded(promise, name, "recommendation", lambda: algorithm.recommendation)
    if rec is None:
        if stopped and algorithm.kind == "identification":
            raise fail("recommendations in range", f"{name} stopped after {algorithm.t} pulls "
                       "and recommends nothing (None)")
        return
    if isinstance(rec, (bool, np.bool_)) or not isinstance(rec, (int, np.integer)):
        raise fail("recommendations in range", f"{name} recommends {rec!r}, not an index")
    if not 0 <= int(rec) < items:
        raise fail("recommendations in range", f"{name} recommends {int(rec)}, outside "
                   f"[0, {items}) after {algorithm.t} pulls")


@dataclass
class Run:
    """One run of the protocol loop, with each batch's outcome kept for replay."""

    algorithm: Algorithm
    batches: list[Batch]
    rewards: list[np.ndarray]
    costs: list[np.ndarray | None]
    n_pulls: int
    next_batch: Batch | None  # what it asks after the run (None: stopped or cut)

    @property
    def stopped(self) -> bool:
        """Whether the algorithm asked for nothing more by itself."""
        return self.next_batch is None and (not self.batches
                                            or self.batches[-1].n_pulls > 0)


def run(algorithm: Algorithm, env: Environment, horizon: int, noise: int, *,
        constant: float | None = None, promise: str = "runs without error") -> Run:
    """The protocol loop of :func:`banditkit.simulate`, keeping every outcome; with
    ``constant``, every reward is that value (costs still come from ``env``). A raw exception of
    the algorithm is the failure of ``promise``; every recommendation on the way is checked."""
    rng = np.random.Generator(np.random.PCG64(noise))
    name = type(algorithm).__name__
    items = n_items(env)
    batches: list[Batch] = []
    rewards: list[np.ndarray] = []
    costs: list[np.ndarray | None] = []
    t, cut, empty = 0, False, 0
    while t < horizon:
        batch = guarded(promise, name, "next_batch()", algorithm.next_batch)
        if batch is None:
            break
        empty = empty + 1 if batch.n_pulls == 0 else 0
        if empty > 1000:
            raise fail("determinism", f"{name} asked for {empty} empty batches in a row")
        if t + batch.n_pulls > horizon:
            batch, cut = batch.truncated(horizon - t), True
        outcome = env.pull(batch, rng, t)
        sums = np.array(outcome.rewards, dtype=float)
        if constant is not None:
            sums = constant * batch.counts.astype(float)
        guarded(promise, name, "observe()",
                lambda b=batch, s=sums, c=outcome.costs: algorithm.observe(b, s, c))
        check_recommendation(algorithm, items, promise, name, stopped=False)
        batches.append(batch)
        rewards.append(sums)
        costs.append(None if outcome.costs is None else np.array(outcome.costs, dtype=float))
        t += batch.n_pulls
        if cut:
            break
    after = None if cut else guarded(promise, name, "next_batch()", algorithm.next_batch)
    done = Run(algorithm, batches, rewards, costs, t, after)
    check_recommendation(algorithm, items, promise, name, stopped=not cut and after is None
                         and t < horizon)
    return done


def same_batch(a: Batch | None, b: Batch | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, IIDBatch) and isinstance(b, IIDBatch):
        return a.n_pulls == b.n_pulls and a.is_prefix_of(b)
    if a.n_pulls != b.n_pulls or not (np.array_equal(a.arms, b.arms)
                                      and np.array_equal(a.counts, b.counts)):
        return False
    if (a.strategy is None) != (b.strategy is None):
        return False
    return a.strategy is None or bool(np.array_equal(a.strategy, b.strategy))


def describe(batch: Batch | None) -> str:
    if batch is None:
        return "None (stop)"
    if batch.n_runs > 6:
        return f"a batch of {batch.n_pulls} pulls in {batch.n_runs} runs"
    return f"runs arms={batch.arms.tolist()} counts={batch.counts.tolist()}"


def first_difference(a: list[Batch], b: list[Batch]) -> int | None:
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b) or not same_batch(a[i], b[i]):
            return i
    return None
