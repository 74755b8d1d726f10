"""Planning a live test: how many units, and how many days, until the sequential test calls the
treatment ``better``?

:func:`plan` answers by its own simulation of the experiment's sufficient statistics: each run
adds ``look_every`` units per arm per look to two arms (control at the base rate or mean, the
treatment at base + ``mde``), and at every look applies
:func:`banditkit.live.readout.statistics.compare` — the function :meth:`banditkit.Experiment.status`
calls — with the same spec (reward type, sequence, tuning, α). A run stops at its first
``better``; its units per arm are recorded. The expected (mean) and 90th-percentile units and
days come from ``runs`` simulated runs (seeded), with the fixed-n sample size of a two-sided
z-test at 80% power beside them. Binary rewards are simulated exactly (binomial counts; for
the exact default, whose predictable plug-in weighs each reward by the ones before it,
Bernoulli rewards one by one); a mean and variance are simulated by normal sums with that
variance, or, for the exact default on a ``reward_range``, by Beta rewards on the range with
that mean and variance, one by one: the plan of a metric with another distribution is only as
good as that approximation at the sample sizes it predicts.

With CUPED (``cuped_rho``: the expected within-arm correlation ρ of the metric and the
pre-experiment covariate; Deng, Xu, Kohavi & Walker 2013, eq. (4)) the experiment compares
each arm's mean of y − θ(x − x̄), which has the same mean and (1 − ρ²) times the variance
(:mod:`banditkit.live.readout.adjusted`). The plan simulates those adjusted values as normal sums
with the variance times (1 − ρ²) (0/1 rewards too: adjusted values are not 0/1) through a normal
sequence's ``compare`` (the asymptotic sequence by default; the exact one takes no CUPED), and
the fixed-n sample size is the z-test's on the adjusted values, times (1 − ρ²) as well. θ is
taken at its limit: its estimation adds O(1/n) to the variance, which the plan ignores.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from statistics import NormalDist

import numpy as np

from ...rng import stream
from ..errors import ExperimentError
from ..outcomes.resolved_prefix import PluginTuning
from .plugin import plugin_terms
from .statistics import check_alpha, compare
from .sums import ArmSums
from .verdict_spec import VerdictSpec, check_verdicts

__all__ = ["Plan", "cuped_factor", "plan"]


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` predicts (units are per arm; days for all arms' traffic)."""

    expected_units: float
    p90_units: float
    expected_days: float
    p90_days: float
    fixed_n_units: float
    decided_share: float
    runs: int
    sequence: str
    seed: int
    cuped_rho: float | None = None
    #: The Monte Carlo standard error of ``expected_units`` (its runs' s.d. / √runs): two plans,
    #: or a plan and a simulation, differ by a few of these by chance alone.
    expected_units_se: float | None = None

    def as_json(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        se = ("" if self.expected_units_se is None
              else f" (± {self.expected_units_se:,.0f} Monte Carlo s.e.)")
        return (f"sequential test ({self.sequence}): expected {self.expected_units:,.0f} units "
                f"per arm{se} ({self.expected_days:.1f} days), 90th percentile "
                f"{self.p90_units:,.0f} ({self.p90_days:.1f} days); fixed-n at 80% power: "
                f"{self.fixed_n_units:,.0f} per arm; {self.decided_share:.0%} of {self.runs} "
                f"simulated runs decided by the cap (seed {self.seed})"
                + ("" if self.cuped_rho is None else
                   f"; with CUPED at rho = {self.cuped_rho:g} (variance x "
                   f"{1 - self.cuped_rho ** 2:.3g})"))


def _positive(value: object, name: str) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(float(value)) or not float(value) > 0):
        raise ExperimentError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def cuped_factor(cuped_rho: object, sequence: str | None) -> float:
    """The variance factor 1 − ρ² of CUPED (module docstring) for ``plan(cuped_rho=ρ)``;
    refused by name unless ρ is a number in [0, 1) and the sequence a normal one."""
    if (isinstance(cuped_rho, bool) or not isinstance(cuped_rho, (int, float, np.integer,
                                                                  np.floating))
            or not 0 <= float(cuped_rho) < 1):
        raise ExperimentError(f"cuped_rho must be a number in [0, 1) (the expected within-arm "
                              f"correlation of the metric and its pre-experiment covariate; "
                              f"CUPED's variance is 1 - rho^2 times), got {cuped_rho!r}")
    if sequence in ("exact", "mixture"):
        raise ExperimentError("cuped_rho needs a normal sequence: sequence='asymptotic' "
                              "(the default with cuped_rho) or 'msprt'; the exact sequence "
                              "takes no CUPED")
    return 1.0 - float(cuped_rho) ** 2


