"""Best-arm identifiers for (transductive) linear bandits: RAGE and its baselines (fixed
confidence), and the fixed-budget identifiers of the P1-RAGE paper."""

from .alba import ALBA
from .g_bai import GBAI
from .lingape import LinGapE
from .od_linbai import ODLinBAI
from .p1 import P1RAGE, P1Peace
from .peace import MixedPeace, Peace
from .rage import RAGE
from .top_two import TopTwoThompson
from .xy import XYAdaptive, XYOracle, XYStatic

__all__ = [
           "ALBA",
           "GBAI",
           "P1RAGE",
           "RAGE",
           "LinGapE",
           "MixedPeace",
           "ODLinBAI",
           "P1Peace",
           "Peace",
           "TopTwoThompson",
           "XYAdaptive",
           "XYOracle",
           "XYStatic",
]
