"""Best-arm identifiers for (transductive) linear bandits: RAGE and its baselines."""

from .alba import ALBA
from .lingape import LinGapE
from .rage import RAGE
from .xy import XYAdaptive, XYOracle, XYStatic

__all__ = ["ALBA", "RAGE", "LinGapE", "XYAdaptive", "XYOracle", "XYStatic"]
