"""A K-armed fixed-confidence identifier assembled from interchangeable parts (issue 36 §2): a
**sampling rule** (:mod:`.rules`), a **stopping rule** and a **recommendation rule**, so that a
question such as "top-two Thompson sampling's sampling with Track-and-Stop's stopping" needs no
new code.

* Sampling: :class:`~.rules.Tracking` (D/C, every round or lazy), :class:`~.rules.TopTwo`
  (EB/TS leader, TC/TCI/TS challenger, β by tracking or coin), :class:`~.rules.Uniform`.
* Stopping: the Chernoff GLR of :mod:`.base` (the Bernoulli kl or the Gaussian divergence of
  the model) above β(t, δ) = log(2t(K − 1)/δ) (``threshold="theory"``, GK16 Theorem 10: δ-correct
  for Bernoulli arms whatever the sampling rule) or log((log t + 1)/δ) (``"heuristic"``, their
  Section 6; not proved).
* Recommendation: ``"empirical-best"`` (argmax μ̂, ties to the lowest index; every paper's) or
  ``"most-played"`` (argmax N, ties to the lowest index).

The registered identifiers are combinations of these parts, and the combination gives the same
decisions from the same seeds, bit for bit (``tests/test_composed_identifier.py``):

======================  =====================================================================
registered              composed
======================  =====================================================================
KArmedTrackAndStop      ``Tracking("D" or "C")``
EBTC                    ``TopTwo("EB", "TC", epsilon0=ε₀, beta=β)``, ``model="gaussian"``
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
    threshold : {"theory", "heuristic"}
        β(t, δ) of the Chernoff stopping rule.
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
                 threshold: str = "theory", recommendation: str = "empirical-best",
                 model: str = "bernoulli", sigma: float = 1.0,
                 rng: np.random.Generator | None = None, horizon: int | None = None,
                 each_arm_first: bool = True) -> None:
        super().__init__(n_arms, delta=delta, model=model, sigma=sigma,
                         threshold=check_threshold(threshold), horizon=horizon)
        if not isinstance(sampling, SamplingRule):
            raise ValueError(f"sampling must be a SamplingRule (Tracking, TopTwo, Uniform), got "
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
        self.each_arm_first = bool(each_arm_first)
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
        return Batch.single(self.sampling.choose(self))

    @property
    def recommendation(self) -> int | None:
        if self.t == 0:
            return None
        if self.recommendation_rule == "most-played":
            return int(np.argmax(self.pulls))
        return int(np.argmax(self.means()))

    @property
    def info(self) -> dict:
        return {**super().info, **self.sampling.info}


class BestChallenger(ComposedIdentifier):
    """GK16 Table 1's "T-a-S (BC)" (Garivier & Kaufmann 2016, Section 5): best-challenger
    sampling (:class:`~.rules.BestChallengerSampling`) with the Chernoff stop, the empirical best
    recommended. The paper's combination of parts, under its own registry name."""

    def __init__(self, n_arms: int, delta: float = 0.05, *, threshold: str = "theory",
                 model: str = "bernoulli", sigma: float = 1.0,
                 horizon: int | None = None) -> None:
        super().__init__(n_arms, delta, sampling=BestChallengerSampling(), threshold=threshold,
                         model=model, sigma=sigma, horizon=horizon)
