"""A conformance kit for algorithms: does a new :class:`~banditkit.protocol.Algorithm` keep the
promises of the ask/tell protocol (DESIGN.md; issue 28 §4), and are its outputs sane (issue 36
§3)?

:func:`check_algorithm` is to a bandit algorithm what scikit-learn's ``check_estimator`` is to an
estimator: give it ``factory(rng)``, which builds a fresh algorithm whose internal randomness ξ
is the Generator ``rng``, and an environment; it runs the algorithm a few times and raises
``AssertionError`` naming the first promise it breaks, in this order (:data:`PROMISES`):

1. **builds** — ``factory(rng)`` returns a fresh :class:`Algorithm` with the environment's arms.
2. **no global randomness** — building and running it leaves numpy's legacy global state
   (``np.random.seed``/``np.random.rand``) and Python's ``random`` untouched: the same seed
   must give the same numbers whatever else runs in the process.
3. **randomness from ξ only** — it makes no Generator of its own from OS entropy or from a
   constant (``np.random.default_rng()`` or ``default_rng(0)`` instead of ``rng``): every
   ``default_rng`` call it makes while built and run under two different ξ must get different
   seeds (a Generator seeded from ξ's draws, or spawned from ξ, is fine).
4. **runs without error** — ``next_batch``, ``observe`` and ``recommendation`` raise nothing on
   the environment's outcomes. Every check turns a raw exception of the algorithm into the
   failure of the promise it was checking, so a user reads a promise, not a traceback.
5. **arms in range** — every batch asks for arms in [0, K).
6. **decisions logged** — :attr:`Algorithm.decisions` holds exactly the batches observed, in
   order (what a replicability audit compares and a trial's regret is computed from).
7. **determinism** — the same ξ seed and noise seed give the same batches, strategies and
   recommendation, run after run in one process.
8. **counts consistent with pulls** — ``t`` is the number of pulls observed, and a per-arm
   count the algorithm exposes as ``pulls`` or ``counts`` holds each arm's pulls.
9. **recommendations in range** — after every batch, ``recommendation`` is ``None`` or an
   index of an item (of an arm, without items); an identifier that stopped recommends one.
10. **rewards at the ends of their range** — two runs in which every reward is the lowest, then
    the highest value of :attr:`Algorithm.reward_range` ([0, 1] when it states none) raise
    nothing and keep promises 5, 8 and 9 (a log of an empirical variance crashes there).
11. **replay** — what :class:`banditkit.Experiment` does to reopen a file: a rebuilt algorithm
    (same ξ seed), told the stored outcomes of the stored batches (reward sums through JSON,
    an i.i.d. batch by its per-arm sums, :meth:`Algorithm.observe_arm_sums`), asks the very
    same batches, and then the same next one, while the first object still exists.
12. **copy and pickle** — ``copy.deepcopy`` and a pickle round trip of the algorithm half-way
    through the run, told the same outcomes, ask the same batches and recommend the same arm
    (the pickle only when the class itself pickles: not one defined in ``__main__``).
13. **parameters kept** — a constructor argument the algorithm keeps as an attribute of the
    same name (plain values and arrays) has its value after a run, as sklearn's
    ``check_estimator`` asks of ``get_params``: a run's state lives elsewhere.
14. **refuses unasked batches** — ``observe`` with no batch pending, or with a batch that is
    neither the pending one nor a prefix of it, raises ``ValueError`` and changes nothing (the
    algorithm then continues exactly as an untouched one).
15. **refuses impossible sums** — non-finite sums, the wrong number of sums, sums outside what
    rewards in :attr:`Algorithm.reward_range` can add up to (and costs outside
    :attr:`Algorithm.cost_range`, or missing) raise ``ValueError`` and change nothing.
16. **stops on an easy instance** — an identifier (:attr:`Algorithm.stops_by_itself`) stops
    within ``stop_within`` pulls of ``env`` (give an instance with large gaps) and recommends
    an item.
17. **same trials everywhere** — :func:`banditkit.simulate_trials` (with the engine the
    algorithm declares, lock-step or compiled), the protocol loop trial by trial, and the
    trials split over ``processes`` worker processes give the same decisions, counts, regret,
    recommendation and stopping.

The checks are black-box and cheap (a few runs of ``horizon`` pulls, and one of at most
``stop_within`` for an identifier); they test the protocol and the shape of the outputs, not
the algorithm's statistics (regret or δ-correctness are for tests against its paper).
``docs/new-algorithm.md`` walks through writing an algorithm that passes them.
"""

