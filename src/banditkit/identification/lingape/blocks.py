"""LinGapE driven in speculative blocks of pulls with low-rank (Woodbury) state updates.

LinGapE (Xu, Honda and Sugiyama, AISTATS 2018, Algorithm 1; the analysed ratio rule as run by
Fiez et al., NeurIPS 2019, Section 5 and Appendix F — see
:class:`~banditkit.identification.lingape.LinGapE`) pulls one arm per round: a million or more
rounds per trial on the Soare et al. benchmark. :func:`simulate_lingape` is a drop-in for
:func:`banditkit.simulate` that makes the same decisions from the same noise stream without a
Python step per pull.

The block method
----------------
Each round computes (i_t, j_t, B(t)) from θ̂_t and A_t⁻¹, stops when B(t) ≤ ε, and otherwise
pulls a_t = argmin over the support of p*(i_t, j_t) of T_a/p*_a = T_a·(1/p*_a) (ties to the
first arm of the support, in ascending arm order). While the pair (i_t, j_t) stays the same the
pulls depend on the counts alone: arm a's successive keys are (T_a + k)·(1/p*_a), k = 0, 1, ...,
and the next L pulls are the first L keys of the merged order (sorted by key, then by support
position) — the sequential argmin, on the same floating-point products. So from a state (counts,
reward sums, V = A⁻¹, θ̂, the item estimates Zθ̂, the quadratic forms z_kᵀVz_k, log det A):

1. evaluate (i, j, B) as :meth:`LinGapE.gap_index` does; stop if B ≤ ε;
2. speculate the next L pulls for the pair (i, j), and draw their rewards as ``env.pull`` draws
   L consecutive one-pull batches (one draw per pull from the same Generator);
3. the state after s of them is a rank-m update of the block's start, m = |support|: with
   U = X_S, N_s = diag(pulls of each support arm among the first s), ρ_s their reward sums,
   C = UVUᵀ, P = ZVUᵀ, g = Uθ̂ and K_s = (I + N_s C)⁻¹N_s,

   * A_s⁻¹ = V − VUᵀK_sUV and Zθ̂_s = Zθ̂ + P(ρ_s − K_s(g + Cρ_s)),
   * ‖z_i − z_k‖²_{A_s⁻¹} = ‖z_i − z_k‖²_V − D_kᵀK_sD_k with D_k = P_i − P_k,
   * log det A_s = log det A + log det(I + N_s C) (Sylvester's determinant identity),

   evaluated for all s at once (chunks of s, so arrays stay at a few million entries);
4. the first s whose gap index has another pair, or B ≤ ε, ends the block: the pulls before it
   are accepted (all L if there is none), the generator is rewound and exactly the accepted
   pulls' rewards are drawn again, so the noise stream stands where simulate's would. The state
   moves by the same formulas, and is recomputed afresh from the counts and reward sums
   (:func:`~banditkit.identification.lingape.fresh_state`) every ``refresh_every`` accepted
   pulls so that round-off does not accumulate.

L adapts: doubled after a fully accepted block, otherwise twice the accepted length; blocks of
one pull (the pair changed at once) skip the speculation.

Exactness
---------
Every decision (pair, arm, stopping round) is a function of the state the sequential algorithm
would have, computed by a different but exact-in-exact-arithmetic formula: the decisions are
those of ``simulate(LinGapE(...), env)`` in exact arithmetic, and the pulled arms come from the
same floating-point keys. Floating-point values such as B(t) and C_t differ from the sequential
class's at round-off level (about 1e-12 relative), so a decision could differ only where the
sequential algorithm meets an exact floating-point tie (two items' estimates, or B(t) = ε, equal
to the last bits). ``tests/test_lingape_blocks.py`` checks equality with simulate.
"""

from __future__ import annotations

import functools
import hashlib
import math
import time

import numpy as np

from ...engines import Engine
from ...envs.base import Environment
from ...envs.linear import LinearBandit
from ...protocol import Algorithm, Batch, DecisionLog
from ...rng import SeedLike, as_generator
from ...simulate import default_checkpoints, simulate
from ...trial import Trial
from ...validation import check_positive_int
from . import LinGapE, challenger, empirical_best, fresh_state, pair_ratios, radius

