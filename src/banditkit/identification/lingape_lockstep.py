"""LinGapE for many trials at once: one vectorised round across trials, one instance per trial.

LinGapE (Xu, Honda and Sugiyama, AISTATS 2018, Algorithm 1; the analysed ratio rule as run by
Fiez et al., NeurIPS 2019, Section 5 and Appendix F — see
:class:`~banditkit.identification.lingape.LinGapE`) pulls one arm per round. Where the pair
(i_t, j_t) changes every few rounds (multivariate testing and click-through, Fiez et al.'s
Fig. 2), the speculative blocks of
:func:`~banditkit.identification.lingape_blocks.simulate_lingape` fall back to single pulls, each
costing about twenty numpy calls. :func:`lingape_lockstep` amortises those calls over the trials
of a sweep point: the state arrays (A⁻¹ stacked over θ̂, the item estimates, the quadratic forms,
the pull counts) carry a leading trial axis, every round advances all active trials by one pull,
and a trial that stops drops out of the arrays. A call lasts as long as its longest trial, so it
pays off when the trials of a point are of similar length; the rage figures use the block driver,
since their multivariate and click-through trial lengths are heavy-tailed (docs/rage.md).

Each trial has its own environment (:attr:`AlgorithmSpec.lockstep`'s contract): a fixed instance
is the same object repeated, a per-trial instance (a new θ* per trial in Fig. 2a, new arms in
Fig. 2b) a different one. Trials are grouped by shape (K, |Z|, d) and noise model, and within a
group

* when every environment has the same arms X and items Z (checked with ``np.array_equal``), X
  and Z are shared 2-D arrays and only the means differ per trial;
* otherwise X and Z are stacked, shapes (n, K, d) and (n, |Z|, d), and the same ``np.matmul``
  calls broadcast over the trial axis.

The arm-selection data of an item pair (one linear program,
:func:`~banditkit.identification.lingape.pair_ratios`) is shared by the trials on the same X and
Z, through the block driver's per-process cache keyed by a digest of (X, Z).

Noise is drawn from each trial's Generator in :func:`banditkit.simulate`'s order: the
initialisation (every arm once) by ``env.pull`` itself; then one pull per round. Gaussian
rewards are ``μ + σ·z`` with z read in blocks of ``standard_normal`` (numpy yields the same
numbers as single draws; a one-pull reward of ``env.pull`` is ``1·μ + √1·σ·z``, the same
value). Bernoulli and Rademacher rewards are ``rng.binomial(1, p)`` drawn per trial per round,
a Python loop over the active trials (about a microsecond each), since the binomial sampler's
consumption of the stream is numpy's internal affair.

Exactness: each trial makes the decisions of ``simulate_lingape(make_lingape(env, rng,
**params), env, ...)`` (hence of ``simulate``): the same arithmetic per round in exact
arithmetic, with floating-point values (B(t), C_t) equal to round-off — products over the trial
axis may be summed in another order than one trial's, and A⁻¹ is recomputed from scratch at
other rounds than in the block driver. A decision could differ only at an exact floating-point
tie of the sequential algorithm. A trial's numbers depend on its own environment and seed only,
not on the other trials of its group. ``tests/test_lingape_lockstep.py`` checks all of this.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from ..envs.base import Environment
from ..envs.linear import LinearBandit
from ..protocol import Batch
from ..rng import SeedLike, as_generator
from ..trial import Trial
from ..validation import check_positive_int
from .lingape import LinGapE, fresh_state, make_lingape, radius
from .lingape_blocks import (
    fast_path_applies,
    instance_key,
    one_pull_trial,
    shared_pair_ratios,
    simulate_lingape,
)

__all__ = ["lingape_lockstep"]

_BLOCK = 4096  # rounds of Gaussian noise pre-drawn per trial at a time
_DENSE_PAIRS = 1 << 22  # largest (instances × |Z| × |Z|) pair table kept dense


def lingape_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator],
                     seeds: Sequence[SeedLike], horizon: int | None,
                     checkpoints: np.ndarray | None, **params: object) -> list[Trial]:
    """Run ``len(seeds)`` trials of LinGapE, trial ``k`` on ``envs[k]``, in lock-step.

    Matches :attr:`banditkit.experiments.spec.AlgorithmSpec.lockstep`.

    Parameters
    ----------
    envs : sequence of Environment
        One environment per trial (the same object repeated for a fixed instance). Stationary
        :class:`~banditkit.envs.linear.LinearBandit` environments (Gaussian, Bernoulli or
        Rademacher noise) run vectorised; any other runs through :func:`simulate_lingape`.
    rngs : sequence of Generator
        Algorithm streams ξ (unused: LinGapE has no internal randomness), one per trial.
    seeds : sequence of seed-like
        Noise seed of each trial, as given to :func:`banditkit.simulate`. A Generator given
        here may be read ahead (blocks of Gaussian draws); its trial's numbers are the same.
    horizon : int, optional
        Budget cap on the pulls of each trial (``None``: run until LinGapE stops).
    checkpoints : array of int, optional
        As in :func:`banditkit.simulate` (identifiers record no curve; kept for the record).
    **params
        Keyword arguments of :func:`~banditkit.identification.lingape.make_lingape`
        (``delta``, ``theta_bound``, ...).

    Returns
    -------
    list of Trial
        Trial ``k`` equals ``simulate_lingape(make_lingape(envs[k], rngs[k], **params),
        envs[k], horizon=horizon, seed=seeds[k], checkpoints=checkpoints)`` in its decisions,
        counts, pulls, stopping, recommendation and ``info`` (B and C_t to round-off);
        ``seconds`` is the wall time of the whole call divided by the number of trials. The
        greedy selection rule, one item, a horizon shorter than the initialisation and other
        environments run trial by trial through :func:`simulate_lingape`.
    """
    n = len(seeds)
    if len(rngs) != n or len(envs) != n:
        raise ValueError(f"envs, rngs and seeds must have the same length, got {len(envs)}, "
                         f"{len(rngs)} and {len(seeds)}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    start = time.perf_counter()
    # one algorithm per trial: validates the parameters as the factory does, and gives S
    protos = [make_lingape(env, rng, **params) for env, rng in zip(envs, rngs, strict=True)]
    results: list[Trial | None] = [None] * n
    groups: dict[tuple, list[int]] = {}
    for k, (alg, env) in enumerate(zip(protos, envs, strict=True)):
        if fast_path_applies(alg, env, horizon):
            groups.setdefault((alg.n_arms, alg.n_items, alg.d, env.noise), []).append(k)
        else:
            results[k] = simulate_lingape(alg, env, horizon=horizon, seed=seeds[k],
                                          checkpoints=checkpoints)
    for members in groups.values():
        trials = _Lockstep([protos[k] for k in members], [envs[k] for k in members],
                           [seeds[k] for k in members], horizon).run(checkpoints)
        for k, trial in zip(members, trials, strict=True):
            results[k] = trial
    seconds = (time.perf_counter() - start) / max(n, 1)
    for trial in results:
        trial.seconds = seconds  # type: ignore[union-attr]
    return results  # type: ignore[return-value]


class _Lockstep:
    """The state of the active trials, one row each, and the rounds that advance them."""

    def __init__(self, protos: list[LinGapE], envs: list[LinearBandit],
                 seeds: Sequence[SeedLike], horizon: int | None) -> None:
        self.protos, self.envs, self.horizon = protos, envs, horizon
        first = protos[0]
        self.K, self.M, self.d = first.n_arms, first.n_items, first.d
        self.noise = envs[0].noise
        self.lam, self.eps = first.regularizer, first.epsilon
        self.sigma, self.refresh_every = first.sigma, first.refresh_every
        K, M, d = self.K, self.M, self.d
        n = self.n = len(protos)
        # trials with the same X and Z share one instance index (and its pair tables)
        self.shared = all(np.array_equal(a.X, first.X) and np.array_equal(a.Z, first.Z)
                          for a in protos[1:])
        keys: dict[bytes, int] = {}
        self.inst_X: list[np.ndarray] = []
        self.inst_Z: list[np.ndarray] = []
        self.inst_key: list[bytes] = []
        inst = np.empty(n, dtype=np.int64)
        for k, a in enumerate(protos):
            if self.shared and k > 0:
                inst[k] = 0
                continue
            key = instance_key(a.X, a.Z)
            if key not in keys:
                keys[key] = len(self.inst_key)
                self.inst_key.append(key)
                self.inst_X.append(a.X)
                self.inst_Z.append(a.Z)
            inst[k] = keys[key]
        self.inst = inst
        if self.shared:
            self.X, self.Z = first.X, first.Z  # 2-D: matmul broadcasts them over trials
        else:
            self.X = np.stack([a.X for a in protos])
            self.Z = np.stack([a.Z for a in protos])
        self.means = np.stack([e.means for e in envs])  # (n, K)
        self.noise_sd = np.array([e.sigma for e in envs])
        self.log_const = np.array([a._log_const for a in protos])
        self.offset = np.array([a._radius_offset for a in protos])

        self.ids = np.arange(n)
        self.rngs = [as_generator(s) for s in seeds]
        self.counts = np.zeros((n, K), dtype=np.int64)
        self.rsum = np.zeros((n, K))
        self.S = np.empty((n, d + 1, d))
        self.logdet = np.empty(n)
        self.est = np.empty((n, M))
        self.qz = np.empty((n, M))
        init = Batch(np.arange(K), np.ones(K, dtype=np.int64))
        for k, g in enumerate(self.rngs):  # every arm once, answered as in simulate
            self.counts[k] += 1
            self.rsum[k] += envs[k].pull(init, g, 0).rewards
            self._refresh_row(k)
        self.rad = radius(self.log_const, self.logdet, self.sigma, self.offset)
        self.m2c = np.zeros((n, M))
        self.ci = np.full(n, -1)
        self.B = np.full(n, math.inf)
        self.best = np.zeros(n, dtype=np.int64)
        self.steps = 0
        self.since_refresh = 0
        # arm-selection data per (instance, unordered pair), rows of padded tables
        n_inst = len(self.inst_key)
        self.pair_id: dict[int, int] = {}
        self.pair_table = (np.full((n_inst, M, M), -1, dtype=np.int64)
                           if n_inst * M * M <= _DENSE_PAIRS else None)
        self.n_pairs = 0
        self.sup = np.zeros((64, 1), dtype=np.int64)
        self.inv_p = np.full((64, 1), np.inf)
        self.used = np.zeros((n, 64), dtype=bool)  # pairs each trial has met
        self.seq = np.empty((n, 1024), dtype=np.int16 if K < 2**15 else np.int64)
        self.block = np.empty((n, 0))
        self.pos = 0

    # -- state ---------------------------------------------------------------------------------
    def _refresh_row(self, k: int) -> None:
        a = self.protos[self.ids[k]]
        self.S[k], self.logdet[k], self.est[k], self.qz[k] = fresh_state(
            a.X, a.Z, self.counts[k], self.rsum[k], self.lam)

    def _keep(self, keep: np.ndarray) -> None:
        """Drop the rows of trials that finished."""
        names = ["ids", "inst", "counts", "rsum", "S", "logdet", "rad", "est", "qz", "m2c", "ci",
                 "B", "best", "used", "block", "means", "noise_sd", "log_const", "offset"]
        if not self.shared:
            names += ["X", "Z"]
        for name in names:
            setattr(self, name, getattr(self, name)[keep])
        self.rngs = [g for g, k in zip(self.rngs, keep, strict=True) if k]

    def _pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Row of each trial's pair (i, j) in the selection tables; new pairs are solved."""
        if self.pair_table is not None:  # a dense (instances, M, M) table of rows, −1 unknown
            pid = self.pair_table[self.inst, i, j]
            if pid.min() >= 0:
                return pid
        M = self.M
        keys = ((self.inst * M + np.minimum(i, j)) * M + np.maximum(i, j)).tolist()
        get = self.pair_id.get
        ids = [get(k) for k in keys]
        if None in ids:
            for key in dict.fromkeys(k for k, p in zip(keys, ids, strict=True) if p is None):
                g, pair = divmod(key, M * M)
                self._add_pair(key, g, *divmod(pair, M))
            ids = [get(k) for k in keys]
        return np.array(ids, dtype=np.int64)

    def _add_pair(self, key: int, g: int, lo: int, hi: int) -> None:
        # the block driver's cache: one LP per pair per process
        support, inv_p = shared_pair_ratios(self.inst_key[g], self.inst_X[g], self.inst_Z[g],
                                            lo, hi)
        p = self.n_pairs
        if p == self.sup.shape[0]:  # grow the tables by doubling
            self.sup = np.concatenate([self.sup, np.zeros_like(self.sup)])
            self.inv_p = np.concatenate([self.inv_p, np.full_like(self.inv_p, np.inf)])
            self.used = np.concatenate([self.used, np.zeros_like(self.used)], axis=1)
        if support.size > self.sup.shape[1]:
            # Padding: arm 0 with ratio +inf, never the argmin (counts are ≥ 1 after the
            # initialisation) and after the real entries, so ties still go to the lowest arm.
            extra = support.size - self.sup.shape[1]
            self.sup = np.pad(self.sup, ((0, 0), (0, extra)))
            self.inv_p = np.pad(self.inv_p, ((0, 0), (0, extra)), constant_values=np.inf)
        self.sup[p, : support.size] = support
        self.inv_p[p, : support.size] = inv_p
        self.pair_id[key] = p
        if self.pair_table is not None:
            self.pair_table[g, lo, hi] = self.pair_table[g, hi, lo] = p
        self.n_pairs += 1

    def _rewards(self, rows: np.ndarray, arm: np.ndarray) -> np.ndarray:
        """One pull's reward per active trial, drawn as ``env.pull`` of a one-pull batch."""
        mu = self.means[rows, arm]
        if self.noise == "gaussian":
            if self.pos == self.block.shape[1]:
                self.block = np.stack([g.standard_normal(_BLOCK) for g in self.rngs])
                self.pos = 0
            self.pos += 1
            return mu + self.noise_sd * self.block[:, self.pos - 1]
        if self.noise == "rademacher":
            p = ((1.0 + mu) / 2.0).tolist()
            return np.array([2.0 * g.binomial(1, q) - 1.0 for g, q in
                             zip(self.rngs, p, strict=True)])
        return np.array([g.binomial(1, q) for g, q in zip(self.rngs, mu.tolist(), strict=True)],
                        dtype=float)

    # -- rounds --------------------------------------------------------------------------------
    def run(self, checkpoints: np.ndarray | None) -> list[Trial]:
        self.results: list[Trial | None] = [None] * self.n
        self._checkpoints = (None if checkpoints is None
                             else np.asarray(checkpoints, dtype=np.int64))
        K, d = self.K, self.d
        rows = np.empty(0, dtype=np.int64)
        while self.ids.size:
            if self.horizon is not None and K + self.steps >= self.horizon:
                self._finish(np.ones(self.ids.size, dtype=bool), stopped=False)
                break
            if rows.size != self.ids.size:
                rows = np.arange(self.ids.size)
            X, Z = self.X, self.Z
            # gap index: i_t, j_t, B(t), as LinGapE.gap_index
            i = self.est.argmax(1)
            new = np.flatnonzero(i != self.ci)
            if new.size:
                zi = Z[i[new]] if self.shared else Z[new, i[new]]
                v = np.matmul(self.S[new, :d], zi[:, :, None])
                self.m2c[new] = -2.0 * np.matmul(Z if self.shared else Z[new], v)[:, :, 0]
                self.ci[new] = i[new]
            qz, est = self.qz, self.est
            ucb = qz + (qz[rows, i][:, None] + self.m2c)
            np.maximum(ucb, 0.0, out=ucb)
            np.sqrt(ucb, out=ucb)
            ucb *= self.rad[:, None]
            ucb += est
            ucb -= est[rows, i][:, None]
            ucb[rows, i] = -np.inf
            j = ucb.argmax(1)
            self.B = ucb[rows, j]
            self.best = i
            stop = self.B <= self.eps
            if stop.any():
                self._finish(stop, stopped=True)
                if not self.ids.size:
                    break
                i, j = i[~stop], j[~stop]
                rows = np.arange(self.ids.size)
                X, Z = self.X, self.Z
            self.steps += 1
            # the ratio rule: argmin over the support of T_a / p*_a(i, j)
            pid = self._pairs(i, j)
            self.used[rows, pid] = True
            sup = self.sup[pid]
            arm = sup[rows, (self.counts[rows[:, None], sup] * self.inv_p[pid]).argmin(1)]
            if self.steps > self.seq.shape[1]:
                self.seq = np.concatenate([self.seq, np.empty_like(self.seq)], axis=1)
            self.seq[self.ids, self.steps - 1] = arm
            r = self._rewards(rows, arm)
            # observe, as LinGapE._observe
            self.counts[rows, arm] += 1
            self.rsum[rows, arm] += r
            if self.since_refresh >= self.refresh_every:
                for k in rows:
                    self._refresh_row(k)
                self.rad = radius(self.log_const, self.logdet, self.sigma, self.offset)
                self.m2c[:] = 0.0
                self.ci[:] = -1
                self.since_refresh = 0
                continue
            S = self.S
            x = X[arm] if self.shared else X[rows, arm]
            ux = np.matmul(S, x[:, :, None])[:, :, 0]
            u = ux[:, :d]
            denom = 1.0 + np.einsum("kd,kd->k", x, u)
            scaled = u / denom[:, None]
            resid = r - ux[:, d]
            ux[:, d] = -resid
            S -= ux[:, :, None] * scaled[:, None, :]
            self.logdet += np.log(denom)
            self.rad = radius(self.log_const, self.logdet, self.sigma, self.offset)
            zu = np.matmul(Z, u[:, :, None])[:, :, 0]
            zu_scaled = zu / denom[:, None]
            self.qz -= zu * zu_scaled
            self.est += zu_scaled * resid[:, None]
            self.m2c += zu * (2.0 * zu_scaled[rows, self.ci])[:, None]
            self.since_refresh += 1
        return self.results  # type: ignore[return-value]

    def _finish(self, done: np.ndarray, *, stopped: bool) -> None:
        """Build the Trial of every trial in ``done`` and drop them from the arrays."""
        K, steps = self.K, self.steps
        # Every run is one pull and every batch after the first one run: the trials share
        # read-only run counts and batch ends (a million-pull trial keeps only its arms).
        ones = np.ones(K + steps, dtype=np.int64)
        ends = K + np.arange(steps + 1, dtype=np.int64)
        ones.flags.writeable = ends.flags.writeable = False
        for k in np.flatnonzero(done):
            trial = int(self.ids[k])
            info = {"steps": steps, "init_pulls": K, "pairs_solved": int(self.used[k].sum()),
                    "B": float(self.B[k]), "confidence_radius": float(self.rad[k])}
            self.results[trial] = one_pull_trial(
                self.envs[trial], self.horizon, self.protos[trial].Z, self.counts[k],
                self.seq[trial, :steps], stopped=stopped, best=int(self.best[k]),
                theta=self.S[k, self.d].copy(), info=info, checkpoints=self._checkpoints,
                seconds=0.0, runs=(ones, ends))
        self._keep(~done)
