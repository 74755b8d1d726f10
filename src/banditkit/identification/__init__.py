"""Best-arm identifiers: for (transductive) linear bandits RAGE and its baselines,
Track-and-Stop and Frank-Wolfe Sampling (fixed confidence) and the fixed-budget identifiers of
the P1-RAGE paper; for K arms top-two Thompson sampling, Track-and-Stop, EB-TC, LUCB1 and
KL-LUCB. Every identifier is imported from here, under its registry name
(``from banditkit.identification import EBTC``); the modules below are where they live.

A family with engines of its own is a subpackage, its class in ``__init__`` and its engines
beside it (DESIGN.md, "Engines"): ``glr`` (the GLR identifiers' shared state, compiled kernels
and driver), ``track_and_stop`` (+ ``blocks``), ``lingame`` (+ ``kernel``), ``lingape``
(+ ``blocks``), ``xy`` (+ ``blocks``, ``schedule``). The modules' former flat names
(:data:`MOVED`) still import, as the same module objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import alias_moved_modules, lazy_exports

#: Former module names → where the module now lives (``banditkit.identification.X``).
MOVED = {
    "linear_glr": "glr",
    "linear_glr_kernels": "glr.kernels",
    "linear_glr_run": "glr.run",
    "track_and_stop_blocks": "track_and_stop.blocks",
    "lingame_kernel": "lingame.kernel",
    "lingape_blocks": "lingape.blocks",
    "xy_blocks": "xy.blocks",
    "xy_schedule": "xy.schedule",
}


alias_moved_modules(__name__, MOVED)

__all__ = ["ALBA", "EBTC", "GBAI", "KLLUCB", "LUCB", "P1RAGE", "RAGE", "BestChallenger",
           "ChernoffRacing", "ComposedIdentifier", "FrankWolfeSampling", "KArmedTrackAndStop",
           "KLRacing", "LinGame", "LinGapE", "LinearComposedIdentifier", "LinearSampling",
           "LinearTrackAndStop", "MixedPeace",
           "ODLinBAI", "P1Peace", "Peace", "ReplicableGBAI", "ReplicableRAGE",
           "ReplicableSuccessiveElimination", "TopTwoThompson", "XYAdaptive", "XYOracle",
           "XYStatic"]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".alba": ["ALBA"],
    ".fw_sampling": ["FrankWolfeSampling"],
    ".g_bai": ["GBAI"],
    ".k_armed.composed": ["BestChallenger", "ComposedIdentifier"],
    ".k_armed.eb_tc": ["EBTC"],
    ".k_armed.lucb": ["KLLUCB", "LUCB"],
    ".k_armed.racing": ["ChernoffRacing", "KLRacing"],
    ".k_armed.track_and_stop": ["KArmedTrackAndStop"],
    ".lingame": ["LinGame"],
    ".linear_composed": ["LinearComposedIdentifier", "LinearSampling"],
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
    from .k_armed.composed import BestChallenger, ComposedIdentifier
    from .k_armed.eb_tc import EBTC
    from .k_armed.lucb import KLLUCB, LUCB
    from .k_armed.racing import ChernoffRacing, KLRacing
    from .k_armed.track_and_stop import KArmedTrackAndStop
    from .linear_composed import LinearComposedIdentifier, LinearSampling
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
