"""P1-RAGE and P1-Peace: fixed-budget identification robust to non-stationarity (Xiong et al.,
"A/B Testing and Best-arm Identification for Linear Bandits with Robustness to
Non-stationarity", Section 5, Algorithms 2–3, and Appendix A.1, Algorithms 4–5).

Both sample every pull from ``λ_t = ½ λ̄_t + ½ λ*``: half the G-optimal design λ* (Eq. (3)),
which keeps the IPS estimate's variance under control whatever the schedule θ_t, and half
the average ``λ̄_t`` of the XY designs of a *virtual* elimination run on the current estimate
θ̂_t — what RAGE (Algorithm 3) or Peace (Algorithm 5) would sample over a whole run if θ̂_t
were the truth. The estimate is the IPS estimate ``θ̂_t = (1/t) Σ_s A(λ_s)⁻¹ x_s r_s``,
unbiased for ``θ̄_t`` (:mod:`banditkit.estimation.ips`); the answer ``argmax_z zᵀθ̂_T``.

λ is refreshed at the times of Algorithm 4 (line 8: after pull t whenever ``t − 1`` is a
multiple of ``R = ⌊T / log₂ inf_λ ρ(Z, λ)⌋``, line 2), for P1-RAGE too, as the paper's
experiments do (Appendix D). Between refreshes λ is fixed, so an epoch is one batch of pulls
drawn i.i.d. from λ with ξ (:func:`~.fixed_budget.iid_arms`: the numbers of ``ξ.choice``), and the
estimate needs only the epoch's per-arm reward sums.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import NamedTuple

import numpy as np

from ..estimation.ips import IPSEstimate, ips_information
from ..protocol import Batch
from ..rng import SeedLike
from ..validation import check_positive, check_positive_int
from .fixed_budget import FixedBudgetIdentifier, ranked_by
from .item_designs import g_design, halving_prefix, item_design

__all__ = [
    "P1RAGE",
    "P1Peace",
    "VirtualElimination",
    "epoch_length",
    "peace_elimination",
    "rage_elimination",
]

UPDATES = ("periodic", "epochs", "every")
EPOCH_RULES = ("paper", "code")
PHASE_RULES = ("paper", "code")


class VirtualElimination(NamedTuple):
    """The outcome of a virtual elimination (Algorithm 3 or 5) on an estimate.

    Attributes
    ----------
    weights : array, shape (K,), or None
        ``λ̄ = (1/i) Σ_{i'<i} λ^(i')``, the average of the phases' designs; ``None`` when no
        phase ran (a single item).
    sets : list of int arrays
        The item sets ``X^(0) ⊇ X^(1) ⊇ ...`` whose designs were averaged (indices into Z).
    """

    weights: np.ndarray | None
    sets: list[np.ndarray]


def rage_elimination(X: np.ndarray, Z: np.ndarray, theta_hat: np.ndarray, m: int, *,
                     phases: str = "paper", tol: float = 0.01) -> VirtualElimination:
    """RAGE-Elimination (Xiong et al., Algorithm 3) on the estimate ``theta_hat``.

    With ``x̂* = argmax_z zᵀθ̂`` (lowest index on ties) and estimated gaps
    ``Δ̂(z) = θ̂ᵀ(x̂* − z)``: ``X^(0) = Z``; while ``|X^(i)| > 1`` and ``i ≤ m`` (the text's
    loop, hence at most ``m + 1`` designs), ``λ^(i)`` is the XY design of ``X^(i)`` (line 5)
    and ``X^(i+1) = {z ∈ X^(i) : Δ̂(z) ≤ 2^{-i}}`` (line 6).

    ``phases="code"`` runs the authors' code instead (``algorithms/p1_linear.py``,
    ``rage_elimination``): at most ``m`` designs and threshold ``2^{-(i+1)}`` after design
    ``i`` (the first elimination keeps gaps ≤ 1/2, not ≤ 1).

    The sets are nested and always hold x̂*; consecutive equal sets (no gap between two
    thresholds) share one design solve, which :func:`~.item_designs.item_design` memoises
    across calls anyway.
    """
    values = Z @ theta_hat
    gaps = values[int(np.argmax(values))] - values
    if phases == "paper":
        most, shift = m + 1, 0
    elif phases == "code":
        most, shift = m, 1
    else:
        raise ValueError(f"phases must be one of {PHASE_RULES}, got {phases!r}")
    sets: list[np.ndarray] = []
    active = np.arange(Z.shape[0])
    while active.size > 1 and len(sets) < most:
        sets.append(active)
        active = active[gaps[active] <= 2.0 ** -(len(sets) - 1 + shift)]
    if not sets:
        return VirtualElimination(None, sets)
    total = np.zeros(X.shape[0])
    weights = None
    for i, items in enumerate(sets):
        if i == 0 or items.size != sets[i - 1].size:  # nested: equal size means equal set
            weights = item_design(X, Z, items, tol)[0].weights
        total += weights
    return VirtualElimination(total / len(sets), sets)


def peace_elimination(X: np.ndarray, Z: np.ndarray, theta_hat: np.ndarray, *,
                      tol: float = 0.01, xi: np.random.Generator | None = None
                      ) -> VirtualElimination:
    """Peace-Elimination (Xiong et al., Algorithm 5) on the estimate ``theta_hat``.

    Items are ranked by ``zᵀθ̂``, best first (line 2); tied items in a random order drawn with
    ``xi`` (:func:`~.fixed_budget.ranked_by`; in index order when ``xi`` is None). Ties are
    the rule after the first pull — the estimate ``A(λ*)⁻¹ x r`` is zero on every item that
    ``x`` does not measure — and the first epoch's design depends on their order; ``X^(0) = Z``;
    while ``|X^(i)| > 1``: ``λ^(i)`` is the XY design of ``X^(i)`` with value
    ``ρ_i = inf_λ ρ(X^(i), λ)`` (line 5), and ``X^(i+1)`` the largest ranked prefix whose
    value is at most ``ρ_i / 2`` (lines 6–7, :func:`~.item_designs.halving_prefix`). Every
    phase removes at least one item (a set's own value exceeds half of it), except when its
    items coincide (``ρ_i = 0``), where the loop stops.
    """
    ranked = ranked_by(Z @ theta_hat, xi)
    sets: list[np.ndarray] = []
    total = np.zeros(X.shape[0])
    size = ranked.size
    while size > 1:
        items = ranked[:size]
        design, rho = item_design(X, Z, items, tol)
        sets.append(items)
        total += design.weights
        k = halving_prefix(X, Z, items, rho, tol)
        if k >= size:  # ρ_i = 0: nothing left to tell apart
            break
        size = k
    if not sets:
        return VirtualElimination(None, sets)
    return VirtualElimination(total / len(sets), sets)


def epoch_length(budget: int, rho: float, *, update: str = "periodic",
                 epoch_rule: str = "paper") -> int:
    """R, the pulls between two refreshes of λ (Xiong et al., Algorithm 4 line 2).

    ``epoch_rule="paper"``: ``R = ⌊T / log₂ ρ⌋`` with ``ρ = inf_λ ρ(Z, λ)``;
    ``"code"``: ``R = ⌊T / ⌈log₂ ρ⌉⌋`` (the authors' code). ``update="every"``: ``R = 1``.
    Degenerate cases: when ``log₂ ρ`` (or its ceiling) is ≤ 0 or ``ρ ≤ 0`` (one item, or
    items a design separates at once) there is nothing to halve: one refresh, ``R = T``;
    otherwise R is clipped to ``[1, T]``.
    """
    if update == "every":
        return 1
    if not rho > 0:
        return budget
    halvings = math.log2(rho)
    if epoch_rule == "code":
        halvings = math.ceil(halvings)
    if halvings <= 0:
        return budget
    return min(budget, max(1, math.floor(budget / halvings)))


class _P1(FixedBudgetIdentifier):
    """The epoch loop shared by P1-RAGE and P1-Peace (Algorithm 4, lines 3–12)."""

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *, update: str,
                 epoch_rule: str, design_tol: float, rng: SeedLike) -> None:
        if update not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
        if epoch_rule not in EPOCH_RULES:
            raise ValueError(f"epoch_rule must be one of {EPOCH_RULES}, got {epoch_rule!r}")
        design_tol = check_positive(design_tol, "design_tol")
        super().__init__(X, Z, budget, rng)
        self.update, self.epoch_rule, self.design_tol = update, epoch_rule, design_tol
        self._g_weights, self._g_information = g_design(self.X, design_tol)
        self._weights, self._information = self._g_weights, self._g_information  # λ_1 = λ*
        rho = item_design(self.X, self.Z, np.arange(self.Z.shape[0]), design_tol)[1]
        self.epoch_length = epoch_length(budget, rho, update=update, epoch_rule=epoch_rule)
        self._ips = IPSEstimate(self.X)
        self._phases: list[int] = []

    @property
    def sampling_weights(self) -> np.ndarray:
        """λ_t, the distribution of the current epoch's pulls."""
        return self._weights

    def _refresh_after(self, t: int) -> bool:
        """Whether λ is recomputed after pull number ``t`` (1-based)."""
        if t >= self.budget:
            return False  # λ_{T+1} would never be used
        R = self.epoch_length
        if self.update == "epochs":
            return t % R == 0
        return (t - 1) % R == 0  # "periodic" (Algorithm 4 line 8); R = 1 for "every"

    def _epoch_end(self) -> int:
        """The pull after which the current epoch ends: the next refresh, or T."""
        t, R = self.t, self.epoch_length
        if self.update == "epochs":
            stop = R * (t // R + 1)
        else:
            stop = 1 + R * -(-t // R)  # smallest 1 + cR > t
        return min(stop, self.budget)

    def _next_batch(self) -> Batch | None:
        if self.remaining == 0:
            return None
        n = self._epoch_end() - self.t
        return self._sample(self._weights, n)

    observes_arm_sums = True  # the IPS estimate reads per-arm sums only (Algorithm 2 line 5)

    def _observe_arm_sums(self, batch: Batch, sums: np.ndarray) -> None:
        self._ips.add(self._weights, sums, batch.n_pulls, information=self._information)
        self.theta_hat = self._ips.theta
        if self._refresh_after(self.t):
            self._refresh()

    def _refresh(self) -> None:
        """λ_{t+1} = ½ λ̄_t + ½ λ* from a virtual elimination on θ̂_t (λ* alone if none ran)."""
        virtual = self._virtual(self.theta_hat)
        self._phases.append(len(virtual.sets))
        if virtual.weights is None:
            self._weights, self._information = self._g_weights, self._g_information
            return
        weights = 0.5 * virtual.weights + 0.5 * self._g_weights
        weights /= weights.sum()
        self._weights = weights
        self._information = ips_information(self.X, weights)

    @abstractmethod
    def _virtual(self, theta_hat: np.ndarray) -> VirtualElimination:
        """The virtual elimination on θ̂_t: RAGE's (Algorithm 3) or Peace's (Algorithm 5)."""

    @property
    def info(self) -> dict:
        """``epoch_length`` (R) and ``phases``: the virtual phases of each refresh."""
        return {"epoch_length": self.epoch_length, "phases": list(self._phases)}


class P1RAGE(_P1):
    """P1-RAGE (Xiong et al., Section 5, Algorithm 2 with RAGE-Elimination, Algorithm 3).

    Pull ``t`` is drawn from ``λ_t``; the IPS estimate θ̂_t is updated (Algorithm 2 line 5);
    at each refresh ``λ_{t+1} = ½ λ̄_t + ½ λ*`` with ``λ̄_t`` the average XY design of the
    virtual RAGE phases on θ̂_t (:func:`rage_elimination`); after T pulls the answer is
    ``argmax_{z∈Z} zᵀθ̂_T``.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items (``None``: ``Z = X``, the paper's setting). The virtual sets are sets of items,
        designed over the arms (the transductive reading of Algorithm 3).
    budget : int
        T (≥ K); the algorithm stops by itself after exactly T pulls.
    m : int
        Maximum number of virtual phases (≥ 1). The paper's experiments use 15 (Appendix D);
        Theorem 2 needs ``m ≥ ⌈log₂(1/Δ_(1))⌉ + 1``.
    phases : {"paper", "code"}
        ``"paper"``: Algorithm 3 as printed — the loop runs while ``i ≤ m``, so up to
        ``m + 1`` designs, and ``X^(i+1)`` keeps ``Δ̂ ≤ 2^{-i}``. ``"code"``: the authors'
        ``rage_elimination`` — up to ``m`` designs, ``X^(i+1)`` keeps ``Δ̂ ≤ 2^{-(i+1)}``.
    update : {"periodic", "epochs", "every"}
        When λ is refreshed. ``"periodic"`` (default): after pull t whenever ``t − 1`` is a
        multiple of R (Algorithm 4 line 8, used for P1-RAGE in the paper's experiments,
        Appendix D; the authors' code does the same: ``t % R == 0`` for 0-based t), so the
        first refresh comes after the very first pull and the epochs have 1, R, R, ...
        pulls. ``"epochs"``: after pulls R, 2R, ... (equal epochs, the first all λ*).
        ``"every"``: after every pull, Algorithm 2 line 6 as printed — one design run per
        pull, about a thousand times the work.
    epoch_rule : {"paper", "code"}
        R = ⌊T / log₂ ρ⌋ (Algorithm 4 line 2, ``"paper"``) or ⌊T / ⌈log₂ ρ⌉⌋ (the authors'
        code), with ``ρ = inf_λ ρ(Z, λ)`` (Eq. (5)); see :func:`epoch_length`.
    design_tol : float
        Certified relative gap of every design solve (λ*, the virtual phases' XY designs).
    rng : Generator or seed, optional
        The internal randomness ξ (the draws of the arms).

    Notes
    -----
    * No refresh happens after the last pull (λ_{T+1} is never used).
    * The virtual designs are :func:`~.item_designs.item_design`'s: solved to a certified gap
      (the paper ran 1000 Frank–Wolfe steps with step size 1/(2(i+2))), memoised per item set
      across refreshes and trials; with few items left they have full rank by construction.
    * :attr:`info` records R and the number of virtual phases of each refresh.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *, m: int = 15,
                 phases: str = "paper", update: str = "periodic", epoch_rule: str = "paper",
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        m = check_positive_int(m, "m")
        if phases not in PHASE_RULES:
            raise ValueError(f"phases must be one of {PHASE_RULES}, got {phases!r}")
        self.m, self.phases = m, phases
        super().__init__(X, Z, budget, update=update, epoch_rule=epoch_rule,
                         design_tol=design_tol, rng=rng)

    def _virtual(self, theta_hat: np.ndarray) -> VirtualElimination:
        return rage_elimination(self.X, self.Z, theta_hat, self.m, phases=self.phases,
                                tol=self.design_tol)


class P1Peace(_P1):
    """P1-Peace (Xiong et al., Appendix A.1, Algorithm 4 with Peace-Elimination, Algorithm 5).

    As :class:`P1RAGE`, with the virtual phases of Peace: each keeps the largest prefix of
    the items ranked by θ̂_t whose XY value is at most half the current set's
    (:func:`peace_elimination`), until one item is left.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items (``None``: ``Z = X``).
    budget : int
        T (≥ K); the algorithm stops by itself after exactly T pulls.
    update : {"periodic", "epochs", "every"}
        When λ is refreshed; ``"periodic"`` is Algorithm 4 lines 2 and 8 (see
        :class:`P1RAGE`).
    epoch_rule : {"paper", "code"}
        R = ⌊T / log₂ ρ⌋ (Algorithm 4 line 2) or ⌊T / ⌈log₂ ρ⌉⌋ (the authors' code).
    design_tol : float
        Certified relative gap of every design solve.
    rng : Generator or seed, optional
        The internal randomness ξ.

    Notes
    -----
    The halving search bisects over prefix lengths, as the authors' code does (the value of a
    prefix only grows with its length); a virtual phase's design and its candidates' are
    memoised per item set (:func:`~.item_designs.item_design`). Items tied in θ̂ are ranked
    in a random order drawn with ξ: right after the first pull 8–10 of the Soare items tie
    at 0, and an index order (ours was ascending, the authors' reversed argsort descending)
    made the first epoch, and the error rate, depend on how the arms are listed
    (docs/p1-rage.md). The recommendation's ties are broken with ξ too.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *,
                 update: str = "periodic", epoch_rule: str = "paper",
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        super().__init__(X, Z, budget, update=update, epoch_rule=epoch_rule,
                         design_tol=design_tol, rng=rng)

    def _virtual(self, theta_hat: np.ndarray) -> VirtualElimination:
        return peace_elimination(self.X, self.Z, theta_hat, tol=self.design_tol, xi=self.xi)
