"""Best-arm identifiers for (transductive) linear bandits: RAGE and its baselines (fixed
confidence), and the fixed-budget identifiers of the P1-RAGE paper."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["ALBA", "GBAI", "P1RAGE", "RAGE", "LinGapE", "MixedPeace", "ODLinBAI", "P1Peace",
           "Peace", "TopTwoThompson", "XYAdaptive", "XYOracle", "XYStatic"]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".alba": ["ALBA"],
    ".g_bai": ["GBAI"],
    ".lingape": ["LinGapE"],
    ".od_linbai": ["ODLinBAI"],
    ".p1": ["P1RAGE", "P1Peace"],
    ".peace": ["MixedPeace", "Peace"],
    ".rage": ["RAGE"],
    ".top_two": ["TopTwoThompson"],
    ".xy": ["XYAdaptive", "XYOracle", "XYStatic"],
}, globals())

if TYPE_CHECKING:
    from .alba import ALBA
    from .g_bai import GBAI
    from .lingape import LinGapE
    from .od_linbai import ODLinBAI
    from .p1 import P1RAGE, P1Peace
    from .peace import MixedPeace, Peace
    from .rage import RAGE
    from .top_two import TopTwoThompson
    from .xy import XYAdaptive, XYOracle, XYStatic
