"""LinGame for (transductive) linear best-arm identification (Degenne, Ménard, Shang & Valko,
"Gamification of pure exploration for linear bandits", ICML 2020, Algorithm 1 — the version
with one learner per candidate answer).

The lower bound's saddle-point problem max_w min_{λ ∈ ¬ẑ} ½‖θ − λ‖²_{A(w)} is played as a game
between an agent choosing a distribution w over arms and nature choosing an alternative λ:

* after the spanning pulls, at every round t with ẑ_t = argmax_z zᵀθ̂_t (the GLR stopping rule
  of :mod:`.linear_glr` first — stop and recommend ẑ_t if it fires):
* **agent**: the AdaHedge learner (de Rooij et al. 2014) kept for the answer ẑ_t (one learner
  per answer, created at its first use) plays w_t;
* **nature**: best response λ_t ∈ argmin_{λ: some z beats ẑ_t} ‖θ̂_t − λ‖²_{A(w_t)}, the
  projection of θ̂_t on the half-space of the closest alternative z (A(w) = Σ_a w_a x_a x_aᵀ);
* **optimistic gains** to the agent: U_a = min(½(|x_aᵀ(θ̂_t − λ_t)| + √(2 c_t ‖x_a‖²_{A_t⁻¹}))²,
  c_t), c_t = log t — the largest ½((x_aᵀ(ξ − λ_t))² over the confidence ellipsoid of θ̂_t,
  clipped (the paper's optimism; c_t and the clip at c_t are the choices of the authors'
  public code, xuedong/LinBAI.jl, ``LearnerK``);
* **tracking**: C-tracking of Σ_s w_s (a_t = argmin_a N_a(t) − Σ_{s ≤ t} w_{s,a}, ties to the
  lowest index).

The stopping rule's ``threshold="paper"`` is Jedra & Proutière's (2020, Prop. 2), shared by the
GLR identifiers of :mod:`.linear_glr`, not Degenne et al.'s own threshold (see the class).

No forced exploration (optimism explores) and no optimisation problem is solved: a round costs a
few d × d products. Deterministic (no internal randomness).
"""

from __future__ import annotations

import math

import numpy as np

from ..glr import GLRIdentifier

__all__ = ["RIDGE", "AdaHedge", "LinGame", "best_response", "make_lingame", "optimistic_gains"]

RIDGE = 1e-12  # relative ε of the best response's A(w) + εI (see best_response)


class AdaHedge:
    """AdaHedge (de Rooij, van Erven, Grünwald & Koolen 2014): exponential weights on the
    cumulative losses with the learning rate η = ln K / Δ, Δ the cumulative mixability gap (no
    tuning). With Δ = 0 (η = ∞) it plays uniformly on the leaders."""

    def __init__(self, K: int) -> None:
        self.K = K
        self.losses = np.zeros(K)
        self.gap = 0.0  # Δ: the cumulative mixability gap

    def weights(self) -> np.ndarray:
        """w ∝ exp(−η (L − min L))."""
        shifted = self.losses - self.losses.min()
        if self.gap <= 0.0:
            w = (shifted == 0.0).astype(float)
        else:
            w = np.exp(-math.log(self.K) / self.gap * shifted)
        return w / w.sum()

    def incur(self, loss: np.ndarray) -> None:
        """Add a loss vector: Δ grows by the Hedge loss minus the mix loss."""
        w = self.weights()
        hedge = float(w @ loss)
        low = float(loss.min())
        if self.gap <= 0.0:
            mix = float(loss[w > 0].min())
        else:
            eta = math.log(self.K) / self.gap
            mix = low - math.log(float(w @ np.exp(-eta * (loss - low)))) / eta
        self.losses += loss
        self.gap += max(hedge - mix, 0.0)  # ≥ 0 in exact arithmetic; round-off kept out


