"""Confidence sequences for live verdicts, computed from running sums per arm: two exact,
variance-adaptive sequences for rewards in a known range — the predictable plug-in (the
default, ``sequence="exact"``) and the λ-mixture (``sequence="mixture"``) — and two
normal-approximation options.

Everything here is a pure function of per-arm sums, elementwise over any leading axes (one
status, or every look of many simulated runs at once), so a status costs O(arms).

The exact default, the predictable plug-in empirical-Bernstein sequence, and its derivation
are in :mod:`banditkit.live.readout.plugin` (it scales these sequences' ψ_E per increment).

``sequence="mixture"``: a discrete mixture of empirical-Bernstein supermartingales
------------------------------------------------------------------------------------
It needs only (count, sum, sum of squares) per arm, so it is also what the exact sequence
falls back to where the rewards' order is not kept (``status(count="recorded")``, a
dashboard's past points) and what guardrails use (their metrics' prefix keeps those sums only).
For ξ ≥ −1 and λ ∈ [0, 1), exp(λξ − ψ_E(λ)ξ²) ≤ 1 + λξ with ψ_E(λ) = −log(1 − λ) − λ (Fan,
Grama & Liu 2015, "Exponential inequalities for martingales with applications", Electron. J.
Probab. 20, Lemma 4.1; the inequality behind the empirical-Bernstein bound of Howard, Ramdas,
McAuliffe & Sekhon 2021, Ann. Statist. 49(2), Theorem 4, with V_t = Σ(X_i − X̂_i)²; checked
numerically in tests/test_verdicts.py). Taking ξ_i = Z_i with E[Z_i | past] = 0 and Z_i ≥ −1:

    E_λ(t) = exp(λ Σ Z_i − ψ_E(λ) Σ Z_i²)

is a nonnegative supermartingale for every λ ∈ [0, 1), and so is any mixture Σ_j w_j E_{λ_j}
(Σ w_j = 1). Ville's inequality: P(∃t: Σ_j w_j E_{λ_j}(t) ≥ 1/α) ≤ α.

- **The scaling** (:func:`psi_scaled`). An increment bounded below more tightly, Z ≥ −b with
  0 < b ≤ 1, pays less: Fan's inequality for ξ = Z/b ≥ −1 at λ' = λb < 1 reads
  exp(λZ − ψ_E(λb)/b²·Z²) ≤ 1 + λZ, with ψ_E(λb)/b² = λ² Σ_{k≥2} (λb)^(k−2)/k, increasing
  in b, λ²/2 at b → 0 (a value ≥ 0 with mean 0 is 0: any penalty holds) and ψ_E(λ) at b = 1.
  It is the least penalty of the form exp(λz − ψz²) ≤ 1 + λz on [−b, ∞): (λz − log(1 + λz))/z²
  decreases in z, so its supremum is at z = −b (only a lower bound of the support helps; an
  upper bound does not). Each reward's b may depend on everything before it, its arm
  included: the factor of the i-th reward, exp(λZ_i − ψ_E(λb_i)/b_i²·Z_i²), still has
  conditional mean ≤ 1 + λE[Z_i | past, arm] = 1. A value in [0, 1] with mean μ has
  X − μ ≥ −μ and μ − X ≥ −(1 − μ): near a rate of 0.1 the lower end's increments pay almost
  λ²/2 instead of ψ_E(λ) (1.55·λ²/2 at λ = 1/2).
- **One arm** (:func:`bernstein_sequence`): Z_i = X_i − μ (values in [0, 1]): Σ Z_i = S − nμ and
  Σ Z_i² = Q − 2μS + nμ² come from (n, S, Q) for every candidate μ. The supermartingale tests
  μ with μ's own variance term, the predictable centre X̂ = μ of Howard et al.'s Theorem 4
  (valid because μ is a constant): the interval adapts to the variance (about √(2σ²·L/n) wide,
  not the √(L/(2n)) of Hoeffding), which is what makes Beta-distributed rewards cheap. The
  lower end tests μ with Z = X − μ ≥ −μ (b = μ), the upper end with −Z = μ − X ≥ −(1 − μ)
  (b = 1 − μ): a candidate is tested with its own bound, a constant under that candidate.
- **A difference to the control, directly** (:func:`difference_sequence`): the rewards of arms
  a and c in the order they are revealed, Z_i = +(R_i − μ_a) for a reward of a and
  −(R_i − μ_c) for one of c (Z_i ∈ [−1, 1]). Whichever arm the design pulls next, and however
  it chose (Thompson sampling, a control floor, an elimination), the reward has conditional
  mean μ of its arm given everything before it: E[Z_i | past, arm] = 0. So the sequence is valid
  under any adaptive allocation *without* weighting by propensities. Σ Z_i = (S_a − n_a μ_a)
  − (S_c − n_c μ_c), Σ_a Z² = Σ_a (R − μ_a)² and Σ_c Z² = Σ_c (R − μ_c)², from the two arms'
  sums. The arm of each reward is known before its value, so each arm's rewards get their own
  bound (the scaling): for the lower end (the process +Z), R − μ_a ≥ −μ_a and
  μ_c − R ≥ −(1 − μ_c); for the upper end (−Z), μ_a − R ≥ −(1 − μ_a) and R − μ_c ≥ −μ_c. Each
  term is E_j = exp(λ_j ΣZ − ψ_j^a Σ_a Z² − ψ_j^c Σ_c Z²), a supermartingale at the true means.
  Under H(Δ): μ_a = m + Δ, μ_c = m, the nuisance m is the control's mean; the test is run at
  the ends L, U of the control's own sequence (at level 1 − α_c). On the event m ∈ [L, U] the
  bounds are at most b_a = U + Δ, b_c = 1 − L (lower end) and b_a = 1 − L − Δ, b_c = U (upper
  end), clipped to [0, 1] (a true mean lies in [0, 1]); the penalties at these b are at least
  the true ones (ψ_E(λb)/b² increases in b), so F_j(m) = exp(λ_j ΣZ(m) − ψ̄_j^a Σ_a Z²(m) −
  ψ̄_j^c Σ_c Z²(m)) ≤ E_j at m = m_true. With the penalties fixed, log F_j is concave in m (ΣZ
  linear, Σ Z² convex quadratic in m), so its minimum over m ∈ [L, U] is at an end, and
  Σ_j w_j min(F_j(L), F_j(U)) ≤ Σ_j w_j E_j(m_true) whenever m_true ∈ [L, U]. Rejecting Δ when
  that lower bound reaches 1/α_d is valid on the event that the control's sequence holds:
  P(some difference's sequence ever misses) ≤ α_c + Σ α_d. Its width is about
  √(2(σ_a² + σ_c²)·L/n) at equal counts, √2 narrower than subtracting two arm intervals
  (which costs σ_a + σ_c) and free of a second α/K split.
- **Why this and not inverse-propensity weights** (Waudby-Smith et al. 2022, "Anytime-valid
  off-policy inference for contextual bandits"): a live batch hands its pulls to units in a
  shuffled order *without replacement*, so a unit's arm given the units before it in the batch
  is not drawn with the logged propensity (the share of the batch); a per-unit IPW martingale
  would not be one. The reward-order argument above needs no propensities at all. Validity
  needs the rewards counted at a look to be, per arm, a prefix of an order that does not depend
  on their values (issue 23 §1, the resolved-prefix rule of status).
- **Both ends by bisection.** For λ ≤ 1/2 and b ≤ 1, ψ_E(λb)/b² ≤ ψ_E(λ) ≤ λ/2. Lower end of
  one arm: ∂/∂μ of the log of each term λ(S − nμ) − ψ(μ)·V(μ) is −n(λ + 2ψ(μ)(μ − x̄)) −
  ψ'(μ)V ≤ 0 (|μ − x̄| ≤ 1, ψ(μ) = ψ_E(λμ)/μ² increasing in μ, V ≥ 0): every term, hence the
  mixture, is non-increasing in μ, and the rejected candidates form a half-line below the
  centre. The upper end is the mirror (b = 1 − μ decreases in μ). For the difference the same
  holds in Δ (∂/∂Δ of Σ_a Z² is 2n_a(μ_a − x̄_a); b_a = U + Δ increases in Δ on the lower end,
  1 − L − Δ decreases on the upper end; the control's b does not depend on Δ), and a minimum
  of two non-increasing functions is non-increasing. So bisection finds each end (outwards,
  the interval errs on the wide side). The grid of λ therefore stops at :data:`LAMBDA_MAX` = 1/2.
- **The mixture.** λ on a geometric grid from 10⁻⁵ to 1/2 (ratio :data:`GRID_RATIO`); weights
  (1 − ε)·(a half-normal density of scale ρ, the Gaussian mixture of Robbins 1970 / Howard et
  al. 2021 eq. (14), tuned at intrinsic time V*) + ε·(uniform over every
  :data:`ROBUST_STRIDE`-th grid point from ρ up), ε = :data:`ROBUST_SHARE` = 0.15. ρ is
  Waudby-Smith et al.'s (2024) optimum for the width at V*: ρ² = (2 log(1/α) + log(2 log(1/α)
  + 1)) / V* (here α is the one-sided level of the sequence). Near the tuned sample size the
  sequence is about as narrow as the normal mixture (it loses log(1/(1 − ε)) nats); later
  than that, the half-normal's flat head already weights the small λ it needs (the usual
  ½ log(V/V*) growth); earlier, or on rewards of lower variance than tuned (the λ needed
  above ρ, where the half-normal's tail vanishes), the uniform part bounds the loss to
  log(1/ε) + log(its number of points) nats. Putting it only at λ ≥ ρ (not over the whole
  grid down to 10⁻⁵: 29 points) is what keeps that number small (7 points at V* = 5,000).
  Measured (``python benchmarks/bench_widths.py mixture --runs 100 --seed 1``: 0/1 rewards at
  0.10 vs 0.11, tuned at 10,000 per arm, median width ÷ fixed-n at 1,000 / 5,000 / 20,000 /
  80,000 / 300,000 per arm): 2.00 / 1.70 / 1.59 / 1.64 / 1.71 for the default (scaled,
  ε = 0.15 from ρ up, the control's share of α 0.05); 2.24 / 1.79 / 1.64 / 1.66 / 1.73
  before (unscaled, ε = 0.25 over the whole grid, share 0.1); 1.92 / 1.69 / 1.60 / 1.66 /
  1.73 for ε = 0.25 from ρ up (share 0.05). ε = 0.25 is better on Beta rewards (1.82 against
  1.88 at 20,000 per arm; 2.05 before) but leaves 0/1 rewards at the goal's edge; 0.15 is
  better than before at every size measured, for both.

Normal-approximation options (valid as n → ∞ only)
---------------------------------------------------
- :func:`asymptotic_difference`: the asymptotic confidence sequence of Waudby-Smith, Arbour,
  Sinha, Kennedy & Ramdas (2024, Ann. Statist., "Time-uniform central limit theory and
  asymptotic confidence sequences", Theorem 2.2 with the normal mixture): for a mean of N i.i.d.
  values with sample s.d. σ̂, radius σ̂·√(2(Nρ² + 1)/(N²ρ²)·log(√(Nρ² + 1)/α)), ρ tuned at N*
  as above. For a difference of two arms, σ̂²/N is the estimator's variance
  v = s_a²/n_a + s_c²/n_c and N = n_a + n_c (the units of both arms).
- :func:`msprt_difference`: the mixture SPRT of Johari, Koomen, Pekelis & Walsh (2017, KDD;
  Oper. Res. 2022), normal mixture N(0, τ²) over the difference:
  Λ(Δ) = √(v/(v + τ²))·exp(τ²(d − Δ)²/(2v(v + τ²))), rejected when Λ ≥ 1/α; the sequence is
  {Δ: Λ(Δ) < 1/α}, radius √(2v(v + τ²)/τ²·(log(1/α) + ½ log((v + τ²)/v))).

Both are Gaussian mixtures; they differ in their tuning (ρ relative to σ̂ at a sample size;
τ in the reward's units). Both are two-sided at α (not split by side: a normal mixture over
±Δ is symmetric).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GRID_RATIO",
    "LAMBDA_MAX",
    "ROBUST_SHARE",
    "Mixture",
    "asymptotic_difference",
    "asymptotic_from",
    "asymptotic_mean",
    "asymptotic_rho2",
    "bernstein_sequence",
    "difference_sequence",
    "log_e_value",
    "mixture",
    "msprt_difference",
    "msprt_from",
    "normal_sequence",
    "one_sided_from",
    "psi_e",
    "psi_scaled",
]

#: Largest λ of the grid: ψ_E(λ) ≤ λ/2 up to here, which makes each side a half-line.
LAMBDA_MAX = 0.5
#: Smallest λ of the grid (λ* ≈ √(6/V): V ≈ 10¹¹, beyond any experiment).
LAMBDA_MIN = 1e-5
#: Ratio of consecutive λ of the grid.
GRID_RATIO = 1.1
#: Share of the mixture's weight spread uniformly over a coarse grid (robustness away from V*).
ROBUST_SHARE = 0.15
#: The uniform part starts at ROBUST_FROM·ρ (ρ: the half-normal's scale; module docstring).
ROBUST_FROM = 1.0
#: The uniform part's grid: every ROBUST_STRIDE-th λ (from λ = 1/2 down).
ROBUST_STRIDE = 4

# Bisection halves the bracket 50 times: 2**-50 < 1e-15, far below any printed digit.
_STEPS = 50


def psi_e(lam: np.ndarray | float) -> np.ndarray:
    """ψ_E(λ) = −log(1 − λ) − λ, the sub-exponential CGF bound of Fan et al. (2015)."""
    lam = np.asarray(lam, dtype=float)
    return -np.log1p(-lam) - lam


def psi_scaled(lam: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """ψ_E(λb)/b², the variance penalty of an increment bounded below by −b (module docstring,
    "The scaling"), elementwise with broadcasting; λ²/2 at b = 0 (its limit), b clipped to
    [0, 1], λb < 1 required.

    Never below the exact value: for λb < 0.01 it is the series Σ_{k=2..5} λ^k b^(k−2)/k plus
    the tail bound λ⁶b⁴/(6(1 − λb)) (−log(1 − x) − x loses every digit to cancellation there);
    above, the closed form."""
    lam = np.asarray(lam, dtype=float)
    b = np.clip(np.asarray(b, dtype=float), 0.0, 1.0)
    x = lam * b
    small = x < 0.01
    lam2 = lam * lam
    series = lam2 * (0.5 + x / 3.0 + x * x / 4.0 + x ** 3 / 5.0 + x ** 4 / (6.0 * (1.0 - x)))
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = (-np.log1p(-np.where(small, 0.5, x)) - np.where(small, 0.5, x)) / (b * b)
    # ×(1 + 1e-12): the closed form's rounding (~1e-15 relative) never takes it below
    return np.where(small, series, closed) * (1.0 + 1e-12)


def asymptotic_rho2(n_tune: float, alpha: float) -> float:
    """ρ² that minimises the normal-mixture boundary's width at N* = ``n_tune``
    (Waudby-Smith et al. 2024, §3.5 / GrowthBook's and Eppo's tuning):
    (−2 log α + log(−2 log α + 1)) / N*."""
    a = -2.0 * math.log(alpha)
    return (a + math.log(a + 1.0)) / float(n_tune)


@dataclass(frozen=True)
class Mixture:
    """A discrete mixture over λ: the grid ``lam`` and log-weights ``log_w`` (Σ exp = 1)."""

    lam: np.ndarray
    log_w: np.ndarray
    psi: np.ndarray


def mixture(v_tune: float, alpha: float, robust: float = ROBUST_SHARE,
            robust_from: float = ROBUST_FROM) -> Mixture:
    """The λ-mixture tuned at intrinsic time ``v_tune`` (Σ Z² expected where the sequence should
    be narrowest) for a one-sided level ``alpha`` (module docstring)."""
    lam = LAMBDA_MIN * GRID_RATIO ** np.arange(
        math.floor(math.log(LAMBDA_MAX / LAMBDA_MIN) / math.log(GRID_RATIO)) + 1)
    lam = lam[lam <= LAMBDA_MAX]
    rho = math.sqrt(asymptotic_rho2(v_tune, alpha))
    # half-normal mass of each grid cell (cells between geometric midpoints)
    edges = np.concatenate([[0.0], np.sqrt(lam[:-1] * lam[1:]), [np.inf]])
    cdf = np.array([math.erf(e / (rho * math.sqrt(2.0))) if np.isfinite(e) else 1.0
                    for e in edges])
    normal = np.diff(cdf)
    # the uniform part sits on every ROBUST_STRIDE-th point (ratio 1.1⁴ ≈ 1.46): fewer points,
    # a smaller log(grid size), and at most ~0.2 nats lost to the coarser spacing
    coarse = np.zeros(lam.size)
    coarse[::-ROBUST_STRIDE] = 1.0
    coarse[lam < robust_from * rho] = 0.0  # below ρ the half-normal's head weights λ already
    coarse[-1] = 1.0  # the top of the grid always (ρ above it: V* tiny)
    w = (1.0 - robust) * normal / normal.sum() + robust * coarse / coarse.sum()
    with np.errstate(divide="ignore"):  # a weight that underflows to 0 is a term left out
        log_w = np.log(w)
    return Mixture(lam, log_w, psi_e(lam))


def log_e_value(S: np.ndarray, V: np.ndarray, mix: Mixture) -> np.ndarray:
    """log Σ_j w_j exp(λ_j S − ψ_E(λ_j) V), elementwise over S and V (broadcast)."""
    S, V = np.broadcast_arrays(np.asarray(S, float), np.asarray(V, float))
    terms = mix.log_w + mix.lam * S[..., None] - mix.psi * V[..., None]
    top = terms.max(axis=-1)
    return top + np.log(np.exp(terms - top[..., None]).sum(axis=-1))


def _bisect(rejected, inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """The boundary between ``inside`` (kept) and ``outside`` (an edge), returned on the side
    of ``outside`` (wide). ``rejected(x)`` must be monotone between them; where the edge itself
    is not rejected, the edge is returned."""
    inside, outside = inside.copy(), outside.copy()
    edge = outside.copy()
    for _ in range(_STEPS):
        mid = 0.5 * (inside + outside)
        bad = rejected(mid)
        outside = np.where(bad, mid, outside)
        inside = np.where(bad, inside, mid)
    return np.where(rejected(edge), outside, edge)


def _levels(alpha: float, side: str) -> tuple[float | None, float | None]:
    """One-sided levels of the lower and upper ends: the two-sided split α/2 each."""
    if side == "two":
        return alpha / 2, alpha / 2
    if side == "lower":
        return alpha, None
    if side == "upper":
        return None, alpha
    raise ValueError(f"side must be 'two', 'lower' or 'upper', got {side!r}")


def _log_sum(terms: np.ndarray) -> np.ndarray:
    """log Σ_j exp(terms[..., j]), stably."""
    top = terms.max(axis=-1)
    return top + np.log(np.exp(terms - top[..., None]).sum(axis=-1))


def bernstein_sequence(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, alpha: float,
                       *, n_tune: float = 10_000, variance: float = 0.25,
                       side: str = "two") -> tuple[np.ndarray, np.ndarray]:
    """Variance-adaptive confidence sequence for the mean of values in [0, 1], from each
    sequence's count ``n``, sum ``total`` and sum of squares ``total_sq`` (module docstring).

    Parameters
    ----------
    n, total, total_sq : array_like
        Running sums (values rescaled to [0, 1]); where n = 0 the interval is [0, 1].
    alpha : float
        Error probability over all looks; split α/2 per end when ``side="two"``.
    n_tune, variance : float
        The mixture is narrowest near n = ``n_tune`` values of this ``variance``
        (intrinsic time V* = n_tune·variance).
    side : {"two", "lower", "upper"}
        Both ends, or a one-sided sequence at level 1 − α (the other end 0 or 1).

    Returns
    -------
    low, high : ndarray
        The ends.

    Notes
    -----
    A candidate μ is tested with the variance penalty of its own increments' lower bound
    (module docstring, "The scaling"): X − μ ≥ −μ for the lower end, μ − X ≥ −(1 − μ) for
    the upper one.
    """
    n, S, Q = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (n, total, total_sq)))
    n_safe = np.maximum(n, 1.0)
    centre = np.clip(np.divide(S, n_safe), 0.0, 1.0)
    a_low, a_high = _levels(alpha, side)

    def V(mu: np.ndarray) -> np.ndarray:  # Σ (X − μ)², never negative (rounding)
        return np.maximum(Q - 2.0 * mu * S + n * mu * mu, 0.0)

    def rejected(mu: np.ndarray, sign: float, mix: Mixture, bar: float) -> np.ndarray:
        # sign +1: increments X − μ ≥ −μ; sign −1: μ − X ≥ −(1 − μ)
        b = mu if sign > 0 else 1.0 - mu
        terms = (mix.log_w + mix.lam * (sign * (S - n * mu))[..., None]
                 - psi_scaled(mix.lam, b[..., None]) * V(mu)[..., None])
        return _log_sum(terms) >= bar

    low = np.zeros(n.shape)
    high = np.ones(n.shape)
    if a_low is not None:
        mix, bar = mixture(n_tune * variance, a_low), math.log(1.0 / a_low)
        low = _bisect(lambda mu: rejected(mu, 1.0, mix, bar), centre, np.zeros(n.shape))
    if a_high is not None:
        mix, bar = mixture(n_tune * variance, a_high), math.log(1.0 / a_high)
        high = _bisect(lambda mu: rejected(mu, -1.0, mix, bar), centre, np.ones(n.shape))
    empty = n <= 0
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


def difference_sequence(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, control: int,
                        control_low: np.ndarray, control_high: np.ndarray, alpha: float, *,
                        n_tune: float = 10_000, variance: float = 0.25, side: str = "two"
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Confidence sequence for μ_a − μ_c of every arm a against arm ``control`` (last axis:
    the K arms), values in [0, 1], valid under any adaptive allocation (module docstring).

    Parameters
    ----------
    n, total, total_sq : array_like, shape (..., K)
        Per-arm running sums.
    control : int
        The control's index c.
    control_low, control_high : array_like, shape (...)
        The control mean's own confidence sequence (level 1 − α_c): the nuisance's range.
    alpha : float
        Each difference's error probability over all looks (α_d), given the control's
        sequence holds; split α/2 per end when ``side="two"``.
    n_tune, variance : float
        Tuning: narrowest near n_tune values per arm of this variance each
        (V* = 2·n_tune·variance).
    side : {"two", "lower", "upper"}
        As in :func:`bernstein_sequence`.

    Returns
    -------
    low, high : ndarray, shape (..., K)
        The ends (the control's column: NaN); [−1, 1] where an arm or the control has no value.
    """
    n, S, Q = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (n, total, total_sq)))
    nc, Sc, Qc = n[..., control, None], S[..., control, None], Q[..., control, None]
    L = np.asarray(control_low, dtype=float)[..., None] + np.zeros(n.shape)
    U = np.asarray(control_high, dtype=float)[..., None] + np.zeros(n.shape)
    xa = np.divide(S, np.maximum(n, 1.0))
    xc = np.divide(Sc, np.maximum(nc, 1.0))
    centre = np.clip(xa - xc, -1.0, 1.0) + np.zeros(n.shape)
    a_low, a_high = _levels(alpha, side)

    def parts(delta: np.ndarray, m: np.ndarray, sign: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """sign·ΣZ, Σ_a Z², Σ_c Z² at μ_c = m, μ_a = m + Δ."""
        mu = m + delta
        s = (S - n * mu) - (Sc - nc * m)
        va = Q - 2.0 * mu * S + n * mu * mu
        vc = Qc - 2.0 * m * Sc + nc * m * m
        return sign * s, np.maximum(va, 0.0), np.maximum(vc, 0.0)

    def rejected(delta: np.ndarray, sign: float, mix: Mixture, bar: float,
                 psi_c: np.ndarray) -> np.ndarray:
        # the treatment's increments' bound for every m in [L, U] (module docstring, "The
        # scaling"): R − μ_a ≥ −(U + Δ) (lower end), μ_a − R ≥ −(1 − L − Δ) (upper end)
        b_a = U + delta if sign > 0 else 1.0 - L - delta
        psi_a = psi_scaled(mix.lam, b_a[..., None])
        s1, va1, vc1 = parts(delta, L, sign)
        s2, va2, vc2 = parts(delta, U, sign)
        t1 = mix.log_w + mix.lam * s1[..., None] - psi_a * va1[..., None] - psi_c * vc1[..., None]
        t2 = mix.log_w + mix.lam * s2[..., None] - psi_a * va2[..., None] - psi_c * vc2[..., None]
        # with the penalties fixed, each term is log-concave in m: its minimum is at an end
        return _log_sum(np.minimum(t1, t2)) >= bar

    low = np.full(n.shape, -1.0)
    high = np.full(n.shape, 1.0)
    v_tune = 2.0 * n_tune * variance
    if a_low is not None:
        mix, bar = mixture(v_tune, a_low), math.log(1.0 / a_low)
        # the control's increments μ_c − R ≥ −(1 − μ_c) ≥ −(1 − L)
        psi_c = psi_scaled(mix.lam, (1.0 - L)[..., None])
        low = _bisect(lambda d: rejected(d, 1.0, mix, bar, psi_c), centre,
                      np.full(n.shape, -1.0))
    if a_high is not None:
        mix, bar = mixture(v_tune, a_high), math.log(1.0 / a_high)
        # the control's increments R − μ_c ≥ −μ_c ≥ −U
        psi_c = psi_scaled(mix.lam, U[..., None])
        high = _bisect(lambda d: rejected(d, -1.0, mix, bar, psi_c), centre,
                       np.full(n.shape, 1.0))
    empty = (n <= 0) | (nc <= 0)
    low, high = np.where(empty, -1.0, low), np.where(empty, 1.0, high)
    low[..., control] = np.nan
    high[..., control] = np.nan
    return low, high


def _two_sample(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, control: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean difference d, its variance v = s_a²/n_a + s_c²/n_c (sample variances, ddof 1) and
    the units N = n_a + n_c, per arm (last axis)."""
    n, S, Q = (np.asarray(x, dtype=float) for x in (n, total, total_sq))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = S / n
        var = np.maximum(Q - n * mean * mean, 0.0) / (n - 1)
        per = var / n
    d = mean - mean[..., control, None]
    v = per + per[..., control, None]
    return d, v, n + n[..., control, None]


def asymptotic_difference(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray,
                          control: int, alpha: float, *, n_tune: float = 10_000,
                          min_n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic confidence sequence (Waudby-Smith et al. 2024, Thm 2.2, normal mixture)
    for μ_a − μ_c of every arm against ``control``, tuned at ``n_tune`` units per arm
    (N* = 2·n_tune); [−inf, inf] below ``min_n`` values on either arm (the guarantee is
    asymptotic). Rewards in any units (no range needed)."""
    d, v, _ = _two_sample(n, total, total_sq, control)
    return asymptotic_from(d, v, n, control, alpha, n_tune=n_tune, min_n=min_n)


def asymptotic_from(d: np.ndarray, v: np.ndarray, n: np.ndarray, control: int, alpha: float,
                    *, n_tune: float = 10_000, min_n: int = 100
                    ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`asymptotic_difference` from any estimate ``d`` of each difference to
    ``control`` with plug-in variance ``v`` (σ̂²/N of Waudby-Smith et al. 2024, Thm 2.2) and
    ``n`` units per arm: d ± √(v·2(Nρ² + 1)/(Nρ²)·log(√(Nρ² + 1)/α)), N = n_a + n_c, ρ tuned
    at N* = 2·``n_tune``. CUPED-adjusted differences and ratios of sums
    (:mod:`banditkit.live.readout.adjusted`) come here with their own ``d`` and ``v``."""
    n = np.asarray(n, dtype=float)
    N = n + n[..., control, None]
    rho2 = asymptotic_rho2(2.0 * n_tune, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = N * rho2
        radius = np.sqrt(v * 2.0 * (x + 1.0) / x * np.log(np.sqrt(x + 1.0) / alpha))
    few = (n < min_n) | (n[..., control, None] < min_n) | ~np.isfinite(radius)
    low, high = np.where(few, -np.inf, d - radius), np.where(few, np.inf, d + radius)
    low[..., control] = np.nan
    high[..., control] = np.nan
    return low, high


def msprt_difference(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, control: int,
                     alpha: float, *, tau: float, min_n: int = 100
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The mSPRT's confidence sequence (Johari et al. 2017, normal mixture N(0, τ²) over the
    difference, plug-in variance) for μ_a − μ_c of every arm against ``control``;
    [−inf, inf] below ``min_n`` values on either arm."""
    d, v, _ = _two_sample(n, total, total_sq, control)
    return msprt_from(d, v, n, control, alpha, tau=tau, min_n=min_n)


def one_sided_from(d: np.ndarray, v: np.ndarray, n: np.ndarray, control: int, alpha: float,
                   *, n_tune: float = 10_000, min_n: int = 100) -> np.ndarray:
    """A one-sided asymptotic lower confidence sequence for each difference to ``control``:
    d − √v·u·√((x + 1)/x), x = Nρ² (N = n_a + n_c, ρ tuned at N* = 2·``n_tune`` as in
    :func:`asymptotic_from`), where u solves the **one-sided** normal mixture's boundary
    (Howard, Ramdas, McAuliffe & Sekhon 2021, Ann. Statist. 49(2), Proposition 6 with a
    half-normal mixing density; the asymptotic version of Waudby-Smith et al. 2024, Thm 2.2):

        log 2 − ½ log(1 + x) + u²/2 + log Φ(u) = log(1/α).

    (With a two-sided normal mixture the same equation lacks log 2 + log Φ(u) and gives
    u² = 2 log(√(1 + x)/α), :func:`asymptotic_from`'s radius at level α/2 per end.) −inf
    below ``min_n`` values on either arm; the control's column NaN."""
    from scipy.special import log_ndtr  # scipy: import lazily, as the fixed-n intervals do

    n = np.asarray(n, dtype=float)
    N = n + n[..., control, None]
    rho2 = asymptotic_rho2(2.0 * n_tune, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = N * rho2
        target = math.log(1.0 / alpha) - math.log(2.0) + 0.5 * np.log1p(x)
        # f(u) = u²/2 + log Φ(u) − target is increasing and convex for u ≥ 0 (the inverse
        # Mills ratio's slope exceeds −1): Newton's method from u₀ = √(2·target⁺) + 1, where
        # f ≥ 0, descends monotonically to the root (never below it: the end stays valid)
        u = np.sqrt(2.0 * np.maximum(target, 0.0)) + 1.0
        for _ in range(12):
            log_cdf = log_ndtr(u)
            mills = np.exp(-0.5 * u * u - 0.5 * math.log(2.0 * math.pi) - log_cdf)
            u = u - (0.5 * u * u + log_cdf - target) / (u + mills)
        radius = np.sqrt(v) * u * np.sqrt((x + 1.0) / x)
    few = (n < min_n) | (n[..., control, None] < min_n) | ~np.isfinite(radius)
    low = np.where(few, -np.inf, d - radius)
    low[..., control] = np.nan
    return low


def msprt_from(d: np.ndarray, v: np.ndarray, n: np.ndarray, control: int, alpha: float, *,
               tau: float, min_n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """:func:`msprt_difference` from any estimate ``d`` of each difference with plug-in
    variance ``v`` and ``n`` units per arm (Johari et al. 2017)."""
    t2 = float(tau) ** 2
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.sqrt(2.0 * v * (v + t2) / t2
                         * (math.log(1.0 / alpha) + 0.5 * np.log((v + t2) / v)))
    few = (n < min_n) | (n[..., control, None] < min_n) | ~np.isfinite(radius)
    low, high = np.where(few, -np.inf, d - radius), np.where(few, np.inf, d + radius)
    low[..., control] = np.nan
    high[..., control] = np.nan
    return low, high


def asymptotic_mean(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, alpha: float, *,
                    n_tune: float = 10_000, min_n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic confidence sequence for one mean (Waudby-Smith et al. 2024, Thm 2.2):
    x̄ ± σ̂·√(2(nρ² + 1)/(n²ρ²)·log(√(nρ² + 1)/α)), ρ tuned at ``n_tune``; [−inf, inf] below
    ``min_n`` values."""
    n, S, Q = (np.asarray(x, dtype=float) for x in (n, total, total_sq))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = S / n
        var = np.maximum(Q - n * mean * mean, 0.0) / (n - 1)
    return normal_sequence(mean, var / n, n, alpha, n_tune=n_tune, min_n=min_n)


def normal_sequence(mean: np.ndarray, v: np.ndarray, n: np.ndarray, alpha: float, *,
                    n_tune: float = 10_000, min_n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """:func:`asymptotic_mean` from any estimate ``mean`` with plug-in variance ``v`` (σ̂²/n)
    after ``n`` units: mean ± √(v·2(nρ² + 1)/(nρ²)·log(√(nρ² + 1)/α)), ρ tuned at
    ``n_tune``."""
    n = np.asarray(n, dtype=float)
    rho2 = asymptotic_rho2(n_tune, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = n * rho2
        radius = np.sqrt(v * 2.0 * (x + 1.0) / x * np.log(np.sqrt(x + 1.0) / alpha))
    few = (n < min_n) | ~np.isfinite(radius)
    return np.where(few, -np.inf, mean - radius), np.where(few, np.inf, mean + radius)


# ---------------------------------------------------------------------------------------------
# The predictable plug-in empirical-Bernstein sequence (the exact default)
# ---------------------------------------------------------------------------------------------