from __future__ import annotations

import json
import multiprocessing
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..protocol import Algorithm, Batch, DecisionLog, IIDBatch
from ..rng import STREAMS, derive_seed, stream
from ..simulate import simulate, simulate_trials
from ..trial import Trial
from ..validation import check_positive_int
from ._core import PROMISES, Run, describe, fail, first_difference, guarded, run, same_batch
from .outputs import (
    check_copies,
    check_counts,
    check_ends,
    check_parameters,
    check_stops,
    parameters,
)

__all__ = ["PROMISES", "CheckReport", "check_algorithm"]

@dataclass(frozen=True)
class CheckReport:
    """What :func:`check_algorithm` ran (returned when every promise holds).

    Attributes
    ----------
    name : str
        The algorithm's class name.
    promises : tuple of str
        The promises checked (keys of :data:`PROMISES`); ``"same trials everywhere"`` with
        ``processes=0`` covers engines only.
    n_batches, n_pulls : int
        Batches and pulls of the reference run.
    reads_xi : bool
        Whether the run drew from ξ (a deterministic algorithm, UCB1, does not).
    engine : str
        The engine ``simulate`` takes for this algorithm and environment ("protocol loop" if
        it declares none).
    processes : int
        Worker processes the trials were split over (0: not checked).
    """

    name: str
    promises: tuple[str, ...]
    n_batches: int
    n_pulls: int
    reads_xi: bool
    engine: str
    processes: int


