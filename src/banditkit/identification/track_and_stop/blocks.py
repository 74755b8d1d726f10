"""Lazy Track-and-Stop (Jedra & Proutière 2020) driven in blocks of pulls: a drop-in for
:func:`banditkit.simulate` with the same decisions from the same noise.

Between two allocation updates (the lazy schedule) the arms Track-and-Stop pulls depend on the
counts alone — tracking of a fixed allocation, and forced exploration when λ_min(A_t) < c₀√t —
never on the rewards. Only the stopping rule reads the rewards. So a block of up to
``block`` pulls is chosen by the algorithm's own rule (:meth:`LinearTrackAndStop._choose`, the
same code and floating-point operations as a sequential run), their Gaussian rewards are drawn
as ``simulate`` would draw them (one standard normal per one-pull batch, from the same
Generator), and the GLR statistic of every prefix of the block is computed at once:

* A_s = A + Σ_{k ≤ s} x_k x_kᵀ and b_s by cumulative sums, A_s⁻¹ by one batched inverse;
* θ̂_s, the item estimates Zθ̂_s, ẑ_s and ‖ẑ_s − z‖²_{A_s⁻¹} for all items by batched products;
* Z(s) against β(s, δ) (the paper's threshold by a batched log-determinant, only where Z(s)
  exceeds the last computed β, a lower bound since β grows with A).

The first prefix that stops ends the trial: the algorithm's tracking state is rewound to the
block's start and the accepted pulls are chosen again, and the Generator is rewound and exactly
the accepted pulls' noise drawn again, so it stands where ``simulate`` leaves it.

Exactness: every decision (arm, allocation, stopping round) is the sequential algorithm's,
computed from state that differs from the Sherman–Morrison state only by round-off (the
allocation is computed from a fresh state on both paths, so it is the same to the bit); a
decision could differ only where the sequential run meets a floating-point tie of Z(t) and β.
``tests/test_track_and_stop.py`` checks equality with ``simulate``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...engines import Engine
from ...envs.base import Environment
from ...jit import available
from ...protocol import Algorithm
from ...rng import SeedLike, as_generator
from ...simulate import simulate
from ...trial import Trial
from ...validation import check_positive_int
from ..glr.run import kernel_eligible, run_kernel, trial_from_steps
from . import LinearTrackAndStop

__all__ = ["prefix_glr", "simulate_track_and_stop", "track_and_stop_engine"]

_BLOCK = 2048
_ENGINES = ("auto", "kernel", "blocks", "python")
_ENTRIES = 1 << 20


def prefix_glr(X: np.ndarray, Z: np.ndarray, A: np.ndarray, b: np.ndarray, arms: np.ndarray,
               rewards: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The GLR statistic after each prefix of the pulls ``arms`` (rewards ``rewards``) from the
    design ``A`` and the vector ``b`` = Σ x_s r_s.

    Returns
    -------
    stat : array, shape (L,)
        Z(t) after 1, 2, ..., L pulls.
    best : array of int, shape (L,)
        ẑ after each prefix.
    A_s : array, shape (L, d, d)
        The designs.
    """
    Xa = X[arms]
    A_s = A + np.cumsum(Xa[:, :, None] * Xa[:, None, :], axis=0)
    b_s = b + np.cumsum(Xa * rewards[:, None], axis=0)
    Ainv = np.linalg.inv(A_s)
    theta = np.einsum("sij,sj->si", Ainv, b_s)
    est = theta @ Z.T  # (L, M)
    best = est.argmax(axis=1)
    W = Ainv @ Z.T  # (L, d, M)
    q = np.einsum("jd,sdj->sj", Z, W)
    cross = np.einsum("sd,sdj->sj", Z[best], W)
    rows = np.arange(arms.size)
    norms = q + (q[rows, best][:, None] - 2.0 * cross)
    gaps = est[rows, best][:, None] - est
    ratio = gaps * gaps / np.maximum(norms, 1e-300)
    ratio[rows, best] = np.inf
    return ratio.min(axis=1) / (2.0 * sigma * sigma), best, A_s


def track_and_stop_engine(algorithm: Algorithm, env: Environment, horizon: int | None
                          ) -> Engine | None:
    """Track-and-Stop's engine (:attr:`banditkit.protocol.Algorithm.engines`): the compiled
    kernel of :mod:`.linear_glr_run` when numba is available, else this module's block
    driver, for its exact class on a Gaussian :class:`~banditkit.envs.linear.LinearBandit`."""
    if type(algorithm) is not LinearTrackAndStop or not kernel_eligible(algorithm, env,
                                                                        horizon):
        return None
    return Engine("compiled kernel" if available() else "blocks", run=simulate_track_and_stop)


