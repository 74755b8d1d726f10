"""The XY baselines of Fiez et al. (NeurIPS 2019), Sections 2 and 5 and Appendix F:
the static XY-allocation, the oracle allocation that knows θ*, and XY-adaptive (Soare,
Lazaric & Munos, NeurIPS 2014).
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ...design import Differences, round_allocation, xy_optimal
from ...estimation.least_squares import LeastSquares
from ...protocol import Algorithm, Batch
from ...rng import as_generator
from ...validation import check_positive
from ..elimination import certified_best, check_problem, dominated
from ..memo import ArrayMemo

__all__ = ["GreedyPath", "XYAdaptive", "XYOracle", "XYStatic", "greedy_phase"]

SAMPLINGS = ("round", "multinomial")
TIE_BREAKS = ("first", "random")
#: Greedy paths of XY-adaptive (deterministic ties), one per (arms, directions); a path of a
#: million steps holds 16 MB.
PATH_MEMO = ArrayMemo(16)
#: Designs of XY-static and XY-oracle, one per instance.
DESIGN_MEMO = ArrayMemo(64)


class _StaticAllocation(Algorithm):
    """A fixed design λ pulled in growing phases until the Appendix F stopping rule fires.

    Phase ``t`` adds ``⌈γ^t⌉`` pulls; at its end, with ``A_t`` and ``θ̂_t`` from *all* pulls so
    far, the algorithm stops when
    ``∃ z' ∀ z ≠ z' : ||z' − z||_{A_t⁻¹} √(2 log(2 t² U / δ)) ≤ (z' − z)ᵀθ̂_t`` and recommends
    that ``z'`` (``U`` the size of the union bound: ``|Z|²`` static, ``|Z|`` oracle).
    """

    kind = "identification"

    #: The phase-chunk driver (:mod:`banditkit.engines`).
    engines = "banditkit.identification.xy.blocks:static_allocation_engine"

    def __init__(self, X: np.ndarray, Z: np.ndarray, delta: float, gamma: float,
                 union: int, sampling: str, rng: np.random.Generator | None) -> None:
        super().__init__(X.shape[0])
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
        self.X, self.Z, self.delta = X, Z, delta
        self.gamma = check_positive(gamma, "gamma", above=1.0)
        self.sampling = sampling
        self._union = union
        self._rng = rng
        self._weights: np.ndarray | None = None
        self.counts = np.zeros(X.shape[0], dtype=np.int64)
        self.sums = np.zeros(X.shape[0])
        self.phase = 0
        self._target = 0  # cumulative pulls asked for so far
        self._stopped_at: int | None = 0 if Z.shape[0] == 1 else None
        self._leader: int | None = None

    @abstractmethod
    def _design(self) -> np.ndarray:
        """The fixed design λ the phases are rounded from."""

    def _next_batch(self) -> Batch | None:
        if self._stopped_at is not None:
            return None
        if self._weights is None:
            self._weights = self._design()
        t = self.phase + 1
        n_t = math.ceil(self.gamma ** t)
        self._target += n_t
        if self.sampling == "multinomial":
            rng = as_generator(self._rng)
            self._rng = rng
            alloc = rng.multinomial(n_t, self._weights)
        else:
            # The cumulative allocation tracks the rounding of λ to the cumulative budget;
            # pulls already made are never taken back.
            target = round_allocation(self._weights, self._target)
            alloc = np.maximum(target - self.counts, 0)
        return Batch.from_allocation(alloc)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        self.phase += 1
        self.counts += batch.allocation(self.n_arms)
        self.sums += batch.arm_sums(rewards, self.n_arms)
        fit = LeastSquares.from_sums(self.X, self.counts, self.sums)
        self._leader = int(np.argmax(self.Z @ fit.theta))
        width = math.sqrt(2.0 * math.log(2.0 * self.phase ** 2 * self._union / self.delta))
        self._stopped_at = certified_best(self.Z, fit, width)

    @property
    def recommendation(self) -> int | None:
        """The certified item once stopped; before that the empirical leader (or None)."""
        return self._stopped_at if self._stopped_at is not None else self._leader

    @property
    def info(self) -> dict:
        return {"phases": self.phase}


class XYStatic(_StaticAllocation):
    """Static XY-allocation (Fiez et al. 2019, Section 2 "Other static allocations";
    Soare et al. 2014), as run in the paper's experiments (Appendix F).

    The design ``λ = argmin_λ max_{y∈Y(Z)} ||y||²_{A(λ)⁻¹}`` over all pairwise differences of
    the items is fixed in advance; phase ``t = 1, 2, ...`` adds ``⌈γ^t⌉`` pulls (γ = 1.35, the
    paper's tuned value) and the stopping rule of Appendix F, with a union bound over the
    ``|Z|²`` pairs, is checked at the end of every phase (see :class:`_StaticAllocation`).

    Parameters
    ----------
    X, Z : arrays
        Arms (spanning R^d) and items (distinct rows).
    delta : float
        Confidence δ ∈ (0, 1).
    gamma : float
        Phase growth factor (> 1).
    sampling : {"round", "multinomial"}
        ``"round"`` (default): after phase t the pulls are the efficient rounding of λ to the
        cumulative budget (Appendix B); ``"multinomial"``: each phase's pulls are drawn i.i.d.
        from λ with ``rng``, as the authors' released code does.
    design_tol : float
        Certified relative gap of the design solve.
    rng : numpy.random.Generator, optional
        Only used with ``sampling="multinomial"``.

    Notes
    -----
    Deviation: the stopping rule is checked only for the empirical leader
    ``argmax_z zᵀθ̂``, the only item that can satisfy it, which is equivalent and O(|Z| d²).
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray, delta: float, *, gamma: float = 1.35,
                 sampling: str = "round", design_tol: float = 0.01,
                 rng: np.random.Generator | None = None) -> None:
        X, Z, delta = check_problem(X, Z, delta)
        self.design_tol = check_positive(design_tol, "design_tol")
        super().__init__(X, Z, delta, gamma, Z.shape[0] ** 2, sampling, rng)

    def _design(self) -> np.ndarray:
        return DESIGN_MEMO.get(
            ("static", self.X, self.Z, self.design_tol),
            lambda: np.asarray(xy_optimal(self.X, Differences(self.Z),
                                          tol=self.design_tol).weights))


