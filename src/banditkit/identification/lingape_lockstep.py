"""LinGapE for many trials at once: one vectorised step per round across trials.

LinGapE (:class:`~banditkit.identification.lingape.LinGapE`) is fully sequential: about a
million one-pull rounds per trial on the Soare et al. benchmark, each a Python step of
:func:`banditkit.simulate`. :func:`lingape_lockstep` runs the trials of one sweep point together,
with state arrays carrying a leading trial axis (A⁻¹ stacked over θ̂, the item estimates, the
quadratic forms, the pull counts); a trial that stops drops out of the arrays.

It reproduces ``simulate(make_lingape(env, rng, **params), env, horizon=horizon, seed=seed)``
exactly, trial by trial, on Gaussian :class:`~banditkit.envs.linear.LinearBandit` environments
(the Fiez et al. benchmarks):

* Noise is drawn in simulate's order. The initialisation batch (every arm once) is answered by
  ``env.pull`` itself, which draws ``standard_normal(K)``; every later batch is one pull, one
  ``standard_normal(1)``. numpy's ``standard_normal(n)`` yields the same numbers as ``n``
  single draws from the same Generator, so each trial's later draws are read in blocks. A
  one-pull reward is the environment's ``n·μ + √n·σ·z`` with ``n = 1``, i.e. ``μ + σ·z``
  exactly (multiplying by 1.0 and √1 are exact).
* The arithmetic of a round is the class's, operation for operation: elementwise operations are
  exact per element whatever the shape; every product with a sum inside is a matrix–vector or
  vector–vector product of the same operands, handed by ``np.matmul`` over the trial axis to the
  same BLAS routines (gemv, dot) that ``ndarray.dot`` calls in the class; log det A is updated
  with ``math.log`` in both; the periodic refresh and the arm-selection programs call the same
  functions (:func:`~banditkit.identification.lingape.fresh_state`,
  :func:`~banditkit.identification.lingape.pair_ratios`).

``tests/test_lingape_lockstep.py`` checks that pull sequences, batches, counts, stopping times,
recommendations and ``info`` are identical, and that the results do not depend on how the trials
are grouped. Other environments (Bernoulli or Rademacher noise, non-stationary ones), the greedy
selection rule, a single item, or a horizon shorter than the initialisation run trial by trial
through :func:`banditkit.simulate`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from ..envs.base import Environment
from ..envs.linear import LinearBandit
from ..protocol import Batch, DecisionLog
from ..rng import SeedLike, as_generator
from ..simulate import default_checkpoints, simulate
from ..trial import Trial
from ..validation import check_positive_int
from .lingape import LinGapE, empirical_best, fresh_state, pair_ratios, radius

__all__ = ["lingape_lockstep", "make_lingape"]

_BLOCK = 4096  # rounds of noise pre-drawn per trial at a time


def make_lingape(env: Environment, rng: np.random.Generator | None = None, *, delta: float,
                 theta_bound: float | None = None, **params: object) -> LinGapE:
    """LinGapE on a linear environment's arms ``env.X`` and items ``env.Z`` (a figure factory).

    Parameters
    ----------
    env : LinearBandit
        Any environment with ``X``, ``Z`` and ``theta`` attributes.
    rng : Generator, optional
        The algorithm stream ξ; LinGapE has no internal randomness, so it is unused.
    delta : float
        Confidence δ.
    theta_bound : float, optional
        S ≥ ‖θ*‖₂; by default ‖θ*‖₂ itself, as in Fiez et al.'s code.
    **params
        Other keyword arguments of :class:`~banditkit.identification.lingape.LinGapE`.
    """
    if theta_bound is None:
        theta_bound = float(np.linalg.norm(env.theta))
    return LinGapE(env.X, env.Z, delta, theta_bound=theta_bound, **params)


def lingape_lockstep(env: Environment, rngs: Sequence[np.random.Generator],
                     seeds: Sequence[SeedLike], horizon: int | None,
                     checkpoints: np.ndarray | None, **params: object) -> list[Trial]:
    """Run ``len(seeds)`` trials of LinGapE on ``env`` in lock-step.

    Matches :attr:`banditkit.experiments.spec.AlgorithmSpec.lockstep`.

    Parameters
    ----------
    env : Environment
        A Gaussian :class:`~banditkit.envs.linear.LinearBandit` runs vectorised; any other
        environment runs trial by trial through :func:`banditkit.simulate`.
    rngs : sequence of Generator
        Algorithm streams ξ (unused: LinGapE has no internal randomness), one per trial.
    seeds : sequence of seed-like
        Noise seed of each trial, as given to :func:`banditkit.simulate`. A Generator given
        here is read ahead (blocks of draws), so it ends in a different state than after
        simulate; its trial's numbers are the same.
    horizon : int, optional
        Budget cap on the pulls of each trial (``None``: run until LinGapE stops).
    checkpoints : array of int, optional
        As in :func:`banditkit.simulate` (identifiers record no curve; kept for the record).
    **params
        Keyword arguments of :func:`make_lingape` (``delta``, ``theta_bound``, ...).

    Returns
    -------
    list of Trial
        Trial ``i`` equals ``simulate(make_lingape(env, rngs[i], **params), env,
        horizon=horizon, seed=seeds[i], checkpoints=checkpoints)`` in every field but
        ``seconds`` (here the wall time of the whole run divided by the number of trials).
    """
    if len(rngs) != len(seeds):
        raise ValueError(f"rngs and seeds must have the same length, got {len(rngs)} and "
                         f"{len(seeds)}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    proto = make_lingape(env, None, **params)  # validates the parameters as the factory does
    vectorised = (type(env) is LinearBandit and env.noise == "gaussian"
                  and proto.selection == "ratio" and proto.n_items > 1
                  and (horizon is None or horizon >= proto.n_arms))
    if not vectorised or not seeds:
        return [simulate(make_lingape(env, rng, **params), env, horizon=horizon, seed=seed,
                         checkpoints=checkpoints) for rng, seed in zip(rngs, seeds, strict=True)]
    return _Lockstep(proto, env, seeds, horizon).run(checkpoints)


class _Lockstep:
    """The state of the active trials, one row each, and the rounds that advance them."""

    def __init__(self, proto: LinGapE, env: LinearBandit, seeds: Sequence[SeedLike],
                 horizon: int | None) -> None:
        self.proto, self.env, self.horizon = proto, env, horizon
        self.X, self.Z = proto.X, proto.Z
        self.K, self.M, self.d = proto.n_arms, proto.n_items, proto.d
        self.means, self.sigma = env.means, env.sigma
        n = len(seeds)
        self.n = n
        self.results: list[Trial | None] = [None] * n
        self.start = time.perf_counter()

        # Initialisation: every arm once, answered by the environment as in simulate.
        init = Batch(np.arange(self.K), np.ones(self.K, dtype=np.int64))
        self.rngs = [as_generator(s) for s in seeds]
        K, M, d = self.K, self.M, self.d
        self.ids = np.arange(n)
        self.counts = np.zeros((n, K), dtype=np.int64)
        self.rsum = np.zeros((n, K))
        self.S = np.empty((n, d + 1, d))
        self.logdet = np.empty(n)
        self.est = np.empty((n, M))
        self.qz = np.empty((n, M))
        for k, g in enumerate(self.rngs):
            rewards = env.pull(init, g, 0).rewards
            np.add.at(self.counts[k], init.arms, init.counts)
            np.add.at(self.rsum[k], init.arms, rewards)
            self._refresh_row(k)
        self.rad = radius(proto._log_const, self.logdet, proto.sigma, proto._radius_offset)
        self.m2c = np.zeros((n, M))
        self.ci = np.full(n, -1)
        self.B = np.full(n, math.inf)
        self.best = np.zeros(n, dtype=np.int64)
        self.steps = 0
        self.since_refresh = 0
        # arm-selection data per unordered item pair, shared by the trials (one LP per pair)
        self.pair_id: dict[int, int] = {}
        self.pair_table = np.full((M, M), -1, dtype=np.int64) if M <= 2048 else None
        self.sup = np.zeros((0, d), dtype=np.int64)
        self.inv_p = np.zeros((0, d))
        self.used = np.zeros((n, 0), dtype=bool)  # pairs each trial has met (its "solved" ones)
        # pull sequences after the initialisation, one row per trial (by original index)
        self.seq = np.empty((n, 1024), dtype=np.int16 if K < 2**15 else np.int64)
        self.block = np.empty((n, 0))
        self.pos = 0
        self._ones = self._ends = np.empty(0, dtype=np.int64)

    # -- state ---------------------------------------------------------------------------------
    def _refresh_row(self, k: int) -> None:
        # fresh arrays, as in the class, so that BLAS sees operands laid out the same way
        self.S[k], self.logdet[k], self.est[k], self.qz[k] = fresh_state(
            self.X, self.Z, self.counts[k].copy(), self.rsum[k].copy(), self.proto.regularizer)

    def _keep(self, keep: np.ndarray) -> None:
        """Drop the rows of trials that finished."""
        for name in ("ids", "counts", "rsum", "S", "logdet", "rad", "est", "qz", "m2c", "ci",
                     "B", "best", "used", "block"):
            setattr(self, name, getattr(self, name)[keep])
        self.rngs = [g for g, k in zip(self.rngs, keep, strict=True) if k]

    def _pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Row of each trial's pair (i, j) in the selection tables; new pairs are solved."""
        if self.pair_table is not None:  # few items: a dense (M, M) table of rows, −1 unknown
            pid = self.pair_table[i, j]
            if pid.min() >= 0:
                return pid
        M = self.M
        keys = (np.minimum(i, j) * M + np.maximum(i, j)).tolist()
        get = self.pair_id.get
        ids = [get(k) for k in keys]
        if None in ids:
            for key in dict.fromkeys(k for k, p in zip(keys, ids, strict=True) if p is None):
                support, inv_p = pair_ratios(self.X, self.Z, key // M, key % M)
                self._add_pair(key, support, inv_p)
            ids = [get(k) for k in keys]
        return np.array(ids, dtype=np.int64)

    def _add_pair(self, key: int, support: np.ndarray, inv_p: np.ndarray) -> None:
        width = max(self.sup.shape[1], support.size)
        if width > self.sup.shape[1]:  # a wider support than any before: pad the tables
            extra = width - self.sup.shape[1]
            self.sup = np.pad(self.sup, ((0, 0), (0, extra)))
            self.inv_p = np.pad(self.inv_p, ((0, 0), (0, extra)), constant_values=np.inf)
        # Padding: arm 0 with ratio +inf, never the argmin (counts are ≥ 1 after the
        # initialisation) and after the real entries, so ties still go to the lowest arm.
        sup = np.zeros(width, dtype=np.int64)
        ip = np.full(width, np.inf)
        sup[: support.size], ip[: support.size] = support, inv_p
        self.pair_id[key] = self.sup.shape[0]
        if self.pair_table is not None:
            lo, hi = divmod(key, self.M)
            self.pair_table[lo, hi] = self.pair_table[hi, lo] = self.sup.shape[0]
        self.sup = np.vstack([self.sup, sup])
        self.inv_p = np.vstack([self.inv_p, ip])
        self.used = np.pad(self.used, ((0, 0), (0, 1)))

    # -- rounds --------------------------------------------------------------------------------
    def run(self, checkpoints: np.ndarray | None) -> list[Trial]:
        self._checkpoints = (None if checkpoints is None
                             else np.asarray(checkpoints, dtype=np.int64))
        proto, K, d = self.proto, self.K, self.d
        X, Z = self.X, self.Z
        log_const, sigma, offset = proto._log_const, proto.sigma, proto._radius_offset
        rows = rows_k = np.empty(0, dtype=np.int64)
        while self.ids.size:
            if self.horizon is not None and K + self.steps >= self.horizon:
                self._finish(np.ones(self.ids.size, dtype=bool), stopped=False)
                break
            if rows.size != self.ids.size:
                rows = np.arange(self.ids.size)
                rows_k = rows * K
            # gap index: i_t, j_t, B(t), as LinGapE.gap_index
            i = self.est.argmax(1)
            new = np.flatnonzero(i != self.ci)
            if new.size:
                v = np.matmul(self.S[new, :d], Z[i[new]][:, :, None])
                self.m2c[new] = -2.0 * np.matmul(Z, v)[:, :, 0]
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
            stop = self.B <= proto.epsilon
            if stop.any():
                self._finish(stop, stopped=True)
                if not self.ids.size:
                    break
                i, j = i[~stop], j[~stop]
                rows = np.arange(self.ids.size)
                rows_k = rows * K
            self.steps += 1
            # the ratio rule: argmin over the support of T_a / p*_a(i, j)
            pid = self._pairs(i, j)
            self.used[rows, pid] = True
            sup = self.sup[pid]
            arm = sup[rows, (self.counts[rows[:, None], sup] * self.inv_p[pid]).argmin(1)]
            if self.steps > self.seq.shape[1]:
                self.seq = np.concatenate([self.seq, np.empty_like(self.seq)], axis=1)
            self.seq[self.ids, self.steps - 1] = arm
            if self.pos == self.block.shape[1]:
                self.block = np.stack([g.standard_normal(_BLOCK) for g in self.rngs])
                self.pos = 0
            r = self.means[arm] + self.sigma * self.block[:, self.pos]
            self.pos += 1
            # observe, as LinGapE._observe
            flat = rows_k + arm
            self.counts.reshape(-1)[flat] += 1
            self.rsum.reshape(-1)[flat] += r
            if self.since_refresh >= proto.refresh_every:
                for k in rows:
                    self._refresh_row(k)
                self.rad = radius(log_const, self.logdet, sigma, offset)
                self.m2c[:] = 0.0
                self.ci[:] = -1
                self.since_refresh = 0
                continue
            S = self.S
            x = X[arm]
            ux = np.matmul(S, x[:, :, None])[:, :, 0]
            u = ux[:, :d]
            denom = 1.0 + np.matmul(x[:, None, :], u[:, :, None])[:, 0, 0]
            scaled = u / denom[:, None]
            resid = r - ux[:, d]
            ux[:, d] = -resid
            S -= ux[:, :, None] * scaled[:, None, :]
            self.logdet += np.array([math.log(v) for v in denom.tolist()])
            self.rad = radius(log_const, self.logdet, sigma, offset)
            zu = np.matmul(Z, u[:, :, None])[:, :, 0]
            zu_scaled = zu / denom[:, None]
            self.qz -= zu * zu_scaled
            self.est += zu_scaled * resid[:, None]
            self.m2c += zu * (2.0 * zu_scaled[rows, self.ci])[:, None]
            self.since_refresh += 1
        seconds = (time.perf_counter() - self.start) / self.n
        for result in self.results:
            result.seconds = seconds  # type: ignore[union-attr]
        return self.results  # type: ignore[return-value]

    def _finish(self, done: np.ndarray, *, stopped: bool) -> None:
        """Build the Trial of every trial in ``done`` and drop them from the arrays."""
        K, steps = self.K, self.steps
        n_pulls = K + steps
        checkpoints = (default_checkpoints(self.horizon if self.horizon is not None
                                           else max(n_pulls, 1))
                       if self._checkpoints is None else self._checkpoints)
        best_item = self.env.best_item(self.horizon)
        # Every run is one pull and every batch after the first one run: the trials share
        # read-only run counts and batch ends (a million-pull trial keeps only its arms).
        if self._ones.size < n_pulls:
            self._ones = np.ones(2 * n_pulls, dtype=np.int64)
            self._ends = K + np.arange(2 * n_pulls, dtype=np.int64)
            self._ones.flags.writeable = self._ends.flags.writeable = False
        ones, ends = self._ones, self._ends
        for k in np.flatnonzero(done):
            trial = int(self.ids[k])
            arms = np.concatenate([np.arange(K), self.seq[trial, :steps].astype(np.int64)])
            log = DecisionLog.from_runs(arms, ones[:n_pulls], ends[: steps + 1])
            recommendation = (int(self.best[k]) if stopped
                              else empirical_best(self.Z, self.S[k, self.d].copy()))
            info = {"steps": steps, "init_pulls": K, "pairs_solved": int(self.used[k].sum()),
                    "B": float(self.B[k]), "confidence_radius": float(self.rad[k])}
            self.results[trial] = Trial(
                counts=self.counts[k].copy(), n_pulls=n_pulls, decisions=log,
                checkpoints=checkpoints, regret=None, violation=None,
                recommendation=recommendation, correct=recommendation == best_item,
                stopped=stopped, n_batches=steps + 1, seconds=0.0, info=info)
        self._keep(~done)
