"""What a live experiment is, fixed at create and read once from its store's ``meta``: the
algorithm, its parameters and seed, the arms, the control, the guardrails, the outcome window,
the overflow rule — and the experiment's clock. Every part of :class:`banditkit.Experiment`
(:mod:`banditkit.live`) reads these values; none writes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .assignment import overflow as _overflow
from .errors import ExperimentError
from .outcomes.window import OutcomeWindow
from .problem import LiveArms
from .readout.guardrails import Guardrail, check_guardrails
from .readout.verdict_spec import VerdictSpec, spec_from_meta
from .store.codec import micros, stamp

__all__ = ["Clock", "Definition", "LiveClock", "check_clock"]

#: A clock: the time in seconds since the epoch, as :func:`time.time` gives it.
Clock = Callable[[], float]


def check_clock(clock: object) -> None:
    """Refuse a ``clock=`` that is not a function (``None`` is :func:`time.time`)."""
    if clock is not None and not callable(clock):
        raise ExperimentError(f"clock must be a function returning the time in seconds since "
                              f"the epoch (as time.time), got {clock!r}")


class LiveClock:
    """The experiment's clock (``clock=`` of create and open, default :func:`time.time`), in
    the units the parts use: seconds, microseconds, and the tables' time text."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.seconds: Clock = time.time if clock is None else clock

    def micros(self) -> int:
        """Now, in microseconds since the epoch."""
        return micros(self.seconds())

    def stamp(self) -> str:
        """Now, as the tables store times."""
        return stamp(self.micros())


@dataclass(frozen=True)
class Definition:
    """An experiment's definition as stored in ``meta`` (see the module docstring).

    ``label`` names the store in messages (a file's path, a database's experiment).
    """

    algorithm_name: str
    params: dict[str, Any]
    live_defaults: list[str]
    seed: int
    horizon: int | None
    order: str
    arm_names: list[str]
    control: str
    guardrails: list[Guardrail]
    guardrail_alpha: float
    window: OutcomeWindow
    overflow: str
    create_warnings: list[str]
    meta: Mapping[str, Any]
    problem: LiveArms
    label: str

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], label: str) -> Definition:
        """Read a stored definition; a missing or damaged entry is one ExperimentError."""
        try:
            arms = list(meta["arms"])
            features, thresholds = meta["features"], meta["thresholds"]
            return cls(
                algorithm_name=meta["algorithm"], params=dict(meta["params"]),
                live_defaults=list(meta.get("live_defaults", [])), seed=int(meta["seed"]),
                horizon=meta["horizon"], order=meta["order"], arm_names=arms,
                # files written before control= existed compare with the first arm
                control=str(meta.get("control", arms[0])),
                guardrails=check_guardrails(meta.get("guardrails")),
                guardrail_alpha=float(meta.get("guardrail_alpha", 0.05)),
                window=OutcomeWindow.from_meta(meta),
                # experiments created before the overflow rule existed take the default
                overflow=_overflow.check_rule(meta.get("overflow", "design")),
                create_warnings=list(meta.get("create_warnings", [])), meta=meta,
                problem=LiveArms(len(arms),
                                 None if features is None else np.asarray(features, float),
                                 None if thresholds is None else np.asarray(thresholds, float)),
                label=label)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise ExperimentError(f"{label} is damaged: its definition lacks "
                                  f"{error}") from None

    @property
    def n_arms(self) -> int:
        return len(self.arm_names)

    @property
    def control_index(self) -> int:
        return self.arm_names.index(self.control)

    def replay_meta(self) -> dict[str, Any]:
        """What rebuilds the algorithm: its name, parameters, seed and horizon."""
        return {"algorithm": self.algorithm_name, "params": self.params, "seed": self.seed,
                "horizon": self.horizon}

    def verdict_spec(self, algorithm_range: tuple[float, float] | None) -> VerdictSpec:
        """The declared rewards and sequences (:mod:`banditkit.live.readout.verdict_spec`)
        on the algorithm's reward range (``None`` before the algorithm is built)."""
        return spec_from_meta(self.meta, algorithm_range)

    def check_arm(self, arm: object) -> None:
        """Refuse a stored unit whose arm is not one of the experiment's (a damaged or edited
        file), instead of an IndexError or a silent count for arm −1."""
        if (isinstance(arm, (bool, np.bool_)) or not isinstance(arm, (int, np.integer))
                or not 0 <= int(arm) < len(self.arm_names)):
            raise ExperimentError(f"{self.label} is damaged: a unit's arm is {arm!r}, not "
                                  f"one of the {len(self.arm_names)} arms")
