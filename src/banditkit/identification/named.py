"""The best-arm identifiers by name, for ``banditkit audit`` and any tool that builds an
algorithm from a name (see :mod:`banditkit.registry`).

Each factory takes a linear environment (``env.X`` arms, ``env.Z`` items; the oracle also reads
``env.theta``) and the internal randomness ``rng``. Fixed-confidence identifiers take δ and
ignore ``horizon`` (they stop by themselves); fixed-budget identifiers (Xiong et al.) spend
exactly ``horizon`` pulls, their budget T, so an audit of two executions sharing ξ compares
their pulls and their recommendation.
"""

from __future__ import annotations

import numpy as np

from ..envs.base import Environment
from ..registry import register_policy
from .alba import ALBA
from .fw_sampling import FrankWolfeSampling
from .g_bai import GBAI
from .k_armed.composed import BestChallenger
from .k_armed.eb_tc import EBTC
from .k_armed.lucb import KLLUCB, LUCB
from .k_armed.racing import ChernoffRacing, KLRacing
from .k_armed.track_and_stop import KArmedTrackAndStop
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

__all__ = [
    "alba",
    "best_challenger",
    "chernoff_racing",
    "eb_tc",
    "fw_sampling",
    "g_bai",
    "k_armed_track_and_stop",
    "kl_lucb",
    "kl_racing",
    "lingame",
    "lingape",
    "lucb",
    "mixed_peace",
    "od_linbai",
    "p1_peace",
    "p1_rage",
    "peace",
    "rage",
    "replicable_g_bai",
    "replicable_rage",
    "replicable_se",
    "top_two_thompson",
    "track_and_stop",
    "xy_adaptive",
    "xy_oracle",
    "xy_static",
]


def _arms_items(env: Environment, name: str) -> tuple[np.ndarray, np.ndarray]:
    X, Z = getattr(env, "X", None), getattr(env, "Z", None)
    if X is None or Z is None:
        raise ValueError(f"{name} needs a linear environment with arms X and items Z, got "
                         f"{type(env).__name__}")
    return X, Z


def _theta(env: Environment, name: str, fix: str) -> np.ndarray:
    theta = getattr(env, "theta", None)
    if theta is None:
        raise ValueError(f"{name} needs the true theta of a simulated environment; {fix}")
    return np.asarray(theta, dtype=float)


_ORACLE = "it is an oracle baseline for simulations and cannot run on live data"
_BOUND = "otherwise pass theta_bound=S, a bound on ||theta*|| (as a live experiment must)"


@register_policy("RAGE")
def rage(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         delta: float = 0.05, epsilon: float = 0.1) -> RAGE:
    """RAGE (Fiez et al. 2019, Algorithm 1), fixed confidence δ."""
    return RAGE(*_arms_items(env, "RAGE"), delta, epsilon, rng=rng)


@register_policy("ReplicableRAGE")
def replicable_rage(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                    delta: float = 0.05, rho: float = 0.3, epsilon: float = 0.1,
                    split: str = "window", sample_delta: float | None = None
                    ) -> ReplicableRAGE:
    """ρ-replicable RAGE (issue 25): RAGE's designs, drops through replicable rounding."""
    return ReplicableRAGE(*_arms_items(env, "ReplicableRAGE"), delta, rho, epsilon, rng=rng,
                          split=split, sample_delta=sample_delta)


@register_policy("ReplicableSuccessiveElimination")
def replicable_se(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                  delta: float = 0.05, rho: float = 0.3, split: str = "window",
                  sample_delta: float | None = None,
                  reward_range: tuple[float, float] = (0.0, 1.0)
                  ) -> ReplicableSuccessiveElimination:
    """ρ-replicable successive elimination, K-armed BAI with rewards in reward_range."""
    return ReplicableSuccessiveElimination(env.n_arms, rho, delta, rng, split=split,
                                           sample_delta=sample_delta,
                                           reward_range=reward_range)


@register_policy("XYStatic")
def xy_static(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
              delta: float = 0.05, gamma: float = 1.35) -> XYStatic:
    """Static XY-allocation (Fiez et al. 2019, Section 2; Appendix F)."""
    return XYStatic(*_arms_items(env, "XYStatic"), delta, gamma=gamma, rng=rng)


@register_policy("XYOracle")
def xy_oracle(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
              delta: float = 0.05, gamma: float = 1.1) -> XYOracle:
    """Oracle XY-allocation that knows θ* (Fiez et al. 2019, Section 5)."""
    return XYOracle(*_arms_items(env, "XYOracle"), delta, _theta(env, "XYOracle", _ORACLE),
                    gamma=gamma, rng=rng)


@register_policy("XYAdaptive")
def xy_adaptive(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                delta: float = 0.05, alpha: float = 0.1) -> XYAdaptive:
    """XY-adaptive (Soare et al. 2014) with α = 0.1, sequential."""
    return XYAdaptive(*_arms_items(env, "XYAdaptive"), delta, alpha=alpha, rng=rng)


