"""EXP3-IX (Neu, 2015, "Explore no more: improved high-probability regret bounds for
non-stochastic bandits", NeurIPS, Algorithm 1 and Theorem 1): exponential weights over the
arms with *implicit exploration* — the loss estimate of the pulled arm divides by p + γ instead
of p, which biases it down and makes its tail light enough for a high-probability bound with
no explicit uniform mixing.

For t = 1, ..., T:

* p_{t,i} = w_{t,i} / Σ_j w_{t,j}, with w_{t,i} = exp(−η L̃_{t−1,i});
* draw I_t ~ p_t, observe the loss ℓ_{t,I_t} = 1 − reward (rewards in [0, 1]);
* L̃_{t,i} = L̃_{t−1,i} + ℓ_{t,i} 1{I_t = i} / (p_{t,i} + γ).

Theorem 1: with η = 2γ = sqrt(2 log K / (K T)) the regret against any fixed arm is at most
2 sqrt(2 K T log K) + (sqrt(2 K T / log K) + 1) log(2/δ) with probability 1 − δ; these are the
defaults (``eta`` and ``gamma`` override them). It is the adversarial baseline: no assumption
on how rewards are generated, so on a stochastic instance its regret grows like sqrt(T), not
log T.

Randomness: one uniform of ξ per round; the arm is ``searchsorted(cumsum(p), u, "right")``
(inversion, as ``Generator.choice`` with ``p`` does). Fully sequential, one pull a batch;
:func:`banditkit.simulate_trials` runs its trials in lock-step
(:mod:`banditkit.policies.exp3_ix.lockstep`), with the protocol loop's numbers.
"""

from __future__ import annotations

import math

import numpy as np

from ...protocol import Algorithm, Batch
from ...validation import check_positive, check_positive_int

__all__ = ["EXP3IX", "exp_weights", "neu_parameters", "neu_regret_bound"]


def exp_weights(exponents: np.ndarray) -> np.ndarray:
    """exp(z) / Σ exp(z) along the last axis, each exp the C library's (``math.exp``).

    Not numpy's ``exp``: on AVX-512 builds numpy's SIMD loop rounds about 5% of values
    differently in the last bit, and EXP3-IX amplifies such differences (a large η moved the
    loss estimates by O(1) within 500 rounds and changed the pulls), so the class, the
    lock-step runner and the compiled kernel (:mod:`banditkit.policies.exp3_ix.kernel`), which
    numba compiles to the C library's ``exp``, all take this one, and agree on every machine.
    """
    flat = exponents.ravel().tolist()
    w = np.fromiter(map(math.exp, flat), dtype=float, count=len(flat)).reshape(exponents.shape)
    return w / w.sum(axis=-1, keepdims=True)


def neu_parameters(n_arms: int, horizon: int) -> tuple[float, float]:
    """(η, γ) of Neu (2015), Theorem 1: η = 2γ = sqrt(2 log K / (K T))."""
    eta = math.sqrt(2.0 * math.log(n_arms) / (n_arms * horizon))
    return eta, eta / 2.0


def neu_regret_bound(n_arms: int, horizon: int, delta: float) -> float:
    """Neu (2015), Theorem 1: 2 sqrt(2KT log K) + (sqrt(2KT / log K) + 1) log(2/δ)."""
    K, T = n_arms, horizon
    return (2.0 * math.sqrt(2.0 * K * T * math.log(K))
            + (math.sqrt(2.0 * K * T / math.log(K)) + 1.0) * math.log(2.0 / delta))


class EXP3IX(Algorithm):
    """EXP3-IX of Neu (2015), Algorithm 1.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    horizon : int
        T: the defaults of η and γ read it, and it stops there.
    rng : Generator
        ξ: one uniform per round.
    eta, gamma : float, optional
        Learning rate η > 0 and implicit exploration γ ≥ 0; default Theorem 1's
        η = 2γ = sqrt(2 log K / (K T)).
    """

    kind = "regret"
    reward_range = (0.0, 1.0)  # losses 1 − reward in [0, 1], Neu's assumption
    runs_per_pull = 1.0  # one pull a batch (simulate's memory check)
    #: The lock-step engine across trials (:mod:`banditkit.policies.exp3_ix.lockstep`).
    engines = "banditkit.policies.exp3_ix.lockstep:exp3_ix_engine"

    def __init__(self, n_arms: int, horizon: int, *, rng: np.random.Generator,
                 eta: float | None = None, gamma: float | None = None) -> None:
        n_arms = check_positive_int(n_arms, "n_arms")
        if n_arms < 2:
            raise ValueError(f"n_arms must be >= 2 (log K > 0 in η), got {n_arms}")
        horizon = check_positive_int(horizon, "horizon")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (the internal randomness xi of "
                             f"EXP3IX), got {type(rng).__name__}")
        default_eta, default_gamma = neu_parameters(n_arms, horizon)
        self.eta = default_eta if eta is None else check_positive(eta, "eta")
        if gamma is None:
            gamma = default_gamma
        elif (isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer,
                                                                 np.floating))
              or not (np.isfinite(gamma) and gamma >= 0)):
            raise ValueError(f"gamma must be a number >= 0, got {gamma!r}")
        self.gamma = float(gamma)
        super().__init__(n_arms)
        self.horizon = horizon
        self.rng = rng
        self.losses = np.zeros(n_arms)  # L̃: cumulative implicit-exploration loss estimates
        self._p = np.full(n_arms, 1.0 / n_arms)

    def probabilities(self) -> np.ndarray:
        """p_t ∝ exp(−η L̃) (computed from L̃ − min L̃, which leaves p unchanged)."""
        return exp_weights(-self.eta * (self.losses - self.losses.min()))

    def _next_batch(self) -> Batch | None:
        if self.t >= self.horizon:
            return None
        self._p = self.probabilities()
        u = self.rng.random()
        arm = int(np.searchsorted(np.cumsum(self._p), u, side="right"))
        return Batch.single(min(arm, self.n_arms - 1))  # u just below 1 with rounded cumsum

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        for arm, count, total in zip(batch.arms, batch.counts, rewards, strict=True):
            loss = float(count) - float(total)  # Σ (1 − r) over the run (one pull here)
            self.losses[arm] += loss / (float(self._p[arm]) + self.gamma)

    @property
    def info(self) -> dict:
        return {"eta": self.eta, "gamma": self.gamma}
