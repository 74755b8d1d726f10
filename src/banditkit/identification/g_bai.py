"""G-BAI: fixed-budget identification from a G-optimal design and an IPS estimate (Xiong et
al., "A/B Testing and Best-arm Identification for Linear Bandits with Robustness to
Non-stationarity", Section 4, Algorithm 1), and a driver that runs many of its trials at once.

Every pull is drawn i.i.d. from the G-optimal design λ* (Eq. (3)); the estimate is the IPS
estimate ``θ̂_T = (1/T) Σ_t A(λ*)⁻¹ x_t r_t``, unbiased for ``θ̄_T`` whatever the schedule θ_t
(:mod:`banditkit.estimation.ips`); the answer is ``argmax_z zᵀθ̂_T``. Its error probability is
at most ``K exp(−T Δ²_(1) / (12 d))`` in any non-stationary environment (Theorem 1).

λ* comes from :func:`.item_designs.g_design` (memoised per arm set) and the pulls from
:func:`.fixed_budget.iid_arms`, both shared with P1-RAGE, P1-Peace and Mixed-Peace.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..engines import Engine
from ..envs.base import Environment
from ..estimation.ips import IPSEstimate
from ..protocol import Batch, DecisionLog
from ..rng import SeedLike, as_generator
from ..simulate import default_checkpoints, simulate
from ..trial import Trial
from ..validation import check_positive, check_positive_int
from .fixed_budget import FixedBudgetIdentifier, best_index, iid_arms, runs_batch
from .item_designs import g_design

__all__ = ["GBAI", "gbai_engine", "gbai_lockstep"]


class GBAI(FixedBudgetIdentifier):
    """G-optimal best-arm identification, G-BAI (Xiong et al., Section 4, Algorithm 1).

    Draws all ``budget`` pulls i.i.d. from the G-optimal design λ* (line 3), forms the IPS
    estimate ``θ̂_T = (1/T) Σ_t A(λ*)⁻¹ x_t r_t`` (line 5) and recommends
    ``argmax_{z∈Z} zᵀθ̂_T`` (line 6), a tie broken with ξ (items the design never pulls have
    estimates that tie exactly at small budgets).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items among which the best is sought; ``None`` means ``Z = X`` (the paper's setting).
    budget : int
        T, the number of pulls (≥ K). The algorithm stops by itself after exactly T pulls.
    design_tol : float
        Certified relative optimality gap of λ* (:func:`banditkit.design.g_optimal`):
        ``max_x ||x||²_{A(λ*)⁻¹} ≤ d (1 + design_tol)``, the Kiefer–Wolfowitz bound that
        Theorem 1 uses, up to that factor.
    rng : Generator or seed, optional
        The internal randomness ξ: which arms are drawn.

    Notes
    -----
    * The pulls do not depend on the rewards, so all T of them are one batch (one ask/tell
      exchange; a caller may answer a prefix of it, and the rest is drawn afresh). In a
      non-stationary environment the batch is a time-ordered sequence: pull ``t`` happens at
      time ``t``.
    * The estimate is computed from per-arm reward sums, ``A(λ*)⁻¹ Xᵀ S / T`` — the same number
      as the per-pull sum, in O(K d) instead of O(T d).
    * The authors' code (``algorithms/g_bai.py``) solves λ* by 1000 Frank–Wolfe steps from the
      uniform design, which leaves every arm a positive weight; the solver here stops on a
      certified gap and returns a sparse optimum (for the Soare instance it puts no weight on
      the extra arm ``x'``). Both are G-optimal; only ``A(λ*)`` invertible matters to the IPS.
    """

    #: The lock-step runner across trials (:mod:`banditkit.engines`).
    engines = "banditkit.identification.g_bai:gbai_engine"

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, budget: int, *,
                 design_tol: float = 0.01, rng: SeedLike = None) -> None:
        design_tol = check_positive(design_tol, "design_tol")
        super().__init__(X, Z, budget, rng)
        self.design_tol = design_tol
        self._weights, self._information = g_design(self.X, design_tol)
        self._ips = IPSEstimate(self.X)

    @property
    def sampling_weights(self) -> np.ndarray:
        """λ*, the distribution every pull is drawn from."""
        return self._weights

    def _next_batch(self) -> Batch | None:
        if self.remaining == 0:
            return None
        return self._sample(self._weights, self.remaining)

    observes_arm_sums = True  # the IPS estimate reads per-arm sums only (line 5)

    def _observe_arm_sums(self, batch: Batch, sums: np.ndarray) -> None:
        self._ips.add(self._weights, sums, batch.n_pulls, information=self._information)
        self.theta_hat = self._ips.theta

    def _estimate(self, batch: Batch, rewards: np.ndarray) -> np.ndarray:
        """θ̂ after one batch from the start, by :meth:`_observe`'s arithmetic (the lock-step
        driver's estimate; leaves this object unchanged)."""
        ips = IPSEstimate(self.X)
        ips.add(self._weights, batch.arm_sums(rewards, self.n_arms), batch.n_pulls,
                information=self._information)
        return ips.theta


def gbai_engine(algorithm: GBAI, env: Environment, horizon: int | None) -> Engine | None:
    """G-BAI's lock-step runner (:attr:`banditkit.protocol.Algorithm.engines`): its exact class
    on a linear environment with the algorithm's own arms and items."""
    if type(algorithm) is not GBAI or not _same_problem(algorithm, env):
        return None
    return Engine("lock-step", run_trials=_gbai_trials)


def _same_problem(algorithm: GBAI, env: Environment) -> bool:
    try:
        X, Z = _problem(env)
    except (AttributeError, TypeError, ValueError):
        return False
    return bool(np.array_equal(X, algorithm.X) and np.array_equal(Z, algorithm.Z))


def _gbai_trials(algorithms: Sequence[GBAI], envs: Sequence[Environment],
                 seeds: Sequence[SeedLike], horizon: int | None,
                 checkpoints: np.ndarray | None) -> list[Trial]:
    """:func:`gbai_lockstep` of fresh G-BAI objects (one factory's: their budget and
    tolerance), each with its own ξ."""
    first = algorithms[0]
    if not all(_same_problem(a, e) and a.budget == first.budget
               and a.design_tol == first.design_tol
               for a, e in zip(algorithms, envs, strict=True)):
        return [simulate(a, e, horizon=horizon, seed=s, checkpoints=checkpoints,
                         engine="reference")
                for a, e, s in zip(algorithms, envs, seeds, strict=True)]
    return gbai_lockstep(envs, [a.xi for a in algorithms], seeds, horizon, checkpoints,
                         budget=first.budget, design_tol=first.design_tol)


def gbai_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator],
                  seeds: Sequence[SeedLike], horizon: int | None,
                  checkpoints: np.ndarray | None, *, budget: int | None = None,
                  design_tol: float = 0.01) -> list[Trial]:
    """Run ``len(seeds)`` trials of :class:`GBAI`, trial ``i`` on ``envs[i]``, in one call.

    Matches :attr:`banditkit.experiments.spec.AlgorithmSpec.lockstep`. Trial ``i`` equals
    ``simulate(GBAI(envs[i].X, envs[i].Z, budget, rng=rngs[i]), envs[i], horizon=horizon,
    seed=seeds[i], checkpoints=checkpoints)`` in everything but ``seconds``: the same pulls
    (``iid_arms`` on ``rngs[i]``), the same rewards (the environment's own ``pull`` on the
    same batch with the same noise Generator, so any environment — stationary, whose
    ``pull`` draws one Normal per run of the batch, or non-stationary, one per pull — answers
    exactly as under ``simulate``), and the same arithmetic for the estimate
    (:class:`~banditkit.estimation.ips.IPSEstimate`), hence the same recommendation, bit for
    bit. A trial's numbers depend only on its own environment, ξ and seed, never on the
    other trials of the call.

    What the call shares: the validation of (X, Z, budget) and λ*, ``A(λ*)`` (once per
    distinct problem), and the best item of an environment object repeated across trials.
    What it saves per trial is the ask/tell bookkeeping; the draws themselves (ξ's uniforms,
    the environment's noise) are per trial and dominate (about 0.6 ms per trial at T = 10⁴).

    Parameters
    ----------
    envs : sequence of Environment
        One linear environment (``X``, ``Z``) per trial; the same object for a fixed instance.
    rngs : sequence of Generator
        ξ of each trial (the draws of the arms).
    seeds : sequence of seed-like
        Noise seed of each trial, as given to :func:`banditkit.simulate`.
    horizon : int or None
        Cap on the pulls, as in :func:`banditkit.simulate`; also the budget when ``budget``
        is not given.
    checkpoints : array of int, optional
        As in :func:`banditkit.simulate` (an identifier records no curve; kept in the Trial).
    budget : int, optional
        T (default: ``horizon``).
    design_tol : float
        As in :class:`GBAI`.

    Returns
    -------
    list of Trial
        ``seconds`` is the wall time of the call divided by the number of trials.
    """
    n = len(seeds)
    if len(envs) != n or len(rngs) != n:
        raise ValueError(f"envs, rngs and seeds must have the same length, got {len(envs)}, "
                         f"{len(rngs)} and {n}")
    if budget is None:
        if horizon is None:
            raise ValueError("gbai_lockstep needs budget or horizon (the budget T)")
        budget = horizon
    budget = check_positive_int(budget, "budget")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
    design_tol = check_positive(design_tol, "design_tol")
    start = time.perf_counter()
    n_pulls = budget if horizon is None else min(budget, horizon)
    if checkpoints is None:
        checkpoints = default_checkpoints(horizon if horizon is not None else n_pulls)
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    # One validated algorithm per distinct problem (X, Z): the same checks as a trial's GBAI,
    # and its λ*, A(λ*); per-trial instances with a common arm set share it too.
    protos: dict[tuple, GBAI] = {}
    best: dict[int, int] = {}
    results = []
    for env, xi, seed in zip(envs, rngs, seeds, strict=True):
        X, Z = _problem(env)
        key = (X.shape, X.tobytes(), Z.shape, Z.tobytes())
        proto = protos.get(key)
        if proto is None:
            proto = protos[key] = GBAI(X, Z, budget, design_tol=design_tol, rng=0)
        seq = iid_arms(xi, proto._weights, budget)
        batch = runs_batch(seq)
        if n_pulls < budget:
            batch = batch.truncated(n_pulls)
        rewards = np.asarray(env.pull(batch, as_generator(seed), 0).rewards,
                             dtype=float).reshape(-1)
        theta = proto._estimate(batch, rewards)
        # the same tie-break as GBAI.recommendation: ξ, after the draws of the arms
        recommendation = best_index(proto.Z @ theta, xi) if n_pulls == budget else None
        if id(env) not in best:
            best[id(env)] = env.best_item(horizon)
        results.append(Trial(
            counts=np.bincount(seq[:n_pulls], minlength=proto.n_arms), n_pulls=n_pulls,
            decisions=DecisionLog.from_runs(batch.arms, batch.counts,
                                            np.array([batch.n_runs])),
            checkpoints=checkpoints, recommendation=recommendation,
            correct=recommendation is not None and recommendation == best[id(env)],
            stopped=n_pulls == budget, n_batches=1, info=proto.info))
    seconds = (time.perf_counter() - start) / max(n, 1)
    for trial in results:
        trial.seconds = seconds
    return results


def _problem(env: Environment) -> tuple[np.ndarray, np.ndarray]:
    X, Z = getattr(env, "X", None), getattr(env, "Z", None)
    if X is None or Z is None:
        raise ValueError(f"G-BAI needs a linear environment with arms X and items Z, got "
                         f"{type(env).__name__}")
    if getattr(env, "n_costs", 0):
        raise ValueError("gbai_lockstep does not run constrained environments")
    return np.asarray(X, dtype=float), np.asarray(Z, dtype=float)
