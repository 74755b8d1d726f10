"""Environments: reward models that answer a whole batch in one vectorised call, and know their
truth (best arm, gaps, optimal safe strategy) for metrics."""

from .base import Environment, Outcome
from .constrained import ConstrainedBandit, optimal_safe_strategy
from .instances import instance_names, make_instance, register_instance
from .linear import LinearBandit
from .multi_armed import BernoulliBandit, GaussianBandit, StationaryBandit
from .nonstationary import NonStationaryLinearBandit

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
