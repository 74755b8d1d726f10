"""A K-armed fixed-confidence identifier assembled from interchangeable parts (issue 36 §2): a
**sampling rule** (:mod:`.rules`), a **stopping rule** and a **recommendation rule**, so that a
question such as "top-two Thompson sampling's sampling with Track-and-Stop's stopping" needs no
new code.

* Sampling: :class:`~.rules.Tracking` (D/C, every round or lazy), :class:`~.rules.TopTwo`
  (EB/TS leader, TC/TCI/KKT/TS challenger, β fixed or IDS, by tracking or coin),
  :class:`~.rules.BestChallengerSampling`, :class:`~.rules.LUCBSampling`,
  :class:`~.fw_rule.FrankWolfe`, :class:`~.rules.Uniform`.
* Stopping (:mod:`.stopping`): :class:`~.stopping.ChernoffStopping`, the GLR of the model (the
  Bernoulli kl or the Gaussian divergence) above β(t, δ) = log(2t(K − 1)/δ)
  (``threshold="theory"``, GK16 Theorem 10: δ-correct for Bernoulli arms whatever the sampling
  rule), log((log t + 1)/δ) (``"heuristic"``, their Section 6; not proved) or Jourdan et al.'s
  Gaussian c(t, δ) (``"gaussian"``); or :class:`~.stopping.LUCBStopping`, U_l − L_h < ε.
* Recommendation: ``"empirical-best"`` (argmax μ̂, ties to the lowest index; every paper's) or
  ``"most-played"`` (argmax N, ties to the lowest index).

The registered identifiers are combinations of these parts, and the combination gives the same
decisions from the same seeds, bit for bit (``tests/test_composed_identifier.py``):

======================  =====================================================================
registered              composed
======================  =====================================================================
KArmedTrackAndStop      ``Tracking("D" or "C")``
EBTC                    ``TopTwo("EB", "TC", epsilon0=ε₀, beta=β)``, ``model="gaussian"``
KLLUCB                  ``LUCBSampling("kl")`` with ``stopping=LUCBStopping("kl")``
LUCB                    ``LUCBSampling("hoeffding")`` with ``LUCBStopping("hoeffding")``
TopTwoThompson          ``TopTwo("TS", "TS", selection="coin", beta=β)``, with ``rng`` and
                        ``each_arm_first=False``
======================  =====================================================================

A composed identifier runs through the protocol loop (no compiled engine): the registered
classes keep their kernels.
"""

from __future__ import annotations

import numpy as np

from ...protocol import Batch
from .base import KArmedIdentifier, check_threshold
from .rules import BestChallengerSampling, SamplingRule
from .stopping import CHERNOFF_THRESHOLDS, ChernoffStopping, StoppingRule

__all__ = ["RECOMMENDATIONS", "BestChallenger", "ComposedIdentifier"]

RECOMMENDATIONS = ("empirical-best", "most-played")


