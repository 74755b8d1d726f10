"""The events an application sends from the edge, read and checked one by one: an
**exposure** (a key shown an arm under an allocation version, at a time) and an **outcome** (a
key's value, at a time, with the metric's parts a ratio, CUPED or guardrail experiment needs).

A bulk feed is never all-or-nothing: an event that cannot be read is refused alone, with its
index and a one-line reason naming the field, and the others go on
(:mod:`banditkit.live.outcomes.ingest`). Only a call whose shape is wrong as a whole (not a list of
events, too many) is refused before any work.

Times are seconds since the epoch (a number, as ``time.time()`` gives) or an ISO 8601 text
with a time zone (``2026-11-28T10:00:00Z``); an event without one takes the time of the call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import ExperimentError
from ..inputs import MAX_KEY_LENGTH

__all__ = ["MAX_EVENTS", "Exposure", "Outcome", "Refusal", "as_events", "check_sizes",
           "read_exposures", "read_outcomes"]

#: The most events (exposures and outcomes together) one call takes.
MAX_EVENTS = 100_000

_EXPOSURE_FIELDS = frozenset({"key", "arm", "version", "time"})
_OUTCOME_FIELDS = frozenset({"key", "value", "time", "metrics", "covariate", "denominator",
                             "costs"})


@dataclass(frozen=True, slots=True)
class Exposure:
    """One exposure read: its index in the call, key (as stored: text), arm index, version,
    time (µs since the epoch)."""

    index: int
    key: str
    arm: int
    version: str
    at: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """One outcome read: index, key, value, time (µs), and the optional parts (``costs``: a
    constrained policy's costs of the unit, one per threshold)."""

    index: int
    key: str
    value: float
    at: int
    metrics: Mapping[str, float] | None = None
    covariate: float | None = None
    denominator: float | None = None
    costs: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """One event refused: which list, its index, its key (when readable) and why."""

    kind: str
    index: int
    key: str | None
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "key": self.key,
                "reason": self.reason}


class _Bad(Exception):
    """An event's field cannot be used (its message is the refusal's reason)."""


def as_events(events: object, name: str) -> Sequence[Any]:
    """``events`` if it is a list of events (``None``: none), else refuse it by name."""
    if events is None:
        return ()
    if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Sequence):
        raise ExperimentError(f"{name} must be a list of events (objects), got "
                              f"{type(events).__name__}")
    return events


def check_sizes(exposures: Sequence[Any], outcomes: Sequence[Any]) -> None:
    """Refuse a call of more than :data:`MAX_EVENTS` events."""
    if len(exposures) + len(outcomes) > MAX_EVENTS:
        raise ExperimentError(f"exposures and outcomes: {len(exposures) + len(outcomes)} "
                              f"events in one call; at most {MAX_EVENTS} (send them in "
                              "several calls)")


def _key(event: Mapping[str, Any]) -> str:
    key = event.get("key")
    if isinstance(key, str):
        text = key
    elif isinstance(key, int) and not isinstance(key, bool):
        text = str(key)
    else:
        raise _Bad(f"key must be a non-empty text or an integer, got {key!r:.60}")
    if not text or len(text) > MAX_KEY_LENGTH:
        raise _Bad(f"key has {len(text)} characters; a key has 1 to {MAX_KEY_LENGTH}")
    return text


def _time(event: Mapping[str, Any], now: int) -> int:
    value = event.get("time")
    if value is None:
        return now
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or not 0 <= value < 1e11:
            raise _Bad(f"time must be seconds since the epoch (or an ISO 8601 text), got "
                       f"{value!r}")
        return round(value * 1_000_000)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise _Bad(f"time must be an ISO 8601 text with a time zone (or seconds since "
                       f"the epoch), got {value!r:.60}")
        return round(parsed.timestamp() * 1_000_000)
    raise _Bad(f"time must be seconds since the epoch or an ISO 8601 text, got {value!r:.60}")


def _number(value: object, field: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Bad(f"{field} must be a finite number, got {value!r:.60}")
    return float(value)


def _unknown(event: Mapping[str, Any], fields: frozenset[str]) -> None:
    extra = [str(f) for f in event if f not in fields]
    if extra:
        raise _Bad(f"unknown field(s) {sorted(extra)}; an event has {sorted(fields)}")


def _costs(value: object) -> tuple[float, ...] | None:
    """An outcome's ``costs``: a number (one threshold) or a list of numbers."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and value:
        return tuple(_number(v, "costs") for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (_number(value, "costs"),)
    raise _Bad(f"costs must be a number or a list of numbers (one per threshold), got "
               f"{value!r:.60}")


def read_exposures(events: object, arm_index: Mapping[str, int], now: int
                   ) -> tuple[list[Exposure], list[Refusal]]:
    """The exposures that can be read, and a refusal for each other one."""
    good: list[Exposure] = []
    bad: list[Refusal] = []
    for i, event in enumerate(as_events(events, "exposures")):
        key = None
        try:
            if not isinstance(event, Mapping):
                raise _Bad(f"an exposure is an object with {sorted(_EXPOSURE_FIELDS)}")
            if len(event) > 4 or not _EXPOSURE_FIELDS.issuperset(event):
                _unknown(event, _EXPOSURE_FIELDS)
            key = _key(event)
            arm = event.get("arm")
            if not isinstance(arm, str) or arm not in arm_index:
                raise _Bad(f"arm must be one of the experiment's arms {list(arm_index)}, got "
                           f"{arm!r:.60}")
            version = event.get("version")
            if not isinstance(version, str) or not version or len(version) > 64:
                raise _Bad(f"version must be the allocation's version (a text), got "
                           f"{version!r:.60}")
            good.append(Exposure(i, key, arm_index[arm], version, _time(event, now)))
        except _Bad as error:
            bad.append(Refusal("exposure", i, key, str(error)))
    return good, bad


def read_outcomes(events: object, now: int) -> tuple[list[Outcome], list[Refusal]]:
    """The outcomes that can be read, and a refusal for each other one (the values are
    checked against the experiment's rewards later, :mod:`banditkit.live.outcomes.ingest`)."""
    good: list[Outcome] = []
    bad: list[Refusal] = []
    for i, event in enumerate(as_events(events, "outcomes")):
        key = None
        try:
            if not isinstance(event, Mapping):
                raise _Bad(f"an outcome is an object with {sorted(_OUTCOME_FIELDS)}")
            if not _OUTCOME_FIELDS.issuperset(event):
                _unknown(event, _OUTCOME_FIELDS)
            key = _key(event)
            if "value" not in event:
                raise _Bad("value is required (the outcome's reward)")
            value = _number(event["value"], "value")
            metrics = event.get("metrics")
            if metrics is not None:
                if not isinstance(metrics, Mapping):
                    raise _Bad("metrics must be an object: metric → number")
                metrics = {str(k): _number(v, f"metrics[{k!r}]") for k, v in metrics.items()}
            covariate = event.get("covariate")
            if covariate is not None:
                covariate = _number(covariate, "covariate")
            denominator = event.get("denominator")
            if denominator is not None:
                denominator = _number(denominator, "denominator")
                if denominator < 0:
                    raise _Bad(f"denominator must be >= 0, got {denominator:g}")
            good.append(Outcome(i, key, value, _time(event, now), metrics, covariate,
                                denominator, _costs(event.get("costs"))))
        except _Bad as error:
            bad.append(Refusal("outcome", i, key, str(error)))
    return good, bad
