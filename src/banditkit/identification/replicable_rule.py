"""The replicable elimination rule shared by the replicable best-arm identifiers
(:class:`~banditkit.identification.replicable_se.ReplicableSuccessiveElimination`,
:class:`~banditkit.identification.replicable_rage.ReplicableRAGE`; docs/replicable-bai.md).

A phased eliminator (successive elimination, RAGE) takes one data-dependent decision per phase
and active item: keep it or drop it. Everything else — the next phase's design and sample size,
when to stop (one item left), what to recommend (that item) — is a function of the active set.
So the identifier is ρ-replicable (Esfandiari et al., ICLR 2023, Definition 1) as soon as the
keep/drop decisions agree between two executions that share the internal randomness ξ.

The decision of phase t on item z is a *replicable query* on its empirical gap
``ĝ_z = max_{z' active} z'ᵀθ̂ − zᵀθ̂`` (Impagliazzo, Lei, Pitassi & Sorrell 2022, rSTAT;
Esfandiari et al., Section 2 and Proposition 2): ĝ_z is rounded on a grid of width w_t = ε_t
(ε_t = 2^{-t}, RAGE's accuracy of phase t) whose offset u_{t,z}·w_t is drawn from ξ, and z is
dropped when the rounded value exceeds 1.5 ε_t. Thresholding a rounded value at a fixed level
is the same as comparing the raw value with one grid boundary: z is dropped iff ĝ_z ≥ b_{t,z},
with b_{t,z} = ε_t (1 + u_{t,z}) uniform on (ε_t, 2ε_t] — Algorithm 2's random threshold
Ū ~ Uni[U/2, U] (Esfandiari et al., Theorem 4), on the gap scale.

If the samples of phase t estimate every difference of active items within ε̃_t (probability
≥ 1 − δ_t, the sample sizes below), then

* correctness: the best item has ĝ ≤ ε̃_t < ε_t < b, so it is never dropped; an item survives
  only if Δ_z ≤ 2ε_t + ε̃_t, RAGE's S_{t+1} up to ε̃_t;
* replicability: two executions with the same active set have |ĝ_z − ĝ'_z| ≤ 2ε̃_t, so they
  decide differently on z only if b_{t,z} falls between them: probability ≤ 2ε̃_t / ε_t, and
  zero unless Δ_z ∈ [ε_t − ε̃_t, 2ε_t + ε̃_t] (the window of phase t).

How ρ is split (``split``):

* ``"window"`` (default): with ε̃_t = r ε_t (r the same in every phase), the chance that the
  offsets separate the decisions on z in phase t is at most |I_t ∩ W_t|/ε_t, with
  I_t = [Δ_z − rε_t, Δ_z + rε_t] and W_t = (ε_t, 2ε_t]. Summed over t this is
  F(Δ_z) ≤ 2.5 r (:data:`WINDOW_FLIPS`): an item meets at most two windows, fully one (2r)
  or partly two (at most 2r + r/2, at Δ = 2ε_s − ε̃_s; docs/replicable-bai.md); z* none. A union
  bound over the |Z| − 1 other items gives non-replication ≤ 2δ_s + 2.5 r (|Z| − 1), so
  ε̃_t = ρ_q ε_t / (2.5(|Z| − 1)) with ρ_q = ρ − 2δ_s. No factor for the (unknown) number of
  phases: the argument of Esfandiari et al.'s Theorem 4 (an arm is in the bad event in O(1)
  batches), which removes Algorithm 1's log² T.
* ``"phases"``: phase t gets ρ_t = 6ρ_q/(π² t²) (Σ_t ρ_t = ρ_q, the number of phases being
  unknown) and a union bound over its m_t − 1 droppable active items:
  ε̃_t = ρ_t ε_t / (2(m_t − 1)). The straightforward per-phase split (every decision of every
  phase through a ρ_t-replicable query); costs a factor ~t⁴ more samples in late phases.

Confidence: the samples are sized for δ_s = min(δ, ρ/4) (``sample_delta``) in all, δ_t =
6δ_s/(π² t²) in phase t (Σ_t δ_t = δ_s ≤ δ): the same event gives δ-correctness and, in both
executions, costs 2δ_s of the replicability budget, so ρ_q = ρ − 2δ_s ≥ ρ/2 is left for the
rounding. (RAGE's own δ_t = δ/t² sums to π²δ/6; we keep the sum at δ_s.)

The sample size of phase t is the non-replicable one with the accuracy ε_t replaced by ε̃_t:
a factor (ε_t/ε̃_t)² = (2.5(|Z| − 1)/ρ_q)² (``"window"``) — the price of replicability, K²/ρ²
as in Esfandiari et al.'s Theorems 3, 4 and 6.

ξ is read in a data-independent way: |Z| uniforms per phase (one per item, indexed by item
number, used or not), so two executions read the same offsets as long as their decisions agree.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass

import numpy as np

from ..estimation.replicable_mean import grid_round
from ..protocol import Algorithm, Batch
from ..rng import SeedLike, as_generator
from ..validation import check_probability

__all__ = ["SPLITS", "WINDOW_FLIPS", "ReplicableGapRule", "ReplicablePhasedIdentifier",
           "empirical_gaps"]

#: How the replicability budget is spread over the decisions (see the module docstring).
SPLITS = ("window", "phases")
#: Σ_t |I_t ∩ W_t| / ε_t ≤ WINDOW_FLIPS · r for every gap Δ (r = ε̃_t/ε_t ≤ 0.4): the most an
#: item's decisions, over all phases, can hang on the offsets ("window" split).
WINDOW_FLIPS = 2.5


@dataclass(frozen=True)
class ReplicableGapRule:
    """ρ-replicable, δ-correct keep/drop decisions of a phased eliminator on |Z| items.

    Parameters
    ----------
    rho : float in (0, 1]
        Target replicability ρ: two executions sharing ξ take different decisions with
        probability ≤ ρ.
    delta : float in (0, 1)
        Target confidence: the best item is dropped with probability ≤ δ.
    n_items : int
        |Z| (≥ 1), the number of items the identifier starts with.
    split : {"window", "phases"}
        How ρ is spread over the decisions (module docstring).
    sample_delta : float, optional
        δ_s, the confidence the samples are sized for; default min(δ, ρ/4). Must be ≤ δ and
        < ρ/2 (the rounding needs ρ_q = ρ − 2δ_s > 0).
    """

    rho: float
    delta: float
    n_items: int
    split: str = "window"
    sample_delta: float | None = None

    def __post_init__(self) -> None:
        rho = check_probability(self.rho, "rho", open_high=False)
        delta = check_probability(self.delta, "delta")
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {self.split!r}")
        if isinstance(self.n_items, bool) or int(self.n_items) < 1:
            raise ValueError(f"n_items must be >= 1, got {self.n_items!r}")
        if self.sample_delta is None:
            ds = min(delta, rho / 4.0)
        else:
            ds = check_probability(self.sample_delta, "sample_delta")
            if ds > delta:
                raise ValueError(f"sample_delta must be <= delta = {delta:g} (the samples must "
                                 f"be sized for at least the target confidence), got {ds:g}")
            if not 2.0 * ds < rho:
                raise ValueError(f"sample_delta must be < rho/2 = {rho / 2:g}: the rounding "
                                 f"gets rho - 2*sample_delta of the replicability budget, got "
                                 f"sample_delta={ds:g}")
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "n_items", int(self.n_items))
        object.__setattr__(self, "sample_delta", float(ds))

    @property
    def rho_rounding(self) -> float:
        """ρ_q = ρ − 2δ_s: what is left for the rounding once both executions' good events
        are paid for."""
        return self.rho - 2.0 * self.sample_delta

    def delta_t(self, t: int) -> float:
        """δ_t = 6δ_s/(π² t²), the confidence of phase t (Σ_t δ_t = δ_s)."""
        return 6.0 * self.sample_delta / (math.pi**2 * t * t)

    def rho_t(self, t: int, n_active: int) -> float:
        """The replicability spent on phase t's decisions (an upper bound on the probability
        that its rounding separates two executions with the same active set and good event).

        ``"window"``: (m_t − 1)·2ε̃_t/ε_t, the union over the droppable items (over all
        phases an item's share adds to ≤ 2.5 ε̃_t/ε_t). ``"phases"``: 6ρ_q/(π² t²)."""
        if self.split == "phases":
            return 6.0 * self.rho_rounding / (math.pi**2 * t * t)
        return max(n_active - 1, 0) * 2.0 * self.accuracy_ratio(t, n_active)

    def accuracy_ratio(self, t: int, n_active: int) -> float:
        """ε̃_t/ε_t: how much finer than RAGE's the estimates of phase t must be."""
        if self.split == "phases":
            return self.rho_t(t, n_active) / (2.0 * max(n_active - 1, 1))
        return self.rho_rounding / (WINDOW_FLIPS * max(self.n_items - 1, 1))

    @staticmethod
    def epsilon_t(t: int) -> float:
        """ε_t = 2^{-t}: RAGE's accuracy of phase t, the grid width w_t of its rounding."""
        return 2.0 ** (-t)

    def accuracy(self, t: int, n_active: int) -> float:
        """ε̃_t: every difference of active items must be estimated within it (w.p. ≥ 1 − δ_t)."""
        return self.epsilon_t(t) * self.accuracy_ratio(t, n_active)

    def blowup(self, t: int, n_active: int) -> float:
        """(ε_t/ε̃_t)²: the factor on the samples of phase t paid for replicability."""
        return self.accuracy_ratio(t, n_active) ** -2

    def offsets(self, xi: np.random.Generator) -> np.ndarray:
        """The unit offsets u_{t,z} ∈ [0, 1) of one phase, one per item (|Z| uniforms from ξ,
        whatever the active set: ξ is read the same way by every execution)."""
        return xi.random(self.n_items)

    def rounded_gaps(self, gaps: np.ndarray, t: int, offsets: np.ndarray) -> np.ndarray:
        """ĝ rounded to the centre of its cell on the grid of width ε_t, shifted by u·ε_t."""
        return grid_round(np.asarray(gaps, dtype=float), self.epsilon_t(t),
                          np.asarray(offsets, dtype=float))

    def drop(self, gaps: np.ndarray, t: int, offsets: np.ndarray) -> np.ndarray:
        """Which items to drop: rounded ĝ > 1.5 ε_t (⟺ ĝ ≥ ε_t(1 + u))."""
        return self.rounded_gaps(gaps, t, offsets) > 1.5 * self.epsilon_t(t)


def empirical_gaps(values: np.ndarray) -> np.ndarray:
    """ĝ_z = max_z' v_z' − v_z over the active items' estimated values (≥ 0; the leader's is 0).

    Only differences of values enter, so the part of θ̂ no design controls cancels."""
    v = np.asarray(values, dtype=float)
    return v.max() - v


class ReplicablePhasedIdentifier(Algorithm):
    """A phased eliminator whose every data-dependent decision goes through
    :class:`ReplicableGapRule`: subclasses give phase t's batch (a function of the active
    set only) and the estimated values of the active items after it.

    The batch is one phase; after it, the active items' empirical gaps are rounded with the
    phase's offsets from ξ and the rule drops some; the identifier stops when one item is left
    and recommends it. Stopping and the recommendation are functions of the active set, so
    they replicate whenever the drops do.
    """

    kind = "identification"

    def __init__(self, n_arms: int, n_items: int, rho: float, delta: float,
                 rng: SeedLike, *, split: str, sample_delta: float | None) -> None:
        super().__init__(n_arms)
        self.rule = ReplicableGapRule(rho, delta, n_items, split, sample_delta)
        self.rho, self.delta = self.rule.rho, self.rule.delta
        self.xi = as_generator(rng)
        self.active = np.arange(n_items)
        self.phase = 0  # phases completed
        self._active_sizes: list[int] = []
        self._phase_pulls: list[int] = []
        self._accuracies: list[float] = []
        self._blowups: list[float] = []
        self._rho_spent: list[float] = []
        self.offsets: list[np.ndarray] = []  # u_{t,z} of each completed phase (all items)

    @abstractmethod
    def _phase_batch(self, t: int, accuracy: float, delta_t: float) -> Batch:
        """Phase t's pulls: every difference of active items estimated within ``accuracy``
        with probability ≥ 1 − ``delta_t``."""

    @abstractmethod
    def _values(self, batch: Batch, rewards: np.ndarray) -> np.ndarray | None:
        """The active items' estimated values from phase t's pulls (None: not estimable, e.g.
        a truncated batch that does not span R^d; nothing is dropped then)."""

    def _next_batch(self) -> Batch | None:
        if self.active.size <= 1:
            return None
        t, m = self.phase + 1, int(self.active.size)
        accuracy = self.rule.accuracy(t, m)
        batch = self._phase_batch(t, accuracy, self.rule.delta_t(t))
        self._active_sizes.append(m)
        self._accuracies.append(accuracy)
        self._blowups.append(self.rule.blowup(t, m))
        self._rho_spent.append(self.rule.rho_t(t, m))
        return batch

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        t = self.phase + 1
        # read ξ before looking at the data, the same |Z| uniforms every phase
        u = self.rule.offsets(self.xi)
        self.offsets.append(u)
        values = self._values(batch, rewards)
        if values is not None:
            drop = self.rule.drop(empirical_gaps(values), t, u[self.active])
            self.active = self.active[~drop]
        self.phase = t
        self._phase_pulls.append(batch.n_pulls)

    @property
    def recommendation(self) -> int | None:
        """The last active item once the identifier has stopped; before that, None."""
        return int(self.active[0]) if self.active.size == 1 else None

    @property
    def info(self) -> dict:
        """``phases``, per phase the active-set sizes, pulls, accuracy ε̃_t, sample blow-up
        (ε_t/ε̃_t)² and replicability spent; the rule's ρ, δ, δ_s and split."""
        return {"phases": self.phase, "active_sizes": list(self._active_sizes),
                "phase_pulls": list(self._phase_pulls), "accuracies": list(self._accuracies),
                "blowups": list(self._blowups), "rho_spent": list(self._rho_spent),
                "rho": self.rho, "delta": self.delta,
                "sample_delta": self.rule.sample_delta, "split": self.rule.split}