def _reward_draws(kind: str, means: np.ndarray, var: float,
                  reward_range: tuple[float, float] | None):
    """For the exact default (the plug-in, simulated reward by reward): a function drawing
    rewards of shape (runs, 2, step), arm 0 the control. Binary: Bernoulli at each mean;
    bounded: Beta on ``reward_range`` with each arm's mean and the ``var`` given (a two-point
    law on the range's ends where no Beta has that variance: the largest one there is)."""
    if kind == "binary":
        return lambda rng, shape: (rng.random(shape) < means[None, :, None]).astype(float)
    if reward_range is None:
        return None
    lo, hi = reward_range
    m = (means - lo) / (hi - lo)
    c = m * (1 - m) / (var / (hi - lo) ** 2) - 1.0  # the Beta's concentration
    if (c > 0).all():
        a, b = (m * c)[None, :, None], ((1 - m) * c)[None, :, None]
        return lambda rng, shape: lo + (hi - lo) * rng.beta(a + np.zeros(shape),
                                                              b + np.zeros(shape))
    return lambda rng, shape: lo + (hi - lo) * (rng.random(shape) < m[None, :, None])


def plan(*, mde: float, daily_units: float, base_rate: float | None = None,
         mean: float | None = None, variance: float | None = None, alpha: float = 0.05,
         look_every: int | None = None, sequence: str | None = None, tune_n: float = 10_000,
         reward_range: tuple[float, float] | None = None, runs: int = 1000,
         max_units: int | None = None, seed: int = 0, cuped_rho: float | None = None
         ) -> Plan:
    """Expected and 90th-percentile units per arm and days to a ``better`` verdict.

    Parameters
    ----------
    mde : float
        The minimum detectable effect: treatment mean − control mean (absolute), > 0.
    daily_units : float
        Units a day over both arms (50/50 split).
    base_rate : float, optional
        A conversion rate in (0, 1) (binary rewards). Or give ``mean`` and ``variance``.
    mean, variance : float, optional
        The control's mean and the per-unit variance (continuous or bounded rewards).
    alpha : float
        The test's error probability over all looks.
    look_every : int, optional
        Units per arm between two looks (default: a day's traffic per arm).
    sequence : {"exact", "mixture", "asymptotic", "msprt"}, optional
        Default: exact for binary or bounded (``reward_range``) rewards, else asymptotic.
        The mSPRT's τ is taken equal to ``mde``.
    tune_n : float
        The sequences' tuning (units per arm), as ``Experiment.create(verdicts=...)``.
    reward_range : (lo, hi), optional
        Bounds of a bounded metric (with ``mean``/``variance``).
    runs : int
        Simulated runs (≥ 10).
    max_units : int, optional
        Cap per arm (default: 20 × the fixed-n sample size); runs undecided by then count at
        the cap in the percentiles and lower ``decided_share``.
    seed : int
        Seed of the simulation.
    cuped_rho : float, optional
        With CUPED (``verdicts={"cuped": True}``): the expected within-arm correlation ρ in
        [0, 1) of the metric and the units' pre-experiment covariate (e.g. measured on last
        month's data; a negative correlation reduces the variance as much: give |ρ|); the
        variance is taken (1 − ρ²) times (module docstring).
    """
    mde = _positive(mde, "mde")
    daily_units = _positive(daily_units, "daily_units")
    alpha = check_alpha(alpha)
    mu, var, kind = _metric(mde, base_rate, mean, variance, reward_range)
    factor = 1.0 if cuped_rho is None else cuped_factor(cuped_rho, sequence)
    spec = _spec(kind, mu, var, mde, reward_range, sequence, tune_n, cuped_rho)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 10:
        raise ExperimentError(f"runs must be an integer >= 10, got {runs!r}")
    z = NormalDist().inv_cdf
    var_treat = (mu + mde) * (1 - mu - mde) if kind == "binary" else var
    if cuped_rho is not None:  # CUPED-adjusted values: normal sums of (1 − ρ²) the variance
        var, var_treat, kind = var * factor, var_treat * factor, "cuped"
        spec = replace(spec, reward_type="continuous", reward_range=None)
    fixed = (z(1 - alpha / 2) + z(0.8)) ** 2 * (var + var_treat) / mde ** 2
    step = int(look_every) if look_every is not None else max(1, int(daily_units / 2))
    if step < 1:
        raise ExperimentError(f"look_every must be >= 1, got {look_every!r}")
    cap = int(max_units) if max_units is not None else int(20 * fixed) + step
    units, decided = _simulate(stream(seed, "plan"), kind, np.array([mu, mu + mde]), var,
                               np.sqrt([var, var_treat]), spec, alpha, runs, step, cap)
    days = units * 2 / daily_units
    return Plan(float(units.mean()), float(np.percentile(units, 90, method="inverted_cdf")),
                float(days.mean()), float(np.percentile(days, 90, method="inverted_cdf")),
                float(fixed), float(decided.mean()), runs, spec.sequence, int(seed),
                None if cuped_rho is None else float(cuped_rho),
                float(units.std(ddof=1) / math.sqrt(runs)))