@register_policy("LinGapE")
def lingape(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
            delta: float = 0.05, theta_bound: float | None = None) -> LinGapE:
    """LinGapE (Xu et al. 2018, analysed form); S = ‖θ*‖ unless ``theta_bound`` is given."""
    bound = (float(np.linalg.norm(_theta(env, "LinGapE", _BOUND))) if theta_bound is None
             else theta_bound)
    return LinGapE(*_arms_items(env, "LinGapE"), delta, theta_bound=bound)


@register_policy("ALBA")
def alba(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         delta: float = 0.05, theta_bound: float | None = None) -> ALBA:
    """ALBA with Y-ElimTil (Tao et al. 2018); S = ‖θ*‖ unless ``theta_bound`` is given."""
    bound = (float(np.linalg.norm(_theta(env, "ALBA", _BOUND))) if theta_bound is None
             else theta_bound)
    return ALBA(*_arms_items(env, "ALBA"), delta, theta_bound=bound)


# --- fixed budget (Xiong et al., "A/B Testing and Best-arm Identification for Linear Bandits
# with Robustness to Non-stationarity"): the budget is the horizon ---------------------------

def _budget(name: str, horizon: int | None) -> int:
    if horizon is None:
        raise ValueError(f"{name} is a fixed-budget identifier: pass the budget T as the "
                         "horizon (--horizon T)")
    return horizon


@register_policy("GBAI")
def g_bai(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
          design_tol: float = 0.01) -> GBAI:
    """G-BAI (Xiong et al., Algorithm 1): i.i.d. pulls from the G-optimal design, IPS."""
    return GBAI(*_arms_items(env, "GBAI"), _budget("GBAI", horizon), design_tol=design_tol,
                rng=rng)


@register_policy("ReplicableGBAI")
def replicable_g_bai(env: Environment, rng: np.random.Generator, *,
                     horizon: int | None = None, rho: float = 0.3, sigma: float = 1.0,
                     design_tol: float = 0.01) -> ReplicableGBAI:
    """G-BAI with a ρ-replicable recommendation (issues 25, 35): same pulls, a Gumbel-max
    draw from the softmax of the estimated values."""
    return ReplicableGBAI(*_arms_items(env, "ReplicableGBAI"),
                          _budget("ReplicableGBAI", horizon), rho=rho, sigma=sigma,
                          design_tol=design_tol, rng=rng)


@register_policy("P1RAGE")
def p1_rage(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
            m: int = 15) -> P1RAGE:
    """P1-RAGE (Xiong et al., Algorithms 2-3) with m virtual phases (15 in Appendix D)."""
    return P1RAGE(*_arms_items(env, "P1RAGE"), _budget("P1RAGE", horizon), m=m, rng=rng)


@register_policy("P1Peace")
def p1_peace(env: Environment, rng: np.random.Generator, *, horizon: int | None = None
             ) -> P1Peace:
    """P1-Peace (Xiong et al., Algorithms 4-5)."""
    return P1Peace(*_arms_items(env, "P1Peace"), _budget("P1Peace", horizon), rng=rng)


@register_policy("MixedPeace")
def mixed_peace(env: Environment, rng: np.random.Generator, *, horizon: int | None = None
                ) -> MixedPeace:
    """Mixed-Peace (Xiong et al., Algorithm 6)."""
    return MixedPeace(*_arms_items(env, "MixedPeace"), _budget("MixedPeace", horizon),
                      rng=rng)


@register_policy("Peace")
def peace(env: Environment, rng: np.random.Generator, *, horizon: int | None = None) -> Peace:
    """Peace, fixed budget (Katz-Samuels et al. 2020, as in Xiong et al., Appendix D)."""
    return Peace(*_arms_items(env, "Peace"), _budget("Peace", horizon), rng=rng)


@register_policy("ODLinBAI")
def od_linbai(env: Environment, rng: np.random.Generator, *, horizon: int | None = None
              ) -> ODLinBAI:
    """OD-LinBAI (Yang & Tan 2022), Z = X."""
    X, Z = _arms_items(env, "ODLinBAI")
    return ODLinBAI(X, Z, _budget("ODLinBAI", horizon), rng=rng)


# ---------------------------------------------------------------------------------------------
# Top-two Thompson sampling (issue 16 §5): K-armed, needs no arm features

@register_policy("TopTwoThompson")
def top_two_thompson(env: Environment, rng: np.random.Generator, *,
                     horizon: int | None = None, delta: float = 0.05, beta: float = 0.5,
                     posterior: str = "beta", threshold: str = "theory", sigma: float = 1.0,
                     max_redraws: int = 1_000, prior: tuple[float, float] = (1.0, 1.0)
                     ) -> TopTwoThompson:
    """Top-two Thompson sampling (Russo 2016) with Chernoff stopping at log(2t(K-1)/delta)."""
    return TopTwoThompson(env.n_arms, rng, delta=delta, beta=beta, posterior=posterior,
                          threshold=threshold, sigma=sigma, max_redraws=max_redraws,
                          prior=prior, horizon=horizon)


# --- asymptotically optimal fixed-confidence identifiers (GLR stopping; no θ needed, so they
# run live) ------------------------------------------------------------------------------

