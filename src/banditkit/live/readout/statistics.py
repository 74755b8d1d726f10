"""What :meth:`banditkit.Experiment.status` shows per arm: counts, means, intervals, differences to
the control arm with a verdict, and the missing-outcome check — all from per-arm SQL aggregates
(count, sum, sum of squares), so status costs O(K) in Python however many units there are.

Two kinds of interval (``intervals=``):

``"anytime"`` (default)
    Confidence sequences (:mod:`banditkit.live.readout.sequences`), valid at every look at once, on
    the
    reward type the experiment declared (:mod:`banditkit.live.readout.verdict_spec`). Each arm's own
    interval has level 1 − α/K (all K together: 1 − α). The differences to the control come
    from a sequence **on each difference directly**: with the default ``sequence="exact"``
    (bounded rewards: the predictable plug-in, from the per-arm sums :attr:`ArmSums.plugin`
    the resolved prefix keeps; the λ-mixture, ``sequence="mixture"``, where they are not
    given) the control's own sequence gets α·s (s = ``control_share``, 0.05) and each
    of the K − 1 differences α(1 − s)/(K − 1), so the chance that any difference's interval at
    any look misses, or that any verdict is wrong, is at most α, however often one looks and
    however the algorithm allocated its pulls. ``"asymptotic"`` and ``"msprt"`` (normal
    approximations, valid as n grows) give each difference α/(K − 1). Rewards are rescaled
    from the declared range to [0, 1] for the exact sequences.
``"fixed"``
    Fixed-n intervals at level 1 − α each (Wilson's for 0/1 rewards, Student-t otherwise,
    clipped to the reward range; differences: Newcombe's interval for 0/1 rewards, the mean
    difference ± z·√(s²_a/n_a + s²_c/n_c) otherwise).
    Each is valid for **one look decided in advance** only and nothing is split across arms:
    looking repeatedly, or at K intervals together, errs far more often than α.

Verdict (either kind): ``better`` when the whole difference interval is above 0 (the arm's mean
reward exceeds the control's), ``worse`` when it is below 0, ``undecided`` otherwise; the
control's own row says ``control``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ExperimentError
from .adjusted import adjusted_estimates
from .anytime import confidence_sequence
from .plugin import PluginSums, plugin_difference, plugin_level, plugin_sequence, plugin_terms
from .relative import relative_lift
from .sequences import (
    asymptotic_difference,
    asymptotic_from,
    asymptotic_mean,
    bernstein_sequence,
    difference_sequence,
    msprt_difference,
    msprt_from,
    normal_sequence,
)
from .sums import ArmSums
from .verdict_spec import VerdictSpec, check_verdicts

__all__ = [
    "INTERVALS",
    "Comparison",
    "arm_table",
    "check_alpha",
    "check_intervals",
    "compare",
    "describe",
    "losing_arms",
    "missing_outcome_warnings",
    "plugin_sums",
]

#: The kinds of interval status can show.
INTERVALS = ("anytime", "fixed")


def plugin_sums(rewards: list[np.ndarray], spec: VerdictSpec, *, cumulative: bool = False
                ) -> np.ndarray:
    """The :attr:`ArmSums.plugin` sums of K arms' rewards, each arm's in assignment order
    (``rewards[a]``: shape (..., n_a), the last axis the order), rescaled from the spec's
    range to [0, 1] and tuned at its ``tune_n`` and :func:`~.plugin.plugin_level` (K).

    Returns
    -------
    ndarray
        Shape (..., K, 4); with ``cumulative`` (every arm the same n) shape (..., n, K, 4):
        the sums after each reward (every look of a simulated run at once).
    """
    lo, hi = spec.reward_range if spec.reward_range is not None else (0.0, 1.0)
    level = plugin_level(len(rewards))
    out = []
    for x in rewards:
        terms = plugin_terms((np.asarray(x, dtype=float) - lo) / (hi - lo),
                             n_tune=spec.tune_n, level=level)
        stacked = np.stack(terms, axis=-1)
        out.append(np.cumsum(stacked, axis=-2) if cumulative else stacked.sum(axis=-2))
    return np.stack(out, axis=-2)


@dataclass(frozen=True)
class Comparison:
    """Means, intervals, differences to the control and verdicts (arrays shaped as
    :class:`ArmSums`'; NaN where an arm has no reward; the control's differences are NaN)."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    diff: np.ndarray
    diff_low: np.ndarray
    diff_high: np.ndarray
    verdict: np.ndarray
    decision: np.ndarray | None = None


