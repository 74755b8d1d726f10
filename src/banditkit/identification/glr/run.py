"""One trial of Track-and-Stop (Jedra & Proutière 2020) or Frank-Wolfe Sampling (Wang, Tzeng &
Proutière 2021) at compiled speed: :func:`banditkit.simulate`'s result from the same seed.

The pulls run in the kernels of :mod:`.linear_glr_kernels` (numba, through
:func:`banditkit.jit.njit`); whenever a step needs the algorithm's class — an allocation update,
λ_min(A_t) for the forced-exploration test, the paper threshold's β(t, δ), a Frank-Wolfe matrix
game or forced round, a refresh of the least-squares state — the kernel stops, the class takes
that step with its own code, and the kernel resumes from the class's state. The Generator is the
run's own and is advanced one standard normal per pull, as ``simulate`` advances it, so it stands
where ``simulate`` leaves it.

Without numba (or with ``BANDITKIT_JIT=0``) :func:`simulate_fw_sampling` is ``simulate`` and
:func:`~banditkit.identification.track_and_stop_blocks.simulate_track_and_stop` takes its block
path; ``engine="kernel"`` forces the kernels, then run by Python (the same numbers, slowly: the
tests' bit-identity check).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...engines import Engine
from ...envs.base import Environment
from ...envs.linear import LinearBandit
from ...protocol import Algorithm, DecisionLog
from ...rng import SeedLike, as_generator
from ...simulate import default_checkpoints, simulate
from ...trial import Trial
from ...validation import check_positive_int
from ..fw_sampling import FrankWolfeSampling
from ..lingame import AdaHedge, LinGame
from ..track_and_stop import LinearTrackAndStop
from . import GLRIdentifier, heuristic_threshold

__all__ = ["ENGINES", "glr_engine", "kernel_eligible", "run_kernel", "simulate_fw_sampling",
           "simulate_lingame", "trial_from_steps"]

ENGINES = ("auto", "kernel", "python")
_CHUNK = 1 << 16  # arms buffered per kernel call
_EMPTY = np.zeros(0)  # FWS's iterate before the class starts it (the kernel does not read it)
_NO_LEARNER = AdaHedge(1)  # LinGame before its learner exists (the kernel does not read it)


def kernel_eligible(alg: Algorithm, env: Environment, horizon: int | None) -> bool:
    """Whether the compiled driver runs this pair: a fresh Track-and-Stop, FWS or LinGame (their
    own classes, not subclasses) on a Gaussian :class:`LinearBandit` with the same arms."""
    return (type(alg) in (LinearTrackAndStop, FrankWolfeSampling, LinGame)
            and (type(alg) is not FrankWolfeSampling or alg.default_choices)
            and type(env) is LinearBandit
            and env.noise == "gaussian" and alg.n_arms == env.n_arms and alg.t == 0
            and not alg.stopped and (horizon is None or horizon > alg.d))


def glr_engine(algorithm: Algorithm, env: Environment, horizon: int | None) -> Engine | None:
    """The engine of Frank-Wolfe Sampling and LinGame (:attr:`banditkit.protocol.Algorithm.
    engines`): the compiled kernel when numba is available (run by Python it is slower than
    the protocol loop, so without numba they take the loop), for their exact classes on a
    Gaussian :class:`LinearBandit` (:func:`kernel_eligible`)."""
    from ...jit import available

    if type(algorithm) not in (FrankWolfeSampling, LinGame) or not available() or \
            not kernel_eligible(algorithm, env, horizon):
        return None
    return Engine("compiled kernel", run=run_kernel)


def simulate_fw_sampling(algorithm: Algorithm, env: Environment, *, horizon: int | None = None,
                         seed: SeedLike = 0, checkpoints: np.ndarray | None = None,
                         engine: str = "auto") -> Trial:
    """One trial of :class:`FrankWolfeSampling` (or :class:`LinGame`) on ``env``:
    :func:`banditkit.simulate`'s decisions, through the compiled kernels when numba is
    available (``engine="auto"``), always (``"kernel"``), or never (``"python"``:
    ``simulate``).

    Not the public way in: :func:`banditkit.simulate` takes these kernels by itself (they are
    the classes' declared engine). This driver stays for tests that run the kernels as
    Python."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    from ...jit import available

    use = engine == "kernel" or (engine == "auto" and available())
    if not (use and kernel_eligible(algorithm, env, horizon)):
        return simulate(algorithm, env, horizon=horizon, seed=seed, checkpoints=checkpoints,
                        engine="reference")
    return run_kernel(algorithm, env, horizon=horizon, seed=seed,  # type: ignore[arg-type]
                      checkpoints=checkpoints)


simulate_lingame = simulate_fw_sampling  # the same dispatch; the kernel follows the class


def run_kernel(alg: GLRIdentifier, env: LinearBandit, *, horizon: int | None, seed: SeedLike,
               checkpoints: np.ndarray | None) -> Trial:
    """The compiled driver (see the module docstring); ``alg`` and ``env`` as
    :func:`kernel_eligible` requires."""
    from . import kernels as kern

    rng = as_generator(seed)
    start = time.perf_counter()
    first = alg.next_batch()
    alg.observe(first, env.pull(first, rng).rewards)
    st = alg.state
    fws = isinstance(alg, FrankWolfeSampling)
    game = isinstance(alg, LinGame)
    from ..lingame.kernel import lingame_steps
    X, Z = np.ascontiguousarray(st.X), np.ascontiguousarray(st.Z)
    means = np.ascontiguousarray(env.means, dtype=float)
    cap = 2**62 if horizon is None else horizon
    heuristic = alg.threshold == "heuristic"
    out = np.empty(_CHUNK, dtype=np.int64)
    seq: list[np.ndarray] = []
    first_arm, check, n_out = -1, True, 0
    stat, best = alg.glr, alg._best
    stopped = alg.stopped
    while not stopped:
        if game:
            assert isinstance(alg, LinGame)
            answer = int(st.est.argmax())
            learner = alg.learners.get(answer) if alg._started else None
            if learner is None:  # the class creates it (or starts its tracking) in _choose
                learner, answer = _NO_LEARNER, -1
            ev, t, since, learner.gap, n_out, new_stat, new_best = lingame_steps(
                X, Z, st.Ainv, st.theta, st.est, st.q, st.counts, st.sums, learner.losses,
                learner.gap, answer, alg._sumw, alg.ridge, means, env.sigma, rng, st.t, cap,
                st._since, st.refresh_every, heuristic, alg.delta, alg.sigma, alg._beta_lb,
                first_arm, check, out, n_out)
        elif fws:
            assert isinstance(alg, FrankWolfeSampling)
            step_cap = st.t if alg._x is None else cap  # the class starts the iterate
            x = _EMPTY if alg._x is None else alg._x
            ev, t, since, alg._since, n_out, new_stat, new_best = kern.fws_steps(
                X, Z, st.Ainv, st.theta, st.est, st.q, st.counts, st.sums, x,
                alg._B, alg._sumz, means, env.sigma, rng, st.t, step_cap, st._since,
                st.refresh_every, alg._since, alg.r_scale, alg.r_exponent, alg.force_tied,
                heuristic, alg.delta, alg.sigma, alg._beta_lb, first_arm, check, out, n_out)
        else:
            assert isinstance(alg, LinearTrackAndStop)
            ev, t, since, n_out, new_stat, new_best = kern.tas_steps(
                X, Z, st.Ainv, st.theta, st.est, st.q, st.counts, st.sums, alg._cum,
                alg.weights, means, env.sigma, rng, st.t, min(cap, alg._next_update),
                st._since, st.refresh_every, alg.tracking == "C", alg.forced_scale,
                alg._lam_lb, heuristic, alg.delta, alg.sigma, alg._beta_lb, first_arm, check,
                out, n_out)
        st.t, st._since = t, since
        if not math.isnan(new_stat):  # NaN: the call made no stopping check
            stat, best = new_stat, new_best
        first_arm, check = -1, True
        if ev == kern.FULL:
            seq.append(out[:n_out].copy())
            n_out = 0
        elif ev == kern.REFRESH:
            st.refresh()
        elif ev == kern.STOP:
            stopped = True
        elif ev == kern.NEED_BETA:
            if alg._paper_stop(stat):
                stopped = True
            else:
                check = False
        elif t >= cap:  # DUE at the horizon
            break
        else:  # DUE (allocation update, FWS start) or NEED_CHOOSE: the class's own step
            first_arm = alg._choose()
            if first_arm is None:  # pragma: no cover - _choose always returns an arm
                raise RuntimeError("the sampling rule returned no arm")
    seq.append(out[:n_out].copy())
    alg._best, alg.glr = int(best), float(stat)
    if heuristic:
        alg.beta = heuristic_threshold(st.t, alg.delta)
    if stopped:
        alg._stopped = True
    steps = np.concatenate(seq)
    return trial_from_steps(alg, env, first, steps, stopped, horizon, checkpoints, start)


def trial_from_steps(alg: Algorithm, env: Environment, first: object, steps: np.ndarray,
                     stopped: bool, horizon: int | None, checkpoints: np.ndarray | None,
                     start: float) -> Trial:
    """The :class:`Trial` of a run made of the spanning batch ``first`` and then one pull per
    batch (``steps``), as ``simulate`` records it; sets the algorithm's pull count and log."""
    n_pulls = int(first.n_pulls) + steps.size  # type: ignore[attr-defined]
    alg.t = n_pulls
    K = alg.n_arms
    n_first = first.n_runs  # type: ignore[attr-defined]
    log = DecisionLog.from_runs(np.concatenate([first.arms, steps]),  # type: ignore[attr-defined]
                                np.ones(n_first + steps.size, dtype=np.int64),
                                n_first + np.arange(steps.size + 1, dtype=np.int64))
    alg.decisions = log
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else max(n_pulls, 1))
    recommendation = alg.recommendation
    arms, runs = log.runs()[:2]
    return Trial(counts=np.bincount(arms, weights=runs, minlength=K).astype(np.int64),
                 n_pulls=n_pulls, decisions=log, checkpoints=np.asarray(checkpoints, np.int64),
                 regret=None, violation=None, recommendation=recommendation,
                 correct=recommendation == env.best_item(horizon), stopped=stopped,
                 n_batches=log.n_batches, seconds=time.perf_counter() - start, info=alg.info)

