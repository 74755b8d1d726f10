"""Several metrics and segments at once, with the error controlled across a stated family: a
primary decision metric, secondary metrics and guardrails, each labelled, and Holm's procedure on
anytime-valid p-values.

The family
----------
Every (metric, segment, arm against the control) difference is one hypothesis "no difference";
the family is all of them, m in number, and is stated in the readout (``family_size`` and the
list of members). The chance that *any* of them gets a false verdict at *any* look is at most α.

Anytime-valid p-values
----------------------
For the asymptotic confidence sequence (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas 2024,
Thm 2.2; :func:`banditkit.live.readout.sequences.asymptotic_from`, the sequence ``status`` uses for
continuous metrics), with x = Nρ² (N = n_arm + n_control, ρ tuned at ``n_tune`` as there), the
difference d̂ with plug-in variance v is excluded from 0 at level α exactly when
α ≥ p = √(x + 1)·exp(−d̂²x/(2v(x + 1))): p is the smallest α whose sequence excludes 0 at this
look, and since the boundary comes from one nonnegative supermartingale (the normal mixture,
to the normal approximation) for every α, P(p_t ≤ α at some t) ≤ α — an anytime-valid
p-value, at any look, however often one looks, and under any predictable allocation.

Holm across the family, at every look
-------------------------------------
At each look, Holm's step-down procedure on the m p-values: with p_(1) ≤ … ≤ p_(m), reject
while p_(j) ≤ α/(m − j + 1). Why this holds over all looks together: if Holm rejects a true
null at some look, the first true null it rejects has p ≤ α/m₀ (m₀ true nulls), so the
family errs only if some true null's p-value process ever reaches α/m₀, which by the union
bound over the m₀ anytime-valid p-values has probability at most α. The intervals shown are
each hypothesis's sequence at α/m (Bonferroni: all of them cover together at every look); the
verdicts are Holm's (never fewer than the intervals give). Guardrails in the family are tested
as the other members (two-sided); their one-sided pausing rule stays with
:mod:`banditkit.live.readout.guardrails` at its own α.

Cost: against one metric alone at α, each member's interval is the sequence at α/m (at
10,000 units per arm tuned there, 1.08× / 1.19× / 1.26× the radius for m = 2 / 6 / 12: about
1.17× / 1.43× / 1.59× the units to the same width), and Holm's first rejection needs p ≤ α/m.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ExperimentError
from ..outcomes.resolved_prefix import ResolvedPrefix
from .sequences import asymptotic_from, asymptotic_rho2

__all__ = ["ROLES", "Member", "anytime_p_values", "experiment_family", "family_readout",
           "holm"]

#: How a member is labelled.
ROLES = ("primary", "secondary", "guardrail")


@dataclass(frozen=True)
class Member:
    """One metric in one segment: its per-arm count, sum and sum of squares (arrays over the
    arms, the control included), and its label."""

    metric: str
    role: str
    n: np.ndarray
    total: np.ndarray
    total_sq: np.ndarray
    segment: str = "all"


def anytime_p_values(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, control: int,
                     *, n_tune: float = 10_000, tune_alpha: float = 0.05, min_n: int = 100
                     ) -> np.ndarray:
    """Each arm's anytime-valid p-value for "no difference to the control" (module docstring),
    elementwise over leading axes; 1 below ``min_n`` units on either arm; the control NaN. ρ is
    tuned at ``tune_alpha`` (any fixed ρ is valid at every α)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.asarray(total, dtype=float) / n
        var = np.maximum(np.asarray(total_sq, dtype=float) - n * mean * mean, 0.0) / (n - 1)
        d = mean - mean[..., control, None]
        v = var / n + (var / n)[..., control, None]
        x = (n + n[..., control, None]) * asymptotic_rho2(2.0 * n_tune, tune_alpha)
        p = np.sqrt(x + 1.0) * np.exp(-d * d * x / (2.0 * v * (x + 1.0)))
    few = (n < min_n) | (n[..., control, None] < min_n) | ~np.isfinite(p)
    p = np.where(few, 1.0, np.minimum(p, 1.0))
    p[..., control] = np.nan
    return p


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's adjusted p-values over the last axis (reject at α where adjusted ≤ α)."""
    p = np.asarray(p, dtype=float)
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1) * (m - np.arange(m))
    adjusted = np.minimum(np.maximum.accumulate(ranked, axis=-1), 1.0)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return out


