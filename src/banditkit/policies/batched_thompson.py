"""Batched Thompson sampling: each batch (a day's traffic, say) is allocated by each arm's
posterior probability of being the best, with a minimum share per arm — the allocation the
practitioner tools run (GrowthBook: Gaussian Thompson sampling with a 1% floor per arm,
reweighted per period; Statsig, Optimizely, Amplitude: Thompson sampling reweighted hourly or
daily; /work/shared/research/live-experiments.md).

Each batch of n pulls:

1. P_k = posterior probability that arm k has the largest mean, estimated from M Monte-Carlo
   draws of the posteriors (M = 10,000 by default: the standard error of each P_k is at most
   0.5/sqrt(M) = 0.005, so the shares move by less than a percentage point between two
   estimates from the same data). The posteriors are those of
   :class:`~banditkit.policies.index.thompson.ThompsonSampling` (Beta(1, 1) prior, or Gaussian
   N(μ̂, σ²/(n + 1)) of Agrawal & Goyal 2013).
2. Shares w_k = m + (1 − K·m)·P_k with m the minimum share (1%, GrowthBook's floor, by
   default): every arm keeps at least m of the traffic, so an arm that looked bad early is
   still measured, and the shares sum to 1.
3. A control floor (``control_floor`` f, 0 by default: the paper's and GrowthBook's rule): the
   control arm (``control_arm``, the first by default) keeps at least a share f, the other
   arms' shares scaled down to 1 − f. Differences to the control are what a live experiment's
   verdicts compare, and without a floor Thompson sampling starves the control once another arm
   leads (a median of 1,103 of 40,000 units in issue 23): a live experiment takes
   f = 0.2 (:data:`banditkit.live.journal.defaults.LIVE_DEFAULTS`, measured there).
4. Pulls s_k from w by the design apportionment of Fiez et al. (2019, Appendix B;
   :func:`banditkit.design.rounding.round_allocation`): Σ s = n, and s_k ≥ (n − K)·w_k, so
   each arm gets at least (n − K)·m pulls of the batch.

The posterior is updated from the batch's run sums only, once the whole batch is answered, which
is what a live experiment with daily batches can do. With batch size 1 and m = 0 each pull is
played with probability P_k, i.e. sequential Thompson sampling in distribution.
"""

from __future__ import annotations

import numpy as np

from ..design.rounding import round_allocation
from ..estimation.posteriors import bounded_reward_range, check_prior, sample_posterior
from ..protocol import Algorithm, Batch
from ..validation import check_positive, check_positive_int
from .index.base import check_reward_range

__all__ = ["BatchedThompson", "probability_best"]

#: Monte-Carlo draws of the posteriors per batch.
DEFAULT_DRAWS = 10_000


def probability_best(theta: np.ndarray) -> np.ndarray:
    """Fraction of rows of ``theta`` (M, K) in which each arm is the argmax (ties to the lowest
    index)."""
    M, K = theta.shape
    return np.bincount(np.argmax(theta, axis=1), minlength=K) / M


