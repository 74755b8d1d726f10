"""What a live experiment's verdicts are computed on: the reward's type and range, declared at
create independently of the algorithm, and which confidence sequence decides.

``reward_type``
    ``"binary"`` (0/1 conversions), ``"bounded"`` with ``reward_range=(lo, hi)`` (a score, a
    Beta-distributed rate, revenue capped by contract), or ``"continuous"`` (unbounded: revenue
    per visitor, latency). Default: ``"bounded"`` on the algorithm's own reward range when it
    declares one, else ``"continuous"``. The algorithm's range check at ``record`` still
    applies; the declared type only decides the statistics, so G-BAI, RAGE or Gaussian
    BatchedThompson (no range) get intervals, and OFUL/LinTS (range [−1, 1]) with
    ``reward_type="binary"`` get [0, 1] sequences instead of [−1, 1].
``sequence``
    ``"exact"`` (default for binary and bounded rewards; :mod:`banditkit.live.readout.sequences`,
    the predictable plug-in empirical-Bernstein sequence of Waudby-Smith & Ramdas 2023 on the
    difference to the control, tuned at ``tune_n``: valid at every look for any n, any
    allocation), ``"mixture"`` (exact too: the empirical-Bernstein λ-mixture, wider near
    ``tune_n`` but narrower when an experiment runs far past it; measured in
    docs/experiment.md), ``"asymptotic"`` (Waudby-Smith et al. 2024: a normal approximation,
    the only choice for continuous rewards) or ``"msprt"`` (Johari et al. 2017, normal
    mixture of scale ``tau`` in the reward's units).
``tune_n``
    Units per arm at which the sequences are narrowest (10,000 by default: a conversion test
    of a point or so on a 10% base rate, :func:`banditkit.live.readout.plan.plan`, needs about
    that).
``alternative``
    ``"two-sided"`` (default: ``better`` and ``worse`` verdicts, α/2 on each end) or
    ``"greater"`` (one-sided: only ``better``, all of α on the lower end of each difference,
    the upper end +inf; exact sequence only, since a symmetric normal mixture has no one-sided
    form at the same α).
``margin``
    A margin m > 0 in the reward's units: ``status().arms["decision"]`` then also says
    ``equivalent`` (the difference's interval inside (−m, m): stop, nothing to find; futility)
    and ``non-inferior`` (its lower end above −m, not yet ``better``). Every decision follows
    from the same sequences, so all of them hold together at level 1 − α.
``control_share``
    Share of α spent on the control's own sequence, which bounds the nuisance of the exact
    difference sequence (0.05 by default; measured: the control's interval only widens the
    difference's variance term by O(log n / n), so a small share costs little there and buys
    log(1/(1 − share)) nats for the differences: 0/1 rewards at 0.10 vs 0.11, 20,000 per arm,
    width ÷ fixed-n 1.599 with 0.1, 1.590 with 0.05; ``benchmarks/bench_widths.py mixture``).
``winsorize``
    A quantile q in (0.5, 1): each look caps every counted reward at the q-quantile of all
    arms' counted rewards pooled (upper tail only: revenue, latency), then compares the capped
    means; the cap is re-estimated at every look (the practice of GrowthBook and Eppo). The
    verdicts are about the capped means; a heavy tail then costs far fewer units. Normal
    sequences only; the cap's quantile reads the counted units (O(units) per status). With
    ``cuped`` the covariate is capped too, at its own pooled q-quantile, and the adjustment
    runs on the capped values (:mod:`banditkit.live.readout.winsorize` says why).
``cuped``
    ``True``: every unit carries a pre-experiment covariate (``assign(..., covariates=)`` or
    ``record(..., covariates=)``) and the differences are CUPED-adjusted
    (:mod:`banditkit.live.readout.adjusted`, Deng et al. 2013) from running sums: same estimand,
    variance (1 − ρ²) times. Normal sequences only.
``ratio``
    ``True``: a ratio metric (revenue per order): ``record(..., denominators=)`` gives each
    unit's denominator; the arms' ratios of sums Σreward/Σdenominator are compared with
    delta-method variances (:mod:`banditkit.live.readout.adjusted`, Deng, Knoblich & Lu 2018).
    Normal sequences only; not with ``cuped`` or ``winsorize``.
``looks``, ``look_every``, ``spending``
    A group-sequential plan (:mod:`banditkit.live.readout.looks`): ``looks`` planned looks
    (1 to 50), look k at the first k·``look_every`` units assigned (every arm, in assignment
    order), with the α-spending function ``spending`` (``"obrien-fleming"``, the default, or
    ``"pocock"``). ``status`` then also shows the latest complete planned look's repeated
    intervals and verdicts on the plain means of the reward (two-sided: not with
    ``alternative="greater"``, ``cuped``, ``ratio`` or ``winsorize``).
``segments``
    The segment labels a unit may carry (``assign(..., segments=)``: a country, a platform,
    known before the treatment), 1 to 50 distinct non-empty strings of at most 60 characters,
    declared at create so that the metric family (:mod:`banditkit.live.readout.family`) is
    stated before any data: ``Experiment.family()`` then adds the reward in each segment.
:func:`check_verdicts` refuses, naming the parameter and the rule, what cannot be true.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import ExperimentError
from ..inputs import check_summable
from .planned_looks import SPENDING

__all__ = ["REWARD_TYPES", "SEQUENCES", "VerdictSpec", "check_unit_segments",
           "check_unit_values", "check_verdicts", "spec_from_meta"]

REWARD_TYPES = ("binary", "bounded", "continuous")
SEQUENCES = ("exact", "mixture", "asymptotic", "msprt")
#: The exact sequences (bounded rewards; valid for every n).
EXACT = ("exact", "mixture")
_KEYS = ("sequence", "tune_n", "tau", "control_share", "alternative", "margin", "winsorize",
         "cuped", "ratio", "looks", "look_every", "spending", "segments")
ALTERNATIVES = ("two-sided", "greater")


@dataclass(frozen=True)
class VerdictSpec:
    """The statistics of a live experiment (module docstring); stored in its file."""

    reward_type: str
    reward_range: tuple[float, float] | None
    sequence: str = "exact"
    tune_n: float = 10_000.0
    tau: float | None = None
    control_share: float = 0.05
    alternative: str = "two-sided"
    margin: float | None = None
    winsorize: float | None = None
    cuped: bool = False
    ratio: bool = False
    looks: int | None = None
    look_every: int | None = None
    spending: str | None = None
    segments: tuple[str, ...] | None = None

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["reward_range"] = None if self.reward_range is None else list(self.reward_range)
        if self.looks is None:  # no plan: stored as before planned looks existed
            for key in ("looks", "look_every", "spending"):
                del out[key]
        if self.segments is None:  # none declared: stored as before segments existed
            del out["segments"]
        else:
            out["segments"] = list(self.segments)
        return out

    def describe(self) -> str:
        scale = ("0/1" if self.reward_type == "binary" else
                 f"bounded in [{self.reward_range[0]:g}, {self.reward_range[1]:g}]"
                 if self.reward_type == "bounded" else "continuous (unbounded)")
        how = {"exact": "exact plug-in empirical-Bernstein confidence sequences (valid for "
                        "every n)",
               "mixture": "exact empirical-Bernstein mixture confidence sequences (valid for "
                          "every n)",
               "asymptotic": "asymptotic confidence sequences (normal approximation)",
               "msprt": f"mSPRT, normal mixture tau = {self.tau:g} (normal approximation)"
               if self.tau is not None else "mSPRT"}[self.sequence]
        side = "; one-sided (better only)" if self.alternative == "greater" else ""
        margin = (f"; margin {self.margin:g} (decision: equivalent / non-inferior)"
                  if self.margin is not None else "")
        metric = ("; ratio metric: sum of rewards / sum of denominators, delta method"
                  if self.ratio else "; CUPED-adjusted by each unit's covariate"
                  if self.cuped else "")
        if self.winsorize is not None:
            metric += (f"; rewards {'and covariates ' if self.cuped else ''}capped at their "
                       f"pooled {self.winsorize:g} quantile")
        planned = ("" if self.looks is None else
                   f"; planned looks: {self.looks}, one every {self.look_every:,} units "
                   f"assigned ({self.spending} spending)")
        return (f"rewards {scale}{metric}; differences to the control by {how}, tuned at "
                f"{self.tune_n:g} units per arm{side}{margin}{planned}")


def _real(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def check_verdicts(reward_type: object, reward_range: object, verdicts: object,
                   algorithm_range: tuple[float, float] | None) -> VerdictSpec:
    """The checked :class:`VerdictSpec` of ``Experiment.create``; one ExperimentError naming the
    parameter and the rule otherwise."""
    reward_type, reward_range = _check_rewards(reward_type, reward_range, algorithm_range)
    if verdicts is None:
        verdicts = {}
    if not isinstance(verdicts, Mapping):
        raise ExperimentError(f"verdicts must be a dict with keys among {list(_KEYS)}, got "
                              f"{type(verdicts).__name__}")
    unknown = sorted(map(str, set(verdicts) - set(_KEYS)))
    if unknown:
        raise ExperimentError(f"verdicts: unknown key(s) {unknown}; the keys are {list(_KEYS)}")
    sequence, tune_n, tau, share, alternative, margin = _check_sequence(
        verdicts, reward_type, reward_range)
    winsorize, cuped, ratio = _check_adjustments(verdicts, sequence)
    looks, look_every, spending = _check_plan(verdicts, alternative, winsorize, cuped, ratio)
    return VerdictSpec(reward_type, reward_range, sequence, tune_n, tau, share, alternative,
                       margin, winsorize, cuped, ratio, looks, look_every, spending,
                       _check_segments(verdicts.get("segments")))


def _check_rewards(reward_type: object, reward_range: object,
                   algorithm_range: tuple[float, float] | None
                   ) -> tuple[str, tuple[float, float] | None]:
    """``reward_type`` and ``reward_range`` checked, with their defaults."""
    if reward_range is not None:
        pair = (None, None)
        if isinstance(reward_range, (list, tuple, np.ndarray)) and len(reward_range) == 2:
            pair = tuple(_real(v) for v in reward_range)
        if pair[0] is None or pair[1] is None or not pair[0] < pair[1]:
            raise ExperimentError(f"reward_range must be two finite numbers lo < hi, got "
                                  f"{reward_range!r}")
        reward_range = (float(pair[0]), float(pair[1]))
    if reward_type is None:
        if reward_range is not None:
            reward_type = "bounded"
        elif algorithm_range is not None:
            reward_type, reward_range = "bounded", tuple(map(float, algorithm_range))
        else:
            reward_type = "continuous"
    if reward_type not in REWARD_TYPES:
        raise ExperimentError(f"reward_type must be one of {list(REWARD_TYPES)}, got "
                              f"{reward_type!r}")
    if reward_type == "binary":
        if reward_range not in (None, (0.0, 1.0)):
            raise ExperimentError(f"reward_range: reward_type='binary' rewards are 0 or 1 "
                                  f"(range (0, 1)), got {reward_range!r}")
        reward_range = (0.0, 1.0)
    elif reward_type == "bounded" and reward_range is None:
        raise ExperimentError("reward_range is required with reward_type='bounded': (lo, hi), "
                              "the rewards' bounds")
    elif reward_type == "continuous" and reward_range is not None:
        raise ExperimentError("reward_range: reward_type='continuous' rewards are unbounded; "
                              "give reward_type='bounded' to declare a range")
    return reward_type, reward_range  # type: ignore[return-value]


def _check_sequence(verdicts: Mapping[str, Any], reward_type: str,
                    reward_range: tuple[float, float] | None) -> tuple:
    """The sequence and its options: (sequence, tune_n, tau, control_share, alternative,
    margin)."""
    default = "asymptotic" if reward_type == "continuous" else "exact"
    sequence = verdicts.get("sequence", default)
    if sequence not in SEQUENCES:
        raise ExperimentError(f"verdicts['sequence'] must be one of {list(SEQUENCES)}, got "
                              f"{sequence!r}")
    if sequence in EXACT and reward_type == "continuous":
        raise ExperimentError(f"verdicts['sequence']: {sequence!r} needs bounded rewards "
                              "(reward_type 'binary' or 'bounded'); continuous rewards take "
                              "'asymptotic' or 'msprt'")
    tune_n = _real(verdicts.get("tune_n", 10_000))
    if tune_n is None or not tune_n >= 10:
        raise ExperimentError(f"verdicts['tune_n'] must be a number >= 10 (units per arm), got "
                              f"{verdicts.get('tune_n')!r}")
    tau = verdicts.get("tau")
    if sequence == "msprt":
        tau = _real(tau)
        if tau is None or not tau > 0:
            raise ExperimentError(f"verdicts['tau'] must be a number > 0 with sequence='msprt' "
                                  f"(the s.d. of the normal mixture over the difference, in "
                                  f"the reward's units), got {verdicts.get('tau')!r}")
    elif tau is not None:
        raise ExperimentError("verdicts['tau'] is the mSPRT's mixture scale: only with "
                              "sequence='msprt'")
    share = _real(verdicts.get("control_share", 0.05))
    if share is None or not 0 < share < 1:
        raise ExperimentError(f"verdicts['control_share'] must be a number in (0, 1), got "
                              f"{verdicts.get('control_share')!r}")
    alternative = verdicts.get("alternative", "two-sided")
    if alternative not in ALTERNATIVES:
        raise ExperimentError(f"verdicts['alternative'] must be one of {list(ALTERNATIVES)}, "
                              f"got {alternative!r}")
    if alternative == "greater" and sequence not in EXACT:
        raise ExperimentError("verdicts['alternative']: 'greater' (one-sided) needs "
                              "sequence='exact' or 'mixture'")
    margin = verdicts.get("margin")
    if margin is not None:
        span = None if reward_range is None else reward_range[1] - reward_range[0]
        margin = _real(margin)
        if margin is None or not margin > 0 or (span is not None and not margin < span):
            raise ExperimentError(
                "verdicts['margin'] must be a number > 0" + (
                    f" and < hi − lo = {span:g} (a difference of means in the range)"
                    if span is not None else "") + f", got {verdicts.get('margin')!r}")
    return sequence, tune_n, tau, share, alternative, margin


def _check_adjustments(verdicts: Mapping[str, Any], sequence: str
                       ) -> tuple[float | None, bool, bool]:
    """(winsorize, cuped, ratio): each needs a normal sequence; a ratio takes neither."""
    winsorize = verdicts.get("winsorize")
    if winsorize is not None:
        winsorize = _real(winsorize)
        if winsorize is None or not 0.5 < winsorize < 1:
            raise ExperimentError(f"verdicts['winsorize'] must be a quantile in (0.5, 1) (the "
                                  f"rewards are capped at it; e.g. 0.99), got "
                                  f"{verdicts.get('winsorize')!r}")
    flags = {}
    for key in ("cuped", "ratio"):
        flags[key] = verdicts.get(key, False)
        if not isinstance(flags[key], (bool, np.bool_)):
            raise ExperimentError(f"verdicts[{key!r}] must be true or false, got "
                                  f"{flags[key]!r}")
        flags[key] = bool(flags[key])
    for key, on in (("winsorize", winsorize is not None), ("cuped", flags["cuped"]),
                    ("ratio", flags["ratio"])):
        if on and sequence in EXACT:
            raise ExperimentError(f"verdicts[{key!r}] needs a normal sequence: "
                                  "sequence='asymptotic' or 'msprt' (the exact sequence is for "
                                  "plain means of bounded rewards)")
    if flags["ratio"] and (flags["cuped"] or winsorize is not None):
        raise ExperimentError("verdicts['ratio'] takes neither 'cuped' nor 'winsorize' (a ratio "
                              "of sums is compared as it is)")
    return winsorize, flags["cuped"], flags["ratio"]


def _check_plan(verdicts: Mapping[str, Any], alternative: str, winsorize: float | None,
                cuped: bool, ratio: bool) -> tuple[int | None, int | None, str | None]:
    """(looks, look_every, spending): a group-sequential plan, all or nothing; two-sided, on
    the plain means of the reward."""
    given = [k for k in ("looks", "look_every", "spending") if verdicts.get(k) is not None]
    if not given:
        return None, None, None
    for key in ("looks", "look_every"):
        value = verdicts.get(key)
        high = 50 if key == "looks" else 10**12
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 1 <= value <= high:
            rule = ("an integer from 1 to 50 (the looks planned)" if key == "looks" else
                    "an integer >= 1 (units assigned, every arm, between two planned looks)")
            raise ExperimentError(f"verdicts[{key!r}] must be {rule}"
                                  + (", with 'looks' and 'look_every' both given"
                                     if value is None else "") + f", got {value!r}")
    spending = verdicts.get("spending")
    spending = "obrien-fleming" if spending is None else spending
    if spending not in SPENDING:
        raise ExperimentError(f"verdicts['spending'] must be one of {list(SPENDING)}, got "
                              f"{spending!r}")
    for key, on in (("alternative", alternative != "two-sided"),
                    ("winsorize", winsorize is not None), ("cuped", cuped), ("ratio", ratio)):
        if on:
            raise ExperimentError(f"verdicts['looks']: a planned test is two-sided on the "
                                  f"plain means of the reward: not with {key!r}")
    return int(verdicts["looks"]), int(verdicts["look_every"]), str(spending)


def _check_segments(segments: object) -> tuple[str, ...] | None:
    """The declared segment labels: 1 to 50 distinct non-empty strings of at most 60
    characters."""
    if segments is None:
        return None
    if not isinstance(segments, (list, tuple)) or not 1 <= len(segments) <= 50 or any(
            not isinstance(s, str) or not 1 <= len(s) <= 60 for s in segments) \
            or len(set(segments)) != len(segments):
        raise ExperimentError(f"verdicts['segments'] must be a list of 1 to 50 distinct "
                              f"non-empty strings of at most 60 characters (the segment "
                              f"labels units may carry), got {segments!r}")
    return tuple(segments)


def spec_from_meta(meta: Mapping[str, Any], algorithm_range: tuple[float, float] | None
                   ) -> VerdictSpec:
    """The stored spec; files written before it existed: the algorithm's range, exact."""
    stored = meta.get("verdicts")
    if stored is None:
        return check_verdicts(None, None, None, algorithm_range)
    rng = stored.get("reward_range")
    return VerdictSpec(stored["reward_type"], None if rng is None else tuple(map(float, rng)),
                       stored["sequence"], float(stored["tune_n"]),
                       None if stored.get("tau") is None else float(stored["tau"]),
                       float(stored["control_share"]), stored.get("alternative", "two-sided"),
                       None if stored.get("margin") is None else float(stored["margin"]),
                       None if stored.get("winsorize") is None
                       else float(stored["winsorize"]), bool(stored.get("cuped", False)),
                       bool(stored.get("ratio", False)), stored.get("looks"),
                       stored.get("look_every"), stored.get("spending"),
                       None if stored.get("segments") is None
                       else tuple(stored["segments"]))


