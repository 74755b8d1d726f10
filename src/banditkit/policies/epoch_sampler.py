"""The pulls of one epoch of a constrained policy, sampled exactly in O(K) whatever its length:
i.i.d. draws from its strategy x until some arm's count reaches its target (DEBORA-S and
DEBORA-H, Bollini et al., Algorithms 3–4, line 7: a new epoch starts at the first round t with
N_t(a) ≥ max{2Ñ_h(a), 1}; the optimistic baselines' doubling schedule,
:mod:`.constrained_baselines`).

What is sampled. The epoch's rounds are i.i.d. draws a_t ∼ x, and the epoch stops at the first
round at which some arm a has been drawn ``need[a]`` times (that round is the epoch's last), or
after ``remaining`` rounds (the horizon), whichever comes first. All that any quantity of the
paper needs from an epoch — regret and violation (the strategy is the same every round of the
epoch), the counts and the sufficient statistics behind the estimates (the environment is
stationary) — is the number of pulls of each arm at that stopping round. :func:`epoch_counts`
samples exactly that vector, from its exact law, in O(K) work and without generating rounds:

1. M ∼ Multinomial(R, x), the counts of the first R = ``remaining`` rounds (arms of
   probability 0 get none). If no arm reaches its need within them (M[a] < need[a] for all a),
   the horizon ends the epoch and M is the answer.
2. Otherwise the epoch ends inside those R rounds. Given M, the order of the R rounds is a
   uniformly random permutation of the multiset M (the rounds are i.i.d.), which is the order of
   R independent Uniform(0, 1) "times", M[a] of them for arm a. The time of arm a's need[a]-th
   pull is then the need[a]-th order statistic of M[a] uniforms, β_a ∼ Beta(need[a],
   M[a] − need[a] + 1), independently across arms; the epoch stops at u* = min_a β_a, on arm
   a* = argmin_a β_a, which has need[a*] pulls. Given β_b, the need[b] − 1 earlier pulls of
   another arm b are i.i.d. Uniform(0, β_b), so b has Binomial(need[b] − 1, u*/β_b) pulls
   before u* (β_b > u*); an arm that never reaches its need (M[b] < need[b]) has
   Binomial(M[b], u*).

One multinomial, at most K betas and K binomials: an epoch of 10¹³ rounds costs what an epoch of
ten does, so DEBORA-S/H run to horizons of 9·10¹⁵ in seconds (docs/constrained.md).

The trade-off. The epoch becomes one batch of per-arm runs in arm order
(:func:`epoch_batch`), not the sequence of rounds of the pseudo-code: the *distribution* of the
pulls (counts at the epoch's end, its length) is exactly that of the per-round loop, but the
order of the pulls inside an epoch is not a realisation of the per-round order (a decision log's
position-by-position comparison, :meth:`~banditkit.protocol.DecisionLog.count_differences`,
compares arm-ordered epochs). Nothing of the paper depends on that order: within an epoch the
rounds are exchangeable and the environment stationary. Two executions with the same ξ, the same
strategy and the same counts draw the same numbers and get the same epoch, so replicability is
as before; only a non-stationary environment (not used by these policies) would need the order.
"""

from __future__ import annotations

import numpy as np

from ..protocol import Batch

__all__ = ["epoch_batch", "epoch_counts"]


def epoch_counts(x: np.ndarray, need: np.ndarray, remaining: int, rng: np.random.Generator
                 ) -> np.ndarray:
    """Pulls of each arm in one epoch of i.i.d. draws from ``x`` (module docstring).

    Parameters
    ----------
    x : array, shape (K,)
        The strategy (non-negative, positive sum; normalised here). Arms with ``x[a] = 0`` are
        never pulled.
    need : int array, shape (K,)
        The epoch ends at the round in which some arm a with ``x[a] > 0`` gets its
        ``need[a]``-th pull (each ≥ 1 on the support).
    remaining : int
        Rounds left before the horizon (≥ 1): the epoch ends there if no arm got its need.
    rng : numpy.random.Generator
        The stream the epoch is drawn from (the policy's action stream, part of ξ).

    Returns
    -------
    int64 array, shape (K,)
        The counts at the epoch's last round: their sum is the epoch's length (≤ ``remaining``);
        some arm a has exactly ``need[a]`` and every other arm fewer than its need, unless the
        horizon ended the epoch first (then every arm is below its need, or one is at it).
    """
    x = np.asarray(x, dtype=float)
    need = np.asarray(need, dtype=np.int64)
    R = int(remaining)
    support = np.flatnonzero(x > 0)
    if (x.ndim != 1 or need.shape != x.shape or not np.all(np.isfinite(x)) or np.any(x < 0)
            or support.size == 0):
        raise ValueError("x must be a 1-D strategy (non-negative, positive sum) and need have "
                         "its shape")
    if np.any(need[support] < 1) or R < 1:
        raise ValueError(f"need must be >= 1 on the strategy's support and remaining >= 1, got "
                         f"need={need}, remaining={R}")
    p = x[support] / x[support].sum()
    n = need[support]
    # 1. the first R rounds (drawn over the support only: a rounding remainder of the
    #    multinomial's sequential binomials can never reach an arm of probability 0)
    M = rng.multinomial(R, p).astype(np.int64)
    counts = np.zeros(x.size, dtype=np.int64)
    hit = M >= n
    if not hit.any():  # the horizon ends the epoch
        counts[support] = M
        return counts
    # 2. the stopping round inside them: the need-th order statistic of each hitting arm
    beta = np.full(M.size, np.inf)
    beta[hit] = rng.beta(n[hit].astype(float), (M[hit] - n[hit] + 1).astype(float))
    stop = int(np.argmin(beta))
    u = float(beta[stop])
    trials = np.where(hit, n - 1, M)  # pulls of b that may fall before u*
    prob = np.where(hit, u / beta, u)  # each one's chance of doing so (β_b > u* for b ≠ a*)
    prob[stop] = 1.0
    drawn = rng.binomial(trials, np.minimum(prob, 1.0))
    drawn[stop] = n[stop]
    counts[support] = drawn
    return counts


def epoch_batch(x: np.ndarray, need: np.ndarray, remaining: int, rng: np.random.Generator
                ) -> Batch:
    """One epoch (:func:`epoch_counts`) as a batch: one run per arm pulled, in arm order,
    carrying the strategy ``x``."""
    counts = epoch_counts(x, need, remaining, rng)
    arms = np.flatnonzero(counts)
    return Batch(arms, counts[arms], strategy=np.asarray(x, dtype=float))
