"""The final commit of the batched eliminations: what the rest of the horizon plays once the next
batch no longer fits (Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni and Velegkas, ICLR 2023,
"Replicable bandits": Algorithms 1 and 2, line "play the arm with the smallest index", and
Algorithm 3, line 18, which prints argmax_a ⟨a, θ̂⟩).

One option, ``commit``, with the same values for Algorithms 1, 2 and 3 (and the non-replicable
baselines that share their phases):

``"lowest-index"`` (default, the rule of Algorithms 1 and 2)
    Every remaining pull on the surviving arm with the smallest index. A function of the active
    set only: the replicability proofs (Theorems 3, 4 and 6) cover it unchanged.
``"round-robin"``
    The remaining pulls split evenly over the surviving arms (the first ``r mod |A|`` of them,
    in index order, get one more), played arm after arm in index order. Also a function of the
    active set: covered by the proofs.
``"replicable-argmax"``
    The surviving arm with the largest estimate after a replicable rounding: the surviving arms'
    means are rounded to the centres of the cells of one grid whose boundaries are shifted by an
    offset drawn from the internal randomness ξ (Impagliazzo et al.'s rSTAT, RepMean of Bollini
    et al., :mod:`banditkit.estimation.replicable_mean`), ties to the lowest index. One grid
    keeps the means' order, so the pick is the best arm unless others share its cell. Two
    executions with the same active set disagree only if some arm's rounded mean differs, which
    has probability ≤ ρ_c/|A| per arm, so the commit adds at most ρ_c to the non-replication;
    the eliminations
    run at ρ − ρ_c (``commit_share`` = ρ_c/ρ, default 1/2). Replicable by construction.
``"argmax"``
    The surviving arm with the largest plain estimate (the empirical mean; the least-squares
    value for Algorithm 3, its printed line 18). A function of the rewards, so two executions
    that agree on every elimination still differ whenever two surviving arms are close: not
    covered by Theorems 3, 4 or 6; its replicability can only be measured (``banditkit audit``).

Every rule picks among the surviving arms, so the regret bounds (every surviving arm's gap is
at most a constant times the last confidence radius, on the proofs' good event) hold for all.
With no exploration batch at all (the first batch did not fit) there is no data: the argmax rules
fall back to the lowest index, as Algorithm 3 does for an empty θ̂.
"""

from __future__ import annotations

import math

import numpy as np

from ..estimation.replicable_mean import grid_round, grid_width
from ..protocol import Batch
from ..validation import check_probability

__all__ = [
    "COMMIT_DELTA_FRACTION",
    "COMMIT_RULES",
    "DEFAULT_COMMIT_SHARE",
    "check_commit",
    "commit_batch",
    "linear_commit_values",
    "replicable_commit_means",
    "split_rho",
]

#: The commit rules, in the order the docs list them; the first is the paper's (the default).
COMMIT_RULES = ("lowest-index", "round-robin", "replicable-argmax", "argmax")

#: Share of ρ spent on the ``"replicable-argmax"`` commit unless ``commit_share`` says otherwise.
DEFAULT_COMMIT_SHARE = 0.5

#: δ of each commit estimate as a fraction of its ρ. The grid width grows like
#: sqrt(ln(2/δ))/(ρ − 2δ) (means, Lemma 2.5) or sqrt(ln(2/δ))/(ρ − δ) (least-squares values);
#: at δ = ρ/20 both are within 4% of their minimum over δ for every ρ in [10⁻³, 0.5].
COMMIT_DELTA_FRACTION = 1.0 / 20.0


def check_commit(commit: object, *, replicable: bool = True) -> str:
    """``commit`` if it names a rule of :data:`COMMIT_RULES`, else ``ValueError``.

    ``replicable=False`` (a policy without internal randomness ξ) refuses
    ``"replicable-argmax"``, whose grid offsets come from ξ.
    """
    if not isinstance(commit, str) or commit not in COMMIT_RULES:
        raise ValueError(f"commit must be one of {COMMIT_RULES}, got {commit!r}")
    if commit == "replicable-argmax" and not replicable:
        raise ValueError("commit='replicable-argmax' needs internal randomness xi for its grid "
                         "offsets; this policy has none (use a replicable policy, or 'argmax')")
    return commit


def split_rho(rho: float, commit: str, commit_share: float | None) -> tuple[float, float]:
    """(ρ of the eliminations, ρ_c of the commit) for a total budget ρ.

    Only ``"replicable-argmax"`` spends part of ρ: ρ_c = ``commit_share`` · ρ (default
    :data:`DEFAULT_COMMIT_SHARE`), the eliminations keep ρ − ρ_c. The other rules are functions
    of the active set (no cost) or not replicable by construction (nothing to budget), so the
    eliminations keep all of ρ and ``commit_share`` must be left unset.
    """
    if commit != "replicable-argmax":
        if commit_share is not None:
            raise ValueError(f"commit_share only applies to commit='replicable-argmax', got "
                             f"commit={commit!r}")
        return rho, 0.0
    share = (DEFAULT_COMMIT_SHARE if commit_share is None
             else check_probability(commit_share, "commit_share"))
    return rho * (1.0 - share), rho * share