class ComposedIdentifier(KArmedIdentifier):
    """Sampling, stopping and recommendation rules combined (module docstring).

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    sampling : SamplingRule
        The sampling rule (a fresh one: the identifier owns its state).
    threshold : {"theory", "heuristic", "gaussian"}
        β(t, δ) of the Chernoff stopping rule (when ``stopping`` is not given).
    stopping : StoppingRule, optional
        The stopping rule (a fresh one); ``ChernoffStopping(threshold)`` by default.
    recommendation : {"empirical-best", "most-played"}
    model : {"bernoulli", "gaussian"}
        The GLR's (and a Thompson rule's posterior's) model.
    sigma : float
        σ of the Gaussian model.
    rng : Generator, optional
        ξ, needed by a rule that draws (``sampling.uses_rng``).
    horizon : int, optional
        Budget cap.
    each_arm_first : bool
        Pull every arm once in a first batch (default, as Track-and-Stop and EB-TC) or let the
        rule choose from the first round (top-two Thompson sampling draws from the prior;
        only a rule that needs no pull of each arm may, :attr:`SamplingRule.needs_each_arm`).
    """

    def __init__(self, n_arms: int, delta: float = 0.05, *, sampling: SamplingRule,
                 threshold: str = "theory", stopping: StoppingRule | None = None,
                 recommendation: str = "empirical-best", model: str = "bernoulli",
                 sigma: float = 1.0, rng: np.random.Generator | None = None,
                 horizon: int | None = None, each_arm_first: bool = True) -> None:
        if stopping is None:
            stopping = ChernoffStopping(threshold)
        elif not isinstance(stopping, StoppingRule):
            raise ValueError(f"stopping must be a StoppingRule (ChernoffStopping, "
                             f"LUCBStopping), got {type(stopping).__name__}")
        elif threshold != "theory":
            raise ValueError("threshold is the default stopping rule's: give it to the "
                             "stopping rule (ChernoffStopping(threshold=...)) instead")
        super().__init__(n_arms, delta=delta, model=model, sigma=sigma,
                         threshold=check_threshold(threshold, CHERNOFF_THRESHOLDS),
                         horizon=horizon)
        if not isinstance(sampling, SamplingRule):
            raise ValueError(f"sampling must be a SamplingRule (Tracking, TopTwo, "
                             f"BestChallengerSampling, LUCBSampling, FrankWolfe, Uniform), got "
                             f"{type(sampling).__name__}")
        if recommendation not in RECOMMENDATIONS:
            raise ValueError(f"recommendation must be one of {RECOMMENDATIONS}, got "
                             f"{recommendation!r}")
        if sampling.uses_rng and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (ξ): {type(sampling).__name__} "
                             f"draws from it, got {type(rng).__name__}")
        if not each_arm_first and sampling.needs_each_arm:
            raise ValueError(f"each_arm_first=False needs a rule that draws from a prior; "
                             f"{type(sampling).__name__} reads every arm's mean")
        stopping.check(self)
        self.each_arm_first = bool(each_arm_first)
        self.stopping_rule = stopping
        self.threshold = stopping.label
        self.rounds = 0  # batches observed (LUCB's t: 1 after the first batch)
        self.sampling = sampling
        self.recommendation_rule = recommendation
        self.rng = rng
        sampling.start(self.n_arms)

    def _next_batch(self) -> Batch | None:
        if self.t == 0 and not self.each_arm_first and not self._stopped and (
                self.horizon is None or self.horizon > 0):
            return self._choose()
        return super()._next_batch()

    def _choose(self) -> Batch:
        arms = self.sampling.choose(self)
        if isinstance(arms, (int, np.integer)):
            return Batch.single(int(arms))
        arms = np.asarray(arms, dtype=np.int64)
        if self.horizon is not None and self.t + arms.size > self.horizon:
            # the budget's last pulls: the first arms alone, as simulate cuts a batch at its
            # horizon (and LUCB's class does)
            arms = arms[:self.horizon - self.t]
        return Batch(arms, np.ones(arms.size, dtype=np.int64))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        self.rounds += 1
        if self.stopping_rule.stops(self):
            self._stopped = True

    @property
    def recommendation(self) -> int | None:
        if self.t == 0:
            return None
        if self.recommendation_rule == "most-played":
            return int(np.argmax(self.pulls))
        return int(np.argmax(self.means()))

    @property
    def info(self) -> dict:
        return {**super().info, **self.sampling.info, **self.stopping_rule.info}


class BestChallenger(ComposedIdentifier):
    """GK16 Table 1's "T-a-S (BC)" (Garivier & Kaufmann 2016, Section 5): best-challenger
    sampling (:class:`~.rules.BestChallengerSampling`) with the Chernoff stop, the empirical best
    recommended. The paper's combination of parts, under its own registry name."""

    def __init__(self, n_arms: int, delta: float = 0.05, *, threshold: str = "theory",
                 model: str = "bernoulli", sigma: float = 1.0,
                 horizon: int | None = None) -> None:
        super().__init__(n_arms, delta, sampling=BestChallengerSampling(), threshold=threshold,
                         model=model, sigma=sigma, horizon=horizon)