__all__ = ["clear_pair_cache", "lingape_engine", "simulate_lingape"]

_NOISES = ("gaussian", "bernoulli", "rademacher")
_CHUNK_ENTRIES = 1 << 20  # (rounds × items) entries of one chunk of the speculative check
_MAX_BLOCK = 1 << 18  # pulls speculated at most in one block
_FIRST_BLOCK = 64
_FIRST_CHUNK = 256
# Below _MIN_BLOCK expected pulls a block costs more than single pulls: those run one at a
# time until the pair has stayed the same for _RETRY_AFTER rounds, then blocks are tried again.
_MIN_BLOCK = 8
# With more than _PRUNE_ABOVE items a chunk is checked over the _PRUNE_KEEP items most likely
# to matter (per bound), in chunks of at most _PRUNED_ROWS states, the others ruled out by bounds
_PRUNE_ABOVE = 200
_PRUNE_KEEP = 12
_PRUNED_ROWS = 4096
_RETRY_AFTER = 4
_HEAVY = 5_000


def simulate_lingape(algorithm: Algorithm, env: Environment, *, horizon: int | None = None,
                     seed: SeedLike = 0, checkpoints: np.ndarray | None = None) -> Trial:
    """One trial of LinGapE on ``env``: :func:`banditkit.simulate`'s result, in blocks of pulls.

    Parameters
    ----------
    algorithm : LinGapE
        A fresh :class:`~banditkit.identification.lingape.LinGapE`; its X, Z, δ, S, ε, λ, σ and
        ``refresh_every`` are read, and the object itself is left untouched (the trial is run
        on the driver's own state).
    env : Environment
        A stationary :class:`~banditkit.envs.linear.LinearBandit` (Gaussian, Bernoulli or
        Rademacher noise) runs in blocks.
    horizon, seed, checkpoints
        As in :func:`banditkit.simulate`; the noise Generator is made from ``seed`` the same way,
        and a Generator given as ``seed`` ends in the state simulate would leave it in.

    Returns
    -------
    Trial
        Equal to ``simulate(algorithm, env, horizon=horizon, seed=seed,
        checkpoints=checkpoints)`` in its decisions, counts, pulls, stopping, recommendation
        and ``info`` (whose floats B and C_t agree to round-off; see the module docstring);
        ``seconds`` is this driver's wall time. The greedy selection rule, one item, a horizon
        shorter than the initialisation, an algorithm that has already run, and other
        environments (non-stationary ones included) run through :func:`banditkit.simulate`.
    """
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    if not fast_path_applies(algorithm, env, horizon):
        return simulate(algorithm, env, horizon=horizon, seed=seed, checkpoints=checkpoints,
                        engine="reference")
    return _Blocks(algorithm, env, horizon, as_generator(seed)).run(checkpoints)


def lingape_engine(algorithm: Algorithm, env: Environment, horizon: int | None
                   ) -> Engine | None:
    """LinGapE's block driver (:attr:`banditkit.protocol.Algorithm.engines`), where
    :func:`fast_path_applies`."""
    if not fast_path_applies(algorithm, env, horizon):
        return None
    return Engine("blocks", run=simulate_lingape)


def fast_path_applies(algorithm: Algorithm, env: Environment, horizon: int | None) -> bool:
    """Whether LinGapE's fast drivers (blocks, lock-step) run this trial themselves: a fresh
    ratio-rule LinGapE with two or more items on a stationary LinearBandit with Gaussian,
    Bernoulli or Rademacher noise, and a horizon that covers the initialisation; anything else
    goes through :func:`banditkit.simulate`."""
    return (type(algorithm) is LinGapE and type(env) is LinearBandit
            and env.noise in _NOISES and algorithm.selection == "ratio"
            and algorithm.n_arms == env.n_arms and algorithm.n_items > 1
            and algorithm.t == 0 and (horizon is None or horizon >= algorithm.n_arms))