def replicable_commit_means(sums: np.ndarray, counts: np.ndarray, rho_commit: float,
                            offset: float) -> np.ndarray:
    """Replicably rounded means of the m surviving arms (rewards in [0, 1]) for the
    ``"replicable-argmax"`` commit, all on one grid.

    Arm a alone would be RepMean (Lemma 2.5 of Bollini et al.) at ρ_a = ρ_c/m and
    δ_a = :data:`COMMIT_DELTA_FRACTION` · ρ_a, on a grid of the width α_a that Lemma 2.5 gives
    for its count. All arms are rounded on *one* grid, of width α = max_a α_a and shifted by
    one unit ``offset`` u from ξ: rounding on a common grid keeps the order of the means (the
    pick is the best surviving arm unless it shares its cell with others, then the lowest index
    of the top cell), whereas independent grids would reorder them at random whenever α is
    comparable to the gaps. Each arm's rounding still disagrees between two executions with
    probability ≤ δ_a + |m − m'|/α ≤ ρ_a (u is uniform and α ≥ α_a), so all m agree with
    probability ≥ 1 − ρ_c by the union bound, whatever the dependence between arms.
    """
    counts = np.asarray(counts)
    rho_a = rho_commit / len(counts)
    alpha = float(np.max(grid_width(counts, COMMIT_DELTA_FRACTION * rho_a, rho_a)))
    return np.clip(grid_round(np.asarray(sums, dtype=float) / counts, alpha, offset), 0.0, 1.0)


def linear_commit_values(values: np.ndarray, norms2: np.ndarray, rho_commit: float,
                         offset: float) -> np.ndarray:
    """Replicably rounded least-squares values ⟨a, θ̂⟩ of the m surviving arms of Algorithm 3
    for the ``"replicable-argmax"`` commit (1-sub-Gaussian noise, as Algorithm 3's ε_i assume),
    all on one grid.

    Two executions with the same active set pull the same multiset in the last phase, so
    ⟨a, θ̂ − θ̂'⟩ = ⟨a, V⁻¹ Σ_t x_t (η_t − η'_t)⟩ is 2‖a‖²_{V⁻¹}-sub-Gaussian and
    |⟨a, θ̂ − θ̂'⟩| ≤ D_a = 2‖a‖_{V⁻¹} sqrt(ln(2/δ_a)) with probability ≥ 1 − δ_a. A grid of
    width α ≥ α_a = D_a/(ρ_a − δ_a) (ρ_a = ρ_c/m, δ_a = :data:`COMMIT_DELTA_FRACTION` · ρ_a)
    shifted by a uniform offset separates the two values with probability ≤ δ_a + D_a/α ≤ ρ_a
    (:func:`~banditkit.estimation.replicable_mean.grid_round`). One grid for all arms, of width
    max_a α_a, keeps the values' order (as :func:`replicable_commit_means`).

    Parameters
    ----------
    values, norms2 : arrays, shape (m,)
        ⟨a, θ̂⟩ and ‖a‖²_{V⁻¹} of the last phase, for each surviving arm.
    rho_commit : float
        ρ_c, the replicability budget of the whole commit.
    offset : float
        The unit offset u ∈ [0, 1) of the grid, from ξ.
    """
    m = len(values)
    rho_a = rho_commit / m
    delta_a = COMMIT_DELTA_FRACTION * rho_a
    d = 2.0 * np.sqrt(np.maximum(np.asarray(norms2, dtype=float), 0.0) * math.log(2.0 / delta_a))
    # arms with ‖a‖_{V⁻¹} = 0 have the same value in both executions: they need no width
    alpha = float(d.max()) / (rho_a - delta_a) if np.any(d > 0) else 1.0
    return grid_round(values, alpha, offset)


def commit_batch(commit: str, active: np.ndarray, remaining: int, n_arms: int,
                 scores: np.ndarray | None = None) -> Batch:
    """The last batch: ``remaining`` pulls of the surviving arms ``active`` (increasing
    indices) under rule ``commit``.

    ``scores`` (one per surviving arm, in ``active`` order) are what the argmax rules maximise
    (ties to the lowest index); ``None`` (no data) makes them play the lowest index.
    """
    if commit == "round-robin":
        share, extra = divmod(int(remaining), active.size)
        alloc = np.zeros(n_arms, dtype=np.int64)
        alloc[active] = share
        alloc[active[:extra]] += 1
        return Batch.from_allocation(alloc)
    if commit == "lowest-index" or scores is None:
        arm = int(active[0])
    else:
        # np.argmax returns the first maximum: ties go to the lowest index (active is sorted)
        arm = int(active[int(np.argmax(scores))])
    return Batch(np.array([arm]), np.array([int(remaining)]))

