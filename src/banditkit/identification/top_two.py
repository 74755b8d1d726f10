"""Top-two Thompson sampling (Russo, 2016, "Simple Bayesian algorithms for best arm
identification", Section 3, TTTS) with the Chernoff (GLR) stopping rule of Garivier and
Kaufmann (2016, "Optimal best arm identification with fixed confidence", Section 3).

Sampling (one pull per round): draw θ from the posterior; I = argmax θ (ties to the lowest
index). With probability β (1/2 by default, Russo's recommendation) pull I; otherwise redraw θ
until its argmax J ≠ I and pull J, as Russo's algorithm does. The redraws are read in blocks of
64 (the whole block's randomness is read; J is the argmax of the block's first draw naming
another arm), up to ``max_redraws`` draws in all.

When every one of those draws names I (the posterior gives I probability above about
1 − 1/``max_redraws``, which happens late in every run: near stopping the posterior mass off I
is about e^{−β(t, δ)}), J is drawn from the **posterior probability of beating the leader**:
P(J = j) ∝ P(θ_j > θ_I) for j ≠ I, from one uniform. This is not Russo's law of J (that is
P(argmax θ = j | argmax θ ≠ I)), but it is close to it when one alternative dominates and, like
it, gives every arm a chance in proportion to how plausibly it beats the leader — a cap on the
redraws is needed to bound the time per pull, and the challenger it leaves must not be the
second-best arm alone (the previous fallback, "the largest mean among the last draws", starved
the other arms: Bernoulli (0.5, 0.45, 0.42), δ = 0.1 stopped in 0 of 5 runs within 20,000
pulls). P(θ_j > θ_I) is exact for the Gaussian posterior, Φ((m_j − m_I)/√(v_j + v_I)), and its
normal approximation with the Beta posterior's means and variances for the Beta posterior; it
is computed in logs (log Φ with its asymptotic tail), so it stays positive however concentrated
the posterior is.

Posteriors: Beta(S + a₀, F + b₀) (uniform prior (1, 1) by default, Jeffreys' (½, ½) allowed)
drawn from 5 uniforms per arm (:mod:`banditkit.estimation.beta_draws`), or Gaussian
N(S/(n + 1), σ²/(n + 1)) (Agrawal & Goyal 2013's, a N(0, σ²) prior) from one standard normal
per arm.

Stopping: with î the empirical best (ties to the lowest index) and every arm pulled once, stop
when Z(t) = min_{j ≠ î} Z_{î,j}(t) > β(t, δ), where Z_{î,j} is the generalised likelihood ratio

    n_î kl(μ̂_î, m) + n_j kl(μ̂_j, m),   m = (n_î μ̂_î + n_j μ̂_j)/(n_î + n_j),

(Bernoulli kl; the Gaussian form is (μ̂_î − μ̂_j)² / (2σ²(1/n_î + 1/n_j))). The threshold is
β(t, δ) = log(2t(K − 1)/δ) by default (``threshold="theory"``): Garivier & Kaufmann (2016,
Theorem 10, COLT proceedings PMLR 49) prove that with it P(τ < ∞, î_τ ≠ a*) ≤ δ in the
Bernoulli model, whatever the sampling rule (their Proposition 12 is the general
exponential-family statement for β = log(C t^α/δ) with an unspecified C(α, K)); for Gaussian
arms it is the threshold top-two papers run (Jourdan et al. 2022), not covered by Theorem 10's
proof. ``threshold="heuristic"`` is log((log t + 1)/δ),
the smaller threshold of their experiments (Section 6), not proved δ-correct. The
recommendation is the empirical best arm.

:mod:`.top_two_kernel` runs the same trial compiled (numba), bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from ..estimation.beta_draws import BETA_UNIFORMS, beta_from_uniforms
from ..estimation.posteriors import check_prior, kl_bernoulli
from ..protocol import Algorithm, Batch
from ..validation import check_positive, check_positive_int, check_probability

__all__ = ["TopTwoThompson", "challenger_from_beating", "chernoff_scalar",
           "chernoff_statistic", "log_normal_cdf", "posterior_draws", "redraw_challenger",
           "stopping_threshold"]

BLOCK = 64  # redraws read at once
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def stopping_threshold(t: int, delta: float, n_arms: int, kind: str = "theory") -> float:
    """β(t, δ): log(2t(K − 1)/δ) ("theory", Garivier & Kaufmann 2016, Theorem 10) or
    log((log t + 1)/δ) ("heuristic", their Section 6)."""
    if kind == "theory":
        return math.log(2.0 * t * max(n_arms - 1, 1) / delta)
    return math.log((math.log(max(t, 1)) + 1.0) / delta)


def chernoff_statistic(pulls: np.ndarray, sums: np.ndarray, model: str = "bernoulli",
                       sigma: float = 1.0) -> tuple[int, float]:
    """(î, Z(t)): the empirical best arm and min_{j≠î} of the GLR statistic (0 while an arm is
    unpulled), vectorised (:func:`chernoff_scalar` is the loop the algorithm runs)."""
    K = pulls.size
    if K == 1:
        return 0, np.inf
    if np.any(pulls == 0):
        means = np.divide(sums, pulls, out=np.zeros(K), where=pulls > 0)
        return int(np.argmax(means)), 0.0
    means = sums / pulls
    best = int(np.argmax(means))
    others = np.arange(K) != best
    n_b, n_j = pulls[best], pulls[others]
    mu_b, mu_j = means[best], means[others]
    if model == "gaussian":
        z = (mu_b - mu_j) ** 2 / (2 * sigma ** 2 * (1.0 / n_b + 1.0 / n_j))
    else:
        m = (n_b * mu_b + n_j * mu_j) / (n_b + n_j)
        z = n_b * kl_bernoulli(mu_b, m) + n_j * kl_bernoulli(mu_j, m)
    z = np.where(mu_j < mu_b, z, 0.0)
    return best, float(z.min())


def _kl(p: float, q: float) -> float:
    """Bernoulli kl(p, q) (0 log 0 = 0), one pair."""
    out = 0.0
    if p > 0.0:
        out += p * math.log(p / q)
    if p < 1.0:
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


def chernoff_scalar(pulls: np.ndarray, sums: np.ndarray, gaussian: bool, sigma: float
                    ) -> tuple[int, float]:
    """:func:`chernoff_statistic` one arm at a time (the compiled kernel runs this very
    function, so the class and the kernel stop at the same pull)."""
    K = pulls.shape[0]
    best = 0
    best_mean = -math.inf
    unpulled = False
    for k in range(K):
        n = pulls[k]
        if n == 0:
            unpulled = True
        mean = sums[k] / n if n > 0 else 0.0
        if mean > best_mean:
            best_mean = mean
            best = k
    if unpulled:
        return best, 0.0
    n_b = float(pulls[best])
    z = math.inf
    for j in range(K):
        if j == best:
            continue
        n_j = float(pulls[j])
        mu_j = sums[j] / n_j
        if not mu_j < best_mean:
            return best, 0.0
        if gaussian:
            d = best_mean - mu_j
            zj = d * d / (2.0 * sigma * sigma * (1.0 / n_b + 1.0 / n_j))
        else:
            m = (n_b * best_mean + n_j * mu_j) / (n_b + n_j)
            zj = n_b * _kl(best_mean, m) + n_j * _kl(mu_j, m)
        if zj < z:
            z = zj
    return best, z


def log_normal_cdf(x: float) -> float:
    """log Φ(x), accurate in the far left tail: log(erfc(−x/√2)/2) down to x = −30, then the
    asymptotic series −x²/2 − log(−x) − log √(2π) + log(1 − x⁻² + 3x⁻⁴ − 15x⁻⁶) (relative error
    below 105/x⁸ < 2e-10 there)."""
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    y = 1.0 / (x * x)
    return -0.5 * x * x - math.log(-x) - _LOG_SQRT_2PI + math.log(1.0 - y + 3.0 * y * y
                                                                   - 15.0 * y * y * y)


def challenger_from_beating(means: np.ndarray, variances: np.ndarray, leader: int,
                            u: float) -> int:
    """The fallback challenger: J = j ≠ leader with probability ∝ P(θ_j > θ_leader) under
    independent normal posteriors N(means, variances), by inversion of the uniform ``u``."""
    K = means.shape[0]
    logs = np.empty(K)
    top = -math.inf
    for j in range(K):
        if j == leader:
            continue
        spread = math.sqrt(variances[j] + variances[leader])
        logs[j] = log_normal_cdf((means[j] - means[leader]) / spread)
        if logs[j] > top:
            top = logs[j]
    total = 0.0
    for j in range(K):
        if j != leader:
            logs[j] = math.exp(logs[j] - top)
            total += logs[j]
    target = u * total
    last = leader
    acc = 0.0
    for j in range(K):
        if j == leader:
            continue
        acc += logs[j]
        last = j
        if target < acc:
            return j
    return last  # round-off: u·total at the very top


def posterior_moments(posterior_beta: bool, pulls: np.ndarray, sums: np.ndarray, a0: float,
                      b0: float, sigma: float, means: np.ndarray, variances: np.ndarray
                      ) -> None:
    """The posterior means and variances of every arm, into ``means`` and ``variances``."""
    for k in range(pulls.shape[0]):
        if posterior_beta:
            a = sums[k] + a0
            b = (pulls[k] - sums[k]) + b0
            s = a + b
            means[k] = a / s
            variances[k] = a * b / (s * s * (s + 1.0))
        else:
            n1 = pulls[k] + 1.0
            means[k] = sums[k] / n1
            variances[k] = sigma * sigma / n1


def posterior_draws(rng: np.random.Generator, posterior: str, pulls: np.ndarray,
                    sums: np.ndarray, prior: tuple[float, float], sigma: float, size: int
                    ) -> np.ndarray:
    """``size`` joint posterior draws, shape (size, K), from ``rng`` in the kernel's order:
    Beta(S + a₀, F + b₀) from 5 uniforms per arm, or N(S/(n + 1), σ²/(n + 1))."""
    if posterior == "gaussian":
        n1 = pulls + 1.0
        z = rng.standard_normal((size, pulls.shape[0]))
        return sums / n1 + sigma * z / np.sqrt(n1)
    a = sums + prior[0]
    b = (pulls - sums) + prior[1]
    return beta_from_uniforms(a, b, rng.random((size, BETA_UNIFORMS * pulls.shape[0])))


def redraw_challenger(rng: np.random.Generator, posterior: str, pulls: np.ndarray,
                      sums: np.ndarray, prior: tuple[float, float], sigma: float, leader: int,
                      max_redraws: int) -> tuple[int, bool]:
    """(J, whether the fallback drew it): Russo's redraws, read in blocks of :data:`BLOCK`,
    until a draw's argmax differs from ``leader``; after ``max_redraws`` draws that all name
    it, J ∝ P(θ_j > θ_leader) (:func:`challenger_from_beating`)."""
    drawn = 0
    while drawn < max_redraws:
        size = min(BLOCK, max_redraws - drawn)
        best = np.argmax(posterior_draws(rng, posterior, pulls, sums, prior, sigma, size),
                         axis=1)
        differ = np.flatnonzero(best != leader)
        if differ.size:
            return int(best[differ[0]]), False
        drawn += size
    K = pulls.shape[0]
    means, variances = np.empty(K), np.empty(K)
    posterior_moments(posterior == "beta", pulls, sums, prior[0], prior[1], sigma, means,
                      variances)
    return challenger_from_beating(means, variances, leader, float(rng.random())), True


class TopTwoThompson(Algorithm):
    """Top-two Thompson sampling (Russo 2016) with Chernoff stopping.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    rng : Generator
        Internal randomness ξ (posterior draws, the β coin, the fallback's uniform).
    delta : float
        Confidence δ ∈ (0, 1).
    beta : float
        Probability of pulling the leader I, in (0, 1); Russo's 1/2 by default.
    posterior : {"beta", "gaussian"}
        Beta-Bernoulli posterior (rewards in [0, 1], Bernoulli GLR) or Gaussian
        N(S/(n + 1), σ²/(n + 1)) (Gaussian GLR with variance σ²).
    threshold : {"theory", "heuristic"}
        β(t, δ) of the stopping rule (module docstring).
    sigma : float
        Noise scale of the Gaussian form.
    max_redraws : int
        Cap on the posterior redraws looking for a challenger, after which J is drawn from
        the posterior probability of beating the leader (module docstring).
    prior : (a0, b0)
        Beta prior, both > 0: (1, 1) uniform, (½, ½) Jeffreys'.
    horizon : int, optional
        Budget cap: stop (unstopped) after this many pulls.
    """

    kind = "identification"
    #: The compiled kernel (:mod:`banditkit.engines`).
    engines = "banditkit.identification.top_two_kernel:top_two_engine"

    def __init__(self, n_arms: int, rng: np.random.Generator, *, delta: float = 0.05,
                 beta: float = 0.5, posterior: str = "beta", threshold: str = "theory",
                 sigma: float = 1.0, max_redraws: int = 1_000,
                 prior: tuple[float, float] = (1.0, 1.0), horizon: int | None = None) -> None:
        super().__init__(check_integer_at_least_2(n_arms))
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (the internal randomness xi), got "
                             f"{type(rng).__name__}")
        self.delta = check_probability(delta, "delta")
        self.beta = check_probability(beta, "beta")
        if posterior not in ("beta", "gaussian"):
            raise ValueError(f"posterior must be 'beta' or 'gaussian', got {posterior!r}")
        if threshold not in ("theory", "heuristic"):
            raise ValueError(f"threshold must be 'theory' or 'heuristic', got {threshold!r}")
        self.posterior, self.threshold = posterior, threshold
        self.sigma = check_positive(sigma, "sigma")
        self.max_redraws = check_positive_int(max_redraws, "max_redraws")
        self.prior = check_prior(prior)
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.reward_range = (0.0, 1.0) if posterior == "beta" else None
        self.rng = rng
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self._stopped = False
        self._statistic = 0.0
        self.fallbacks = 0  # challengers drawn from P(θ_j > θ_I) after max_redraws redraws

    def _draws(self, size: int) -> np.ndarray:
        """``size`` joint posterior draws, shape (size, K), from ξ in the kernel's order."""
        return posterior_draws(self.rng, self.posterior, self.pulls, self.sums, self.prior,
                               self.sigma, size)

    def _challenger(self, leader: int) -> int:
        """Russo's redraws until the argmax differs from the leader, then the fallback."""
        arm, fell_back = redraw_challenger(self.rng, self.posterior, self.pulls, self.sums,
                                           self.prior, self.sigma, leader, self.max_redraws)
        self.fallbacks += fell_back
        return arm

    def _next_batch(self) -> Batch | None:
        if self._stopped or (self.horizon is not None and self.t >= self.horizon):
            return None
        leader = int(np.argmax(self._draws(1)[0]))
        if self.rng.random() < self.beta:
            return Batch.single(leader)
        return Batch.single(self._challenger(leader))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        np.add.at(self.pulls, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, rewards)
        _, z = chernoff_scalar(self.pulls, self.sums, self.posterior == "gaussian", self.sigma)
        self._statistic = z
        if z > stopping_threshold(self.t, self.delta, self.n_arms, self.threshold):
            self._stopped = True

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def recommendation(self) -> int | None:
        if self.t == 0:
            return None
        means = np.divide(self.sums, self.pulls, out=np.zeros(self.n_arms),
                          where=self.pulls > 0)
        return int(np.argmax(means))

    @property
    def info(self) -> dict:
        return {"statistic": self._statistic, "stopped_by_rule": self._stopped,
                "fallbacks": self.fallbacks}


def check_integer_at_least_2(n_arms: object) -> int:
    k = check_positive_int(n_arms, "n_arms")
    if k < 2:
        raise ValueError(f"n_arms must be at least 2 for best-arm identification, got {k}")
    return k
