"""The least-squares state and the GLR stopping rule shared by the asymptotically optimal linear
identifiers (Track-and-Stop, Jedra & Proutière, NeurIPS 2020; Frank-Wolfe Sampling, Wang, Tzeng
& Proutière, ICML 2021).

State after t pulls (no regulariser: the identifiers first pull a spanning set of arms):
A_t = Σ_s x_s x_sᵀ, θ̂_t = A_t⁻¹ Σ_s x_s r_s, kept by Sherman–Morrison rank-one updates together
with the item estimates z_jᵀθ̂_t and the forms q_j = z_jᵀA_t⁻¹z_j, so a pull costs O(|Z| d + d²)
in a dozen numpy calls; every ``refresh_every`` pulls the state is recomputed from the counts
and reward sums so that round-off does not accumulate.

GLR statistic (Jedra & Proutière 2020, Section 3; Garivier & Kaufmann 2016's Chernoff rule in
the linear model, noise variance σ²): with ẑ = argmax_z zᵀθ̂_t,

    Z(t) = min_{z ≠ ẑ} ((ẑ − z)ᵀθ̂_t)² / (2 σ² ‖ẑ − z‖²_{A_t⁻¹}),

the log-likelihood ratio of θ̂_t against the closest parameter under which z beats ẑ. The
identifiers stop at the first t with Z(t) > β(t, δ) and recommend ẑ. Thresholds
(:data:`THRESHOLDS`):

* ``"paper"`` — Jedra & Proutière's Proposition 2 form: once A_t ⪰ c I_d,
  β(t, δ) = (1 + u) log(det(I_d + A_t/(u c))^{1/2} / δ). It follows from the self-normalised
  bound of Abbasi-Yadkori et al. (2011) with regulariser u c I (‖S_t‖²_{(A_t + ucI)⁻¹} ≤
  2σ² log(det(I + A_t/(uc))^{1/2}/δ) for all t with probability 1 − δ) and A_t + ucI ⪯ (1 + u)A_t,
  so ‖θ̂_t − θ‖²_{A_t}/(2σ²) ≤ β(t, δ) for all t, and an error needs Z(t) ≤ that. δ-correct.
  Stopping also requires λ_min(A_t) ≥ c.
* ``"heuristic"`` — β(t, δ) = log((1 + log t)/δ), Garivier & Kaufmann's (2016, Section 6)
  recommendation, used by the experiments of Jedra & Proutière (2020) and Wang et al. (2021); not
  proved δ-correct (it is smaller than the paper's by the log det term).
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ...protocol import Algorithm, Batch
from ...validation import check_positive, check_positive_int
from ..elimination import check_problem

__all__ = ["THRESHOLDS", "GLRIdentifier", "GLRState", "glr_statistic", "heuristic_threshold",
           "paper_threshold", "spanning_arms"]

THRESHOLDS = ("paper", "heuristic")


def heuristic_threshold(t: int, delta: float) -> float:
    """β(t, δ) = log((1 + log t)/δ) (Garivier & Kaufmann 2016, Section 6)."""
    return math.log((1.0 + math.log(t)) / delta)


def paper_threshold(A: np.ndarray, delta: float, u: float, c: float) -> float:
    """β(t, δ) = (1 + u) log(det(I + A/(u c))^{1/2}/δ) (Jedra & Proutière 2020, Prop. 2)."""
    d = A.shape[0]
    logdet = float(np.linalg.slogdet(np.eye(d) + A / (u * c))[1])
    return (1.0 + u) * (0.5 * logdet - math.log(delta))


def glr_statistic(est: np.ndarray, q: np.ndarray, cross: np.ndarray, best: int, sigma: float
                  ) -> tuple[float, int]:
    """(Z(t), the minimising alternative) from the item estimates ``est`` = Zθ̂, the forms
    ``q`` = diag(ZA⁻¹Zᵀ) and the cross terms ``cross`` = ZA⁻¹z_best, in one vectorised scan.

    ‖z_best − z_j‖²_{A⁻¹} = q_best + q_j − 2 cross_j for every item j at once.
    """
    norms = q + (q[best] - 2.0 * cross)
    gaps = est[best] - est
    ratio = gaps * gaps / np.maximum(norms, 1e-300)
    ratio[best] = np.inf
    j = int(ratio.argmin())
    return float(ratio[j]) / (2.0 * sigma * sigma), j


def spanning_arms(X: np.ndarray) -> np.ndarray:
    """d arms spanning R^d (the first d pivots of a column-pivoted QR of Xᵀ), ascending.

    Both identifiers pull these once before anything else, so that A_t is invertible, and the
    forced exploration of Track-and-Stop cycles over them.
    """
    from scipy.linalg import qr  # scipy is imported on first use only

    d = X.shape[1]
    return np.sort(qr(X.T, mode="r", pivoting=True)[1][:d]).astype(np.int64)


class GLRState:
    """A_t⁻¹, θ̂_t, the item estimates Zθ̂_t and the forms diag(ZA_t⁻¹Zᵀ), by rank-one updates.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms.
    Z : array, shape (M, d)
        Items.
    refresh_every : int
        Recompute the state from the counts and reward sums every this many pulls.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray, refresh_every: int) -> None:
        self.X, self.Z = X, Z
        self.K, self.d = X.shape
        self.refresh_every = refresh_every
        self.counts = np.zeros(self.K, dtype=np.int64)
        self.sums = np.zeros(self.K)
        self.t = 0
        self.Ainv = np.zeros((self.d, self.d))
        self.theta = np.zeros(self.d)
        self.est = np.zeros(Z.shape[0])
        self.q = np.zeros(Z.shape[0])
        self._since = 0

    @property
    def A(self) -> np.ndarray:
        """Σ_s x_s x_sᵀ, from the pull counts."""
        return (self.X.T * self.counts) @ self.X

    def add_counts(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Add whole runs of pulls (the spanning set) and recompute the state from scratch."""
        self.counts += counts
        self.sums += sums
        self.t = int(self.counts.sum())
        self.refresh()

    def refresh(self) -> None:
        """The state afresh from the counts and reward sums (A must be invertible)."""
        Ainv = np.linalg.inv(self.A)
        self.Ainv = 0.5 * (Ainv + Ainv.T)
        self.theta = self.Ainv @ (self.X.T @ self.sums)
        self.est = self.Z @ self.theta
        self.q = np.einsum("ij,jk,ik->i", self.Z, self.Ainv, self.Z)
        self._since = 0

    def update(self, a: int, r: float) -> None:
        """One pull of arm ``a`` with reward ``r``: Sherman–Morrison on A⁻¹ and recursive
        least squares on θ̂, the item estimates and the forms."""
        self.counts[a] += 1
        self.sums[a] += r
        self.t += 1
        self._since += 1
        if self._since >= self.refresh_every:
            self.refresh()
            return
        x = self.X[a]
        u = self.Ainv @ x
        denom = 1.0 + x @ u
        g = u / denom
        resid = r - x @ self.theta
        self.Ainv -= np.outer(u, g)  # (A + xxᵀ)⁻¹ = A⁻¹ − A⁻¹xxᵀA⁻¹/(1 + xᵀA⁻¹x)
        self.theta += g * resid
        zu = self.Z @ u
        self.q -= zu * (zu / denom)
        self.est += zu * (resid / denom)

    def glr(self, sigma: float) -> tuple[int, float, int]:
        """(ẑ, Z(t), the closest alternative) for the current state."""
        best = int(self.est.argmax())
        cross = self.Z @ (self.Ainv @ self.Z[best])
        stat, j = glr_statistic(self.est, self.q, cross, best, sigma)
        return best, stat, j


class GLRIdentifier(Algorithm):
    """What the GLR-stopped identifiers share: the spanning pulls as the first batch, the
    least-squares state, the stopping rule and the recommendation; subclasses give the
    sampling rule :meth:`_choose` (the arm to pull after the pulls so far).

    Parameters
    ----------
    X, Z, delta
        Arms (spanning R^d), items (distinct rows; ``None`` for Z = X), confidence δ ∈ (0, 1).
    threshold : {"paper", "heuristic"}
        β(t, δ) (see the module docstring).
    u, c : float
        The paper threshold's u > 0 and c > 0 (default c: λ_min of the spanning set's Gram
        matrix, which A_t exceeds from the first batch on).
    sigma : float
        Sub-Gaussian noise level σ.
    refresh_every : int
        Recompute the least-squares state from scratch every this many pulls.
    """

    kind = "identification"

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, delta: float, *, threshold: str,
                 u: float, c: float | None, sigma: float, refresh_every: int) -> None:
        X, Z, delta = check_problem(X, X if Z is None else Z, delta)
        if threshold not in THRESHOLDS:
            raise ValueError(f"threshold must be one of {THRESHOLDS}, got {threshold!r}")
        self.u = check_positive(u, "u")
        self.sigma = check_positive(sigma, "sigma")
        refresh_every = check_positive_int(refresh_every, "refresh_every")
        super().__init__(X.shape[0])
        self.X, self.Z, self.delta, self.threshold = X, Z, delta, threshold
        self.d = X.shape[1]
        self.basis = spanning_arms(X)
        self.lambda0 = float(np.linalg.eigvalsh(X[self.basis].T @ X[self.basis])[0])
        self.c = self.lambda0 if c is None else check_positive(c, "c")
        self.state = GLRState(X, Z, refresh_every)
        self._lam_lb = 0.0  # a lower bound on λ_min(A_t) (it never decreases)
        self._beta_lb = -math.inf  # a lower bound on the paper's β(t, δ) (non-decreasing)
        self._c_ok = False
        self.glr = 0.0
        self.beta = math.nan
        self._best = 0
        self._stopped = Z.shape[0] == 1
        self._singles = [Batch.single(a) for a in range(self.n_arms)]

    @abstractmethod
    def _choose(self) -> int:
        """The arm to pull next, given the pulls so far."""

    def _lambda_min(self) -> float:
        self._lam_lb = float(np.linalg.eigvalsh(self.state.A)[0])
        return self._lam_lb

    def _should_stop(self) -> bool:
        """The GLR test Z(t) > β(t, δ) (and λ_min(A_t) ≥ c for the paper threshold)."""
        best, stat, _ = self.state.glr(self.sigma)
        self._best, self.glr = best, stat
        t = self.state.t
        if self.threshold == "heuristic":
            self.beta = heuristic_threshold(t, self.delta)
            return stat > self.beta
        if stat <= self._beta_lb:  # β only grows with A_t: no need to recompute it
            return False
        return self._paper_stop(stat)

    def _paper_stop(self, stat: float) -> bool:
        """The paper threshold's test once Z(t) exceeds the last β computed (a lower bound on
        β(t, δ)): λ_min(A_t) ≥ c, then Z(t) > β(t, δ) (shared with the compiled driver)."""
        if not self._c_ok:
            self._c_ok = (self._lam_lb >= self.c) or (self._lambda_min() >= self.c)
            if not self._c_ok:
                return False
        self.beta = self._beta_lb = paper_threshold(self.state.A, self.delta, self.u, self.c)
        return stat > self.beta

    def step(self) -> int | None:
        """The decision after the pulls so far: ``None`` to stop, else the arm to pull."""
        if self._should_stop():
            self._stopped = True
            return None
        return self._choose()

    def _next_batch(self) -> Batch | None:
        if self._stopped:
            return None
        if self.t == 0:  # the spanning pulls depend on no reward: one batch
            return Batch(self.basis, np.ones(self.d, dtype=np.int64))
        arm = self.step()
        return None if arm is None else self._singles[arm]

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        if self.state.t == 0:
            if batch.n_pulls < self.d:  # a cut initialisation: A is singular, the run is over
                self._stopped = True
                return
            self.state.add_counts(batch.allocation(self.n_arms),
                                  batch.arm_sums(rewards, self.n_arms))
            return
        self.state.update(int(batch.arms[0]), float(rewards[0]))

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def recommendation(self) -> int | None:
        """ẑ = argmax_z zᵀθ̂ at stopping (the empirical best item if cut off before)."""
        if self.Z.shape[0] == 1:
            return 0
        if self.state.t == 0:
            return None
        return int(self.state.est.argmax())
