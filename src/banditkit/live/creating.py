"""A new live experiment's definition, checked before anything is written
(``Experiment.create``'s arguments): every argument refused by name, then the algorithm built
and its first batch asked, so that bad input — or arms the algorithm cannot work with — creates
no file. What comes out is the ``meta`` the store keeps (:class:`.definition.Definition` reads
it back) and the algorithm, to be adopted by the journal."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..protocol import Algorithm
from ..registry import get_policy
from .assignment import overflow as _overflow
from .assignment.operations import check_who
from .definition import Clock, check_clock
from .errors import ExperimentError
from .inputs import numbers
from .journal.defaults import params_in_force
from .journal.horizon import horizon_warnings
from .journal.replay import build_algorithm, next_batch
from .outcomes.window import (
    DEFAULT_WINDOW,
    OutcomeWindow,
    check_missing,
    check_window,
    default_missing,
)
from .problem import LiveArms, arm_names
from .readout.guardrails import check_guardrails
from .readout.statistics import check_alpha
from .readout.verdict_spec import check_verdicts
from .store.codec import micros, stamp

__all__ = ["MAX_SEQUENCE", "SEQUENCE_IN_MEMORY", "define"]

#: Identifiers that shuffle an epoch's multiset of pulls with ξ (a permutation, which cannot
#: be evaluated slot by slot) and hold the pull sequence of a batch in memory, about 40 bytes
#: a pull while it is drawn and stored: a budget above :data:`MAX_SEQUENCE` is refused at
#: create, naming it, instead of dying on an allocation of gigabytes later. The identifiers
#: that draw i.i.d. (G-BAI, P1-RAGE, P1-Peace, Mixed-Peace) store a batch as its description
#: (:class:`banditkit.protocol.IIDBatch`, O(arms)) and take any budget.
SEQUENCE_IN_MEMORY = ("Peace", "ODLinBAI")
MAX_SEQUENCE = 50_000_000


def _check_run(algorithm: str, seed: object, horizon: object, order: object) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ExperimentError(f"seed must be a non-negative integer, got {seed!r}")
    if horizon is not None and (isinstance(horizon, bool)
                                or not isinstance(horizon, (int, np.integer))
                                or horizon < 1):
        raise ExperimentError(f"horizon must be an integer >= 1, got {horizon!r}")
    if algorithm in SEQUENCE_IN_MEMORY and horizon is not None and horizon > MAX_SEQUENCE:
        raise ExperimentError(
            f"horizon: {algorithm} shuffles each epoch's pulls and a live experiment holds "
            f"a batch's pull sequence in memory (about 40 bytes a pull: {horizon:.3g} pulls "
            f"need about {40 * horizon / 2**30:.0f} GiB); use a horizon of at most "
            f"{MAX_SEQUENCE:.0e}")
    if order not in ("shuffled", "batch"):
        raise ExperimentError(f"order must be 'shuffled' or 'batch', got {order!r}")


def _check_control(control: object, names: list[str]) -> str:
    if control is None:
        return names[0]
    if not isinstance(control, str) or control not in names:
        raise ExperimentError(f"control must be one of the arm names {names}, got "
                              f"{control!r}")
    return control


def _check_missing(missing: object, thresholds: object) -> str | None:
    if missing is None:
        return None
    missing = check_missing(missing)
    if missing == "zero" and thresholds is not None:
        raise ExperimentError("missing: 'zero' records reward 0 for a unit unanswered "
                              "when its window closes but cannot know its costs; an "
                              "experiment with cost thresholds needs missing='expire'")
    return missing


def _params(algorithm: object, params: Mapping[str, Any] | None, names: list[str],
            control: str) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(parameters in force, parameters given, the live defaults among them)."""
    params = dict(params or {})
    try:
        json.dumps(params, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ExperimentError(f"params must be JSON values (numbers, strings, lists) and "
                              f"finite: {error}") from None
    given = params
    try:
        entry = get_policy(algorithm) if isinstance(algorithm, str) else None
    except ValueError as error:
        raise ExperimentError(f"algorithm {algorithm!r}: {error}") from None
    live_defaults: list[str] = []
    if entry is not None and not [p for p in params if p not in entry.parameters()]:
        # unknown parameters are refused by name when the algorithm is built
        params, live_defaults = params_in_force(str(algorithm), params)
        if "control_arm" in params and "control_arm" not in given:
            # the algorithm's control (its floor) is the experiment's control
            params["control_arm"] = names.index(control)
    return params, given, live_defaults


def _thresholds(thresholds: Sequence[float] | None) -> np.ndarray | None:
    if thresholds is None:
        return None
    values = numbers(thresholds)
    if (values is None or values.dtype.kind == "b" or values.ndim != 1
            or values.size == 0 or not np.all((values >= 0) & (values <= 1))):
        raise ExperimentError(f"thresholds must be a non-empty list of numbers in "
                              f"[0, 1], one per cost, got {thresholds!r}")
    return values.astype(float)


def define(*, algorithm: str, arms: Any, seed: int, horizon: int | None,
           params: Mapping[str, Any] | None, thresholds: Sequence[float] | None, order: str,
           control: str | None, guardrails: Sequence[Mapping[str, Any]] | None,
           guardrail_alpha: float, outcome_window: float | None, missing: str | None,
           clock: Clock | None, overflow: str, who: str, reward_type: str | None,
           reward_range: Sequence[float] | None, verdicts: Mapping[str, Any] | None,
           version: str) -> tuple[dict[str, Any], Algorithm]:
    """``Experiment.create``'s arguments (but the location) checked, in its order: the meta
    to store and the algorithm built from it, its first batch asked. ``version``: the
    banditkit that creates it."""
    names, X = arm_names(arms)
    _check_run(algorithm, seed, horizon, order)
    control = _check_control(control, names)
    rails = check_guardrails(guardrails)
    guardrail_alpha = check_alpha(guardrail_alpha, "guardrail_alpha")
    defaults = tuple(k for k, v in (("outcome_window", outcome_window),
                                    ("missing", missing)) if v is None)
    window = check_window(DEFAULT_WINDOW if outcome_window is None else outcome_window)
    missing = _check_missing(missing, thresholds)
    check_clock(clock)
    overflow = _overflow.check_rule(overflow)
    check_who(who)
    # the declared rewards need the algorithm's range only for their default: checked once
    # here against a None range (names every rule), again below against the range
    check_verdicts(reward_type, reward_range, verdicts, (0.0, 1.0))
    params, given, live_defaults = _params(algorithm, params, names, control)
    costs = _thresholds(thresholds)
    meta = {"algorithm": algorithm, "params": params, "params_given": given,
            "live_defaults": live_defaults, "seed": int(seed),
            "horizon": None if horizon is None else int(horizon), "arms": names,
            "features": None if X is None else X.tolist(),
            "thresholds": None if costs is None else costs.tolist(),
            "order": order, "control": control,
            "guardrails": [g.as_json() for g in rails], "guardrail_alpha": guardrail_alpha,
            "overflow": overflow, "created": stamp(micros((clock or time.time)())),
            "banditkit": version}
    first = build_algorithm(meta, LiveArms(len(names), X, costs))
    meta["create_warnings"] = horizon_warnings(first, next_batch(first, algorithm),
                                               meta["horizon"], names)
    spec = check_verdicts(reward_type, reward_range, verdicts, first.reward_range)
    meta["verdicts"] = spec.as_json()
    if missing is None:
        # a binary metric's unanswered unit did not convert; a continuous one's is unknown
        missing = ("zero" if spec.reward_type == "binary" and not first.n_costs
                   else "expire" if spec.reward_type == "continuous"
                   else default_missing(first.reward_range, first.n_costs))
    meta.update(OutcomeWindow(window, missing, defaults).as_meta())
    if X is not None:
        try:  # features an algorithm never reads would be silently dropped: refuse them
            build_algorithm(meta, LiveArms(len(names), None, costs))
        except ExperimentError:
            pass
        else:
            raise ExperimentError(f"arms: {algorithm} takes arm names, not features (it "
                                  "would ignore them); pass a list of names")
    return meta, first
