"""Peace (Katz-Samuels et al. 2020, fixed budget) and Mixed-Peace (Xiong et al., "P1-RAGE",
Algorithm 6): the elimination baselines of Xiong et al., Section 6 and Appendix D.

Both split the budget into epochs and, after each, keep the largest prefix of the surviving
items (ranked by the current estimate) whose design value ``inf_λ ρ(W, λ)`` (Xiong et al.,
Eq. (5)) is at most half the current one (:func:`.item_designs.halving_prefix`). Peace pulls a
rounded XY design of the survivors and estimates by least squares on the epoch; Mixed-Peace
pulls i.i.d. from the design mixed half-and-half with the G-optimal design and keeps one IPS
estimate over all its pulls, which makes its *final* estimate unbiased for θ̄_T under any
schedule θ_t (its eliminations still use the running estimate).
"""

from __future__ import annotations

import math

import numpy as np

from ..design import round_allocation
from ..estimation.ips import IPSEstimate
from ..estimation.least_squares import LeastSquares
from ..protocol import Batch
from ..rng import SeedLike
from ..validation import check_positive
from .fixed_budget import FixedBudgetIdentifier, best_index, ranked_by
from .item_designs import g_design, halving_prefix, item_design

__all__ = ["MixedPeace", "Peace", "peace_epochs"]


def peace_epochs(rho: float, budget: int) -> int:
    """``R = ⌈log2 inf_λ ρ(Z, λ)⌉`` epochs, kept in ``[1, budget]``.

    ``ρ ≤ 2`` (including one item, ``ρ = 0``, or ``ρ < 1`` where the logarithm is negative)
    gives one epoch: the paper's ``N = ⌊T/R⌋`` needs ``R ≥ 1``. ``R ≤ T`` keeps every epoch
    non-empty (only matters for tiny budgets).
    """
    if rho <= 2.0:
        return 1
    return max(1, min(math.ceil(math.log2(rho)), budget))


def _ranked(Z: np.ndarray, items: np.ndarray, theta: np.ndarray,
            xi: np.random.Generator) -> np.ndarray:
    """``items`` sorted by ``zᵀθ`` descending; ties in a random order drawn with ``xi``
    (:func:`.fixed_budget.ranked_by`), so the survivors do not depend on the labels."""
    return items[ranked_by(Z[items] @ theta, xi)]