@register_policy("LinearTrackAndStop")
def track_and_stop(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                   delta: float = 0.05, threshold: str = "paper", tracking: str = "C",
                   lazy_ratio: float = 2.0) -> LinearTrackAndStop:
    """Lazy Track-and-Stop (Jedra & Proutière 2020); GLR stop, threshold "paper"/"heuristic"."""
    return LinearTrackAndStop(*_arms_items(env, "LinearTrackAndStop"), delta, threshold=threshold,
                              tracking=tracking, lazy_ratio=lazy_ratio)


@register_policy("FrankWolfeSampling")
def fw_sampling(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                delta: float = 0.05, threshold: str = "paper", tracking: str = "vertices",
                step: str = "t+1", forced: str = "sqrt", force_tied: bool = True,
                start: str = "spanning") -> FrankWolfeSampling:
    """Frank-Wolfe Sampling (Wang, Tzeng & Proutière 2021); GLR stop, "paper"/"heuristic"."""
    return FrankWolfeSampling(*_arms_items(env, "FrankWolfeSampling"), delta,
                              threshold=threshold, tracking=tracking, step=step, forced=forced,
                              force_tied=force_tied, start=start)


@register_policy("LinGame")
def lingame(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
            delta: float = 0.05, threshold: str = "paper") -> LinGame:
    """LinGame (Degenne, Ménard, Shang & Valko 2020); GLR stop, Jedra-Proutière's/"heuristic"."""
    return LinGame(*_arms_items(env, "LinGame"), delta, threshold=threshold)


# --- K-armed fixed-confidence identifiers (issue 28 §3): no arm features needed --------------

@register_policy("KArmedTrackAndStop")
def k_armed_track_and_stop(env: Environment, rng: np.random.Generator, *,
                           horizon: int | None = None, delta: float = 0.05,
                           tracking: str = "D", model: str = "bernoulli", sigma: float = 1.0,
                           threshold: str = "theory") -> KArmedTrackAndStop:
    """Track-and-Stop for K arms (Garivier & Kaufmann 2016), D/C-tracking, Chernoff stop."""
    return KArmedTrackAndStop(env.n_arms, delta, tracking=tracking, model=model, sigma=sigma,
                              threshold=threshold, horizon=horizon)


@register_policy("EBTC")
def eb_tc(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
          delta: float = 0.05, epsilon0: float = 0.1, beta: float = 0.5,
          sigma: float | None = None, threshold: str = "theory") -> EBTC:
    """EB-TCε₀ (Jourdan, Degenne & Kaufmann 2023); σ: the env's, else 1/2 (rewards in [0, 1])."""
    if sigma is None:
        sigma = float(getattr(env, "sigma", 0.5))
    return EBTC(env.n_arms, delta, epsilon0=epsilon0, beta=beta, sigma=sigma,
                threshold=threshold, horizon=horizon)


@register_policy("LUCB")
def lucb(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         delta: float = 0.05, epsilon: float = 0.0) -> LUCB:
    """LUCB1 (Kalyanakrishnan et al. 2012), rewards in [0, 1]."""
    return LUCB(env.n_arms, delta, epsilon=epsilon, horizon=horizon)


@register_policy("KLLUCB")
def kl_lucb(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
            delta: float = 0.05, epsilon: float = 0.0, threshold: str = "paper",
            model: str = "bernoulli", sigma: float = 1.0) -> KLLUCB:
    """KL-LUCB (Kaufmann & Kalyanakrishnan 2013), β = log(405.5 K t^1.1/δ)."""
    return KLLUCB(env.n_arms, delta, epsilon=epsilon, threshold=threshold, model=model,
                  sigma=sigma, horizon=horizon)


# --- GK16 Table 1's other baselines (issue 36 §2) ----------------------------------------------

@register_policy("BestChallenger")
def best_challenger(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                    delta: float = 0.05, threshold: str = "theory", model: str = "bernoulli",
                    sigma: float = 1.0) -> BestChallenger:
    """GK16 Table 1's "T-a-S (BC)": best-challenger sampling, Chernoff stop."""
    return BestChallenger(env.n_arms, delta, threshold=threshold, model=model, sigma=sigma,
                          horizon=horizon)


@register_policy("ChernoffRacing")
def chernoff_racing(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                    delta: float = 0.05, threshold: str = "theory", model: str = "bernoulli",
                    sigma: float = 1.0) -> ChernoffRacing:
    """Chernoff-Racing (Garivier & Kaufmann 2016, Section 5)."""
    return ChernoffRacing(env.n_arms, delta, threshold=threshold, model=model, sigma=sigma,
                          horizon=horizon)


@register_policy("KLRacing")
def kl_racing(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
              delta: float = 0.05, threshold: str = "theory", model: str = "bernoulli",
              sigma: float = 1.0) -> KLRacing:
    """KL-Racing (Kaufmann & Kalyanakrishnan 2013)."""
    return KLRacing(env.n_arms, delta, threshold=threshold, model=model, sigma=sigma,
                    horizon=horizon)
