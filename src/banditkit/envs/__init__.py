"""Environments: reward models that answer a whole batch in one vectorised call, and know their
truth (best arm, gaps, optimal safe strategy) for metrics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "BernoulliBandit",
    "ConstrainedBandit",
    "Environment",
    "GaussianBandit",
    "LinearBandit",
    "NonStationaryLinearBandit",
    "Outcome",
    "StationaryBandit",
    "instance_names",
    "make_instance",
    "optimal_safe_strategy",
    "register_instance",
]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".base": ["Environment", "Outcome"],
    ".constrained": ["ConstrainedBandit", "optimal_safe_strategy"],
    ".instances": ["instance_names", "make_instance", "register_instance"],
    ".linear": ["LinearBandit"],
    ".multi_armed": ["BernoulliBandit", "GaussianBandit", "StationaryBandit"],
    ".nonstationary": ["NonStationaryLinearBandit"],
}, globals())

if TYPE_CHECKING:
    from .base import Environment, Outcome
    from .constrained import ConstrainedBandit, optimal_safe_strategy
    from .instances import instance_names, make_instance, register_instance
    from .linear import LinearBandit
    from .multi_armed import BernoulliBandit, GaussianBandit, StationaryBandit
    from .nonstationary import NonStationaryLinearBandit
