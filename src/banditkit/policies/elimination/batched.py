"""Batched arm elimination: the phase structure shared by the batched policies of Esfandiari et
al., and its non-replicable instance.

Esfandiari, Karbasi, Mehrabian and Mirrokni (AAAI 2021, "Regret bounds for batched bandits")
split the horizon T into B batches of geometrically growing size: in batch i every active arm is
pulled ⌊q^i⌋ times with q = T^{1/B}, then arms whose estimate falls 2τ_i below the best are
eliminated. Esfandiari et al. (ICLR 2023, "Replicable bandits") make this replicable in
Algorithm 1 (replicable mean estimates) and Algorithm 2 (β blow-up and a random threshold);
both live in :mod:`.replicable_elimination` and reuse :class:`BatchedEliminationBase`.

Every batch is one :class:`~banditkit.protocol.Batch` answered from per-arm sums, so a batch of
any size costs O(K). What the rest of the horizon plays after the last batch is the ``commit``
option (:mod:`.commit`).
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ...protocol import Algorithm, Batch
from ...validation import check_positive, check_positive_int, check_probability
from ..commit import check_commit, commit_batch, replicable_commit_means

__all__ = ["BatchedElimination", "BatchedEliminationBase", "default_n_batches"]


def default_n_batches(horizon: int) -> int:
    """B = ⌈ln T⌉ (the papers' "B ← log(T)", rounded up to an integer; at least 2)."""
    return max(2, math.ceil(math.log(horizon)))


class BatchedEliminationBase(Algorithm):
    """Phases of batched elimination; subclasses say how many pulls a batch takes and whom to
    eliminate.

    The loop (Algorithm 1 and 2 of Esfandiari et al. 2023, lines 3–14): for i = 1, …, B − 1, if
    the batch's pulls exceed the remaining budget r, stop exploring; otherwise pull every active
    arm the batch's number of times, update the estimates, and eliminate. The rest of the
    horizon (the "last batch") goes to the active arm with the smallest index (the paper's
    rule; ``commit`` chooses another).

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    horizon : int
        T ≥ K.
    n_batches : int, optional
        B; default :func:`default_n_batches` (⌈ln T⌉).
    q : float, optional
        Growth factor of the batches; default T^{1/B}.
    delta : float, optional
        Failure probability of each confidence bound; default 1/(2KTB) (the papers' ln(2KTB)).
    confidence : float
        Multiplier on every confidence radius (1 = the paper's).
    commit : {"lowest-index", "round-robin", "replicable-argmax", "argmax"}
        What the rest of the horizon plays (:mod:`banditkit.policies.commit`): the paper's rule
        (the surviving arm with the smallest index, default), an even split over the surviving
        arms, the best surviving arm after a replicable rounding of the means with offsets from
        ξ (replicable policies only), or the empirical best surviving arm (its replicability
        only measured). The argmax rules use the cumulative per-arm sums.

    Notes
    -----
    Once a single arm is active, the remaining batches would all pull it, so the policy goes to
    the last batch at once: the pull sequence is the same, only batch boundaries differ.
    """

    reward_range = (0.0, 1.0)  # Hoeffding's bounds and RepMean assume rewards in [0, 1]

    #: Whether the policy has internal randomness ξ (``self.xi``) for a replicable commit.
    xi_commit = False

    kind = "regret"

    def __init__(self, n_arms: int, horizon: int, *, n_batches: int | None = None,
                 q: float | None = None, delta: float | None = None, confidence: float = 1.0,
                 commit: str = "lowest-index") -> None:
        K = check_positive_int(n_arms, "n_arms")
        if K < 2:
            raise ValueError(f"n_arms must be >= 2 for arm elimination, got {K}")
        T = check_positive_int(horizon, "horizon")
        if T < K:
            raise ValueError(f"horizon must be >= n_arms (T >= K), got T={T} < K={K}")
        super().__init__(K)
        self.horizon = T
        self.n_batches = (default_n_batches(T) if n_batches is None
                          else check_positive_int(n_batches, "n_batches"))
        if self.n_batches < 2:
            raise ValueError(f"n_batches must be >= 2, got {self.n_batches}")
        # q > 1: the batches must grow (the default T^{1/B} is > 1 for every T >= K >= 2)
        self.q = T ** (1.0 / self.n_batches) if q is None else check_positive(q, "q", above=1.0)
        self.delta = (1.0 / (2 * K * T * self.n_batches) if delta is None
                      else check_probability(delta, "delta"))
        self.confidence = check_positive(confidence, "confidence")
        self.commit = check_commit(commit, replicable=self.xi_commit)
        self.rho_commit = 0.0  # ρ_c of a "replicable-argmax" commit (set by replicable subclasses)

        self.active = np.arange(K)
        self.pulls = np.zeros(K, dtype=np.int64)
        self.sums = np.zeros(K)
        self.remaining = T          # r in the papers
        self.batch = 0              # index i of the last exploration batch
        self.c = 0                  # c_i = Σ_{j ≤ i} ⌊q^j⌋
        self.exploring = True
        self.eliminated: dict[int, int] = {}  # arm -> batch after which it was removed
        self.commit_scores: np.ndarray | None = None  # what an argmax commit maximised
        self._committed = False

    @property
    def committed(self) -> bool:
        """Whether the exploration batches are over and the commit batch has been chosen
        (a live experiment's status reports the committed arm and its rule)."""
        return self._committed

    # -- what subclasses define ------------------------------------------------------------
    @abstractmethod
    def _pulls_per_arm(self, i: int, floor_qi: int) -> int:
        """Pulls of each active arm in exploration batch ``i`` (``floor_qi`` = ⌊q^i⌋)."""

    @abstractmethod
    def _to_eliminate(self, i: int) -> np.ndarray:
        """Boolean mask over ``self.active``: which arms to remove after batch ``i``."""

    # -- the loop ----------------------------------------------------------------------------
    def _next_batch(self) -> Batch | None:
        if self.remaining <= 0:
            return None
        if self.exploring:
            i = self.batch + 1
            if i <= self.n_batches - 1 and self.active.size > 1:
                m = self._pulls_per_arm(i, math.floor(self.q**i))
                if m * self.active.size <= self.remaining:
                    alloc = np.zeros(self.n_arms, dtype=np.int64)
                    alloc[self.active] = m
                    return Batch.from_allocation(alloc)
            self.exploring = False
        self._committed = True
        self.commit_scores = self._commit_scores()
        return commit_batch(self.commit, self.active, self.remaining, self.n_arms,
                            self.commit_scores)

    def _commit_scores(self) -> np.ndarray | None:
        """What an argmax commit maximises over the surviving arms (active order); ``None``
        for the other rules, or when no batch was played (no data)."""
        a = self.active
        if self.commit in ("lowest-index", "round-robin") or self.pulls[a].min() == 0:
            return None
        if self.commit == "argmax":
            return self.sums[a] / self.pulls[a]
        offset = float(self.xi.random())  # type: ignore[attr-defined]  # one grid, one offset
        return replicable_commit_means(self.sums[a], self.pulls[a], self.rho_commit, offset)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        self.remaining -= batch.n_pulls
        if self._committed or self._cut:
            # a cut exploration batch ends the run (Algorithm.observe): its arms have unequal
            # (some zero) pulls, on which the elimination rules are undefined
            return
        self.batch += 1
        self.c += math.floor(self.q**self.batch)
        remove = self._to_eliminate(self.batch)
        for arm in self.active[remove]:
            self.eliminated[int(arm)] = self.batch
        self.active = self.active[~remove]

    @property
    def log_term(self) -> float:
        """ln(1/δ) (= ln(2KTB) by default)."""
        return math.log(1.0 / self.delta)

    @property
    def info(self) -> dict:
        return {"exploration_batches": self.batch, "active": self.active.tolist(),
                "eliminated": dict(self.eliminated), "commit": self.commit,
                "rho_commit": self.rho_commit,
                "commit_scores": (None if self.commit_scores is None
                                  else self.commit_scores.tolist())}


class BatchedElimination(BatchedEliminationBase):
    """Non-replicable batched elimination (Esfandiari et al. 2021), the baseline of Algorithm 1.

    Batch i pulls every active arm ⌊q^i⌋ times; arm a is eliminated when
    μ̂_a < max_{a'} μ̂_{a'} − 2τ_i with τ_i = confidence · sqrt(ln(1/δ) / c_i) (the radius of
    Algorithm 1 of Esfandiari et al. 2023), μ̂ the plain empirical means. Parameters as in
    :class:`BatchedEliminationBase`; having no internal randomness, it refuses
    ``commit="replicable-argmax"``.
    """

    def _pulls_per_arm(self, i: int, floor_qi: int) -> int:
        return floor_qi

    def radius(self) -> float:
        """τ_i after the current batch."""
        return self.confidence * math.sqrt(self.log_term / self.c)

    def _to_eliminate(self, i: int) -> np.ndarray:
        a = self.active
        means = self.sums[a] / self.pulls[a]
        return means < means.max() - 2 * self.radius()