def family_readout(members: Sequence[Member], arms: Sequence[str], control: int,
                   alpha: float = 0.05, *, n_tune: float = 10_000) -> pd.DataFrame:
    """One row per (member, arm other than the control): ``metric``, ``segment``, ``role``,
    ``arm``, ``diff``, its interval ``diff_low``/``diff_high`` at α/m, the anytime-valid ``p``,
    Holm's ``p_holm`` and ``verdict`` over the whole family (module docstring);
    ``frame.attrs``: ``family_size`` m, ``alpha`` and a ``note`` stating the family."""
    if not members:
        raise ExperimentError("members must name at least one metric")
    primaries = [m for m in members if m.role == "primary"]
    bad = [m.role for m in members if m.role not in ROLES]
    if bad:
        raise ExperimentError(f"role must be one of {list(ROLES)}, got {bad[0]!r}")
    if len({m.metric for m in primaries}) != 1:
        raise ExperimentError("the family needs exactly one primary metric (the decision "
                              f"metric; segments of it may repeat), got "
                              f"{sorted({m.metric for m in primaries})}")
    K = len(arms)
    if not 0 <= control < K:
        raise ExperimentError(f"control must index one of the {K} arms, got {control!r}")
    rows, ps = [], []
    m_total = len(members) * (K - 1)
    for member in members:
        n, S, Q = (np.asarray(v, dtype=float) for v in (member.n, member.total,
                                                          member.total_sq))
        if n.shape != (K,) or S.shape != (K,) or Q.shape != (K,):
            raise ExperimentError(f"{member.metric} ({member.segment}): n, total and total_sq "
                                  f"must have one value per arm ({K})")
        # ρ tuned as the intervals' (at α/m): an interval excludes 0 exactly when p ≤ α/m
        p = anytime_p_values(n, S, Q, control, n_tune=n_tune, tune_alpha=alpha / m_total)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = S / n
            var = np.maximum(Q - n * mean * mean, 0.0) / (n - 1)
        d = mean - mean[control]
        low, high = asymptotic_from(d, var / n + var[control] / n[control], n, control,
                                    alpha / m_total, n_tune=n_tune)
        for a in range(K):
            if a != control:
                rows.append([member.metric, member.segment, member.role, arms[a], d[a],
                             low[a], high[a], p[a]])
                ps.append(p[a])
    frame = pd.DataFrame(rows, columns=["metric", "segment", "role", "arm", "diff",
                                        "diff_low", "diff_high", "p"])
    frame["p_holm"] = holm(np.array(ps))
    frame["verdict"] = np.where(frame["p_holm"] <= alpha,
                                np.where(frame["diff"] > 0, "better", "worse"), "undecided")
    frame.attrs.update(family_size=m_total, alpha=alpha, note=(
        f"family: {m_total} differences ({len(members)} metric-segment pairs × {K - 1} arms "
        f"against the control); false verdicts anywhere in it, at any look: at most "
        f"{alpha:g} (Holm on anytime-valid p-values; intervals at alpha/{m_total})"))
    return frame


def experiment_family(names: list[str], control: int, prefix: ResolvedPrefix,
                      guardrails: Sequence[Any], alpha: float, n_tune: int,
                      segments: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """The experiment's own metric family (``Experiment.family``) on the units ``status``
    counts (``prefix``): its reward as the primary metric (plain means) and each guardrail's
    metric, labelled ``guardrail``, every arm against the control; with declared
    ``segments`` (label → per-arm count, sum and sum of squares,
    :func:`banditkit.live.readout.segments.segment_sums`) the reward in each segment too."""
    members = [Member("reward", "primary", prefix.n, prefix.total, prefix.total_sq)]
    members += [Member(g.metric, "guardrail", prefix.metric_n[j], prefix.metric_total[j],
                       prefix.metric_total_sq[j]) for j, g in enumerate(guardrails)]
    members += [Member("reward", "primary", *sums, segment=label)
                for label, sums in (segments or {}).items()]
    return family_readout(members, names, control, alpha, n_tune=n_tune)