def simulate_track_and_stop(algorithm: Algorithm, env: Environment, *,
                            horizon: int | None = None, seed: SeedLike = 0,
                            checkpoints: np.ndarray | None = None, block: int = _BLOCK,
                            engine: str = "auto") -> Trial:
    """One trial of :class:`LinearTrackAndStop` on ``env``: :func:`banditkit.simulate`'s result,
    through the compiled kernels of :mod:`.linear_glr_run` when numba is available, else in
    blocks of pulls.

    Parameters
    ----------
    algorithm : LinearTrackAndStop
        A fresh algorithm; it is run (and left in its final state), as simulate would.
    env : Environment
        A stationary Gaussian :class:`~banditkit.envs.linear.LinearBandit` runs in blocks;
        anything else (and an algorithm that has already run) goes through simulate.
    horizon, seed, checkpoints
        As in :func:`banditkit.simulate`.
    block : int
        Most pulls speculated at once (block engine).
    engine : {"auto", "kernel", "blocks", "python"}
        ``"auto"``: the compiled kernels when :func:`banditkit.jit.available`, else blocks;
        ``"kernel"``: the kernels (run by Python without numba: slow, the same numbers);
        ``"blocks"``: this module's block driver; ``"python"``: ``simulate``.
    """
    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {_ENGINES}, got {engine!r}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    block = check_positive_int(block, "block")
    alg = algorithm
    if engine == "python" or not (type(alg) is LinearTrackAndStop and kernel_eligible(alg, env,
                                                                                     horizon)):
        return simulate(alg, env, horizon=horizon, seed=seed, checkpoints=checkpoints,
                        engine="reference")
    if engine == "kernel" or (engine == "auto" and available()):
        return run_kernel(alg, env, horizon=horizon, seed=seed,  # type: ignore[arg-type]
                          checkpoints=checkpoints)
    rng = as_generator(seed)
    start = time.perf_counter()
    first = alg.next_batch()
    alg.observe(first, env.pull(first, rng).rewards)
    st = alg.state
    means, sigma_noise = env.means, env.sigma
    seq: list[np.ndarray] = []
    stopped = False
    cap = math.inf if horizon is None else horizon
    while st.t < cap:
        if alg._should_stop():
            stopped = True
            break
        # The tracking state at the block's start, to replay a block cut short by stopping.
        saved = (alg._cum.copy(), alg.forced, alg._lam_lb, alg.updates, alg._next_update,
                 alg.weights)
        t0 = st.t
        counts0 = st.counts.copy()
        arms = [alg._choose()]
        st.counts[arms[0]] += 1
        st.t += 1
        # (pulls × items) arrays of the prefix scan stay at about a million entries.
        n = int(min(block, max(16, _ENTRIES // st.Z.shape[0]), alg._next_update - t0, cap - t0))
        while len(arms) < n:
            run = _tracked_run(alg, n - len(arms))
            if run is None:  # a forced-exploration test is due: the class's own step
                run = [alg._choose()]
            for a in run:
                st.counts[a] += 1
            st.t += len(run)
            arms.extend(run)
        arms_arr = np.asarray(arms, dtype=np.int64)
        state = rng.bit_generator.state
        noise = rng.standard_normal(arms_arr.size)
        rewards = means[arms_arr] + sigma_noise * noise
        A0 = (st.X.T * counts0) @ st.X
        stat, best, A_s = prefix_glr(st.X, st.Z, A0, st.X.T @ st.sums, arms_arr, rewards,
                                     alg.sigma)
        stop_at = _first_stop(alg, stat, A_s, t0)
        if stop_at is None:
            np.add.at(st.sums, arms_arr, rewards)
            st.refresh()
            seq.append(arms_arr)
            continue
        keep = stop_at + 1  # pulls before the stopping check that fires
        st.counts[:] = counts0
        st.t = t0
        (alg._cum, alg.forced, alg._lam_lb, alg.updates, alg._next_update,
         alg.weights) = saved
        for a in arms_arr[:keep]:
            assert alg._choose() == a  # the same rule on the same counts
            st.counts[a] += 1
            st.t += 1
        rng.bit_generator.state = state
        rng.standard_normal(keep)
        np.add.at(st.sums, arms_arr[:keep], rewards[:keep])
        st.refresh()
        seq.append(arms_arr[:keep])
        alg._best, alg.glr = int(best[stop_at]), float(stat[stop_at])
        stopped = True
        break
    if stopped:
        alg._stopped = True
    steps = np.concatenate(seq) if seq else np.zeros(0, dtype=np.int64)
    return trial_from_steps(alg, env, first, steps, stopped, horizon, checkpoints, start)


def _tracked_run(alg: LinearTrackAndStop, most: int) -> list[int] | None:
    """Up to ``most`` next pulls that are pure tracking steps — no allocation update, and the
    forced-exploration test passes on the known lower bound of λ_min — chosen at once, exactly
    as :meth:`LinearTrackAndStop._choose` would one at a time (and its C-tracking sums
    advanced to match); ``None`` when the next step is not such a step.

    The class adds w to its C-tracking sums once per step (np.cumsum adds in the same order,
    so the sums are the same bits) and pulls argmin_a N_a − cum_a (C) or N_a − t w_a (D), ties
    to the lowest index. Those argmins depend on the counts, hence on the earlier picks: a
    guess of the picks (the arms' due times merged) gives the counts before every step, one
    vectorised argmin per step checks the guess, and the first wrong pick is replaced by the
    computed one — which is right, since the counts before it were — until the guess holds.
    """
    st = alg.state
    t0 = st.t
    if t0 >= alg._next_update:
        return None
    t = t0 + np.arange(min(most, alg._next_update - t0))
    f = alg.forced_scale * np.sqrt(t.astype(float))
    ok = alg._lam_lb >= f
    L = int(ok.size if ok.all() else np.argmin(ok))
    if L < 8:
        return None
    t = t[:L]
    K = alg.n_arms
    w = alg.weights
    counts0 = st.counts.astype(float)
    sums = np.cumsum(np.vstack([alg._cum[None, :], np.broadcast_to(w, (L, K))]), axis=0)[1:]
    cum = sums if alg.tracking == "C" else t.astype(float)[:, None] * w[None, :]
    # Guess: arm a's j-th pull of the run when its deficit cum − N would reach j + 1/2.
    deficit0 = cum[0] - counts0
    j = np.arange(L)
    with np.errstate(divide="ignore"):
        due = (j[None, :] + 0.5 - deficit0[:, None]) / w[:, None]
    due[w <= 0] = np.inf
    picks = (np.argsort(due.ravel(), kind="stable")[:L] // L).astype(np.int64)
    done = 0
    onehot = np.zeros((L, K))
    rows = np.arange(L)
    while True:
        onehot[:] = 0.0
        onehot[rows[1:], picks[:-1]] = 1.0
        before = counts0 + np.cumsum(onehot, axis=0)  # N before each step
        chosen = (before - cum).argmin(axis=1)
        wrong = np.flatnonzero(chosen[done:] != picks[done:])
        if wrong.size == 0:
            break
        k = done + int(wrong[0])
        picks[k:] = chosen[k:]
        done = k + 1
        if done >= L:
            break
    alg._cum = sums[L - 1].copy()  # the class advances these sums on every step
    return picks.tolist()


def _first_stop(alg: LinearTrackAndStop, stat: np.ndarray, A_s: np.ndarray, t0: int
                ) -> int | None:
    """The first prefix index whose stopping check fires (the class's rule), or None."""
    L = stat.size
    t = t0 + 1 + np.arange(L)
    if alg.threshold == "heuristic":
        beta = np.log((1.0 + np.log(t)) / alg.delta)
        hit = np.flatnonzero(stat > beta)
        if hit.size:
            alg.beta = float(beta[hit[0]])
            return int(hit[0])
        alg.beta = float(beta[-1])
        return None
    cand = np.flatnonzero(stat > alg._beta_lb)
    for lo in range(0, cand.size, 256):
        idx = cand[lo:lo + 256]
        if not alg._c_ok:
            lam = np.linalg.eigvalsh(A_s[idx])[:, 0]
            ok = lam >= alg.c
            if not ok.any():
                continue
            first_ok = int(np.argmax(ok))
            idx = idx[first_ok:]
            alg._c_ok = True
        d = A_s.shape[1]
        logdet = np.linalg.slogdet(np.eye(d) + A_s[idx] / (alg.u * alg.c))[1]
        beta = (1.0 + alg.u) * (0.5 * logdet - math.log(alg.delta))
        hit = np.flatnonzero(stat[idx] > beta)
        if hit.size:
            alg.beta = alg._beta_lb = float(beta[hit[0]])
            return int(idx[hit[0]])
        alg._beta_lb = max(alg._beta_lb, float(beta.max()))
    return None
