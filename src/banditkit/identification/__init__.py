"""Best-arm identifiers for (transductive) linear bandits: RAGE and its baselines (fixed
confidence), and the fixed-budget identifiers of the P1-RAGE paper."""

from .alba import ALBA

# Asymptotically optimal linear identifiers (Jedra & Proutière 2020; Wang et al. 2021).
from .fw_sampling import FrankWolfeSampling
from .g_bai import GBAI
from .lingape import LinGapE
from .od_linbai import ODLinBAI
from .p1 import P1RAGE, P1Peace
from .peace import MixedPeace, Peace
from .rage import RAGE
from .track_and_stop import LinearTrackAndStop
from .xy import XYAdaptive, XYOracle, XYStatic

__all__ = [
           "ALBA",
           "GBAI",
           "P1RAGE",
           "RAGE",
           "FrankWolfeSampling",
           "LinGapE",
           "LinearTrackAndStop",
           "MixedPeace",
           "ODLinBAI",
           "P1Peace",
           "Peace",
           "XYAdaptive",
           "XYOracle",
           "XYStatic",
]