class BatchedThompson(Algorithm):
    """Thompson sampling allocating whole batches by the posterior probability of being best.

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    rng : Generator
        Internal randomness ξ (the Monte-Carlo posterior draws).
    batch_size : int
        Pulls per batch (e.g. a day's traffic).
    min_share : float
        Share of each batch every arm keeps, in [0, 1/K]; 0.01 by default (GrowthBook's floor).
    posterior : {"beta", "gaussian"}
        Beta-Bernoulli with prior ``prior`` (default) or Gaussian N(μ̂, σ²/(n + 1)).
    draws : int
        Monte-Carlo draws M per batch (10,000 by default).
    prior : (a0, b0)
        Beta prior, both ≥ 1; (1, 1) uniform.
    sigma : float
        Scale of the Gaussian posterior.
    horizon : int, optional
        Stop after this many pulls (the last batch is cut to fit).
    reward_range : (lo, hi) or None, optional
        (0, 1) for the Beta form (required); ``None`` by default for the Gaussian form.
    control_floor : float
        Minimum share of the control arm, in [0, 1) (0: none, the paper's rule).
    control_arm : int
        The control's index.
    """

    kind = "regret"

    def __init__(self, n_arms: int, rng: np.random.Generator, *, batch_size: int,
                 min_share: float = 0.01, posterior: str = "beta", draws: int = DEFAULT_DRAWS,
                 prior: tuple[float, float] = (1.0, 1.0), sigma: float = 1.0,
                 horizon: int | None = None,
                 reward_range: tuple[float, float] | str | None = "default",
                 control_floor: float = 0.0, control_arm: int = 0) -> None:
        super().__init__(check_positive_int(n_arms, "n_arms"))
        if (isinstance(control_floor, bool)
                or not isinstance(control_floor, (int, float, np.integer, np.floating))
                or not 0 <= control_floor < 1):
            raise ValueError(f"control_floor must be a number in [0, 1), got {control_floor!r}")
        if (isinstance(control_arm, bool) or not isinstance(control_arm, (int, np.integer))
                or not 0 <= control_arm < self.n_arms):
            raise ValueError(f"control_arm must be an arm index in [0, {self.n_arms}), got "
                             f"{control_arm!r}")
        self.control_floor = float(control_floor)
        self.control_arm = int(control_arm)
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (the internal randomness xi), got "
                             f"{type(rng).__name__}")
        self.batch_size = check_positive_int(batch_size, "batch_size")
        if (isinstance(min_share, bool)
                or not isinstance(min_share, (int, float, np.integer, np.floating))
                or not (0 <= min_share <= 1.0 / self.n_arms)):
            raise ValueError(f"min_share must be a number in [0, 1/K] = [0, {1 / self.n_arms:g}]"
                             f", got {min_share!r}")
        if posterior not in ("beta", "gaussian"):
            raise ValueError(f"posterior must be 'beta' or 'gaussian', got {posterior!r}")
        self.draws = check_positive_int(draws, "draws")
        self.prior = check_prior(prior)
        self.sigma = check_positive(sigma, "sigma")
        reward_range = bounded_reward_range(
            posterior == "beta", reward_range,
            "posterior='beta': the Beta posterior counts successes and failures in [0, 1]")
        self.reward_range = check_reward_range(reward_range)
        self.min_share = float(min_share)
        self.posterior = posterior
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.rng = rng
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self.last_probabilities: np.ndarray | None = None
        self.last_shares: np.ndarray | None = None

    def probabilities(self) -> np.ndarray:
        """Monte-Carlo estimate of P(arm k is best | data) from ``draws`` posterior draws."""
        theta = sample_posterior(self.rng, self.posterior, self.pulls, self.sums, self.draws,
                                 prior=self.prior, sigma=self.sigma)
        return probability_best(theta)

    def shares(self, probabilities: np.ndarray) -> np.ndarray:
        """w = m + (1 − K m) P: at least the minimum share m for every arm, summing to 1; then
        the control raised to its floor f if below it, the others scaled to 1 − f."""
        w = self.min_share + (1.0 - self.n_arms * self.min_share) * probabilities
        c, f = self.control_arm, self.control_floor
        if w[c] < f and self.n_arms > 1:
            rest = 1.0 - w[c]
            w = w * ((1.0 - f) / rest) if rest > 0 else np.full(self.n_arms, 0.0)
            w[c] = f
        return w

    def _next_batch(self) -> Batch | None:
        n = self.batch_size
        if self.horizon is not None:
            if self.t >= self.horizon:
                return None
            n = min(n, self.horizon - self.t)
        p = self.probabilities()
        w = self.shares(p)
        self.last_probabilities, self.last_shares = p, w
        return Batch.from_allocation(round_allocation(w / w.sum(), n))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)

    @property
    def info(self) -> dict:
        return {"batch_size": self.batch_size, "min_share": self.min_share,
                "draws": self.draws, "control_floor": self.control_floor}