def check_unit_values(spec: VerdictSpec, name: str, values: object, n_units: int,
                      *, required: bool) -> np.ndarray | None:
    """``covariates`` (CUPED) or ``denominators`` (ratio metrics) given to ``assign`` or
    ``record``: one finite number per unit (denominators also ≥ 0), and only where the
    experiment declared them; ``required`` says the call must give them."""
    declared = spec.cuped if name == "covariates" else spec.ratio
    key = "cuped" if name == "covariates" else "ratio"
    if values is None:
        if required and declared:
            raise ExperimentError(
                f"{name} are required: this experiment was created with verdicts={{'{key}': "
                f"True}}" + (" (one pre-experiment value per unit)" if key == "cuped"
                             else " (one denominator per unit: the ratio's Σ denominators)"))
        return None
    if not declared:
        raise ExperimentError(f"{name}: this experiment was not created with verdicts="
                              f"{{'{key}': True}}")
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        array = np.asarray(None)
    if array.dtype.kind not in "iuf" or array.ndim != 1 or array.size != n_units:
        got = f"shape {array.shape}" if array.dtype.kind in "iuf" else \
            "something that is not a list of numbers"
        raise ExperimentError(f"{name} must be numbers, one per unit ({n_units}), got {got}")
    array = array.astype(float)
    bad = ~np.isfinite(array)
    if name == "denominators":
        bad |= array < 0
    bad = np.flatnonzero(bad)
    if bad.size:
        rule = "finite and >= 0" if name == "denominators" else "finite"
        raise ExperimentError(f"{name} must be {rule}: value {int(bad[0])} is "
                              f"{array[bad[0]]}")
    check_summable(name, array)
    return array


def check_unit_segments(spec: VerdictSpec, segments: object, n_units: int
                        ) -> list[str] | None:
    """``assign(segments=...)``: one declared label per unit (``verdicts['segments']`` at
    create), or ``None``."""
    if segments is None:
        return None
    if spec.segments is None:
        raise ExperimentError("segments: this experiment declared no segments (create it with "
                              "verdicts={'segments': [labels]})")
    if isinstance(segments, (str, bytes)) or not isinstance(segments, (list, tuple,
                                                                        np.ndarray)) \
            or len(segments) != n_units:
        raise ExperimentError(f"segments must be a list of labels, one per unit ({n_units})")
    declared = set(spec.segments)
    for i, label in enumerate(segments):
        if not isinstance(label, str) or label not in declared:
            raise ExperimentError(f"segments: label {i} is {label!r}, not one of the declared "
                                  f"segments {list(spec.segments)}")
    return [str(label) for label in segments]