def one_pull_trial(env: LinearBandit, horizon: int | None, Z: np.ndarray, counts: np.ndarray,
                   seq: np.ndarray, *, stopped: bool, best: int, theta: np.ndarray,
                   info: dict, checkpoints: np.ndarray | None, seconds: float,
                   runs: tuple[np.ndarray, np.ndarray] | None = None) -> Trial:
    """The Trial that :func:`banditkit.simulate` records for a LinGapE run: the initialisation
    (every arm once) as one batch, then the one-pull rounds ``seq``.

    ``runs`` optionally supplies read-only arrays of ones and batch ends at least as long as
    needed, so that the trials of a lock-step call share them.
    """
    K, steps = counts.size, seq.size
    n_pulls = K + steps
    ones, ends = runs if runs is not None else (np.ones(n_pulls, dtype=np.int64),
                                                K + np.arange(steps + 1, dtype=np.int64))
    arms = np.concatenate([np.arange(K, dtype=np.int64), seq.astype(np.int64)])
    log = DecisionLog.from_runs(arms, ones[:n_pulls], ends[:steps + 1])
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else max(n_pulls, 1))
    recommendation = best if stopped else empirical_best(Z, theta)
    return Trial(counts=counts.copy(), n_pulls=n_pulls, decisions=log,
                 checkpoints=np.asarray(checkpoints, dtype=np.int64), regret=None,
                 violation=None, recommendation=recommendation,
                 correct=recommendation == env.best_item(horizon), stopped=stopped,
                 n_batches=steps + 1, seconds=seconds, info=info)


#: Arm-selection data per (instance digest, item pair), shared by the trials run in this process
#: on the same arms and items (a fixed instance): each pair's linear program is solved once, as
#: the class would solve it (the same function, the same inputs, hence the same result).
_SHARED: dict[tuple[bytes, int, int], tuple[np.ndarray, np.ndarray]] = {}
_SHARED_MAX = 100_000


def clear_pair_cache() -> None:
    """Forget the arm-selection data shared between trials (e.g. after swapping the solver)."""
    _SHARED.clear()


def instance_key(X: np.ndarray, Z: np.ndarray) -> bytes:
    """Digest of the arms and items: the instance part of the shared cache's keys."""
    digest = hashlib.blake2b(digest_size=16)
    for a in (X, Z):
        digest.update(repr(a.shape).encode())
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.digest()