def _metric(mde: float, base_rate: float | None, mean: float | None,
            variance: float | None, reward_range: tuple[float, float] | None
            ) -> tuple[float, float, str]:
    """The control's (mean, per-unit variance, reward type) from ``plan``'s arguments."""
    if base_rate is not None:
        if mean is not None or variance is not None:
            raise ExperimentError("give base_rate (binary rewards) or mean and variance, not "
                                  "both")
        p = _positive(base_rate, "base_rate")
        if not p < 1:
            raise ExperimentError(f"base_rate must be a rate in (0, 1), got {base_rate!r}")
        if not p + mde < 1:
            raise ExperimentError(f"base_rate + mde must be < 1 (rates), got {p + mde:g}")
        return p, p * (1 - p), "binary"
    if mean is None or variance is None:
        raise ExperimentError("give base_rate, or both mean and variance")
    if isinstance(mean, bool) or not isinstance(mean, (int, float)) or not math.isfinite(
            mean):
        raise ExperimentError(f"mean must be a finite number, got {mean!r}")
    return (float(mean), _positive(variance, "variance"),
            "continuous" if reward_range is None else "bounded")


def _spec(kind: str, mu: float, var: float, mde: float,
          reward_range: tuple[float, float] | None, sequence: str | None, tune_n: float,
          cuped_rho: float | None) -> VerdictSpec:
    """The verdict spec the plan simulates, its reward range checked against the metric."""
    options: dict = {"tune_n": tune_n}
    if sequence is not None or cuped_rho is not None:
        options["sequence"] = sequence or "asymptotic"
    if sequence == "msprt":
        options["tau"] = mde  # the mixture's scale at the effect sought
    spec = check_verdicts(kind, reward_range, options, None)
    bounds = spec.reward_range
    if bounds is not None and not (bounds[0] <= mu and mu + mde <= bounds[1]):
        raise ExperimentError(f"mean and mean + mde must lie in reward_range {bounds}")
    if bounds is not None and kind == "bounded" and not (
            var <= (mu - bounds[0]) * (bounds[1] - mu)):
        raise ExperimentError(f"variance must be <= (mean - lo)(hi - mean) = "
                              f"{(mu - bounds[0]) * (bounds[1] - mu):g} "
                              f"(the largest a reward in reward_range can have), got {var:g}")
    return spec


def _simulate(rng: np.random.Generator, kind: str, means: np.ndarray, var: float,
              sds: np.ndarray, spec: VerdictSpec, alpha: float, runs: int, step: int,
              cap: int) -> tuple[np.ndarray, np.ndarray]:
    """``runs`` two-arm experiments looked at every ``step`` units per arm up to ``cap``:
    the units per arm at each run's ``better`` verdict (``cap`` if none) and whether it
    came."""
    # the plug-in's λ_i depends on the rewards before i: it is simulated reward by reward
    draw = _reward_draws(kind, means, var, spec.reward_range) if spec.sequence == "exact" \
        else None
    tuning = None if draw is None else PluginTuning.of(spec, 2)
    plugin = np.zeros((runs, 2, 4))
    n = np.zeros((runs, 2))
    S = np.zeros((runs, 2))
    Q = np.zeros((runs, 2))
    units = np.full(runs, float(cap))
    decided = np.zeros(runs, dtype=bool)
    per_arm = 0
    while per_arm < cap and not decided.all():
        per_arm += step
        live = ~decided
        if draw is not None:  # every reward of the live runs, in order
            x = draw(rng, (int(live.sum()), 2, step))
            lo, span = tuning.low, tuning.span
            prior = (n[live], (S[live] - n[live] * lo) / span,
                     (Q[live] - 2 * lo * S[live] + n[live] * lo * lo) / span ** 2)
            terms = plugin_terms((x - lo) / span, n_tune=tuning.n_tune, level=tuning.level,
                                 prior=prior)
            plugin[live] += np.stack([t.sum(axis=-1) for t in terms], axis=-1)
            S[live] += x.sum(axis=-1)
            Q[live] += (x * x).sum(axis=-1)
        elif kind == "binary":
            S += rng.binomial(step, means, size=(runs, 2))
            Q = S
        else:  # normal sums; Q such that the sample variance is the variance given
            S += rng.normal(step * means, np.sqrt(step) * sds, size=(runs, 2))
        n += step
        if kind != "binary" and draw is None:
            Q = (n - 1) * sds ** 2 + S ** 2 / n
        sums = ArmSums(n[live], n[live], S[live], Q[live],
                       np.full((int(live.sum()), 2), kind == "binary"),
                       plugin=None if draw is None else plugin[live])
        verdict = compare(sums, spec.reward_range, intervals="anytime", alpha=alpha,
                          control=0, spec=spec).verdict[:, 1]
        hit = np.flatnonzero(live)[verdict == "better"]
        units[hit] = per_arm
        decided[hit] = True
    return units, decided
