"""Confidence sequences for the mean of bounded rewards: intervals that hold at every look.

A fixed-n interval (Wilson, Student-t) covers the mean at one sample size chosen in advance. A
person watching a live experiment looks again and again and acts on what they see; the chance
that *some* look's 95% interval misses the mean then grows towards 1 (the peeking error). A
**confidence sequence** ``(C_n)`` at level 1 − α satisfies ``P(∀n: μ ∈ C_n) ≥ 1 − α``: every
look, at any data-dependent time, is covered at once.

The construction (Robbins 1970, "Statistical methods related to the law of the iterated
logarithm"; Howard, Ramdas, McAuliffe & Sekhon 2021, Ann. Statist. 49(2), "Time-uniform,
nonparametric, nonasymptotic confidence sequences", §3 conjugate mixtures, the beta-binomial
case; Waudby-Smith & Ramdas 2023, JRSS-B, "Estimating means of bounded random variables by
betting", discuss it for bounded means): for X ∈ [0, 1] with mean μ and any p ∈ (0, 1),

    E[(p/μ)^X ((1 − p)/(1 − μ))^(1 − X)] ≤ 1,

because x ↦ (p/μ)^x ((1−p)/(1−μ))^(1−x) is convex (an exponential of a linear function), so
its mean is at most its chord's, (1 − μ)(1 − p)/(1 − μ) + μ p/μ = 1. The product over n
observations is therefore a nonnegative supermartingale for every p ("sub-Bernoulli"), and so
is its mixture over p ~ Beta(a, b) (Fubini), which has the closed form

    M_n(μ) = B(a + S, b + n − S) / B(a, b) / (μ^S (1 − μ)^(n − S)),   S = Σ X_i.

Ville's inequality gives P(∃n: M_n(μ) ≥ 1/α) ≤ α, so

    C_n = {μ : log M_n(μ) < log(1/α)}

is a confidence sequence. log M_n is convex in μ (−log is convex) and at μ = S/n it is the
log of a mixture over the maximum likelihood, ≤ 0: C_n is an interval around S/n, whose ends
:func:`confidence_sequence` finds by bisection (vectorised; the returned ends lie just outside
the set, so the interval errs on the wide side).

Why this one: it needs only each arm's count and sum, which the live experiment's database
aggregates in one query (status stays O(K) in Python); empirical-Bernstein and betting
sequences are tighter for low-variance rewards but need every observation in order. For 0/1
rewards it is exact in the sense that its only slack is the mixture's (no Hoeffding or
Bernstein relaxation). The prior Beta(1/2, 1/2) (Krichevsky–Trofimov / Jeffreys) keeps the
mixture's regret against the best p within ½ log n + O(1) uniformly over S/n, so a rate
near 0 (conversions) costs no more than one near 1/2. Measured at α = 0.05/3 against Beta(1, 1):
5–7% narrower at a rate of 0.02, equal at 0.1, 2–3% wider at 0.3–0.5 (n = 100 to 10,000).

Validity under adaptive allocation: ``n`` is an arm's own number of rewards. The arm's rewards,
taken in the order they were drawn, have conditional mean μ given everything before them
(rewards of other arms, the algorithm's choices), so M_n(μ) is a supermartingale in the arm's
own count whatever the algorithm did; the count at any look is a stopping time and Ville's
inequality covers the supremum over all counts. Looks at arbitrary times (optional stopping,
continuous monitoring) are covered by the same supremum.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["PRIOR", "bounded_sequence", "confidence_sequence", "difference_bounds",
           "log_mixture"]

#: Beta(a, b) prior of the mixture over p (Krichevsky–Trofimov / Jeffreys).
PRIOR: tuple[float, float] = (0.5, 0.5)

# Bisection halves the bracket 60 times: 2**-60 < 1e-18, far below any printed digit.
_STEPS = 60

# math.lgamma, elementwise: scipy.special (betaln, xlogy) costs about 0.8 s to import, which
# every CLI `status` would pay (tests/test_startup.py); the arrays here hold one value per arm
# (or per arm and look), so a Python-level lgamma is cheap.
_lgamma = np.vectorize(math.lgamma, otypes=[float])


def betaln(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """log B(a, b) for a, b > 0, elementwise."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x·log(y), with 0·log(0) = 0 (as scipy.special.xlogy)."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, x * np.log(y))


