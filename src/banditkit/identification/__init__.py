"""Best-arm identifiers for (transductive) linear bandits: RAGE and its baselines,
Track-and-Stop and Frank-Wolfe Sampling (fixed confidence), top-two Thompson sampling, and the
fixed-budget identifiers of the P1-RAGE paper."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["ALBA", "GBAI", "P1RAGE", "RAGE", "FrankWolfeSampling", "LinGame",
           "LinGapE", "LinearTrackAndStop", "MixedPeace", "ODLinBAI", "P1Peace", "Peace",
           "ReplicableGBAI", "ReplicableRAGE", "ReplicableSuccessiveElimination", "TopTwoThompson",
           "XYAdaptive", "XYOracle", "XYStatic"]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".alba": ["ALBA"],
    ".fw_sampling": ["FrankWolfeSampling"],
    ".g_bai": ["GBAI"],
    ".lingame": ["LinGame"],
    ".lingape": ["LinGapE"],
    ".od_linbai": ["ODLinBAI"],
    ".p1": ["P1RAGE", "P1Peace"],
    ".peace": ["MixedPeace", "Peace"],
    ".rage": ["RAGE"],
    ".replicable_g_bai": ["ReplicableGBAI"],
    ".replicable_rage": ["ReplicableRAGE"],
    ".replicable_se": ["ReplicableSuccessiveElimination"],
    ".top_two": ["TopTwoThompson"],
    ".track_and_stop": ["LinearTrackAndStop"],
    ".xy": ["XYAdaptive", "XYOracle", "XYStatic"],
}, globals())

if TYPE_CHECKING:
    from .alba import ALBA
    from .fw_sampling import FrankWolfeSampling
    from .g_bai import GBAI
    from .lingame import LinGame
    from .lingape import LinGapE
    from .od_linbai import ODLinBAI
    from .p1 import P1RAGE, P1Peace
    from .peace import MixedPeace, Peace
    from .rage import RAGE
    from .replicable_g_bai import ReplicableGBAI
    from .replicable_rage import ReplicableRAGE
    from .replicable_se import ReplicableSuccessiveElimination
    from .top_two import TopTwoThompson
    from .track_and_stop import LinearTrackAndStop
    from .xy import XYAdaptive, XYOracle, XYStatic
