"""K-armed best-arm identification with fixed confidence: Track-and-Stop (Garivier & Kaufmann
2016), the top-two EB-TCε₀ (Jourdan, Degenne & Kaufmann 2023), LUCB1 (Kalyanakrishnan et al.
2012) and KL-LUCB (Kaufmann & Kalyanakrishnan 2013), with the optimal proportions and the
characteristic time of Garivier & Kaufmann (:mod:`.oracle`), and an identifier assembled from a
sampling, a stopping and a recommendation rule (:mod:`.composed`, :mod:`.rules`,
:mod:`.fw_rule`, :mod:`.stopping`). Top-two
Thompson sampling (Russo 2016) is :mod:`banditkit.identification.top_two`.

The identifiers are imported from :mod:`banditkit.identification` (one import path per
algorithm, under its registry name); this package exports the oracle's functions, and its
classes only as the same objects, for code written against it before."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

__all__ = ["EBTC", "KLLUCB", "LUCB", "BestChallenger", "BestChallengerSampling",
           "ChernoffRacing", "ChernoffStopping", "ComposedIdentifier", "FrankWolfe",
           "KArmedTrackAndStop", "KLRacing", "LUCBSampling", "LUCBStopping", "TopTwo",
           "Tracking", "Uniform", "characteristic_time", "lower_bound"]

__getattr__, __dir__ = lazy_exports(__name__, {
    ".composed": ["BestChallenger", "ComposedIdentifier"],
    ".eb_tc": ["EBTC"],
    ".fw_rule": ["FrankWolfe"],
    ".lucb": ["KLLUCB", "LUCB"],
    ".oracle": ["characteristic_time", "lower_bound"],
    ".racing": ["ChernoffRacing", "KLRacing"],
    ".rules": ["BestChallengerSampling", "LUCBSampling", "TopTwo", "Tracking", "Uniform"],
    ".stopping": ["ChernoffStopping", "LUCBStopping"],
    ".track_and_stop": ["KArmedTrackAndStop"],
}, globals())

if TYPE_CHECKING:
    from .composed import BestChallenger, ComposedIdentifier
    from .eb_tc import EBTC
    from .fw_rule import FrankWolfe
    from .lucb import KLLUCB, LUCB
    from .oracle import characteristic_time, lower_bound
    from .racing import ChernoffRacing, KLRacing
    from .rules import BestChallengerSampling, LUCBSampling, TopTwo, Tracking, Uniform
    from .stopping import ChernoffStopping, LUCBStopping
    from .track_and_stop import KArmedTrackAndStop