def shared_pair_ratios(instance: bytes, X: np.ndarray, Z: np.ndarray, lo: int, hi: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~banditkit.identification.lingape.pair_ratios` of the pair ``lo < hi``, solved
    once per process for each instance (``instance = instance_key(X, Z)``)."""
    shared = (instance, lo, hi)
    hit = _SHARED.get(shared)
    if hit is None:
        hit = _SHARED[shared] = pair_ratios(X, Z, lo, hi)
        if len(_SHARED) > _SHARED_MAX:
            _SHARED.pop(next(iter(_SHARED)))
    return hit


@functools.cache
def _triu(m: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(m)


class _Blocks:
    """One trial's state (V = A⁻¹, θ̂, Zθ̂, quadratic forms, log det A, counts) and its blocks."""

    def __init__(self, alg: LinGapE, env: LinearBandit, horizon: int | None,
                 rng: np.random.Generator) -> None:
        self.alg, self.env, self.horizon, self.rng = alg, env, horizon, rng
        self.X, self.Z = alg.X, alg.Z
        self.K, self.M, self.d = alg.n_arms, alg.n_items, alg.d
        self.lam, self.eps = alg.regularizer, alg.epsilon
        self.log_const, self.sigma, self.offset = alg._log_const, alg.sigma, alg._radius_offset
        self.counts = np.zeros(self.K, dtype=np.int64)
        self.rsum = np.zeros(self.K)
        self.ratios: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.instance = instance_key(self.X, self.Z)
        self.seq = np.empty(1024, dtype=np.int64)  # arms pulled after the initialisation
        self.n_blocks = 0  # blocks speculated (single pulls not counted)
        self.steps = 0
        self.B = math.inf

    # -- state ---------------------------------------------------------------------------------
    def _refresh(self) -> None:
        S, self.logdet, self.est, self.qz = fresh_state(self.X, self.Z, self.counts, self.rsum,
                                                       self.lam)
        self.V, self.theta = S[: self.d], S[self.d]
        self.rad = radius(self.log_const, self.logdet, self.sigma, self.offset)
        self.ci = -1  # item whose cross terms c_k = z_kᵀVz_ci are cached in self.c
        self.c = np.zeros(self.M)
        self.since_refresh = 0

    def _gap_index(self) -> tuple[int, int, float]:
        """(i_t, j_t, B(t)) for the current state, as :meth:`LinGapE.gap_index`."""
        est = self.est
        i = int(est.argmax())
        if i != self.ci:
            self.c = self.Z.dot(self.V.dot(self.Z[i]))
            self.ci = i
        j, B = challenger(est, self.qz, -2.0 * self.c, i, self.rad)
        return i, j, B

    def _pair(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        key = (i, j) if i < j else (j, i)
        hit = self.ratios.get(key)
        if hit is None:  # first time in this trial (counted in pairs_solved)
            hit = self.ratios[key] = shared_pair_ratios(self.instance, self.X, self.Z, *key)
        return hit

    # -- the pulls of a block ------------------------------------------------------------------
    def _next_arms(self, support: np.ndarray, inv_p: np.ndarray, L: int) -> np.ndarray:
        """Support positions of the next L pulls of the ratio rule for a fixed pair.

        Arm p's keys are (T_p + k)·inv_p[p], k = 0, 1, ...: the sequential argmin with ties to
        the first position is the merged order by (key, position). Only keys up to a bound
        τ on the L-th smallest key are generated: Σ_p (τ/inv_p[p] − T_p) ≥ L at
        τ = L + Σ_p T_p (Σ_p 1/inv_p[p] = 1), with slack for rounding; the bound is checked
        exactly below, and all L keys per arm are generated if it fails.
        """
        m = support.size
        T = self.counts[support]
        if m == 1:
            return np.zeros(L, dtype=np.int64)
        tau = (L + float(T.sum())) * (1.0 + 1e-9) + 1.0
        n_keys = np.minimum(np.maximum(np.floor(tau / inv_p - T).astype(np.int64) + 2, 0), L)
        for _ in range(2):
            pos = np.repeat(np.arange(m), n_keys)
            k = np.arange(pos.size) - np.repeat(np.cumsum(n_keys) - n_keys, n_keys)
            keys = (T[pos] + k) * inv_p[pos]  # int64 + int64, then × float: as T_a·(1/p*_a)
            if keys.size >= L:
                order = np.lexsort((pos, keys))[:L]
                # every key left out must come after the L-th chosen one
                nxt = (T + n_keys) * inv_p
                last_key, last_pos = keys[order[-1]], pos[order[-1]]
                beyond = (nxt > last_key) | ((nxt == last_key) & (np.arange(m) > last_pos))
                if np.all(beyond | (n_keys == L)):
                    return pos[order]
            n_keys = np.full(m, L, dtype=np.int64)
        raise AssertionError("unreachable: with L keys per arm the merge is complete")

    def _draw(self, arms: np.ndarray) -> np.ndarray:
        """Rewards of the pulls ``arms``, one draw each, as consecutive one-pull batches."""
        return self.env.pull(Batch(arms, np.ones(arms.size, dtype=np.int64)), self.rng).rewards

    # -- the low-rank algebra ------------------------------------------------------------------
    def _block_terms(self, U: np.ndarray) -> tuple[np.ndarray, ...]:
        W = self.V.dot(U.T)  # (d, m) = VUᵀ
        C = U.dot(W)  # (m, m)
        C = 0.5 * (C + C.T)
        P = self.Z.dot(W)  # (M, m)
        g = U.dot(self.theta)
        return W, C, P, g

    @staticmethod
    def _kernels(n: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """K_s = (I + N_s C)⁻¹N_s and log det(I + N_s C) for rows n = diag(N_s), shape (r, m)."""
        r, m = n.shape
        if m == 1:
            G = 1.0 + n[:, 0] * C[0, 0]
            return (n / G[:, None])[:, :, None], np.log(G)
        if m == 2:  # closed form of the 2×2 inverse: no LAPACK call per row
            a = 1.0 + n[:, 0] * C[0, 0]
            b = n[:, 0] * C[0, 1]
            c = n[:, 1] * C[1, 0]
            e = 1.0 + n[:, 1] * C[1, 1]
            det = a * e - b * c
            Kk = np.empty((r, 2, 2))
            Kk[:, 0, 0] = e * n[:, 0] / det
            Kk[:, 0, 1] = -b * n[:, 1] / det
            Kk[:, 1, 0] = -c * n[:, 0] / det
            Kk[:, 1, 1] = a * n[:, 1] / det
            return Kk, np.log(det)
        G = np.eye(m) + n[:, :, None] * C[None]
        N = np.zeros((r, m, m))
        idx = np.arange(m)
        N[:, idx, idx] = n
        return np.linalg.solve(G, N), np.linalg.slogdet(G)[1]

    def _check(self, i: int, j: int, pos: np.ndarray, rewards: np.ndarray, m: int,
               terms: tuple[np.ndarray, ...], L: int) -> tuple[int, float | None]:
        """First s in 1..L−1 whose state has another pair or B ≤ ε (L if none), and the B of
        the last state that passed (the block's start's B if none was checked)."""
        _, C, P, g = terms
        onehot = np.zeros((L - 1, m))
        onehot[np.arange(L - 1), pos[: L - 1]] = 1.0
        n_all = np.cumsum(onehot, axis=0)
        rho_all = np.cumsum(onehot * rewards[: L - 1, None], axis=0)
        D = P[i] - P  # (M, m)
        iu, ju = _triu(m)
        base = self.qz + (self.qz[i] - 2.0 * self.c)  # ‖z_i − z_k‖²_V
        prune = self.M > _PRUNE_ABOVE
        if prune:
            p_norm = np.sqrt(np.einsum("km,km->k", P, P))
        max_rows = max(1, _CHUNK_ENTRIES // self.M)
        # chunks from _FIRST_CHUNK rows, doubling: an early change of pair costs a small chunk
        start, size, last_B = 0, _FIRST_CHUNK, None
        while start < L - 1:
            stop = min(L - 1, start + min(size, max_rows if not prune else _PRUNED_ROWS))
            n, rho = n_all[start:stop], rho_all[start:stop]
            Ks, logdet_g = self._kernels(n, C)
            h = rho - np.einsum("rpq,rq->rp", Ks, g + rho.dot(C))
            Kflat = 0.5 * (Ks[:, iu, ju] + Ks[:, ju, iu])
            rad = radius(self.log_const, self.logdet + logdet_g, self.sigma, self.offset)
            verdict = None
            if prune:
                verdict = self._pruned(i, j, P, D, base, p_norm, h, Ks[0], Kflat, rad)
            if verdict is None:
                verdict = self._rows(None, i, j, P, D, base, h, Kflat, rad)
            bad, B_s, _ = verdict
            if bad.size:
                s = start + int(bad[0]) + 1  # state s (after s pulls) fails
                if bad[0] > 0:
                    last_B = float(B_s[bad[0] - 1])
                return s, last_B
            last_B = float(B_s[-1])
            start = stop
            size *= 2
        return L, last_B

    def _rows(self, items: np.ndarray | None, i: int, j: int, P: np.ndarray, D: np.ndarray,
              base: np.ndarray, h: np.ndarray, Kflat: np.ndarray, rad: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows (states) of a chunk at which the pair is not (i, j) or B ≤ ε, B and z_iᵀθ̂
        per row, over all items or over ``items`` (ascending, holding i and j: ties still go
        to the lowest index)."""
        est0 = self.est
        if items is not None:
            P, D, base, est0 = P[items], D[items], base[items], est0[items]
            i, j = int(np.searchsorted(items, i)), int(np.searchsorted(items, j))
        iu, ju = _triu(D.shape[1])
        E = D[:, iu] * D[:, ju]
        E[:, iu != ju] *= 2.0  # Σ_pq K_pq D_p D_q over the upper triangle of symmetric K
        est = est0 + h.dot(P.T)  # (r, items)
        ucb = base - Kflat.dot(E.T)  # ‖z_i − z_k‖² in A_s⁻¹
        i_s = est.argmax(1)
        np.maximum(ucb, 0.0, out=ucb)
        np.sqrt(ucb, out=ucb)
        ucb *= rad[:, None]
        ucb += est
        ucb -= est[:, i][:, None]
        ucb[:, i] = -np.inf
        j_s = ucb.argmax(1)
        B_s = ucb[np.arange(ucb.shape[0]), j_s]
        bad = np.flatnonzero((i_s != i) | (j_s != j) | (B_s <= self.eps))
        return bad, B_s, est[:, i]

    def _pruned(self, i: int, j: int, P: np.ndarray, D: np.ndarray, base: np.ndarray,
                p_norm: np.ndarray, h: np.ndarray, K0: np.ndarray, Kflat: np.ndarray,
                rad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`_rows` over the items that may matter in this chunk, or None if the others
        cannot be ruled out.

        Bounds over the chunk's states s ≥ s₀ (its first): z_kᵀθ̂_s ≤ z_kᵀθ̂_s₀ + ‖P_k‖
        max_s ‖h_s − h_s₀‖, and ‖z_i − z_k‖²_{A_s⁻¹} ≤ its value at s₀ (K_s grows with the
        counts in the Loewner order) with C_s ≤ max_s C_s. An item left out must stay strictly
        below z_iᵀθ̂_s and below the best upper confidence bound z_jᵀθ̂_s + ‖z_i − z_j‖ C_s at
        every state that passes; otherwise the chunk is checked over all items.
        """
        est0 = self.est + P.dot(h[0])
        norm0 = np.maximum(base - np.einsum("km,km->k", D.dot(K0), D), 0.0)
        drift = p_norm * float(np.sqrt(((h - h[0]) ** 2).sum(1)).max())
        tol = 1e-9 * (1.0 + np.abs(est0))
        est_ub = est0 + drift + tol
        ucb_ub = est_ub + np.sqrt(norm0) * (float(rad.max()) * (1.0 + 1e-9))
        q = _PRUNE_KEEP
        items = np.unique(np.concatenate([[i, j], np.argpartition(-ucb_ub, q)[:q],
                                          np.argpartition(-est_ub, q)[:q]]))
        bad, B_s, est_i = self._rows(items, i, j, P, D, base, h, Kflat, rad)
        left = np.ones(self.M, dtype=bool)
        left[items] = False
        passed = slice(0, int(bad[0]) if bad.size else B_s.size)
        if (np.any(est_ub[left].max() >= est_i[passed])
                or np.any(ucb_ub[left].max() >= B_s[passed] + est_i[passed])):
            return None
        return bad, B_s, est_i

    def _advance(self, U: np.ndarray, terms: tuple[np.ndarray, ...], n: np.ndarray,
                 rho: np.ndarray) -> None:
        """Move the state by the pulls with per-support-arm counts n and reward sums rho."""
        W, C, P, g = terms
        Ks, logdet_g = self._kernels(n[None], C)
        Kk = 0.5 * (Ks[0] + Ks[0].T)
        h = rho - Kk.dot(g + C.dot(rho))
        self.V = self.V - (W.dot(Kk)).dot(W.T)
        self.V = 0.5 * (self.V + self.V.T)
        self.theta = self.theta + W.dot(h)
        self.est = self.est + P.dot(h)
        PK = P.dot(Kk)
        self.qz = self.qz - np.einsum("km,km->k", PK, P)
        if self.ci >= 0:
            self.c = self.c - PK.dot(P[self.ci])
        self.logdet += float(logdet_g[0])
        self.rad = radius(self.log_const, self.logdet, self.sigma, self.offset)

    def _record(self, arms: np.ndarray | int, n: int) -> None:
        if self.steps + n > self.seq.size:
            self.seq = np.concatenate([self.seq, np.empty(max(self.seq.size, n), np.int64)])
        self.seq[self.steps: self.steps + n] = arms
        self.steps += n

    def _step(self, arm: int) -> None:
        """One pull of ``arm``: Sherman–Morrison on V and recursive least squares on θ̂."""
        r = float(self.env.pull(Batch.single(arm), self.rng).rewards[0])
        x = self.X[arm]
        u = self.V.dot(x)
        denom = 1.0 + x.dot(u)
        resid = r - x.dot(self.theta)
        scaled = u / denom
        self.V = self.V - np.outer(u, scaled)
        self.theta = self.theta + scaled * resid
        zu = self.Z.dot(u)
        zu_scaled = zu / denom
        self.est += zu_scaled * resid
        self.qz -= zu * zu_scaled
        if self.ci >= 0:
            self.c -= zu * zu_scaled[self.ci]
        self.logdet += math.log(denom)
        self.rad = radius(self.log_const, self.logdet, self.sigma, self.offset)
        self.counts[arm] += 1
        self.rsum[arm] += r
        self._record(arm, 1)
        self.since_refresh += 1

    # -- the trial -----------------------------------------------------------------------------
    def run(self, checkpoints: np.ndarray | None) -> Trial:
        start_time = time.perf_counter()
        K, horizon = self.K, self.horizon
        init = np.arange(K)
        rewards = self._draw(init)  # simulate's first call: every arm once
        np.add.at(self.counts, init, 1)
        np.add.at(self.rsum, init, rewards)
        self._refresh()
        t, stopped, best = K, False, 0
        L = _FIRST_BLOCK
        refresh_every = self.alg.refresh_every
        pair, same_pair = (-1, -1), 0  # the last round's pair, and for how many rounds in a row
        while horizon is None or t < horizon:
            i, j, B = self._gap_index()
            self.B, best = B, i
            if B <= self.eps:
                stopped = True
                break
            support, inv_p = self._pair(i, j)
            same_pair = same_pair + 1 if (i, j) == pair else 1
            pair = (i, j)
            # a block's fixed cost grows with |Z|·m²: there, only long stretches pay for one
            scale = min(16, max(1, self.M * support.size ** 2 // _HEAVY))
            min_block = _MIN_BLOCK * scale
            if L < min_block and same_pair < _RETRY_AFTER * scale:
                # The pair changes every few rounds: one pull, as the class makes it.
                self._step(int(support[(self.counts[support] * inv_p).argmin()]))
                t += 1
                if self.since_refresh >= refresh_every:
                    self._refresh()
                continue
            L = max(L, min_block)
            size = L if horizon is None else min(L, horizon - t)
            m = support.size
            pos = self._next_arms(support, inv_p, size)
            arms = support[pos]
            terms = self._block_terms(self.X[support])
            if size == 1:
                accepted, rewards = 1, self._draw(arms)
            else:
                state = self.rng.bit_generator.state
                rewards = self._draw(arms)
                accepted, last_B = self._check(i, j, pos, rewards, m, terms, size)
                if last_B is not None:
                    self.B = last_B  # the B of the last round played (read at a horizon cut)
                if accepted < size:
                    self.rng.bit_generator.state = state
                    arms, pos = arms[:accepted], pos[:accepted]
                    rewards = self._draw(arms)
            n = np.bincount(pos, minlength=m).astype(float)
            rho = np.bincount(pos, weights=rewards, minlength=m)
            self.counts[support] += n.astype(np.int64)
            self.rsum[support] += rho
            self._record(arms, accepted)
            self.n_blocks += 1
            t += accepted
            self.since_refresh += accepted
            if self.since_refresh >= refresh_every:
                self._refresh()
            else:
                self._advance(self.X[support], terms, n, rho)
            L = min(2 * size, _MAX_BLOCK) if accepted == size else 2 * accepted
            same_pair = 1 if accepted < size else same_pair
        return self._trial(t, stopped, best, checkpoints, time.perf_counter() - start_time)

    def _trial(self, t: int, stopped: bool, best: int, checkpoints: np.ndarray | None,
               seconds: float) -> Trial:
        assert t == self.K + self.steps
        info = {"steps": self.steps, "init_pulls": self.K, "pairs_solved": len(self.ratios),
                "B": float(self.B), "confidence_radius": float(self.rad)}
        return one_pull_trial(self.env, self.horizon, self.Z, self.counts, self.seq[:self.steps],
                              stopped=stopped, best=best, theta=self.theta.copy(), info=info,
                              checkpoints=checkpoints, seconds=seconds)