def best_response(X: np.ndarray, Z: np.ndarray, est: np.ndarray, best: int, w: np.ndarray,
                  ridge: float = 0.0) -> tuple[int, np.ndarray]:
    """Nature's best response to w: the closest alternative z (argmin_z Δ̂_z²/(2‖y_z‖²_{A(w)⁻¹}),
    y_z = z_best − z) and the projections x_aᵀ(θ̂ − λ) = Δ̂_z x_aᵀA(w)⁻¹y_z / ‖y_z‖²_{A(w)⁻¹} for
    every arm a, λ the projection of θ̂ on {λ: (z_best − z)ᵀλ = 0}.

    ``ridge`` is added to A(w)'s diagonal: AdaHedge's weights can underflow to zero on arms,
    and A(w) + εI gives the limit of the best response as those weights go to zero (nature
    moves θ̂ in the unobserved directions, at vanishing cost).
    """
    Aw = (X.T * w) @ X
    Aw[np.diag_indices_from(Aw)] += ridge
    Aw_inv = np.linalg.inv(Aw)
    Y = Z[best] - Z
    V = Y @ Aw_inv  # rows A(w)⁻¹y_z (A(w)⁻¹ symmetric)
    norms = np.einsum("md,md->m", Y, V)
    gaps = est[best] - est
    value = gaps * gaps / np.maximum(norms, 1e-300)
    value[best] = np.inf
    j = int(value.argmin())
    return j, (gaps[j] / max(norms[j], 1e-300)) * (X @ V[j])


def optimistic_gains(proj: np.ndarray, arm_forms: np.ndarray, t: int) -> np.ndarray:
    """U_a = min(½(|x_aᵀ(θ̂ − λ)| + √(2 c_t ‖x_a‖²_{A_t⁻¹}))², c_t), c_t = log t."""
    c = math.log(t)
    return np.minimum(0.5 * (np.abs(proj) + np.sqrt(2.0 * c * arm_forms)) ** 2, c)


def make_lingame(env: object, rng: np.random.Generator | None = None, *, delta: float,
                 **params: object) -> LinGame:
    """LinGame on ``env.X`` and ``env.Z`` (a figure factory; ``rng`` unused)."""
    return LinGame(env.X, env.Z, delta, **params)  # type: ignore[attr-defined]


class LinGame(GLRIdentifier):
    """LinGame (Degenne, Ménard, Shang & Valko 2020, Algorithm 1) for linear bandits.

    Parameters
    ----------
    X, Z, delta
        Arms (spanning R^d), items (distinct rows; ``None`` for Z = X), confidence δ ∈ (0, 1).
    threshold : {"paper", "heuristic"}
        β(t, δ) of the GLR stopping rule (:mod:`~banditkit.identification.linear_glr`):
        ``"paper"`` (default) is **Jedra & Proutière's** δ-correct threshold (NeurIPS 2020,
        Proposition 2, shared with Track-and-Stop and FWS), *not* the one Degenne et al. state
        for LinGame (their stopping threshold, from a self-normalised bound of their own, is
        not implemented here: its text could not be read, see docs/rage.md); both are
        δ-correct, so LinGame with ``"paper"`` is δ-correct, but its stopping times are those
        of this threshold. ``"heuristic"`` is log((1 + log t)/δ), as in Degenne et al.'s
        experiments (and their public code, ``LinBAI.jl``).
    u, c, sigma, refresh_every
        As for :class:`~banditkit.identification.track_and_stop.LinearTrackAndStop`.

    Notes
    -----
    Fully sequential (one pull per batch after the spanning pulls); no internal randomness.
    """

    #: The compiled kernel (:mod:`banditkit.engines`).
    engines = "banditkit.identification.glr.run:glr_engine"

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, delta: float, *,
                 threshold: str = "paper", u: float = 1.0, c: float | None = None,
                 sigma: float = 1.0, refresh_every: int = 10_000) -> None:
        super().__init__(X, Z, delta, threshold=threshold, u=u, c=c, sigma=sigma,
                         refresh_every=refresh_every)
        self.learners: dict[int, AdaHedge] = {}
        # ε of the best response's A(w) + εI, negligible against A(w) (whose trace is a
        # weighted mean of ‖x_a‖²)
        self.ridge = RIDGE * float(np.einsum("kd,kd->k", self.X, self.X).max())
        self._sumw = np.zeros(self.n_arms)
        self._started = False

    def _choose(self) -> int:
        st = self.state
        if not self._started:  # C-tracking counts the spanning pulls as played weight
            self._sumw = st.counts.astype(float)
            self._started = True
        best = int(st.est.argmax())
        learner = self.learners.get(best)
        if learner is None:
            learner = self.learners[best] = AdaHedge(self.n_arms)
        w = learner.weights()
        _, proj = best_response(self.X, self.Z, st.est, best, w, self.ridge)
        forms = np.einsum("kd,de,ke->k", self.X, st.Ainv, self.X)
        learner.incur(-optimistic_gains(proj, forms, st.t))
        self._sumw += w
        return int((st.counts - self._sumw).argmin())

    @property
    def info(self) -> dict:
        return {"learners": len(self.learners), "glr": self.glr, "beta": self.beta,
                "threshold": self.threshold}
