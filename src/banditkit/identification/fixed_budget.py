"""The common frame of fixed-budget identifiers (Xiong et al., "P1-RAGE", Section 3): spend
exactly ``budget`` pulls, then recommend one item.

Subclasses choose each epoch's pulls; this class validates the problem, keeps the count of
pulls, draws the pulls from the internal randomness ξ, and stops by itself when the budget is
spent, so ``simulate(algo, env, seed=s)`` needs no horizon.
"""

from __future__ import annotations

import numpy as np

from ..draws import arms_of_uniforms, design_cdf
from ..protocol import Algorithm, Batch, IIDBatch
from ..rng import SeedLike, as_generator
from ..validation import check_positive_int
from .elimination import check_arms_items

__all__ = [
    "FixedBudgetIdentifier",
    "best_index",
    "check_budget_problem",
    "iid_arms",
    "ranked_by",
    "runs_batch",
]

def iid_arms(xi: np.random.Generator, weights: np.ndarray, n: int) -> np.ndarray:
    """``n`` arms drawn i.i.d. from ``weights`` with ``xi``: the arms of
    ``xi.choice(len(weights), size=n, p=weights)``, reading the same ``n`` uniforms.

    numpy's ``choice`` returns ``searchsorted(cdf, u, side="right")`` for
    ``cdf = cumsum(p) / cumsum(p)[-1]`` and ``u = xi.random(n)``; the search is
    :func:`banditkit.draws.arms_of_uniforms`' table sampler, the same numbers bit for bit.
    ``weights`` must be a probability vector (non-negative, summing to 1): callers pass designs.
    """
    return arms_of_uniforms(design_cdf(weights), xi.random(n))


def best_index(values: np.ndarray, xi: np.random.Generator | None) -> int:
    """``argmax values``, a tie broken uniformly at random with ``xi``.

    Estimates tie exactly more often than continuous noise suggests: an IPS estimate after a
    few pulls is zero on every item the pulled arms do not measure, and Bernoulli rewards give
    discrete estimates. Taking the lowest index would make the answer depend on the order in
    which the items are listed; ``xi`` (the algorithm's own randomness) is read only when
    there is a tie, so untied runs draw exactly the numbers they drew before. ``xi=None``
    keeps the lowest index (for callers without internal randomness).
    """
    values = np.asarray(values)
    best = int(np.argmax(values))
    if xi is None:
        return best
    tied = np.flatnonzero(values == values[best])
    return best if tied.size == 1 else int(tied[xi.integers(tied.size)])


def ranked_by(values: np.ndarray, xi: np.random.Generator | None) -> np.ndarray:
    """Positions of ``values`` sorted descending, ties in a uniformly random order drawn
    with ``xi`` (in index order when ``xi`` is None).

    A random permutation of the positions before a stable sort orders every group of tied
    values uniformly at random, so a ranking (Peace's halving prefixes, OD-LinBAI's survivors)
    does not depend on how the items are labelled (:func:`best_index` says why ties happen).
    ``xi`` is read only when two values tie.
    """
    values = np.asarray(values)
    order = np.argsort(-values, kind="stable")
    if xi is None:
        return order
    sorted_values = values[order]
    if not np.any(sorted_values[1:] == sorted_values[:-1]):
        return order
    perm = xi.permutation(values.size)
    return perm[np.argsort(-values[perm], kind="stable")]


def runs_batch(seq: np.ndarray) -> Batch:
    """The batch of the pull sequence ``seq`` (int64): :meth:`Batch.from_sequence`."""
    return Batch.from_sequence(seq)


def check_budget_problem(X: object, Z: object, budget: object
                         ) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate ``(X, Z, budget)``: X finite and spanning R^d, Z finite with d columns, and
    ``budget`` an integer of at least ``|X|`` pulls."""
    X, Z = check_arms_items(X, Z)
    budget = check_positive_int(budget, "budget")
    # private read-only copies: designs of item sets are memoised by the arrays' contents, and
    # a read-only array's digest is computed once (ArrayMemo.key)
    frozen_X = _frozen(X)
    X, Z = frozen_X, (frozen_X if Z is X else _frozen(Z))
    if budget < X.shape[0]:
        raise ValueError(f"budget must be at least the number of arms ({X.shape[0]}), got "
                         f"{budget}")
    return X, Z, budget


def _frozen(a: np.ndarray) -> np.ndarray:
    out = np.array(a, dtype=float, copy=True)
    out.setflags(write=False)
    return out


class FixedBudgetIdentifier(Algorithm):
    """Base class: a best-item identifier with a fixed budget of pulls.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items among which the best is sought (``None``: ``Z = X``, as in the paper).
    budget : int
        T, the number of pulls (≥ K).
    rng : Generator or seed, optional
        Internal randomness ξ (which arms are drawn, and in which order).

    Subclasses implement ``_next_batch`` (return ``None`` once :attr:`remaining` is 0) and
    ``_observe``, and set :attr:`theta_hat`, the estimate the recommendation is read from.
    """

    kind = "identification"
    #: Decision-log runs per pull (:func:`banditkit.simulate.check_memory`): epochs of i.i.d.
    #: or shuffled pulls are mostly runs of one pull.
    runs_per_pull = 1.0

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int,
                 rng: SeedLike = None) -> None:
        X, Z, budget = check_budget_problem(X, Z, budget)
        super().__init__(X.shape[0])
        self.X, self.Z, self.budget = X, Z, budget
        self.xi = as_generator(rng)
        self.theta_hat = np.zeros(X.shape[1])
        self._answer: int | None = None  # the recommendation, drawn once (ties use ξ)

    @property
    def remaining(self) -> int:
        """Pulls left to spend."""
        return self.budget - self.t

    def _sample(self, weights: np.ndarray, n: int) -> Batch:
        """``n`` pulls drawn i.i.d. from ``weights`` with ξ, in draw order: an
        :class:`~banditkit.protocol.IIDBatch` (the design's cdf and ξ's state, O(K)), the
        same pulls as :func:`iid_arms` and ξ left where it leaves it, so every later draw is
        unchanged; its runs are computed only when read (a simulation's environment reads
        them, a live experiment does not)."""
        return IIDBatch.draw(self.xi, weights, n)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        """Run sums to per-arm sums, for the identifiers whose update reads only those
        (:attr:`~banditkit.protocol.Algorithm.observes_arm_sums`)."""
        self._observe_arm_sums(batch, batch.arm_sums(rewards, self.n_arms))

    def _shuffled(self, allocation: np.ndarray) -> Batch:
        """The pulls of ``allocation`` (pulls per arm) in a random order drawn with ξ.

        A stationary algorithm's epoch is a multiset of pulls; in a non-stationary world their
        order matters, so it is drawn at random (Xiong et al., Appendix D).
        """
        seq = np.repeat(np.arange(self.n_arms), allocation)
        return runs_batch(self.xi.permutation(seq))

    @property
    def recommendation(self) -> int | None:
        """The answer (:meth:`_recommend`) once the budget is spent; before, None. Decided on
        the first read and kept, so a tie is drawn once."""
        if self.remaining > 0:
            return None
        if self._answer is None:
            self._answer = self._recommend()
        return self._answer

    def _recommend(self) -> int:
        """``argmax_z zᵀθ̂``, a tie broken with ξ (:func:`best_index`)."""
        return best_index(self.Z @ self.theta_hat, self.xi)