class _RngCalls:
    """Records ``np.random.default_rng`` calls while installed (the usual way to make a
    Generator of one's own), and the global random states around them."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._original = np.random.default_rng

    def __enter__(self) -> _RngCalls:
        original = self._original

        def recording(seed: Any = None) -> np.random.Generator:
            if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
                self.calls.append("derived")
            elif isinstance(seed, np.random.SeedSequence):
                self.calls.append(repr((seed.entropy, seed.spawn_key)))
            elif seed is None:
                self.calls.append("os-entropy")
            else:
                self.calls.append(repr(np.asarray(seed).tolist()))
            return original(seed)

        np.random.default_rng = recording
        return self

    def __exit__(self, *exc: object) -> None:
        np.random.default_rng = self._original


def _global_states() -> tuple[Any, Any]:
    return np.random.get_state(), random.getstate()  # noqa: NPY002 (watched, not used)


def _same_global(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    (na, pa), (nb, pb) = a, b  # numpy's legacy state: (name, keys, pos, has_gauss, cached)
    return (bool(np.array_equal(na[1], nb[1])) and tuple(na[2:]) == tuple(nb[2:])
            and pa == pb)


def _xi(seed: int, which: str) -> np.random.Generator:
    return stream(seed, "check_algorithm", which, "algorithm")


def _build(factory: Callable[[np.random.Generator], Algorithm], xi: np.random.Generator,
           env: Environment) -> Algorithm:
    algorithm = guarded("builds", "factory", "(rng)", lambda: factory(xi))
    if not isinstance(algorithm, Algorithm):
        raise fail("builds", f"factory(rng) returned a {type(algorithm).__name__}")
    if algorithm.n_arms != env.n_arms:
        raise fail("builds", f"the algorithm has {algorithm.n_arms} arms, the environment "
                    f"{env.n_arms}")
    if not algorithm.fresh:
        raise fail("builds", "factory(rng) returned an algorithm that has already asked or "
                    "observed (build a new one on every call)")
    return algorithm


def _rebuild(factory: Callable[[np.random.Generator], Algorithm], seed: int,
             env: Environment) -> Algorithm:
    return _build(factory, _xi(seed, "a"), env)


def check_algorithm(factory: Callable[[np.random.Generator], Algorithm], env: Environment, *,
                    horizon: int = 200, seed: int = 0, trials: int = 2,
                    processes: int = 2, stop_within: int | None = 20_000) -> CheckReport:
    """Check that an algorithm keeps the protocol's promises (:data:`PROMISES`).

    Parameters
    ----------
    factory : callable
        ``factory(rng)`` returns a fresh algorithm whose internal randomness ξ is the
        Generator ``rng`` (e.g. ``lambda rng: MyPolicy(3, rng=rng, horizon=200)``; for a
        registered name, ``lambda rng: make_policy(name, env, rng, horizon=200)``).
    env : Environment
        An environment the algorithm runs on (small: a few arms).
    horizon : int
        Pulls per run (an identifier is cut off there if it has not stopped).
    seed : int
        Root of every ξ and noise seed the checks use.
    trials : int
        Trials run through :func:`banditkit.simulate_trials` for the last promise (≥ 1).
    processes : int
        Worker processes those trials are also split over (0 skips that part; it needs the
        ``fork`` start method, Linux's default, so the factory need not pickle).
    stop_within : int or None
        Pulls of ``env`` within which an identifier must stop ("stops on an easy instance";
        ``None`` skips that check). Give an ``env`` with large gaps.

    Returns
    -------
    CheckReport
        What was checked, when every promise holds.

    Raises
    ------
    AssertionError
        Naming the first broken promise, what was seen, and the rule.
    ValueError
        For arguments that cannot be right (before any run).
    """
    if not callable(factory):
        raise ValueError(f"factory must be callable as factory(rng), got "
                         f"{type(factory).__name__}")
    if not isinstance(env, Environment):
        raise ValueError(f"env must be a banditkit Environment, got {type(env).__name__}")
    horizon = check_positive_int(horizon, "horizon")
    trials = check_positive_int(trials, "trials")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(processes, bool) or not isinstance(processes, (int, np.integer)) or not (
            0 <= processes <= trials):
        raise ValueError(f"processes must be an integer in [0, trials = {trials}], got "
                         f"{processes!r}")
    if stop_within is not None:
        stop_within = check_positive_int(stop_within, "stop_within")
    seed = int(seed)
    noise = int(derive_seed(seed, "check_algorithm", STREAMS["environment"]).generate_state(1)[0])

    # 1-5: one reference run, watched
    before = _global_states()
    with _RngCalls() as calls_a:
        xi = _xi(seed, "a")
        xi_state = xi.bit_generator.state
        built = _build(factory, xi, env)
        kept = parameters(built)
        first = run(built, env, horizon, noise)
    if not _same_global(before, _global_states()):
        raise fail("no global randomness", f"{type(first.algorithm).__name__} changed the "
                   "global random state (np.random.* or random.*) while built and run")
    name = type(first.algorithm).__name__
    reads_xi = xi.bit_generator.state != xi_state
    with _RngCalls() as calls_b:
        run(_build(factory, _xi(seed, "b"), env), env, horizon, noise)
    if "os-entropy" in calls_a.calls:
        raise fail("randomness from ξ only", f"{name} called np.random.default_rng() without "
                   "a seed (fresh OS entropy)")
    constant = [c for c, d in zip(calls_a.calls, calls_b.calls, strict=False)
                if c == d and c != "derived"]
    if constant:
        raise fail("randomness from ξ only", f"{name} called np.random.default_rng({constant[0]}) "
                   "under two different ξ: a Generator that ignores ξ")
    _check_log(first, name)

    # 7: determinism
    again = run(_build(factory, _xi(seed, "a"), env), env, horizon, noise)
    i = first_difference(first.batches, again.batches)
    if i is not None:
        got = again.batches[i] if i < len(again.batches) else None
        want = first.batches[i] if i < len(first.batches) else None
        raise fail("determinism", f"two runs of {name} with the same ξ and noise seeds differ "
                   f"at batch {i}: {describe(want)} then {describe(got)}")
    if first.algorithm.recommendation != again.algorithm.recommendation:
        raise fail("determinism", f"two runs of {name} with the same seeds recommend "
                   f"{first.algorithm.recommendation} and {again.algorithm.recommendation}")

    # 8-10: what it returns (recommendations were checked on the way)
    check_counts(first, env.n_arms, name)
    rebuild = partial(_rebuild, factory, seed, env)
    check_ends(rebuild, env, horizon, noise, name)

    # 11: replay, as Experiment.open does, while `first` still exists
    guarded("replay", name, "replayed", lambda: _check_replay(factory, env, first, seed, name))

    # 12-13: copies, and the constructor's arguments
    check_copies(rebuild, first, name)
    check_parameters(kept, first.algorithm, name)

    # 14-15: refusals, each followed by the untouched continuation
    guarded("refuses unasked batches", name, "refusing",
            lambda: _check_refusals(factory, env, first, seed, name))

    # 16-17: an identifier stops; the same trials through every engine and worker count
    if stop_within is not None:
        check_stops(rebuild, env, stop_within, noise, name)
    engine = guarded("same trials everywhere", name, "simulated", lambda: _check_trials(
        factory, env, horizon, seed, trials, processes, name))
    promises = tuple(p for p in PROMISES if stop_within is not None
                     or p != "stops on an easy instance")
    return CheckReport(name, promises, len(first.batches), first.n_pulls, reads_xi, engine,
                       processes)


def _check_log(run: Run, name: str) -> None:
    log = run.algorithm.decisions
    expected = DecisionLog()
    for batch in run.batches:
        expected.record(batch)
    if log.n_batches != len(run.batches):
        raise fail("decisions logged", f"{name} observed {len(run.batches)} batches but its "
                    f"decisions hold {log.n_batches}")
    if not log.same_as(expected):
        arms, counts = log.runs()
        raise fail("decisions logged", f"{name}'s decisions hold {int(counts.sum())} pulls in "
                    f"{arms.size} runs, not the {run.n_pulls} pulls it observed")


def _replayed_sums(batch: Batch, rewards: np.ndarray) -> np.ndarray:
    # stored as JSON text by the live store, read back as floats
    return np.asarray(json.loads(json.dumps(rewards.tolist())), dtype=float)


def _check_replay(factory: Callable[[np.random.Generator], Algorithm], env: Environment,
                  first: Run, seed: int, name: str) -> None:
    rebuilt = _build(factory, _xi(seed, "a"), env)
    for i, (stored, rewards, costs) in enumerate(zip(first.batches, first.rewards,
                                                     first.costs, strict=True)):
        asked = rebuilt.next_batch()
        if asked is not None and asked.n_pulls > stored.n_pulls:
            asked = asked.truncated(stored.n_pulls)  # the horizon's cut, as Experiment's
        if not same_batch(asked, stored):
            raise fail("replay", f"rebuilt with the same ξ and told the stored outcomes, {name} "
                        f"asks {describe(asked)} at batch {i} where {describe(stored)} was "
                        "stored")
        assert asked is not None
        sums = _replayed_sums(asked, rewards)
        if isinstance(asked, IIDBatch) and rebuilt.observes_arm_sums and costs is None:
            rebuilt.observe_arm_sums(asked, asked.arm_sums(sums, env.n_arms),
                                     asked.allocation(env.n_arms))
        else:
            rebuilt.observe(asked, sums, costs)
    if first.next_batch is not None and not same_batch(rebuilt.next_batch(), first.next_batch):
        raise fail("replay", f"after replaying {len(first.batches)} stored batches, {name} asks "
                    f"for other pulls next than the algorithm that was not reopened")


def _continues(algorithm: Algorithm, first: Run, promise: str, name: str) -> None:
    """``algorithm`` (its first batch pending) answered as ``first`` was must ask ``first``'s
    second batch: the refusals before changed nothing."""
    algorithm.observe(first.batches[0], first.rewards[0], first.costs[0])
    want = first.batches[1] if len(first.batches) > 1 else first.next_batch
    got = algorithm.next_batch()
    if want is not None and got is not None and got.n_pulls > want.n_pulls:
        got = got.truncated(want.n_pulls)
    if not same_batch(got, want):
        raise fail(promise, f"after the refused calls {name} asks {describe(got)} for its "
                    f"second batch where an untouched one asks {describe(want)}: the refusal "
                    "changed its state")


def _feasible(algorithm: Algorithm, batch: Batch) -> tuple[np.ndarray, np.ndarray | None]:
    """Run sums (and cost sums) that rewards in the algorithm's ranges can give: a forged
    batch is then refused for being unasked, not for its sums."""
    n = batch.counts.astype(float)
    low = algorithm.reward_range[0] if algorithm.reward_range is not None else 0.0
    costs = None
    if algorithm.n_costs:
        c_low = algorithm.cost_range[0] if algorithm.cost_range is not None else 0.0
        costs = np.tile((c_low * n)[:, None], (1, algorithm.n_costs))
    return low * n, costs


def _refused(call: Callable[[], object]) -> bool:
    try:
        call()
    except ValueError:
        return True
    return False


def _check_refusals(factory: Callable[[np.random.Generator], Algorithm], env: Environment,
                    first: Run, seed: int, name: str) -> None:
    if not first.batches or first.batches[0].n_pulls == 0:
        return  # nothing was asked: nothing to forge
    stored, rewards, costs = first.batches[0], first.rewards[0], first.costs[0]
    K = env.n_arms

    alg = _build(factory, _xi(seed, "a"), env)
    promise = "refuses unasked batches"
    if not _refused(lambda: alg.observe(stored, rewards, costs)):
        raise fail(promise, f"{name} accepted an outcome with no batch pending")
    pending = alg.next_batch()
    assert pending is not None  # the reference run got a first batch from the same state
    arms, counts = pending.arms.copy(), pending.counts.copy()
    forged = [("one pull more than asked",
               Batch(arms, np.r_[counts[:-1], counts[-1] + 1], pending.strategy))]
    if K > 1:
        forged.append(("other arms than asked", Batch((arms + 1) % K, counts, pending.strategy)))
    for what, batch in forged:
        sums, cost_sums = _feasible(alg, batch)
        if not _refused(lambda b=batch, s=sums, c=cost_sums: alg.observe(b, s, c)):
            raise fail(promise, f"{name} accepted a batch with {what} "
                        f"({describe(batch)} for {describe(pending)})")
    _continues(alg, first, promise, name)

    alg = _build(factory, _xi(seed, "a"), env)
    alg.next_batch()
    promise = "refuses impossible sums"
    bad: list[tuple[str, np.ndarray, np.ndarray | None]] = [
        ("a NaN sum", np.full(stored.n_runs, np.nan), costs),
        ("one sum too many", np.r_[rewards, 0.0], costs)]
    n = stored.counts.astype(float)
    if alg.reward_range is not None:
        low, high = alg.reward_range
        bad.append((f"sums above {high:g} × pulls", (high + 1.0) * n, costs))
        bad.append((f"sums below {low:g} × pulls", (low - 1.0) * n, costs))
    if alg.n_costs:
        bad.append(("no costs", rewards, None))
        if alg.cost_range is not None and costs is not None:
            bad.append(("costs above the cost range",
                        rewards, np.full_like(costs, alg.cost_range[1] + 1.0) * n[:, None]))
    for what, sums, c in bad:
        if not _refused(lambda s=sums, c=c: alg.observe(stored, s, c)):
            raise fail(promise, f"{name} accepted {what} for {describe(stored)}")
    _continues(alg, first, promise, name)


_FORKED: dict[str, Any] = {}


def _forked_trial(i: int) -> Trial:
    """Trial ``i`` in a worker process (the state was set before the fork)."""
    spec = _FORKED
    return simulate_trials(spec["factory"], spec["env"], n_trials=1, horizon=spec["horizon"],
                           rngs=[spec["rngs"][i]], seeds=[spec["seeds"][i]])[0]


def _adapt(factory: Callable[[np.random.Generator], Algorithm], env: Environment,
           rng: np.random.Generator) -> Algorithm:
    return factory(rng)


def _check_trials(factory: Callable[[np.random.Generator], Algorithm], env: Environment,
                  horizon: int, seed: int, trials: int, processes: int, name: str) -> str:
    promise = "same trials everywhere"
    rngs = [stream(seed, "trials", i, "algorithm") for i in range(trials)]
    seeds = [derive_seed(seed, "trials", i, STREAMS["environment"]) for i in range(trials)]
    adapted = partial(_adapt, factory)
    together = simulate_trials(adapted, env, n_trials=trials, seed=seed, horizon=horizon)
    probe = factory(stream(seed, "trials", 0, "algorithm"))
    chosen = probe.engine(env, horizon)
    engine = chosen.name if chosen is not None else "protocol loop"
    runs = {"the protocol loop": [
        simulate(factory(stream(seed, "trials", i, "algorithm")), env, horizon=horizon,
                 seed=seeds[i], engine="reference") for i in range(trials)]}
    if processes:
        try:
            context = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform: engines only
            context = None
        if context is not None:
            _FORKED.update(factory=adapted, env=env, horizon=horizon,
                           rngs=[stream(seed, "trials", i, "algorithm") for i in range(trials)],
                           seeds=seeds)
            try:
                with context.Pool(processes) as pool:
                    runs[f"{processes} worker processes"] = pool.map(_forked_trial,
                                                                     range(trials))
            finally:
                _FORKED.clear()
    del rngs
    for label, other in runs.items():
        for i, (a, b) in enumerate(zip(together, other, strict=True)):
            same = (a.decisions.same_as(b.decisions) and np.array_equal(a.counts, b.counts)
                    and a.recommendation == b.recommendation and a.stopped == b.stopped
                    and a.n_pulls == b.n_pulls
                    and (a.regret is None) == (b.regret is None)
                    and (a.regret is None or np.allclose(a.regret, b.regret, rtol=0,
                                                         atol=1e-9)))
            if not same:
                raise fail(promise, f"trial {i} of {name} through simulate_trials (engine "
                            f"{engine!r}) differs from {label}: {a.n_pulls} pulls, counts "
                            f"{a.counts.tolist()}, recommendation {a.recommendation} against "
                            f"{b.n_pulls}, {b.counts.tolist()}, {b.recommendation}")
    return engine
