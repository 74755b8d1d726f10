"""The predictable plug-in empirical-Bernstein confidence sequence: the live verdicts' exact
default (``sequence="exact"``), from four running sums per arm (the other sequences are in
:mod:`banditkit.live.readout.sequences`).

The exact default: the predictable plug-in empirical-Bernstein sequence
------------------------------------------------------------------------
Waudby-Smith & Ramdas (2023, J. R. Stat. Soc. B 86(1), "Estimating means of bounded random
variables by betting", Theorem 2, the PrPl-EB sequence), with Fan et al.'s inequality scaled
to each increment's own lower bound (below, "The scaling"). For one arm's values
x_1, x_2, ... in [0, 1] (in assignment order) with mean μ, and anything **predictable**
(computed from x_1..x_{i−1} only) — a centre μ̂_{i−1} ∈ (0, 1) and a λ_i ∈ [0, 1/2]:

    M_n(μ) = exp(Σ_{i≤n} λ_i(x_i − μ) − Σ_{i≤n} ψ_E(λ_i b_i)/b_i² · (x_i − μ̂_{i−1})²),
    b_i = μ̂_{i−1},

is a nonnegative supermartingale. Proof: ξ = x_i − μ̂_{i−1} ≥ −μ̂_{i−1} = −b_i (x_i ≥ 0), so
Fan's inequality at λ_i b_i < 1 for ξ/b_i ≥ −1 gives exp(λ_iξ − ψ_E(λ_i b_i)/b_i²·ξ²) ≤
1 + λ_iξ, whose conditional mean is 1 + λ_i(μ − μ̂_{i−1}) ≤ exp(λ_i(μ − μ̂_{i−1})); times
exp(λ_i(μ̂_{i−1} − μ)), the i-th factor of M has conditional mean ≤ 1. The mirror process
(λ_i(μ − x_i), ξ = μ̂_{i−1} − x_i ≥ −(1 − μ̂_{i−1})) has b_i = 1 − μ̂_{i−1}. The centre must
be μ̂_{i−1}, *not* μ̂_i: a centre that has seen x_i makes the penalty small exactly when x_i
is far from the mean (tests/test_plugin_sequence.py's exact enumeration catches it).

With Λ = Σλ_i, A = Σλ_i x_i and the penalties P^L = Σψ_E(λ_i μ̂_{i−1})/μ̂_{i−1}²·v_i,
P^U = Σψ_E(λ_i(1 − μ̂_{i−1}))/(1 − μ̂_{i−1})²·v_i (v_i = (x_i − μ̂_{i−1})²), log M is
*linear* in μ: Ville's inequality at α/2 per end gives the explicit interval
(:func:`plugin_sequence`)

    [(A − P^L − log(2/α))/Λ, (A + P^U + log(2/α))/Λ],

four running sums per arm, no bisection, no candidate-dependent terms (the mixture's b depends
on the candidate μ; here b_i is predictable). The choices (:func:`plugin_terms`):
μ̂_{i−1} = (1/2 + Σ_{j<i} x_j)/i and σ̂²_{i−1} = (1/4 + Σ_{j<i}(x_j − x̄_{i−1})²)/i, WSR's
regularised estimates; λ_i = min(1/2, √(2 log(1/α')/(k σ̂²_{i−1} max(i, n_tune) g_i))), WSR's
fixed-n tuning √(2 log(1/α)/(n σ̂²)) at n = ``n_tune`` (k = 2: the λ of a difference of two
arms of similar variance), g_i ≥ 1 the scaled penalty's excess over λ²/2, and after
``n_tune`` values λ decays as 1/√i so the interval keeps shrinking (at rate log n/√n) instead
of stalling at half its width at ``n_tune``. log(1/α') is fixed when the rewards are summed
(:func:`plugin_level`: one end of one difference at α = 0.05); any predictable λ is valid at
any α, the tuning only sets where the sequence is narrowest.
**Differs from the paper**: WSR's sequence tunes λ_t ∝ 1/√(t log(1 + t)) for every t (no
stated n) and centres the penalty with the plain ψ_E(λ)/4 of values in [0, 1]; here λ is
tuned at the experiment's stated ``tune_n`` (their fixed-n choice, there) and each side pays
the scaled penalty of its own predictable bound b_i (never more than theirs).

**A difference to the control** (:func:`plugin_difference`). Each arm's rewards get their
own λ_i, μ̂_{i−1} and σ̂²_{i−1} from **that arm's earlier rewards in assignment order** only,
so the terms are predictable in any interleaving of the arms and under the resolved-prefix
rule (:mod:`banditkit.live.outcomes.resolved_prefix`). The lower end's process adds λ_i(x_i − μ_a)
(b_i = μ̂^a_{i−1}) for a reward of arm a and λ_j(μ_c − x_j) (b_j = 1 − μ̂^c_{j−1}) for one of
the control, each factor of conditional mean ≤ 1 given everything before it and its arm —
however the design chose the arm (the argument of the mixture below). Under μ_a = m + Δ,
μ_c = m:

    log E(Δ, m) = A_a − A_c − Λ_a Δ − (Λ_a − Λ_c) m − P_a^L − P_c^U,

linear in the nuisance m: on the event that the control's own sequence [L, U] (level
1 − α·share) holds, its minimum over m ∈ [L, U] is at U when Λ_a ≥ Λ_c, else at L, and Δ is
rejected when that minimum reaches log(1/α_d): the lower end is explicit, and so is the upper
(the mirror, with P_a^U + P_c^L). The nuisance costs |Λ_a − Λ_c|/Λ_a times the control's
half-width: small when the two arms' λ — their variances — are alike.

Measured (``python benchmarks/bench_widths.py plugin --runs 100 --seed 1``: 0.10 vs 0.11,
tuned at 10,000 per arm, median width ÷ fixed-n): 0/1 rewards at 1,000 / 5,000 / 10,000 /
20,000 / 80,000 / 300,000 per arm 2.53 / 1.60 / 1.51 / 1.57 / 1.85 / 2.20 (the mixture:
2.00 / 1.70 / 1.62 / 1.59 / 1.64 / 1.71); Beta rewards (concentration 10) at 1,000 ...
80,000: 2.81 / 1.65 / 1.54 / 1.59 / 1.86 (the mixture 2.61 / 2.05 / 1.97 / 1.88 / 1.65). The
plug-in is narrower from about half to twice ``tune_n``, the mixture far from it (a test that
runs 8× longer than planned, or stops at a tenth of it): ``sequence="mixture"`` keeps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .sequences import _levels, psi_scaled

__all__ = ["PLUGIN_CAP", "PLUGIN_SUMS", "PluginSums", "plugin_difference", "plugin_level",
           "plugin_sequence", "plugin_terms"]


#: The plug-in's largest λ (Waudby-Smith & Ramdas 2023, §3.2, c = 1/2): λb < 1 for any b ≤ 1.
PLUGIN_CAP = 0.5
#: The plug-in sums kept per arm, in this order along :attr:`ArmSums.plugin`'s last axis.
PLUGIN_SUMS = ("lam", "lam_x", "pen_low", "pen_high")
#: Fixed-point steps of λ's penalty factor g (:func:`plugin_terms`).
_G_STEPS = 3


def plugin_level(n_arms: int, alpha: float = 0.05, control_share: float = 0.05) -> float:
    """log(1/α') at which the plug-in's λ is tuned: one end of one difference to the control at
    the default level α = 0.05 (α' = α(1 − share)/(2(K − 1)), the two-sided split of
    :mod:`banditkit.live.readout.statistics`). The λ are accumulated as the rewards come, before
    anyone
    asks a status at some α, so they are tuned at this fixed level; any predictable λ is valid
    at any α (only the width depends on the tuning)."""
    return math.log(2.0 * max(int(n_arms) - 1, 1) / (alpha * (1.0 - control_share)))


def plugin_terms(x: np.ndarray, *, n_tune: float, level: float,
                 prior: tuple[np.ndarray | float, np.ndarray | float, np.ndarray | float]
                 = (0.0, 0.0, 0.0), k: float = 2.0, cap: float = PLUGIN_CAP
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per reward, the plug-in's terms (λ_i, λ_i·x_i, ψ_E(λ_i b_i^L)/(b_i^L)²·v_i,
    ψ_E(λ_i b_i^U)/(b_i^U)²·v_i) of one arm's rewards ``x`` in [0, 1] **in assignment order**
    along the last axis (module docstring, "The plug-in"); their sums over a prefix are
    :class:`PluginSums`. Everything reward i uses comes from the arm's rewards before it:

    - μ̂_{i−1} = (1/2 + Σ_{j<i} x_j)/i and σ̂²_{i−1} = (1/4 + Σ_{j<i}(x_j − x̄_{i−1})²)/i
      (the regularised estimates of Waudby-Smith & Ramdas 2023, eq. (26)-(27));
    - λ_i = min(``cap``, √(2·``level``/(k·σ̂²_{i−1}·max(i, ``n_tune``)·g_i))), where
      g_i = (ψ_E(λ_i b_i^L)/(b_i^L)² + ψ_E(λ_i b_i^U)/(b_i^U)²)/λ_i² ≥ 1 is how much the
      scaled penalties of both ends exceed the Gaussian λ²/2 (three fixed-point steps from
      g = 1): the λ that minimises the Bernstein bound (P + log(1/α'))/Λ at ``n_tune``
      values, as Waudby-Smith & Ramdas's fixed-n choice √(2 log(1/α)/(n σ̂²)) does for the
      Gaussian penalty, but with the penalty this sequence pays;
    - v_i = (x_i − μ̂_{i−1})², b_i^L = μ̂_{i−1}, b_i^U = 1 − μ̂_{i−1}.

    Parameters
    ----------
    x : array_like
        Rewards rescaled to [0, 1] (clipped there), the last axis in assignment order.
    n_tune : float
        Units per arm at which the sequence is tuned to be narrowest.
    level : float
        log(1/α') of the tuning (:func:`plugin_level`).
    prior : tuple
        (count, Σx, Σx²) of the arm's rewards before ``x`` (a prefix already summed: the live
        experiment adds each call's newly resolved rewards to its stored state).
    k : float
        λ's variance factor: 2 for a difference of two arms of similar variance (the default:
        what the verdicts use), 1 for one arm.
    cap : float
        λ's upper bound c.

    Returns
    -------
    lam, lam_x, pen_low, pen_high : ndarray
        Shaped as ``x``.
    """
    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    n0, s0, q0 = (np.asarray(p, dtype=float)[..., None] for p in prior)
    zero = np.zeros((*x.shape[:-1], 1))
    s_prev = s0 + np.concatenate([zero, np.cumsum(x, axis=-1)[..., :-1]], axis=-1)
    q_prev = q0 + np.concatenate([zero, np.cumsum(x * x, axis=-1)[..., :-1]], axis=-1)
    i = n0 + np.arange(1, x.shape[-1] + 1, dtype=float)  # this reward's rank in its arm
    m = i - 1.0
    mu = (0.5 + s_prev) / i
    squares = np.where(m > 0, q_prev - s_prev * s_prev / np.maximum(m, 1.0), 0.0)
    var = (0.25 + np.maximum(squares, 0.0)) / i
    base = 2.0 * level / (k * var * np.maximum(i, n_tune))
    lam = np.minimum(cap, np.sqrt(base))
    for _ in range(_G_STEPS):  # the scaled penalty's excess g over λ²/2 (docstring)
        g = (psi_scaled(lam, mu) + psi_scaled(lam, 1.0 - mu)) / (lam * lam)
        lam = np.minimum(cap, np.sqrt(base / g))
    v = (x - mu) ** 2
    return lam, lam * x, psi_scaled(lam, mu) * v, psi_scaled(lam, 1.0 - mu) * v


@dataclass(frozen=True)
class PluginSums:
    """Per arm (arrays of any shape, the arms on the last axis), the plug-in's sums over the
    arm's counted rewards (:func:`plugin_terms`): Λ = Σλ_i, A = Σλ_i x_i and the penalties
    P^L = Σψ_E(λ_i μ̂_{i−1})/μ̂_{i−1}²·v_i, P^U = Σψ_E(λ_i(1 − μ̂_{i−1}))/(1 − μ̂_{i−1})²·v_i."""

    lam: np.ndarray
    lam_x: np.ndarray
    pen_low: np.ndarray
    pen_high: np.ndarray

    @classmethod
    def from_array(cls, array: np.ndarray) -> PluginSums:
        """From an array whose last axis holds :data:`PLUGIN_SUMS` in order."""
        array = np.asarray(array, dtype=float)
        return cls(*(array[..., j] for j in range(len(PLUGIN_SUMS))))

    @classmethod
    def of(cls, x: np.ndarray, **tuning: object) -> PluginSums:
        """The sums over all of ``x``'s last axis (:func:`plugin_terms`'s keywords)."""
        return cls(*(t.sum(axis=-1) for t in plugin_terms(x, **tuning)))  # type: ignore[arg-type]


def plugin_sequence(n: np.ndarray, sums: PluginSums, alpha: float, *, side: str = "two"
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The predictable plug-in empirical-Bernstein confidence sequence for one arm's mean
    (values in [0, 1]; Waudby-Smith & Ramdas 2023, Theorem 2, with Fan et al.'s scaled
    inequality; module docstring, "The plug-in"):

        low = (A − P^L − log(1/α_low))/Λ,   high = (A + P^U + log(1/α_high))/Λ,

    clipped to [0, 1]; [0, 1] where ``n`` is 0. ``side`` as :func:`bernstein_sequence`."""
    n = np.asarray(n, dtype=float)
    a_low, a_high = _levels(alpha, side)
    lam, A = np.asarray(sums.lam, float), np.asarray(sums.lam_x, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = (np.clip((A - sums.pen_low - math.log(1.0 / a_low)) / lam, 0.0, 1.0)
               if a_low is not None else np.zeros(n.shape))
        high = (np.clip((A + sums.pen_high + math.log(1.0 / a_high)) / lam, 0.0, 1.0)
                if a_high is not None else np.ones(n.shape))
    empty = (n <= 0) | ~(lam > 0)
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


def plugin_difference(n: np.ndarray, sums: PluginSums, control: int, control_low: np.ndarray,
                      control_high: np.ndarray, alpha: float, *, side: str = "two"
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The plug-in confidence sequence for μ_a − μ_c of every arm a against ``control`` (last
    axis: the K arms; values in [0, 1]), valid under any adaptive allocation given that the
    control's own sequence [``control_low``, ``control_high``] holds (module docstring, "The
    plug-in on a difference"). With Λ_a, A_a, P_a of arm a and Λ_c, A_c, P_c of the control:

        low  = (A_a − A_c − (Λ_a − Λ_c)·m_low − P_a^L − P_c^U − log(1/α_low))/Λ_a,
        high = (A_a − A_c − (Λ_a − Λ_c)·m_high + P_a^U + P_c^L + log(1/α_high))/Λ_a,

    m_low = U, m_high = L where Λ_a ≥ Λ_c (else the other way round): the nuisance μ_c at its
    worst over the control's interval. Clipped to [−1, 1]; [−1, 1] where an arm or the
    control has no reward; the control's column NaN. ``alpha`` and ``side`` as
    :func:`difference_sequence`.
    """
    n = np.asarray(n, dtype=float)
    lam, A = np.asarray(sums.lam, float), np.asarray(sums.lam_x, float)
    pl, pu = np.asarray(sums.pen_low, float), np.asarray(sums.pen_high, float)
    lc, Ac = lam[..., control, None], A[..., control, None]
    pcl, pcu = pl[..., control, None], pu[..., control, None]
    L = np.asarray(control_low, dtype=float)[..., None]
    U = np.asarray(control_high, dtype=float)[..., None]
    more = lam >= lc
    a_low, a_high = _levels(alpha, side)
    with np.errstate(divide="ignore", invalid="ignore"):
        if a_low is not None:
            m = np.where(more, U, L)
            low = np.clip((A - Ac - (lam - lc) * m - pl - pcu - math.log(1.0 / a_low)) / lam,
                          -1.0, 1.0)
        else:
            low = np.full(n.shape, -1.0)
        if a_high is not None:
            m = np.where(more, L, U)
            high = np.clip((A - Ac - (lam - lc) * m + pu + pcl + math.log(1.0 / a_high)) / lam,
                           -1.0, 1.0)
        else:
            high = np.full(n.shape, 1.0)
    empty = (n <= 0) | (n[..., control, None] <= 0) | ~(lam > 0) | ~(lc > 0)
    low, high = np.where(empty, -1.0, low), np.where(empty, 1.0, high)
    low[..., control] = np.nan
    high[..., control] = np.nan
    return low, high