def check_intervals(intervals: object) -> str:
    if not isinstance(intervals, str) or intervals not in INTERVALS:
        raise ExperimentError(f"intervals must be 'anytime' or 'fixed', got {intervals!r}")
    return intervals


def check_alpha(alpha: object, name: str = "alpha") -> float:
    if (isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating))
            or not 0 < float(alpha) < 1):
        raise ExperimentError(f"{name} must be a number in (0, 1), got {alpha!r}")
    return float(alpha)


def describe(intervals: str, alpha: float, n_arms: int,
             reward_range: tuple[float, float] | None, spec: VerdictSpec | None = None) -> str:
    """One line saying which intervals a status shows and what they are valid for."""
    level = f"{100 * (1 - alpha):g}%"
    if intervals == "fixed":
        return (f"intervals: fixed-n {level} (each valid only for ONE look decided in advance; "
                "repeated looks err far more often)")
    spec = spec if spec is not None else check_verdicts(None, None, None, reward_range)
    return (f"intervals: anytime-valid {level} (confidence sequences: every difference and "
            f"verdict holds at every look together; each arm's interval at alpha/{n_arms}; "
            f"{spec.describe()})")


def arm_table(names: list[str], sums: ArmSums, reward_range: tuple[float, float] | None,
              *, intervals: str, alpha: float, control: int,
              spec: VerdictSpec | None = None) -> pd.DataFrame:
    """The ``arms`` frame of a status (one look): assigned, recorded, mean, low, high, diff,
    diff_low, diff_high, verdict (see the module docstring for the intervals' meaning)."""
    c = compare(sums, reward_range, intervals=intervals, alpha=alpha, control=control,
                spec=spec)
    frame = pd.DataFrame({"assigned": sums.assigned.astype(np.int64),
                          "recorded": sums.n.astype(np.int64), "mean": c.mean, "low": c.low,
                          "high": c.high, "diff": c.diff, "diff_low": c.diff_low,
                          "diff_high": c.diff_high, "verdict": c.verdict},
                         index=pd.Index(names, name="arm"))
    # the relative lift (diff / control mean) beside the difference (.relative)
    lift = relative_lift(c.mean, c.low, c.high, c.diff, c.diff_low, c.diff_high, control)
    for i, column in enumerate(("lift", "lift_low", "lift_high")):
        frame.insert(frame.columns.get_loc("diff_high") + 1 + i, column, lift[i])
    if c.decision is not None:
        frame["decision"] = c.decision
    return frame


def compare(sums: ArmSums, reward_range: tuple[float, float] | None, *, intervals: str,
            alpha: float, control: int, spec: VerdictSpec | None = None) -> Comparison:
    """Means, intervals, differences to arm ``control`` and verdicts, elementwise over any
    leading axes of ``sums`` (one status, or every look of many simulated runs at once).
    ``spec`` (default: bounded on ``reward_range``, else continuous) says which sequences."""
    n = np.asarray(sums.n, dtype=float)
    has = n > 0
    if spec is not None and (spec.cuped or spec.ratio):
        # the adjusted estimates (CUPED) or the ratios (delta method) with their variances
        return _adjusted(sums, spec, intervals, alpha, control)
    mean = np.divide(sums.total, n, out=np.full(n.shape, np.nan), where=has)
    if intervals == "anytime":
        spec = spec if spec is not None else check_verdicts(None, None, None, reward_range)
        low, high, diff_low, diff_high = _anytime(sums, spec, alpha, control)
    else:
        low, high = _fixed(sums, mean, reward_range, alpha)
        diff_low, diff_high = _fixed_difference(sums, mean, control, alpha)
    low, high = np.where(has, low, np.nan), np.where(has, high, np.nan)
    diff = mean - mean[..., control, None]
    verdict = np.where(diff_low > 0, "better", np.where(diff_high < 0, "worse", "undecided"))
    verdict = verdict.astype(object)
    verdict[..., control] = "control"
    decision = None
    if intervals == "anytime" and spec is not None and spec.margin is not None:
        m = spec.margin
        decision = np.where(
            diff_low > 0, "better", np.where(
                diff_high < 0, "worse", np.where(
                    (diff_low > -m) & (diff_high < m), "equivalent", np.where(
                        diff_low > -m, "non-inferior", "undecided")))).astype(object)
        decision[..., control] = "control"
    for column in (diff, diff_low, diff_high):
        column[..., control] = np.nan
    return Comparison(mean, low, high, diff, diff_low, diff_high, verdict, decision)


