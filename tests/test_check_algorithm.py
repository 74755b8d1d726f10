"""The conformance kit (banditkit.testing.check_algorithm, issue 28 §4 and issue 36 §3): it passes
a toy algorithm and a toy identifier that keep the protocol's promises, and every registered
algorithm, and names the broken promise for each fault planted in them, one per subclass
(thirteen on the protocol, ten on what an algorithm returns)."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

from banditkit.engines import Engine
from banditkit.envs.constrained import ConstrainedBandit
from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.protocol import Algorithm, Batch, IIDBatch
from banditkit.registry import make_policy, policy_names
from banditkit.simulate import simulate
from banditkit.testing import PROMISES, check_algorithm

BERN = BernoulliBandit(np.array([0.3, 0.5, 0.7]))


class Toy(Algorithm):
    """Batched exponential weights: each batch is ``size`` pulls drawn i.i.d. from weights
    ∝ exp(η · smoothed mean) with ξ (an :class:`IIDBatch`), updated from per-arm sums. It keeps
    every promise: the faults below each break one."""

    reward_range = (0.0, 1.0)
    observes_arm_sums = True

    def __init__(self, n_arms: int, *, rng: np.random.Generator, size: int = 20,
                 eta: float = 5.0) -> None:
        super().__init__(n_arms)
        self.rng, self.size, self.eta = rng, size, eta
        self.pulls = np.zeros(n_arms)
        self.sums = np.zeros(n_arms)

    def weights(self) -> np.ndarray:
        means = (self.sums + 0.5) / (self.pulls + 1.0)
        w = np.exp(self.eta * (means - means.max()))
        return w / w.sum()

    def _next_batch(self) -> Batch | None:
        return IIDBatch.draw(self.rng, self.weights(), self.size)

    def _observe(self, batch, rewards, costs) -> None:
        self.pulls += batch.allocation(self.n_arms)
        self.sums += batch.arm_sums(rewards, self.n_arms)

    def _observe_arm_sums(self, batch, sums) -> None:
        self.pulls += batch.allocation(self.n_arms)
        self.sums += sums


class GlobalRandomness(Toy):
    def weights(self):
        w = super().weights() + 1e-3 * np.random.random(self.n_arms)  # noqa: NPY002
        return w / w.sum()


class ConstantSeed(Toy):
    def __init__(self, n_arms, *, rng, **kw):
        super().__init__(n_arms, rng=np.random.default_rng(0), **kw)


class OsEntropy(Toy):
    def __init__(self, n_arms, *, rng, **kw):
        super().__init__(n_arms, rng=np.random.default_rng(), **kw)


class NoDecisions(Toy):
    def observe(self, batch, rewards, costs=None):
        self._pending = None
        self.t += batch.n_pulls
        self._observe(batch, np.asarray(rewards, float), costs)


class SharedState(Toy):
    pulls = np.zeros(3)  # a class attribute updated in place: shared by every instance

    def __init__(self, n_arms, *, rng, **kw):
        super().__init__(n_arms, rng=rng, **kw)
        del self.pulls


class NonReplayable(Toy):
    def _observe_arm_sums(self, batch, sums):
        self.sums += sums  # forgets the pulls: a reopened experiment rebuilds another state


class AcceptsUnasked(Toy):
    def observe(self, batch, rewards, costs=None):
        if self._pending is not None:
            self._pending = batch  # "trust the caller"
        super().observe(batch, rewards, costs)


class ReplayDriftsAtTheEnd(Toy):
    def _observe_arm_sums(self, batch, sums):
        if self.t < 200:  # drops the update of the batch that ends a 200-pull run
            super()._observe_arm_sums(batch, sums)


class UnaskedRefusalChangesState(Toy):
    def observe(self, batch, rewards, costs=None):
        if self._pending is not None and batch is not self._pending:
            self.eta += 1.0  # a trace left before the base class refuses
        super().observe(batch, rewards, costs)


class AcceptsImpossibleSums(Toy):
    def _check_observation(self, batch, rewards, costs):
        pass


class RefusalChangesState(Toy):
    def _check_observation(self, batch, rewards, costs):
        try:
            super()._check_observation(batch, rewards, costs)
        except ValueError:
            self.eta += 1.0  # a refusal that leaves a trace
            raise


_PARENT = os.getpid()


class ProcessDependent(Toy):
    def weights(self):
        self.eta = 5.0 if os.getpid() == _PARENT else 9.0  # a process-local setting
        return super().weights()


def _wrong_noise(algorithms, envs, seeds, horizon, checkpoints):
    return [simulate(a, e, horizon=horizon, seed=0, engine="reference")
            for a, e in zip(algorithms, envs, strict=True)]


class WrongEngine(Toy):
    def engine(self, env, horizon):
        return Engine("lock-step", run_trials=_wrong_noise)  # ignores each trial's noise seed


class ToyIdentifier(Toy):
    """The toy as an identifier: it stops once every arm has 60 pulls and recommends the
    best smoothed mean."""

    kind = "identification"

    def _next_batch(self):
        if self.pulls.min() >= 60:
            return None
        return super()._next_batch()

    @property
    def recommendation(self):
        return None if self.t == 0 else int(np.argmax(self.weights()))


class RaisesOnItsOwnOutcomes(Toy):
    def _observe(self, batch, rewards, costs):
        if self.t >= 100:
            raise KeyError("arm")  # a user's bug on ordinary data
        super()._observe(batch, rewards, costs)


class ArmOutOfRange(Toy):
    def _next_batch(self):
        if self.t >= 100:
            return Batch.single(self.n_arms)  # one past the last arm
        return super()._next_batch()


class NegativeArm(Toy):
    def _next_batch(self):
        if self.t >= 100:
            return Batch.single(-1)
        return super()._next_batch()


class CountsDisagree(Toy):
    def _observe(self, batch, rewards, costs):
        super()._observe(batch, rewards, costs)
        self.pulls[0] += 1  # counts a pull of arm 0 that never happened


class RecommendsKPlus3(ToyIdentifier):
    @property
    def recommendation(self):
        return None if self.t == 0 else self.n_arms + 2


class StopsWithoutRecommendation(ToyIdentifier):
    @property
    def recommendation(self):
        return None


class CrashesAtTheEnds(Toy):
    """Logs each batch's reward variance: fine on Bernoulli(0.3-0.7) batches of 20, a math
    domain error when every reward is 0 (or 1)."""

    def _observe(self, batch, rewards, costs):
        n, total = float(batch.n_pulls), float(np.sum(rewards))
        self.log_variance = math.log(total * (n - total) / (n * n))
        super()._observe(batch, rewards, costs)


class CopyLosesState(Toy):
    def __getstate__(self):
        state = self.__dict__.copy()
        state["sums"] = np.zeros(self.n_arms)  # "the sums are a cache"
        return state


class Unpicklable(Toy):
    def __init__(self, n_arms, *, rng, **kw):
        super().__init__(n_arms, rng=rng, **kw)
        self.schedule = lambda t: 1.0  # a lambda: no pickle


class ParameterDrifts(Toy):
    def _next_batch(self):
        self.eta *= 1.01  # anneals the constructor's η in place
        return super()._next_batch()


class NeverStops(ToyIdentifier):
    def _next_batch(self):
        return Toy._next_batch(self)


def _factory(cls):
    return lambda rng: cls(3, rng=rng)


def test_the_toy_keeps_every_promise():
    report = check_algorithm(_factory(Toy), BERN, horizon=200)
    assert report.promises == tuple(PROMISES) and report.reads_xi
    assert report.n_pulls == 200 and report.n_batches == 10 and report.processes == 2


def test_the_toy_identifier_keeps_every_promise():
    report = check_algorithm(_factory(ToyIdentifier), BERN, horizon=300, processes=0,
                             stop_within=2_000)
    assert report.promises == tuple(PROMISES)
    report = check_algorithm(_factory(ToyIdentifier), BERN, horizon=60, processes=0,
                             stop_within=None)
    assert "stops on an easy instance" not in report.promises


FAULTS = [  # (planted fault, the promise that must be named)
    (GlobalRandomness, "no global randomness"),
    (ConstantSeed, "randomness from ξ only"),
    (OsEntropy, "randomness from ξ only"),
    (NoDecisions, "decisions logged"),
    (SharedState, "determinism"),
    (NonReplayable, "replay"),
    (ReplayDriftsAtTheEnd, "replay"),
    (AcceptsUnasked, "refuses unasked batches"),
    (UnaskedRefusalChangesState, "refuses unasked batches"),
    (AcceptsImpossibleSums, "refuses impossible sums"),
    (RefusalChangesState, "refuses impossible sums"),
    (ProcessDependent, "same trials everywhere"),
    (WrongEngine, "same trials everywhere"),
    # what it returns (issue 36 §3)
    (RaisesOnItsOwnOutcomes, "runs without error"),
    (ArmOutOfRange, "arms in range"),
    (NegativeArm, "arms in range"),
    (CountsDisagree, "counts consistent with pulls"),
    (RecommendsKPlus3, "recommendations in range"),
    (StopsWithoutRecommendation, "recommendations in range"),
    (CrashesAtTheEnds, "rewards at the ends of their range"),
    (CopyLosesState, "copy and pickle"),
    (Unpicklable, "copy and pickle"),
    (ParameterDrifts, "parameters kept"),
    (NeverStops, "stops on an easy instance"),
]


@pytest.mark.parametrize("cls, promise", FAULTS, ids=[c.__name__ for c, _ in FAULTS])
def test_each_planted_fault_is_named(cls, promise):
    with pytest.raises(AssertionError, match=f"promise '{promise}' is broken") as caught:
        check_algorithm(_factory(cls), BERN, horizon=200, stop_within=2_000)
    assert PROMISES[promise] in str(caught.value)  # the rule is spelled out


def test_a_factory_that_returns_a_used_algorithm_is_refused():
    used = Toy(3, rng=np.random.default_rng(0))
    used.next_batch()
    with pytest.raises(AssertionError, match="promise 'builds'"):
        check_algorithm(lambda rng: used, BERN)
    with pytest.raises(AssertionError, match=r"promise 'builds'.*2 arms"):
        check_algorithm(lambda rng: Toy(2, rng=rng), BERN)


def test_arguments_that_cannot_be_right_are_refused_before_any_run():
    calls = []

    def factory(rng):
        calls.append(rng)
        return Toy(3, rng=rng)

    for kwargs, match in [({"horizon": 0}, "horizon"), ({"seed": -1}, "seed"),
                          ({"trials": 1, "processes": 2}, "processes"),
                          ({"stop_within": 0}, "stop_within"),
                          ({"env": object()}, "env must be")]:
        env = kwargs.pop("env", BERN)
        with pytest.raises(ValueError, match=match):
            check_algorithm(factory, env, **kwargs)
    with pytest.raises(ValueError, match="factory must be callable"):
        check_algorithm(Toy(3, rng=np.random.default_rng(0)), BERN)
    assert calls == []


def test_the_kit_leaves_the_callers_global_state_alone():
    np.random.seed(5)  # noqa: NPY002 (the legacy state a caller may use)
    check_algorithm(_factory(Toy), BERN, horizon=60, processes=0)
    a = np.random.random()  # noqa: NPY002
    np.random.seed(5)  # noqa: NPY002
    assert np.random.random() == a  # noqa: NPY002


# --------------------------------------------------------------------------------------------
# Every registered algorithm, on a small instance of its kind

_SOARE = make_instance("soare", d=2, omega=0.1)
LINEAR = LinearBandit(_SOARE.X, _SOARE.theta / np.abs(_SOARE.X @ _SOARE.theta).max() * 0.9,
                      noise="rademacher")
CONSTRAINED = ConstrainedBandit(
    np.array([0.9, 0.7, 0.5, 0.4, 0.2]),
    np.array([[0.8, 0.3, 0.4, 0.2, 0.1], [0.2, 0.3, 0.6, 0.1, 0.5]]), np.array([0.5, 0.6]),
    safe_strategy=np.array([0.0, 0.0, 0.0, 1.0, 0.0]))
#: the registered algorithms that take a few seconds here (LPs each epoch, compiled kernels)
SLOW = {"DEBORAH", "DEBORAS", "OPLB", "OptimisticConstrained", "OptimisticMixingConstrained",
        "SafeOptimisticConstrained", "FrankWolfeSampling", "LinGame", "LinearTrackAndStop",
        "TopTwoThompson"}


#: the identifiers that need more than the kit's default 20,000 pulls to stop on these instances
#: (paper constants; pulls measured at seed 1: ALBA 201,227, XYAdaptive 42,811, XYStatic 31,365,
#: LinGame 24,439, LinearTrackAndStop 22,710; the replicable ones pay ρ-replicability's sample
#: cost: 52,952,325 and 6,833,736)
#: LinGame, LinearTrackAndStop and FrankWolfeSampling are not run to their stop here (9 s, 3 s
#: and more of CPU; their own modules' δ-correctness tests stop them)
STOP_WITHIN = {"ALBA": 400_000, "XYAdaptive": 100_000, "XYStatic": 100_000,
               "LinGame": None, "LinearTrackAndStop": None, "FrankWolfeSampling": None,
               "ReplicableRAGE": 10 ** 9, "ReplicableSuccessiveElimination": 10 ** 9}


def _env_for(name: str):
    """The first of Bernoulli, linear, constrained that the algorithm can be built on."""
    for env in (BERN, LINEAR, CONSTRAINED):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                make_policy(name, env, np.random.default_rng(0), horizon=150)
        except (ValueError, TypeError):
            continue
        return env
    raise AssertionError(f"{name} runs on none of the test instances")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in policy_names()])
def test_every_registered_algorithm_keeps_the_promises(name):
    env = _env_for(name)
    report = check_algorithm(lambda rng: make_policy(name, env, rng, horizon=150), env,
                             horizon=150, stop_within=STOP_WITHIN.get(name, 20_000))
    assert report.n_pulls > 0 and report.n_batches > 0