def log_mixture(successes: np.ndarray, n: np.ndarray, mu: np.ndarray,
                prior: tuple[float, float] = PRIOR) -> np.ndarray:
    """log M_n(μ) of the beta-binomial mixture (module docstring), elementwise.

    Parameters
    ----------
    successes, n : array_like
        S = Σ X_i (real: rewards rescaled to [0, 1] need not be 0/1) and the count n ≥ S.
    mu : array_like
        Candidate means in [0, 1].
    prior : (a, b)
        The Beta prior of the mixture.
    """
    a, b = prior
    S = np.asarray(successes, dtype=float)
    F = np.asarray(n, dtype=float) - S
    mu = np.asarray(mu, dtype=float)
    # xlogy(0, 0) = 0: a mean of 0 (or 1) is not excluded by data that never left it
    return betaln(a + S, b + F) - betaln(a, b) - xlogy(S, mu) - xlogy(F, 1.0 - mu)


def confidence_sequence(successes: np.ndarray, n: np.ndarray, alpha: float,
                        prior: tuple[float, float] = PRIOR) -> tuple[np.ndarray, np.ndarray]:
    """Ends of the beta-binomial confidence sequence at level 1 − ``alpha`` for means in [0, 1].

    Parameters
    ----------
    successes : array_like
        Sum of the observations rescaled to [0, 1] (for 0/1 rewards: the successes).
    n : array_like
        Number of observations (same shape); where n = 0 the interval is [0, 1].
    alpha : float
        Error probability over *all* looks together, in (0, 1).
    prior : (a, b)
        The mixture's Beta prior (default :data:`PRIOR`).

    Returns
    -------
    low, high : ndarray
        ``{μ : log M_n(μ) < log(1/α)}``'s ends, rounded outwards (the set is an interval).
    """
    S = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    S, n = np.broadcast_arrays(S, n)
    threshold = np.log(1.0 / alpha)
    centre = np.divide(S, n, out=np.full(S.shape, 0.5), where=n > 0)
    centre = np.clip(centre, 0.0, 1.0)  # rounding of rescaled sums must not leave [0, 1]

    a, b = prior
    F = n - S
    # log M_n(μ) = mixture − xlogy(S, μ) − xlogy(F, 1 − μ): the first term is fixed, compute once
    bar = threshold - (betaln(a + S, b + F) - betaln(a, b))

    def excluded(mu: np.ndarray) -> np.ndarray:  # log_mixture(S, n, mu, prior) >= threshold
        return -xlogy(S, mu) - xlogy(F, 1.0 - mu) >= bar

    def end(edge: float) -> np.ndarray:
        """The end on the side of ``edge`` (0 or 1): log M is monotone between the centre and
        the edge, so bisect with out = excluded, inside = kept."""
        out, inside = np.full(S.shape, edge), centre.copy()
        for _ in range(_STEPS):
            mid = 0.5 * (out + inside)
            bad = excluded(mid)
            out = np.where(bad, mid, out)
            inside = np.where(bad, inside, mid)
        return np.where(excluded(np.full(S.shape, edge)), out, edge)

    low, high = end(0.0), end(1.0)
    empty = n <= 0
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


def bounded_sequence(total: np.ndarray, n: np.ndarray, low: np.ndarray | float,
                     high: np.ndarray | float, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`confidence_sequence` for the mean of values in [``low``, ``high``] (arrays that
    broadcast against ``n``: one range per row, say), from each sequence's sum ``total`` and
    count ``n``: the values are rescaled to [0, 1] (their sum clipped to [0, n] against
    rounding) and the ends scaled back."""
    span = np.asarray(high, dtype=float) - low
    scaled = np.clip((np.asarray(total, dtype=float) - n * low) / span, 0.0, n)
    a, b = confidence_sequence(scaled, n, alpha)
    return low + span * a, low + span * b


def difference_bounds(low: np.ndarray, high: np.ndarray, control: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on ``mean_a − mean_control`` for every arm a (last axis) that hold whenever
    every arm's interval [``low``, ``high``] holds: [low_a − high_c, high_a − low_c]."""
    return low - high[..., control, None], high - low[..., control, None]