class Peace(FixedBudgetIdentifier):
    """Peace, fixed budget (Katz-Samuels et al. 2020), as Xiong et al. implement it (Appendix D).

    With ``R = ⌈log2 inf_λ ρ(Z, λ)⌉`` (:func:`peace_epochs`) and ``N = ⌊T/R⌋``, epoch
    ``r = 1..R`` (the survivors ``Z_1 = Z``):

    * ``λ_r = arginf_λ ρ(Z_r, λ)`` and ``ρ_r`` its value — the XY design of the survivors'
      pairwise differences (Xiong et al., Eq. (5); ρ replaces Peace's Gaussian width γ, as in
      Appendix D);
    * ``N`` pulls (the last epoch: all that are left, ``T − (R−1)N``) by Pukelsheim's rounding
      of λ_r (:func:`banditkit.design.round_allocation`), pulled in a random order drawn from
      ξ (Appendix D: "a random permutation to determine the order of pulling for each batch",
      so a non-stationary world reaches the algorithm as in a real test);
    * least squares ``θ̂_r`` on *this epoch's pulls only*;
    * unless it is the last epoch: rank the survivors by ``zᵀθ̂_r`` and keep the largest prefix
      with ``inf_λ ρ(prefix, λ) ≤ ρ_r / 2`` (:func:`.item_designs.halving_prefix`).

    After the last epoch it recommends ``argmax_{z ∈ Z_R} zᵀθ̂_R`` (ties broken with ξ).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items (``None``: ``Z = X``, as in Xiong et al.).
    budget : int
        T ≥ K pulls; exactly T are made.
    design_tol : float
        Certified relative gap of each design solve. ρ values are those achieved by the
        returned designs (upper bounds on the optimum), as with the authors' Frank–Wolfe.
    rng : Generator or seed, optional
        ξ: the order of the pulls within each epoch.

    Attributes
    ----------
    active : ndarray of int
        Surviving items (indices into Z), best first by the last estimate.
    n_epochs : int
        R.

    Notes
    -----
    Settled from the authors' code (``algorithms/peace.py``, repository FFTypeZero/bobw_linear),
    since Xiong et al. give no pseudocode for Peace:

    * Rounding, not sampling: each epoch's pulls are the Pukelsheim rounding of λ_r
      (Appendix D: the rounding code of Katz-Samuels et al.), so the counts are deterministic
      up to the rounding's ties (which of equally weighted arms gets an odd pull, drawn with
      ξ rather than by index, so that the counts do not depend on the labels), and their
      order is random.
    * The recommendation is the best *survivor* under the last epoch's estimate, and no
      elimination follows the last epoch.
    * When one item survives before epoch R, the authors' code stops with fewer than T pulls.
      Here the budget is always spent: the leftover pulls form one batch on the rounded uniform
      design (the authors' design for a single item), which cannot change the recommendation.
    * The bisection of :func:`.item_designs.halving_prefix` is the authors'; ties in the
      ranking are put in a random order drawn with ξ (the authors' ``flip(argsort)`` puts
      the later index first), so the survivors do not depend on the items' labels; ties are
      rare under Gaussian noise, common with discrete (Bernoulli) rewards.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *,
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        tol = check_positive(design_tol, "design_tol")
        super().__init__(X, Z, budget, rng)
        self.design_tol = tol
        self.active = np.arange(self.Z.shape[0])
        _, self._rho = item_design(self.X, self.Z, self.active, tol)
        self.n_epochs = peace_epochs(self._rho, self.budget)
        self._epoch_length = self.budget // self.n_epochs
        self.epoch = 0  # epochs completed
        self._sizes = [int(self.active.size)]

    def _next_batch(self) -> Batch | None:
        if self.remaining == 0:
            return None
        if self.active.size == 1:
            uniform = np.full(self.n_arms, 1.0 / self.n_arms)
            return self._shuffled(round_allocation(uniform, self.remaining, rng=self.xi))
        last = self.epoch >= self.n_epochs - 1
        n = self.remaining if last else min(self._epoch_length, self.remaining)
        design, self._rho = item_design(self.X, self.Z, self.active, self.design_tol)
        return self._shuffled(round_allocation(design.weights, n, rng=self.xi))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        if self.active.size == 1:  # the leftover batch: nothing to decide
            return
        self.theta_hat = LeastSquares.from_batch(self.X, batch, rewards).theta
        self.epoch += 1
        ranked = _ranked(self.Z, self.active, self.theta_hat, self.xi)
        if self.epoch < self.n_epochs and self.remaining > 0:
            ranked = ranked[:halving_prefix(self.X, self.Z, ranked, self._rho,
                                            self.design_tol)]
        self.active = ranked
        self._sizes.append(int(ranked.size))

    def _recommend(self) -> int:
        """The best survivor under the last epoch's estimate (a tie broken with ξ)."""
        return int(self.active[best_index(self.Z[self.active] @ self.theta_hat, self.xi)])

    @property
    def info(self) -> dict:
        """``epochs`` (R) and ``survivors`` (|Z_r| at the start, then after each epoch)."""
        return {"epochs": self.n_epochs, "survivors": list(self._sizes)}


