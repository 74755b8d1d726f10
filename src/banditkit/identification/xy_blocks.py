"""XY-static and XY-oracle (Fiez et al., NeurIPS 2019, Section 5 and Appendix F) with all their
phases at once: a drop-in for :func:`banditkit.simulate` with the same decisions from the same
noise.

A static allocation's pulls never depend on the rewards: phase t adds ⌈γ^t⌉ pulls, and the
cumulative allocation after phase t is the largest of the roundings of the fixed design λ to
the cumulative budgets so far (:class:`~banditkit.identification.xy._StaticAllocation`). Only
the stopping rule, checked at the end of every phase, reads the rewards. So a chunk of phases
is computed in a few numpy calls instead of a Python round trip per phase:

* the roundings of λ to every budget of the chunk (:func:`round_allocations`, Appendix B's
  procedure vectorised over budgets: the at most p unit moves of its second step are the first
  keys of a merge, taken at once);
* the rewards of every phase's runs, drawn as ``simulate`` draws them (one standard normal per
  run of each phase's batch, in order, from the same Generator);
* the least-squares fit at the end of every phase (batched symmetric eigendecompositions, the
  same pseudo-inverse as :class:`~banditkit.estimation.least_squares.LeastSquares`) and the
  Appendix F stopping rule for the empirical leader.

The first phase that stops ends the trial; the Generator is rewound and exactly the accepted
phases' noise drawn again, so it stands where ``simulate`` leaves it. The counts, sums and every
integer decision are those of the sequential class; the fit is computed by batched products, so
a stopping decision could differ only at a floating-point tie of the rule's two sides
(``tests/test_xy_blocks.py`` checks equality with ``simulate``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..envs.base import Environment
from ..envs.linear import LinearBandit
from ..protocol import Algorithm, Batch, DecisionLog
from ..rng import SeedLike, as_generator
from ..simulate import default_checkpoints, simulate
from ..trial import Trial
from ..validation import check_positive_int
from .xy import XYOracle, XYStatic

__all__ = ["round_allocations", "simulate_static_allocation"]

_RCOND = 1e-12  # as LeastSquares
_CHUNK = 64  # phases per chunk


def round_allocations(weights: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """:func:`~banditkit.design.round_allocation` of ``weights`` to every budget at once.

    Phase 1, N_i = ⌈(n − p/2) λ_i⌉ (clipped at 0), is elementwise. Phase 2 moves the excess
    e = Σ N − n (|e| ≤ p) one unit at a time: up to the arm of least N_j/λ_j (ties to the lowest
    index) while e < 0, down from the arm of largest (N_j − 1)/λ_j among N_j > 0 while e > 0.
    Each arm's successive keys (N_j + m)/λ_j increase (resp. (N_j − 1 − m)/λ_j decrease) in m,
    so the |e| moves are the first |e| keys of the merge ordered by (key, index), taken at once
    from the same floating-point keys.

    Returns
    -------
    array of int64, shape (len(budgets), K)
    """
    lam = np.asarray(weights, dtype=float)
    n = np.asarray(budgets, dtype=np.int64)
    sup = np.flatnonzero(lam > 0)
    w = lam[sup]
    p = sup.size
    counts = np.maximum(np.ceil((n[:, None] - p / 2.0) * w), 0.0).astype(np.int64)
    excess = counts.sum(axis=1) - n
    m = np.arange(p)
    idx = np.broadcast_to(np.arange(p)[:, None], (p, p)).ravel()  # arm of each key
    for row in np.flatnonzero(excess != 0):
        N = counts[row]
        e = int(excess[row])
        if e < 0:
            keys = ((N[:, None] + m[None, :]) / w[:, None]).ravel()
            order = np.lexsort((idx, keys))[:-e]
            np.add.at(N, idx[order], 1)
        else:
            steps = N[:, None] - 1 - m[None, :]
            keys = np.where(steps >= 0, steps / w[:, None], -np.inf).ravel()
            order = np.lexsort((idx, -keys))[:e]
            np.add.at(N, idx[order], -1)
    out = np.zeros((n.size, lam.size), dtype=np.int64)
    out[:, sup] = counts
    return out


def simulate_static_allocation(algorithm: Algorithm, env: Environment, *,
                               horizon: int | None = None, seed: SeedLike = 0,
                               checkpoints: np.ndarray | None = None) -> Trial:
    """One trial of XY-static or XY-oracle: :func:`banditkit.simulate`'s result, phases in
    chunks.

    Parameters
    ----------
    algorithm : XYStatic or XYOracle
        A fresh algorithm with ``sampling="round"``; it is run and left in its final state.
    env : Environment
        A stationary Gaussian :class:`~banditkit.envs.linear.LinearBandit`; anything else (and
        multinomial sampling, an algorithm that has run) goes through simulate.
    horizon, seed, checkpoints
        As in :func:`banditkit.simulate`.
    """
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    alg = algorithm
    if not (type(alg) in (XYStatic, XYOracle) and type(env) is LinearBandit
            and env.noise == "gaussian" and alg.sampling == "round" and alg.t == 0
            and alg.n_arms == env.n_arms and alg._stopped_at is None):
        return simulate(alg, env, horizon=horizon, seed=seed, checkpoints=checkpoints)
    rng = as_generator(seed)
    start = time.perf_counter()
    if alg._weights is None:
        alg._weights = alg._design()
    X, Z = alg.X, alg.Z
    K = X.shape[0]
    cap = math.inf if horizon is None else horizon
    batches: list[Batch] = []
    t = 0
    stopped = False
    while t < cap and not stopped:
        phases = alg.phase + 1 + np.arange(_CHUNK)
        sizes = np.array([math.ceil(alg.gamma ** int(s)) for s in phases], dtype=np.int64)
        targets = alg._target + np.cumsum(sizes)
        rounded = round_allocations(alg._weights, targets)
        cum = np.maximum.accumulate(np.maximum(rounded, alg.counts), axis=0)
        alloc = np.diff(np.vstack([alg.counts, cum]), axis=0)  # pulls of each phase
        pulls = alloc.sum(axis=1)
        ends = t + np.cumsum(pulls)
        over = np.flatnonzero(ends >= cap)
        n_phase = int(over[0]) + 1 if over.size else _CHUNK
        alloc = alloc[:n_phase]
        # Runs of every phase's batch, arms in index order (Batch.from_allocation), cut at the
        # horizon as simulate cuts its last batch.
        phase_of, arm_of = np.nonzero(alloc)
        run_counts = alloc[phase_of, arm_of]
        if over.size:
            last = phase_of == n_phase - 1
            room = int(cap - (ends[n_phase - 2] if n_phase > 1 else t))
            kept = np.minimum(np.cumsum(run_counts[last]), room)
            lens = np.diff(np.r_[0, kept])
            run_counts = np.r_[run_counts[~last], lens]
            keep = run_counts > 0
            phase_of, arm_of, run_counts = phase_of[keep], arm_of[keep], run_counts[keep]
            alloc = np.zeros((n_phase, K), dtype=np.int64)
            np.add.at(alloc, (phase_of, arm_of), run_counts)
        state = rng.bit_generator.state
        nf = run_counts.astype(float)
        rewards = (nf * env.means[arm_of]
                   + np.sqrt(nf) * env.sigma * rng.standard_normal(run_counts.size))
        run_sums = np.zeros((n_phase, K))
        run_sums[phase_of, arm_of] = rewards
        counts = alg.counts + np.cumsum(alloc, axis=0)
        sums = np.cumsum(np.vstack([alg.sums, run_sums]), axis=0)[1:]
        leader, certified = _phase_ends(X, Z, counts, sums, phases[:n_phase], alg)
        hit = np.flatnonzero(certified >= 0)
        n_keep = int(hit[0]) + 1 if hit.size else n_phase
        if n_keep < n_phase:  # rewind the noise to the accepted phases' runs
            rng.bit_generator.state = state
            rng.standard_normal(int(np.count_nonzero(phase_of < n_keep)))
        for s in range(n_keep):
            sel = phase_of == s
            batches.append(Batch(arm_of[sel], run_counts[sel]))
        t += int(alloc[:n_keep].sum())
        alg.counts = counts[n_keep - 1].copy()
        alg.sums = sums[n_keep - 1].copy()
        alg.phase += n_keep
        alg._target = int(targets[n_keep - 1])
        alg._leader = int(leader[n_keep - 1])
        if hit.size:
            alg._stopped_at = int(certified[hit[0]])
            stopped = True
    alg.t = t
    # simulate learns of the stop from the next ask, which it makes only below the horizon
    stopped = stopped and t < cap
    arms = np.concatenate([b.arms for b in batches])
    runs = np.concatenate([b.counts for b in batches])
    ends = np.cumsum([b.n_runs for b in batches])
    log = DecisionLog.from_runs(arms, runs, ends)
    alg.decisions = log
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else max(t, 1))
    rec = alg.recommendation
    return Trial(counts=alg.counts.copy(), n_pulls=t, decisions=log,
                 checkpoints=np.asarray(checkpoints, dtype=np.int64), regret=None,
                 violation=None, recommendation=rec, correct=rec == env.best_item(horizon),
                 stopped=stopped, n_batches=log.n_batches,
                 seconds=time.perf_counter() - start, info=alg.info)


def _phase_ends(X: np.ndarray, Z: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                phases: np.ndarray, alg: XYStatic | XYOracle) -> tuple[np.ndarray, np.ndarray]:
    """The empirical leader and the certified item (−1 for none) at the end of each phase:
    batched least squares (pseudo-inverse as LeastSquares) and the Appendix F rule."""
    d = X.shape[1]
    A = np.einsum("pk,kd,ke->pde", counts.astype(float), X, X)
    b = sums @ X
    w, V = np.linalg.eigh(A)
    keep = w > _RCOND * np.maximum(w[:, -1:], 0.0)
    inv_w = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
    A_inv = (V * inv_w[:, None, :]) @ np.swapaxes(V, 1, 2)
    theta = np.einsum("pde,pe->pd", A_inv, b)
    vals = theta @ Z.T
    lead = vals.argmax(axis=1)
    rows = np.arange(lead.size)
    diff = Z[lead][:, None, :] - Z[None, :, :]
    norms2 = np.einsum("pmd,pde,pme->pm", diff, A_inv, diff)
    width = np.sqrt(2.0 * np.log(2.0 * phases.astype(float) ** 2 * alg._union / alg.delta))
    ok = width[:, None] * np.sqrt(np.maximum(norms2, 0.0)) <= vals[rows, lead][:, None] - vals
    ok[rows, lead] = True
    certified = np.where(ok.all(axis=1) & (keep.sum(axis=1) == d), lead, -1)
    return lead, certified