def _adjusted(sums: ArmSums, spec: VerdictSpec, intervals: str, alpha: float, control: int
              ) -> Comparison:
    """CUPED-adjusted means or ratios of sums (:mod:`banditkit.live.readout.adjusted`): each arm's
    estimate ± its normal-approximation sequence (or fixed-n interval), and each difference to
    the control by the declared sequence, from (estimate, variance per unit, units)."""
    from statistics import NormalDist

    est = adjusted_estimates(sums, spec)
    n, var = est.n, est.variance
    diff = est.mean - est.mean[..., control, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        per = var / n
    v = per + per[..., control, None]
    K = n.shape[-1]
    if intervals == "anytime":
        low, high = normal_sequence(est.mean, var / n, n, alpha / K, n_tune=spec.tune_n)
        if spec.sequence == "msprt":
            diff_low, diff_high = msprt_from(diff, v, n, control, alpha / max(K - 1, 1),
                                             tau=float(spec.tau))
        else:
            diff_low, diff_high = asymptotic_from(diff, v, n, control, alpha / max(K - 1, 1),
                                                  n_tune=spec.tune_n)
    else:
        z = NormalDist().inv_cdf(1 - alpha / 2)
        with np.errstate(invalid="ignore"):
            low, high = est.mean - z * np.sqrt(var / n), est.mean + z * np.sqrt(var / n)
            diff_low, diff_high = diff - z * np.sqrt(v), diff + z * np.sqrt(v)
    has = n > 1
    low, high = np.where(has, low, np.nan), np.where(has, high, np.nan)
    verdict = np.where(diff_low > 0, "better", np.where(diff_high < 0, "worse", "undecided"))
    verdict = verdict.astype(object)
    verdict[..., control] = "control"
    decision = None
    if intervals == "anytime" and spec.margin is not None:
        m = spec.margin
        decision = np.where(
            diff_low > 0, "better", np.where(
                diff_high < 0, "worse", np.where(
                    (diff_low > -m) & (diff_high < m), "equivalent", np.where(
                        diff_low > -m, "non-inferior", "undecided")))).astype(object)
        decision[..., control] = "control"
    for column in (diff, diff_low, diff_high):
        column[..., control] = np.nan
    return Comparison(est.mean, low, high, diff, diff_low, diff_high, verdict, decision)


def _anytime(sums: ArmSums, spec: VerdictSpec, alpha: float, control: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each arm's sequence at α/K and each difference's (module docstring), in reward units."""
    n = np.asarray(sums.n, dtype=float)
    total = np.asarray(sums.total, dtype=float)
    total_sq = np.asarray(sums.total_sq, dtype=float)
    K = n.shape[-1]
    per_difference = alpha / max(K - 1, 1)
    plugin = (None if sums.plugin is None or spec.sequence != "exact"
              else PluginSums.from_array(sums.plugin))
    if spec.reward_type == "continuous":
        low, high = asymptotic_mean(n, total, total_sq, alpha / K, n_tune=spec.tune_n)
    else:
        lo, hi = spec.reward_range
        span = hi - lo
        # the rewards rescaled to [0, 1]: Σx' = (S − n·lo)/span, Σx'² = (Q − 2·lo·S + n·lo²)/span²
        scaled = np.clip((total - n * lo) / span, 0.0, n)
        scaled_sq = np.clip((total_sq - 2 * lo * total + n * lo * lo) / span ** 2,
                            np.divide(scaled ** 2, np.maximum(n, 1)), scaled)
        a, b = _arm_sequence(n, scaled, scaled_sq, sums.binary, alpha / K, spec.tune_n,
                             plugin)
        low, high = lo + span * a, lo + span * b
    if spec.sequence in ("exact", "mixture"):
        share = spec.control_share
        c_low, c_high = _arm_sequence(n[..., control], scaled[..., control],
                                      scaled_sq[..., control],
                                      np.asarray(sums.binary)[..., control], alpha * share,
                                      spec.tune_n, None if plugin is None else
                                      PluginSums(*(p[..., control] for p in (
                                          plugin.lam, plugin.lam_x, plugin.pen_low,
                                          plugin.pen_high))))
        side = "lower" if spec.alternative == "greater" else "two"
        if plugin is not None:
            d_low, d_high = plugin_difference(n, plugin, control, c_low, c_high,
                                              alpha * (1 - share) / max(K - 1, 1), side=side)
        else:
            d_low, d_high = difference_sequence(n, scaled, scaled_sq, control, c_low, c_high,
                                                alpha * (1 - share) / max(K - 1, 1),
                                                n_tune=spec.tune_n, side=side)
        d_low, d_high = span * d_low, span * d_high
        if side == "lower":  # one-sided: no upper end
            d_high = np.where(np.isnan(d_high), np.nan, np.inf)
    elif spec.sequence == "asymptotic":
        d_low, d_high = asymptotic_difference(n, total, total_sq, control, per_difference,
                                              n_tune=spec.tune_n)
    else:
        d_low, d_high = msprt_difference(n, total, total_sq, control, per_difference,
                                         tau=float(spec.tau))
    return low, high, d_low, d_high


def _arm_sequence(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, binary: np.ndarray,
                  alpha: float, n_tune: float, plugin: PluginSums | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """One arm's sequence on [0, 1]: the beta-binomial mixture
    (:mod:`banditkit.live.readout.anytime`;
    exact for 0/1 rewards, tightest at small n) where every reward is 0/1; otherwise the
    predictable plug-in (:func:`~banditkit.live.readout.plugin.plugin_sequence`) when its sums
    are given, else the empirical-Bernstein λ-mixture (:mod:`banditkit.live.readout.sequences`)."""
    a, b = confidence_sequence(total, n, alpha)
    if plugin is not None:
        c, d = plugin_sequence(n, plugin, alpha)
    else:
        c, d = bernstein_sequence(n, total, total_sq, alpha, n_tune=n_tune)
    binary = np.asarray(binary, dtype=bool)
    return np.where(binary, a, c), np.where(binary, b, d)


def _fixed(sums: ArmSums, mean: np.ndarray, reward_range: tuple[float, float] | None,
           alpha: float) -> tuple[np.ndarray, np.ndarray]:
    from ...intervals import student_interval, wilson_interval  # scipy: import lazily

    n = np.asarray(sums.n, dtype=float)
    binary = np.asarray(sums.binary, dtype=bool)
    # every reward 0 or 1: a proportion, Wilson's interval
    low, high = wilson_interval(np.round(sums.total), n, 1 - alpha)
    low, high = np.where(binary, low, np.nan), np.where(binary, high, np.nan)
    sd = np.sqrt(_variance(sums, mean))
    for i in zip(*np.nonzero(~binary & (n > 1)), strict=True):  # other rewards: Student-t
        _, _, low[i], high[i] = student_interval(int(n[i]), float(mean[i]), float(sd[i]),
                                                 1 - alpha)
        if reward_range is not None:
            low[i], high[i] = max(low[i], reward_range[0]), min(high[i], reward_range[1])
    return low, high


def _variance(sums: ArmSums, mean: np.ndarray) -> np.ndarray:
    """Sample variances (ddof 1) from the sums; NaN below two rewards."""
    n = np.asarray(sums.n, dtype=float)
    squares = np.maximum(np.asarray(sums.total_sq) - n * np.nan_to_num(mean) ** 2, 0.0)
    return np.divide(squares, n - 1, out=np.full(n.shape, np.nan), where=n > 1)


def _fixed_difference(sums: ArmSums, mean: np.ndarray, control: int, alpha: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's interval (method 10, from the two Wilson intervals) where both arms' rewards
    are 0/1; otherwise the mean difference ± z·√(s²_a/n_a + s²_c/n_c)."""
    from statistics import NormalDist

    from ...intervals import newcombe_difference

    var = _variance(sums, mean)
    n = np.asarray(sums.n, dtype=float)
    total = np.asarray(sums.total, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var / n + var[..., control, None] / n[..., control, None])
    half = NormalDist().inv_cdf(1 - alpha / 2) * se
    diff = mean - mean[..., control, None]
    _, low, high = newcombe_difference(np.round(total), n, np.round(total[..., control, None]),
                                       n[..., control, None], 1 - alpha)
    binary = np.asarray(sums.binary, dtype=bool)
    both = binary & binary[..., control, None]
    return np.where(both, low, diff - half), np.where(both, high, diff + half)


def losing_arms(resolved: np.ndarray, answered: np.ndarray, alpha: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The decision of :func:`missing_outcome_warnings`, elementwise over leading axes.

    Returns
    -------
    losing : ndarray of bool
        Arms whose answer-rate interval lies wholly below the highest lower end.
    low, high : ndarray
        Each arm's answer-rate confidence sequence at level 1 − α/K.
    """
    resolved = np.asarray(resolved, dtype=float)
    K = resolved.shape[-1]
    low, high = confidence_sequence(np.asarray(answered, dtype=float), resolved, alpha / K)
    return high < low.max(axis=-1, keepdims=True), low, high


def missing_outcome_warnings(names: list[str], resolved: np.ndarray, answered: np.ndarray,
                             alpha: float) -> list[str]:
    """Warnings when some arm's units go unanswered more often than another's.

    Parameters
    ----------
    names : list of str
        The arms.
    resolved : ndarray of int
        Per arm, the units whose fate is known — answered or expired — among the arm's units
        assigned before its oldest unit still waiting (neither answered nor expired).
    answered : ndarray of int
        How many of those have a reward.
    alpha : float
        The chance that an experiment whose arms all lose outcomes at one common rate ever
        warns, over all looks.

    Notes
    -----
    Null hypothesis: a unit's fate (answered or never) does not depend on its arm, so each
    arm's units in assignment order are independent Bernoulli(r) with one r for all arms. Only
    units assigned before the arm's oldest waiting unit count: a unit assigned an hour ago may
    simply not have answered yet, and counting every assigned unit would make an arm with
    recent traffic (an active arm of an elimination) look like one that loses outcomes. This
    prefix of the arm's sequence ends at a stopping time (whether a unit is still waiting
    depends only on it and the units before it, and on answer delays that do not depend on the
    arm), so each arm's beta-binomial confidence sequence for its answer rate at level
    1 − α/K (:mod:`banditkit.live.readout.anytime`) covers r at every look, and under the null the
    chance that any two arms' sequences ever separate is at most α. A warning names the arms
    whose interval lies wholly below another's. Unanswered units count as lost once expired
    (:meth:`banditkit.Experiment.expire`); until then they keep the batch waiting.
    """
    resolved = np.asarray(resolved, dtype=float)
    answered = np.asarray(answered, dtype=float)
    flags, low, high = losing_arms(resolved, answered, alpha)
    best = int(np.argmax(low))
    losing = np.flatnonzero(flags).tolist()
    if not losing:
        return []

    def rate(a: int) -> str:
        return (f"{names[a]!r} answered {answered[a]:.0f} of {resolved[a]:.0f} "
                f"({answered[a] / resolved[a]:.1%}; rate in [{low[a]:.3f}, {high[a]:.3f}])")

    return [f"missing outcomes: arm(s) {', '.join(repr(names[a]) for a in losing)} lose "
            f"outcomes more often than {names[best]!r} ({'; '.join(rate(a) for a in losing)}"
            f"; {rate(best)}; units expired or never answered count as lost). A logging or "
            "delivery bug in one variant biases every result: find it before trusting the "
            "means."]