class MixedPeace(FixedBudgetIdentifier):
    """Mixed-Peace (Xiong et al., Appendix A.2, Algorithm 6): Peace's eliminations, pulls
    i.i.d. from the design mixed with the G-optimal design, and an IPS estimate.

    With ``R = ⌈log2 inf_λ ρ(Z, λ)⌉`` (:func:`peace_epochs`), ``N = ⌊T/R⌋`` and the
    G-optimal design λ* (Eq. (3)), epoch ``r = 0, 1, ..., R`` (line 4):

    * ``λ_r = (arginf_λ ρ(Z_r, λ) + λ*) / 2`` (line 5);
    * pulls ``x_t ~ λ_r`` i.i.d. (drawn with ξ) for ``t ≤ min{T, (r+1)N}`` (lines 6–7);
    * ``θ̂_t``, the running IPS average ``(1/t) Σ_{s≤t} A(λ_{r(s)})⁻¹ x_s r_s`` over *all*
      pulls so far (line 8; :class:`banditkit.estimation.ips.IPSEstimate`);
    * if ``|Z_r| > 1``: rank ``Z_r`` by ``zᵀθ̂_t`` and keep the largest prefix with
      ``inf_λ ρ(prefix, λ) ≤ inf_λ ρ(Z_r, λ) / 2`` (lines 11–14).

    It recommends ``argmax_{z ∈ Z} zᵀθ̂_T`` over *all* items (line 16).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items (``None``: ``Z = X``, as in Xiong et al.).
    budget : int
        T ≥ K pulls; exactly T are made.
    design_tol : float
        Certified relative gap of each design solve (λ* and the XY designs).
    rng : Generator or seed, optional
        ξ: the i.i.d. draws of the pulls.

    Attributes
    ----------
    active : ndarray of int
        Surviving items Z_r (indices into Z), best first by the last ranking.
    distribution : ndarray, shape (K,)
        λ_r of the epoch last asked for.
    n_epochs : int
        R (the text runs R + 1 epochs, ``r = 0..R``).

    Notes
    -----
    Follows the text of Algorithm 6, where the authors' code (``Peace.bobw_run``) differs:

    * Epochs ``r = 0..R`` — R + 1 of them: R of ``N`` pulls and a last one of the remainder
      ``T − RN`` (< R pulls; none when R divides T, and then there are R batches). The code
      runs R epochs, the last taking ``T − (R−1)N``. Where the text's bound ``min{T, (R+1)N}``
      would leave pulls unspent (``N < T − RN``, only for ``T < R²``), the last epoch takes
      them all, so exactly T pulls are made.
    * Elimination after every epoch while ``|Z_r| > 1`` (the code skips it after its last
      epoch); after the final epoch it has no effect.
    * ``arginf_λ ρ({z}, λ)`` of a single survivor is any λ (ρ = 0); the uniform design is used,
      as in the authors' code, so λ_r stays ≥ λ*/2 everywhere.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *,
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        tol = check_positive(design_tol, "design_tol")
        super().__init__(X, Z, budget, rng)
        self.design_tol = tol
        self.g_design = g_design(self.X, tol)[0]
        self.active = np.arange(self.Z.shape[0])
        _, self._rho = item_design(self.X, self.Z, self.active, tol)
        self.n_epochs = peace_epochs(self._rho, self.budget)
        self._epoch_length = self.budget // self.n_epochs
        self.epoch = 0  # epochs completed (r of the next one)
        self.ips = IPSEstimate(self.X)
        self.distribution = self.g_design
        self._sizes = [int(self.active.size)]

    def _next_batch(self) -> Batch | None:
        if self.remaining == 0:
            return None
        if self.active.size > 1:
            design, self._rho = item_design(self.X, self.Z, self.active, self.design_tol)
            weights = design.weights
        else:
            weights = np.full(self.n_arms, 1.0 / self.n_arms)
        self.distribution = (weights + self.g_design) / 2.0
        last = self.epoch >= self.n_epochs
        n = self.remaining if last else min(self._epoch_length, self.remaining)
        return self._sample(self.distribution, n)

    observes_arm_sums = True  # the IPS estimate reads per-arm sums only (line 8)

    def _observe_arm_sums(self, batch: Batch, sums: np.ndarray) -> None:
        self.ips.add(self.distribution, sums, batch.n_pulls)
        self.theta_hat = self.ips.theta
        self.epoch += 1
        if self.active.size > 1 and self.remaining > 0:
            ranked = _ranked(self.Z, self.active, self.theta_hat, self.xi)
            self.active = ranked[:halving_prefix(self.X, self.Z, ranked, self._rho,
                                                 self.design_tol)]
        self._sizes.append(int(self.active.size))

    @property
    def info(self) -> dict:
        """``epochs`` (R) and ``survivors`` (|Z_r| at the start, then after each epoch)."""
        return {"epochs": self.n_epochs, "survivors": list(self._sizes)}
