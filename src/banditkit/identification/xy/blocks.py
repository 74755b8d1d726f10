"""XY-static and XY-oracle (Fiez et al., NeurIPS 2019, Section 5 and Appendix F) with all their
phases at once: a drop-in for :func:`banditkit.simulate` with the same decisions from the same
noise.

A static allocation's pulls never depend on the rewards: phase t adds ⌈γ^t⌉ pulls, and the
cumulative allocation after phase t is the largest of the roundings of the fixed design λ to
the cumulative budgets so far (:class:`~banditkit.identification.xy._StaticAllocation`). Only
the stopping rule, checked at the end of every phase, reads the rewards. So everything else is
the trial-independent :class:`~banditkit.identification.xy_schedule.PhaseSchedule`, built once
per (arms, design, γ) in chunks of 64 phases and memoised: the roundings of λ to every budget
(:func:`~banditkit.design.round_allocations`), every phase's runs, and the pseudo-inverse of
every phase's Gram matrix. A trial then costs, per chunk, a few numpy calls:

* the rewards of every phase's runs, drawn as ``simulate`` draws them (one standard normal per
  run of each phase's batch, in order, from the same Generator);
* ``θ̂_t = A_t⁺ b_t`` at the end of every phase, and the Appendix F stopping rule for the
  empirical leader: first against the runner-up only (which rejects almost every phase), then
  against every item on the phases that pass.

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

from ...engines import Engine
from ...envs.base import Environment
from ...envs.linear import LinearBandit
from ...protocol import Algorithm, DecisionLog
from ...rng import SeedLike, as_generator
from ...simulate import default_checkpoints, simulate
from ...trial import Trial
from ...validation import check_positive_int
from . import XYOracle, XYStatic
from .schedule import PhaseChunk, phase_schedule

__all__ = ["simulate_static_allocation", "static_allocation_engine"]


def static_allocation_engine(algorithm: Algorithm, env: Environment, horizon: int | None
                             ) -> Engine | None:
    """The phase-chunk driver of XY-static and XY-oracle (:attr:`banditkit.protocol.
    Algorithm.engines`), where :func:`simulate_static_allocation` runs the trial itself."""
    if not _chunks_apply(algorithm, env):
        return None
    return Engine("blocks", run=simulate_static_allocation)


def _chunks_apply(alg: Algorithm, env: Environment) -> bool:
    return (type(alg) in (XYStatic, XYOracle) and type(env) is LinearBandit
            and env.noise == "gaussian" and alg.sampling == "round"  # type: ignore[attr-defined]
            and alg.t == 0 and alg.n_arms == env.n_arms
            and alg._stopped_at is None)  # type: ignore[attr-defined]


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
    if not _chunks_apply(alg, env):
        return simulate(alg, env, horizon=horizon, seed=seed, checkpoints=checkpoints,
                        engine="reference")
    rng = as_generator(seed)
    start = time.perf_counter()
    if alg._weights is None:
        alg._weights = alg._design()
    X, Z = alg.X, alg.Z
    K = X.shape[0]
    sched = phase_schedule(X, alg._weights, alg.gamma)
    sup = sched.support
    X_sup = X[sup]
    cap = math.inf if horizon is None else horizon
    counts0 = np.zeros(sup.size, dtype=np.int64)  # support pulls before the chunk
    sums0 = np.zeros(sup.size)
    arms_parts, runs_parts, ends_parts = [], [], []
    n_runs = 0
    t = 0
    stopped = False
    i = 0
    while t < cap and not stopped:
        ch = sched.chunk(i)
        i += 1
        over = np.flatnonzero(ch.ends >= cap)
        if over.size:  # the horizon cuts the chunk's phase over[0]
            n_cut = int(over[0]) + 1
            ch = ch.cut(n_cut, int(cap - (ch.ends[n_cut - 2] if n_cut > 1 else t)), X, sup,
                        counts0)
        n_phase = ch.n_phases
        # Every phase's runs, rewarded as simulate rewards them: one standard normal per run,
        # in order, from the same Generator.
        state = rng.bit_generator.state
        nf = ch.run_counts.astype(float)
        rewards = (nf * env.means[ch.arm_of]
                   + np.sqrt(nf) * env.sigma * rng.standard_normal(ch.run_counts.size))
        run_sums = np.zeros((n_phase, sup.size))
        run_sums[ch.phase_of, ch.pos_of] = rewards
        sums = np.cumsum(np.vstack([sums0, run_sums]), axis=0)[1:]
        leader, certified = _phase_ends(X_sup, Z, ch, sums, alg)
        hit = np.flatnonzero(certified >= 0)
        n_keep = int(hit[0]) + 1 if hit.size else n_phase
        r_keep = int(ch.run_ends[n_keep - 1])
        if n_keep < n_phase:  # rewind the noise to the accepted phases' runs
            rng.bit_generator.state = state
            rng.standard_normal(r_keep)
        arms_parts.append(ch.arm_of[:r_keep])
        runs_parts.append(ch.run_counts[:r_keep])
        ends_parts.append(n_runs + ch.run_ends[:n_keep])
        n_runs += r_keep
        t = int(ch.ends[n_keep - 1])
        counts0 = ch.counts[n_keep - 1]
        sums0 = sums[n_keep - 1]
        alg.phase += n_keep
        alg._target = int(ch.targets[n_keep - 1])
        alg._leader = int(leader[n_keep - 1])
        if hit.size:
            alg._stopped_at = int(certified[hit[0]])
            stopped = True
    alg.t = t
    alg.counts = np.zeros(K, dtype=np.int64)
    alg.counts[sup] = counts0
    alg.sums = np.zeros(K)
    alg.sums[sup] = sums0
    # simulate learns of the stop from the next ask, which it makes only below the horizon
    stopped = stopped and t < cap
    log = DecisionLog.from_runs(np.concatenate(arms_parts), np.concatenate(runs_parts),
                                np.concatenate(ends_parts))
    alg.decisions = log
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else max(t, 1))
    rec = alg.recommendation
    return Trial(counts=alg.counts.copy(), n_pulls=t, decisions=log,
                 checkpoints=np.asarray(checkpoints, dtype=np.int64), regret=None,
                 violation=None, recommendation=rec, correct=rec == env.best_item(horizon),
                 stopped=stopped, n_batches=log.n_batches,
                 seconds=time.perf_counter() - start, info=alg.info)


def _phase_ends(X_sup: np.ndarray, Z: np.ndarray, ch: PhaseChunk, sums: np.ndarray,
                alg: XYStatic | XYOracle) -> tuple[np.ndarray, np.ndarray]:
    """The empirical leader at the end of each phase of ``ch`` and the certified item (−1 for
    none) at the first phase that certifies one (−1 everywhere else: not evaluated past it).

    ``θ̂_t = A_t⁺ b_t`` from the schedule's pseudo-inverses. The Appendix F rule for the leader
    ``l`` needs ``width_t ||z_l − z||_{A_t⁺} ≤ (z_l − z)ᵀθ̂_t`` for every z; it is first
    checked for the runner-up (the z of least gain) of every full-rank phase, which rejects
    almost every phase at the cost of one item, and then for all items only on the phases
    that pass, in order, until one stops.
    """
    b = sums @ X_sup
    theta = np.einsum("pde,pe->pd", ch.A_inv, b)
    vals = theta @ Z.T
    lead = vals.argmax(axis=1)
    certified = np.full(lead.size, -1, dtype=np.int64)
    rows = np.flatnonzero(ch.full_rank)
    if not rows.size or Z.shape[0] < 2:
        return lead, certified
    phases = ch.first + 1 + rows
    width = np.sqrt(2.0 * np.log(2.0 * phases.astype(float) ** 2 * alg._union / alg.delta))
    lr, v = lead[rows], vals[rows]
    r = np.arange(rows.size)
    gain = v[r, lr][:, None] - v
    gain[r, lr] = np.inf
    runner = gain.argmin(axis=1)
    d1 = (Z[lr] - Z[runner])[:, None, :]
    n1 = np.einsum("pmd,pmd->pm", d1 @ ch.A_inv[rows], d1)[:, 0]
    cand = np.flatnonzero(width * np.sqrt(np.maximum(n1, 0.0)) <= gain[r, runner])
    step = max(1, 2 ** 16 // (Z.shape[0] * Z.shape[1]))  # phases per full check
    for s in range(0, cand.size, step):
        c = cand[s:s + step]
        diff = Z[lr[c]][:, None, :] - Z[None, :, :]
        norms2 = np.einsum("pmd,pmd->pm", diff @ ch.A_inv[rows[c]], diff)
        ok = width[c, None] * np.sqrt(np.maximum(norms2, 0.0)) <= gain[c]
        good = np.flatnonzero(ok.all(axis=1))
        if good.size:
            certified[rows[c[good[0]]]] = lr[c[good[0]]]
            break
    return lead, certified
