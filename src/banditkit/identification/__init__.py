"""Best-arm identifiers for (transductive) linear bandits: RAGE and its baselines."""

from .rage import RAGE
from .xy import XYAdaptive, XYOracle, XYStatic

__all__ = ["RAGE", "XYAdaptive", "XYOracle", "XYStatic"]