class XYOracle(_StaticAllocation):
    """The oracle allocation λ* of Fiez et al. 2019, eq. (1), as run in Section 5 / Appendix F.

    Knows θ*: the design is
    ``λ* = argmin_λ max_{z≠z*} ||z* − z||²_{A(λ)⁻¹} / ((z* − z)ᵀθ*)²``, i.e. the XY design on
    the gap-normalised directions ``(z* − z)/Δ_z``; its value is ψ*, the lower bound's
    constant (Theorem 1). Phases add ``⌈γ^t⌉`` pulls (γ = 1.1, the paper's tuned value) and the
    Appendix F stopping rule is checked with a union bound over ``|Z|`` only.

    Parameters
    ----------
    X, Z, delta
        As for :class:`XYStatic`.
    theta : array, shape (d,)
        The true θ* (must give a unique best item).
    gamma, sampling, design_tol, rng
        As for :class:`XYStatic`.

    Notes
    -----
    Deviation: the authors' code certifies z* itself (known to the oracle), so it can never
    fail; here the empirical leader is certified as for the static allocation, so the failure
    rate is measured rather than impossible. The design and the sampling use θ*, the stopping
    decision does not.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray, delta: float, theta: np.ndarray, *,
                 gamma: float = 1.1, sampling: str = "round", design_tol: float = 0.01,
                 rng: np.random.Generator | None = None) -> None:
        X, Z, delta = check_problem(X, Z, delta)
        theta = np.asarray(theta, dtype=float).reshape(-1)
        if theta.shape != (X.shape[1],) or not np.all(np.isfinite(theta)):
            raise ValueError(f"theta must be a finite vector of length d = {X.shape[1]}")
        self.design_tol = check_positive(design_tol, "design_tol")
        values = Z @ theta
        self.best = int(np.argmax(values))
        gaps = values[self.best] - values
        others = np.flatnonzero(np.arange(Z.shape[0]) != self.best)
        if others.size and gaps[others].min() <= 0:
            raise ValueError("theta must give a unique best item (a tie has gap 0)")
        self.theta = theta
        self._directions = (Z[self.best] - Z[others]) / gaps[others, None]
        super().__init__(X, Z, delta, gamma, Z.shape[0], sampling, rng)

    def _design(self) -> np.ndarray:
        return DESIGN_MEMO.get(
            ("oracle", self.X, self._directions, self.design_tol),
            lambda: np.asarray(xy_optimal(self.X, self._directions,
                                          tol=self.design_tol).weights))

    @property
    def psi_star(self) -> float:
        """ψ* (Fiez et al. 2019, eq. (1)) at the computed design (an upper bound on it)."""
        return float(xy_optimal(self.X, self._directions, tol=self.design_tol).value)


def greedy_phase(X: np.ndarray, Y: np.ndarray, threshold: float, reg: float, refresh: int,
                 rng: np.random.Generator | None = None) -> tuple[Batch, float, float]:
    """One phase of XY-adaptive's greedy allocation (Soare et al. 2014).

    From ``A = reg·I``, pull ``argmin_x max_{y∈Y} ||y||²_{(A + x xᵀ)⁻¹}`` until
    ``ρ/n < threshold`` (``ρ`` the last minimum, ``n`` the pulls plus ``d``). Exact ties go
    uniformly at random when ``rng`` is given, else to the tied arm pulled least so far in
    the phase (lowest index among those): a deterministic round-robin over tied arms.

    Returns the pulls (a Batch, in order), the final ρ and n.
    """
    return GreedyPath(X, Y, reg, refresh, rng).phase(threshold)


class GreedyPath:
    """The greedy pull sequence of XY-adaptive from ``A = reg·I``, computed lazily.

    A phase starts afresh from ``reg·I`` and its choices do not depend on the threshold, which
    only says where it stops; so every phase with the same directions is a prefix of one
    path (with deterministic ties). :meth:`phase` returns the prefix up to the first step with
    ``ρ/n < threshold`` and extends the path only as far as needed: on the Soare benchmark the
    eleven phases with the same two items cost the longest one instead of their sum.
    Each greedy step costs O(K² + K |Y|) with Sherman–Morrison updates of ``X A⁻¹ Xᵀ``,
    ``X A⁻¹ Yᵀ`` and ``diag(Y A⁻¹ Yᵀ)``; the state is recomputed every ``refresh`` steps.
    """

    def __init__(self, X: np.ndarray, Y: np.ndarray, reg: float, refresh: int,
                 rng: np.random.Generator | None = None) -> None:
        self.X, self.Y, self.reg, self.refresh, self.rng = X, Y, reg, refresh, rng
        K, self.d = X.shape
        self.counts = np.zeros(K)
        self.steps = 0
        self._seq = np.empty(1024, dtype=np.int64)
        self._rho = np.empty(1024)
        self._runmin = np.empty(0)  # running minimum of ρ/n over the steps so far

    def phase(self, threshold: float) -> tuple[Batch, float, float]:
        """(pulls, ρ, n) of the phase that stops at the first ``ρ/n < threshold``."""
        t = self._first_below(threshold)
        if t == 0:
            t = self._extend(threshold)
        return (Batch.from_sequence(self._seq[:t].copy()), float(self._rho[t - 1]),
                float(self.d + t))

    def _first_below(self, threshold: float) -> int:
        """Steps up to the first step of the path so far with ``ρ/n < threshold`` (0: none).

        The first such step is the first where the running minimum of ``ρ/n`` drops below
        the threshold; the running minimum is non-increasing, so a binary search finds it
        (O(log L) a phase instead of a scan of the whole path: a trial's ~13 phases on the
        Soare benchmark each scanned ~10⁵–10⁶ steps). The same quotients as the scan.
        """
        done = self._runmin.size
        if done < self.steps:
            n = self.d + np.arange(done + 1, self.steps + 1, dtype=float)
            ratio = self._rho[done:self.steps] / n
            if done:
                ratio[0] = min(ratio[0], self._runmin[-1])
            self._runmin = np.concatenate([self._runmin, np.minimum.accumulate(ratio)])
        t = int(np.searchsorted(-self._runmin, -threshold, side="right"))
        return t + 1 if t < self._runmin.size else 0

    def _extend(self, threshold: float) -> int:
        X, Y, counts = self.X, self.Y, self.counts
        n = float(self.d + self.steps)
        while True:
            if self.steps % self.refresh == 0:
                A = self.reg * np.eye(self.d) + (X.T * counts) @ X
                Ainv = np.linalg.inv(A)
                XA = X @ Ainv
                self._G = XA @ X.T
                self._P = XA @ Y.T
                self._v = np.einsum("ij,ij->i", Y @ Ainv, Y)
                self._w1 = 1.0 + np.einsum("ij,ij->i", XA, X)  # 1 + xᵀA⁻¹x
            G, P, v, w1 = self._G, self._P, self._v, self._w1
            # ||y||²_{(A + x xᵀ)⁻¹} = yᵀA⁻¹y − (xᵀA⁻¹y)² / (1 + xᵀA⁻¹x)  (Sherman–Morrison)
            worst = (v - P * P / w1[:, None]).max(axis=1)
            k = int(worst.argmin())
            tied = worst <= worst[k] + 1e-12 * abs(worst[k])
            if tied.sum() > 1:
                # Exact ties are common (symmetric arms, or a max attained by several
                # directions that no single pull lowers); always taking the first would pull
                # one arm for ever.
                cand = np.flatnonzero(tied)
                if self.rng is not None:
                    k = int(self.rng.choice(cand))
                else:
                    k = int(cand[np.argmin(counts[cand])])
            rho = float(worst[k])
            if self.steps == self._seq.size:
                self._seq = np.concatenate([self._seq, np.empty_like(self._seq)])
                self._rho = np.concatenate([self._rho, np.empty_like(self._rho)])
            self._seq[self.steps], self._rho[self.steps] = k, rho
            counts[k] += 1
            self.steps += 1
            n += 1.0
            c = w1[k]
            gk = G[:, k].copy()
            g = gk / c
            p = P[k].copy()
            G -= gk[:, None] * g[None, :]
            P -= g[:, None] * p[None, :]
            w1 -= gk * g
            v -= p * p / c
            if rho / n < threshold:
                return self.steps


class XYAdaptive(Algorithm):
    """XY-adaptive allocation (Soare, Lazaric & Munos, NeurIPS 2014), as run in the
    experiments of Fiez et al. 2019 (Section 5 and Appendix F).

    Phase ``j = 1, 2, ...`` restarts the estimate (``A = reg·I``, ``b = 0``: only this phase's
    pulls are used) and pulls greedily
    ``x_t = argmin_x max_{y∈Y(Ẑ_j)} ||y||²_{(A + x xᵀ)⁻¹}`` (ties broken at random with
    ``rng``), with ``ρ(t)`` that minimum, while ``ρ(t)/n ≥ α ρ_{j−1}/n_{j−1}``; ``n`` counts the
    phase's pulls plus ``d`` for the regulariser, as in the authors' code, and
    ``ρ_0 = 1, n_0 = d(d+1)+1``. At the end of the phase, with ``θ̂ = A⁻¹ b``, every item ``z``
    for which some active ``z'`` has
    ``||z' − z||_{A⁻¹} √(2 log(π² |Z|² j² / (3δ))) ≤ (z' − z)ᵀθ̂`` is discarded for good (the
    paper's experiments, following Soare et al.'s: discarded items are not reset, and the
    union bound runs over phases, not samples). It stops when one item is left.

    The greedy choices within a phase do not depend on the rewards, so each phase is computed
    in full and returned as one batch — the same decisions as a pull-by-pull run. Each greedy
    step costs O(K² + K |Y|) with Sherman–Morrison updates of ``X A⁻¹ Xᵀ``, ``X A⁻¹ Yᵀ`` and
    ``diag(Y A⁻¹ Yᵀ)`` and a vectorised choice over all arms (``|Y| = |Ẑ|(|Ẑ|−1)/2``: a
    difference and its negative give the same form). The state is recomputed exactly every
    ``refresh`` pulls to stop rounding drift.

    Parameters
    ----------
    X, Z, delta
        Arms (spanning R^d), items (distinct rows), confidence δ ∈ (0, 1).
    alpha : float
        Phase-length parameter α (0.1, as in Soare et al.'s and the paper's experiments).
    reg : float
        Regulariser of ``A`` at the start of each phase (1, as in Soare et al.'s algorithm).
    refresh : int
        Recompute the greedy state from scratch every this many pulls.
    tie_break : {"first", "random"}
        Exact ties of the greedy choice go to the tied arm pulled least in the phase, lowest
        index first (default, deterministic) or to a uniformly random one drawn with ``rng``
        (the authors' code).
    rng : numpy.random.Generator, optional
        Tie-breaking randomness ξ (``tie_break="random"`` only).

    Notes
    -----
    With ``tie_break="first"`` a phase is a pure function of (X, active directions, threshold,
    reg), so identical phases — the same instance in every trial of a figure — are computed
    once per process and reused (:data:`PATH_MEMO`, one :class:`GreedyPath` per active set,
    whose prefixes are the phases); results are identical with or without the memo.

    Deviations: ties go round-robin by default (random in the authors' code; with
    ``tie_break="random"`` the behaviour is theirs, without the cache); the union bound's size
    is ``|Z|²`` (the authors' code writes ``|X|²``; equal
    when X = Z); the sample complexity counts real pulls only (the authors' code adds ``d`` per
    phase for the regulariser). Soare et al. define the algorithm for X = Z; with Z ≠ X the
    directions are the differences of active items and the arms stay X.
    """

    kind = "identification"

    def __init__(self, X: np.ndarray, Z: np.ndarray, delta: float, *, alpha: float = 0.1,
                 reg: float = 1.0, refresh: int = 2000, tie_break: str = "first",
                 rng: np.random.Generator | None = None) -> None:
        X, Z, delta = check_problem(X, Z, delta)
        self.alpha = check_positive(alpha, "alpha")
        self.reg = check_positive(reg, "reg")
        if isinstance(refresh, bool) or not isinstance(refresh, int) or refresh < 1:
            raise ValueError(f"refresh must be an integer >= 1, got {refresh!r}")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
        super().__init__(X.shape[0])
        self.X, self.Z, self.delta = X, Z, delta
        self.refresh, self.tie_break = refresh, tie_break
        self._rng = rng
        d = X.shape[1]
        self.active = np.arange(Z.shape[0])
        self.phase = 0
        self._rho_prev, self._n_prev = 1.0, float(d * (d + 1) + 1)
        self._active_sizes: list[int] = []
        self._phase_pulls: list[int] = []

    def _next_batch(self) -> Batch | None:
        if self.active.size <= 1:
            return None
        threshold = self.alpha * self._rho_prev / self._n_prev
        i, j = np.triu_indices(self.active.size, k=1)
        W = self.Z[self.active]
        Y = W[i] - W[j]
        if self.tie_break == "first":
            path = PATH_MEMO.get(("greedy", self.X, Y, self.reg, self.refresh),
                                 lambda: GreedyPath(self.X, Y, self.reg, self.refresh))
            batch, rho, n = path.phase(threshold)
        else:
            rng = as_generator(self._rng)
            self._rng = rng
            batch, rho, n = greedy_phase(self.X, Y, threshold, self.reg, self.refresh, rng)
        self._rho_prev, self._n_prev = rho, n
        self._active_sizes.append(int(self.active.size))
        return batch

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        j = self.phase + 1
        fit = LeastSquares.from_batch(self.X, batch, rewards, reg=self.reg)
        m = self.Z.shape[0]
        width = math.sqrt(2.0 * math.log(math.pi ** 2 * m * m * j * j / (3.0 * self.delta)))
        drop = dominated(self.Z, self.active, fit, width, strict=False)
        self.active = self.active[~drop]
        self.phase = j
        self._phase_pulls.append(batch.n_pulls)

    @property
    def recommendation(self) -> int | None:
        return int(self.active[0]) if self.active.size == 1 else None

    @property
    def info(self) -> dict:
        return {"phases": self.phase, "active_sizes": list(self._active_sizes),
                "phase_pulls": list(self._phase_pulls)}
