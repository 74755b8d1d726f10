"""Replicability audit: does a policy pull the same arms when only the rewards change?

Esfandiari et al. (ICLR 2023, Definition 1): a policy is ρ-replicable if two executions with
the same internal randomness ξ and independent rewards produce the same sequence of pulls with
probability ≥ 1 − ρ. :func:`audit` measures this: it runs ``pairs`` pairs of executions, the
two of a pair sharing ξ (stream keyed by the pair) and drawing independent noise (streams keyed
by (pair, execution)), and reports

* the fraction of pairs whose decision sequences differ — the non-replication rate — with its
  Clopper–Pearson 95% interval, against the target ρ;
* the number of pulls at which the two executions differ (mean, min, max over pairs);
* the regret (regret policies) or recommendations (identifiers) of each execution.

Identifiers replicate when they pull the same sequence *and* recommend the same item.

:func:`pair_statistics` does the same comparison on stored trials that were run as pairs
(a figure with ``paired=True``: trials 2j and 2j + 1 share ξ).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..blas import single_threaded_blas
from ..engines import check_engine
from ..envs.base import Environment
from ..protocol import Algorithm, Batch, DecisionLog
from ..rng import STREAMS, derive_seed, stream
from ..simulate import run_trials, simulate, trials_engine
from ..trial import Trial
from ..validation import check_positive_int, check_probability
from .progress import progress_bar

__all__ = [
    "AuditResult",
    "PairStatistics",
    "audit",
    "clopper_pearson",
    "pair_statistics",
    "pairs_frame",
    "statistics_of_pairs",
]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval for a binomial proportion k/n."""
    n = check_positive_int(n, "n")
    if not 0 <= k <= n:
        raise ValueError(f"k must lie in [0, n], got k={k}, n={n}")
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


@dataclass
class PairStatistics:
    """What is measured on n pairs of executions.

    Attributes
    ----------
    identical : bool array, shape (n,)
        Whether the two executions of each pair made the same decisions.
    differences : int array, shape (n,)
        Pulls at which the two pull sequences differ.
    regret : float array, shape (n, 2) or None
        Final regret of each execution (regret policies).
    recommendations : array, shape (n, 2) or None
        Recommendation of each execution (identifiers).
    n_pulls : int array, shape (n, 2)
    rho : float or None
        The target ρ, when the policy has one.
    """

    identical: np.ndarray
    differences: np.ndarray
    n_pulls: np.ndarray
    regret: np.ndarray | None = None
    recommendations: np.ndarray | None = None
    rho: float | None = None

    @property
    def pairs(self) -> int:
        return int(self.identical.size)

    @property
    def n_identical(self) -> int:
        return int(self.identical.sum())

    @property
    def non_replication(self) -> float:
        """Fraction of pairs whose decisions differ (the estimate of P[not replicated])."""
        return 1.0 - self.n_identical / self.pairs

    @property
    def interval(self) -> tuple[float, float]:
        """Clopper–Pearson 95% interval of the non-replication probability."""
        return clopper_pearson(self.pairs - self.n_identical, self.pairs)

    @property
    def verdict(self) -> str:
        """``"replicable"`` (whole interval ≤ ρ), ``"not replicable"`` (interval above ρ),
        ``"inconclusive"`` (interval straddles ρ: more pairs needed) or ``"no target"``."""
        if self.rho is None:
            return "no target"
        lo, hi = self.interval
        if hi <= self.rho:
            return "replicable"
        if lo > self.rho:
            return "not replicable"
        return "inconclusive"

    def summary(self) -> dict[str, Any]:
        """Plain numbers (the ``--json`` document)."""
        lo, hi = self.interval
        out: dict[str, Any] = {
            "pairs": self.pairs, "identical_pairs": self.n_identical,
            "non_replication_rate": self.non_replication,
            "non_replication_ci95": [lo, hi], "rho": self.rho, "verdict": self.verdict,
            "differing_pulls": {"mean": float(self.differences.mean()),
                                "min": int(self.differences.min()),
                                "max": int(self.differences.max())},
            "n_pulls_mean": float(self.n_pulls.mean()),
        }
        if self.regret is not None:
            out["regret"] = {"mean": float(self.regret.mean()),
                             "min": float(self.regret.min()),
                             "max": float(self.regret.max()),
                             "per_pair": self.regret.tolist()}
        if self.recommendations is not None:
            out["recommendations"] = self.recommendations.tolist()
        return out


@dataclass
class AuditResult(PairStatistics):
    """:class:`PairStatistics` of an audit, with what was audited."""

    policy: str = ""
    instance: str = ""
    horizon: int | None = None
    seed: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    #: Identifier executions cut at the horizon before they stopped by themselves (their
    #: agreement says nothing about their final answers).
    capped: int = 0

    def summary(self) -> dict[str, Any]:
        return {"policy": self.policy, "instance": self.instance, "horizon": self.horizon,
                "seed": self.seed, "params": dict(self.params), "capped": self.capped,
                **super().summary()}

    def render(self) -> str:
        """A short human-readable report."""
        lo, hi = self.interval
        d = self.differences
        lines = [f"replicability audit of {self.policy or 'policy'}"
                 + (f" on {self.instance}" if self.instance else "")
                 + (f", T = {self.horizon}" if self.horizon else "") + f", seed {self.seed}",
                 f"  identical pairs: {self.n_identical}/{self.pairs}",
                 f"  non-replication rate: {self.non_replication:.3f} "
                 f"(95% CI [{lo:.3f}, {hi:.3f}])"
                 + (f" vs target rho = {self.rho:g}: {self.verdict}" if self.rho is not None
                    else ""),
                 f"  pulls that differ within a pair: mean {d.mean():.1f}, min {d.min()}, "
                 f"max {d.max()} (of {self.n_pulls.mean():.0f})"]
        if self.regret is not None:
            lines.append(f"  regret: mean {self.regret.mean():.1f}, min "
                         f"{self.regret.min():.1f}, max {self.regret.max():.1f}")
        if self.recommendations is not None:
            same = int(np.sum(self.recommendations[:, 0] == self.recommendations[:, 1]))
            lines.append(f"  same recommendation: {same}/{self.pairs}")
        if self.capped:
            lines.append(f"  warning: {self.capped} of {2 * self.pairs} executions were cut at "
                         f"the horizon T = {self.horizon} before stopping by themselves; "
                         "raise --horizon to audit complete runs")
        return "\n".join(lines)


def _compare(a_log: DecisionLog, b_log: DecisionLog, a_rec: Any, b_rec: Any,
             identification: bool) -> tuple[bool, int]:
    same = a_log.same_as(b_log)
    if identification:
        same = same and a_rec == b_rec
    return bool(same), a_log.count_differences(b_log)


def statistics_of_pairs(first: Sequence[Trial], second: Sequence[Trial], *,
                        identification: bool, rho: float | None) -> PairStatistics:
    """:class:`PairStatistics` of executions ``first[j]`` and ``second[j]``."""
    if len(first) != len(second) or not first:
        raise ValueError("need the same non-zero number of first and second executions")
    cmp = [_compare(a.decisions, b.decisions, a.recommendation, b.recommendation,
                    identification) for a, b in zip(first, second, strict=True)]
    regret = None
    if all(t.regret is not None for t in (*first, *second)):
        regret = np.array([[a.final_regret, b.final_regret]
                           for a, b in zip(first, second, strict=True)], dtype=float)
    recs = None
    if identification:
        recs = np.array([[a.recommendation, b.recommendation]
                         for a, b in zip(first, second, strict=True)], dtype=object)
    return PairStatistics(
        identical=np.array([c[0] for c in cmp]), differences=np.array([c[1] for c in cmp]),
        n_pulls=np.array([[a.n_pulls, b.n_pulls] for a, b in zip(first, second, strict=True)]),
        regret=regret, recommendations=recs, rho=rho)


def _run_pair(factory: Callable[..., Algorithm], env: Environment, params: Mapping[str, Any],
              seed: int, pair: int, horizon: int | None,
              checkpoints: np.ndarray | None, engine: str = "auto") -> tuple[Trial, Trial]:
    out = []
    for execution in (0, 1):
        xi = stream(seed, "audit", pair, "algorithm")  # the same ξ for both executions
        algorithm = factory(env, xi, **params)
        noise = derive_seed(seed, "audit", pair, execution, STREAMS["environment"])
        out.append(simulate(algorithm, env, horizon=horizon, seed=noise,
                            checkpoints=checkpoints, engine=engine))
    return out[0], out[1]


def _run_pair_star(args: tuple) -> tuple[Trial, Trial]:
    with single_threaded_blas():  # numbers independent of workers (banditkit.blas)
        return _run_pair(*args)


def audit(policy_factory: Callable[..., Algorithm], env: Environment, *, pairs: int,
          seed: int = 0, horizon: int | None = None, params: Mapping[str, Any] | None = None,
          rho: float | None = None, lockstep: Callable[..., list] | None = None,
          checkpoints: np.ndarray | None = None, workers: int = 1, progress: bool = False,
          name: str = "", instance: str = "", engine: str = "auto") -> AuditResult:
    """Run ``pairs`` pairs of executions of a policy and measure how often they replicate.

    Parameters
    ----------
    policy_factory : callable
        ``policy_factory(env, rng, **params)`` returning a fresh algorithm whose internal
        randomness is ``rng`` (a registered factory of :mod:`banditkit.registry`, or an
        :class:`~banditkit.experiments.spec.AlgorithmSpec`'s factory).
    env : Environment
    pairs : int
        Number of pairs n ≥ 1.
    seed : int
        Root seed. Pair j uses ξ = ``stream(seed, "audit", j, "algorithm")`` for both
        executions, and noise keyed by ``(seed, "audit", j, e, "environment")`` for
        execution e ∈ {0, 1}.
    horizon : int, optional
        Pulls per execution (required for regret policies). A factory that takes a ``horizon``
        keyword (every registered regret policy) also gets it, as from the CLI, unless
        ``params`` or a ``functools.partial`` already gives one.
    params : mapping, optional
        Keyword parameters of the factory.
    rho : float in (0, 1], optional
        Target ρ to judge against (default ``params["rho"]`` when given).
    lockstep : callable, optional
        Deprecated and ignored (a ``DeprecationWarning``): the executions take the engines
        their algorithm declares (:mod:`banditkit.engines`) — all 2n together through its
        lock-step engine when it has one, else pair by pair through :func:`banditkit.simulate`
        (its compiled kernel or block driver, if any). The numbers are the same either way.
    checkpoints : array of int, optional
        Passed to :func:`banditkit.simulate`.
    workers : int
        Processes to spread the pairs over (1: in this process). The numbers do not depend on
        it: every execution's streams derive from its own key.
    progress : bool
        Show progress on stderr as pairs finish (a bar on a terminal, lines in a log file).
    name, instance : str
        Labels for the report.
    engine : {"auto", "reference"}
        As in :func:`banditkit.simulate`: ``"reference"`` runs every execution through the
        protocol loop (the check that the engines change no number).

    Returns
    -------
    AuditResult
    """
    pairs = check_positive_int(pairs, "pairs")
    engine = check_engine(engine)
    workers = check_positive_int(workers, "workers")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if horizon is not None:
        horizon = check_positive_int(horizon, "horizon")
        length = getattr(env, "schedule_length", None)
        if length is not None and horizon > length:
            # refused before any work, not by the first pull past the schedule's end
            raise ValueError(f"horizon = {horizon} exceeds the schedule of "
                             f"{instance or type(env).__name__}, which defines θ_t for "
                             f"{length} pulls: pass a horizon of at most {length} (or build "
                             "the instance with a longer schedule)")
    params = dict(params or {})
    if rho is None and params.get("rho") is not None:
        rho = params["rho"]
    if rho is not None:
        rho = check_probability(rho, "rho", open_high=False)

    if lockstep is not None:
        warnings.warn("audit(lockstep=...) is deprecated and ignored: the algorithm's own "
                      "engines are used (banditkit.engines)", DeprecationWarning, stacklevel=2)

    first: list[Trial]
    second: list[Trial]
    factory_params = params
    if horizon is not None and "horizon" not in params:
        # the policy plans for the horizon it runs for, as the CLI's functools.partial
        # does; one the caller bound is left alone
        import inspect

        try:
            takes = "horizon" in inspect.signature(policy_factory).parameters
        except (TypeError, ValueError):  # no signature to read: pass nothing
            takes = False
        if takes and "horizon" not in (getattr(policy_factory, "keywords", None) or {}):
            factory_params = {**params, "horizon": horizon}
    probe = policy_factory(env, stream(seed, "audit", 0, "algorithm"), **factory_params)
    if engine == "auto" and trials_engine([probe], [env], horizon) is not None:
        algorithms = [policy_factory(env, stream(seed, "audit", j, "algorithm"),
                                     **factory_params) for j in range(pairs) for _ in (0, 1)]
        # all 2n executions at once through the algorithm's lock-step engine, in this
        # process (the same numbers as pair by pair)
        noise = [derive_seed(seed, "audit", j, e, STREAMS["environment"])
                 for j in range(pairs) for e in (0, 1)]
        with single_threaded_blas():
            trials = run_trials(algorithms, [env] * len(algorithms), noise, horizon=horizon,
                                checkpoints=checkpoints)
        first, second = trials[0::2], trials[1::2]
    else:
        jobs = [(policy_factory, env, factory_params, int(seed), j, horizon, checkpoints,
                 engine) for j in range(pairs)]
        done = []
        with progress_bar(pairs, f"audit {name}".strip(), progress, unit="pair") as bar:
            if workers > 1 and pairs > 1:
                with ProcessPoolExecutor(max_workers=min(workers, pairs)) as pool:
                    for result in pool.map(_run_pair_star, jobs):
                        done.append(result)
                        bar.update(1)
            else:
                for job in jobs:
                    done.append(_run_pair_star(job))
                    bar.update(1)
        first, second = [d[0] for d in done], [d[1] for d in done]

    identification = first[0].correct is not None  # set for identifiers only
    st = statistics_of_pairs(first, second, identification=identification, rho=rho)
    return AuditResult(identical=st.identical, differences=st.differences, n_pulls=st.n_pulls,
                       regret=st.regret, recommendations=st.recommendations, rho=rho,
                       policy=name or getattr(policy_factory, "__name__", ""),
                       instance=instance, horizon=horizon, seed=int(seed), params=params,
                       capped=(sum(not t.stopped for t in (*first, *second))
                               if identification else 0))


def pair_statistics(decisions: Sequence[tuple[np.ndarray, np.ndarray]],
                    final_regret: Sequence[float | None], *, rho: float | None = None,
                    recommendations: Sequence[Any] | None = None) -> PairStatistics:
    """Pair statistics of stored trials run as pairs: trials 2j and 2j + 1 form pair j.

    Parameters
    ----------
    decisions : sequence of (arms, counts)
        Each trial's pull sequence as runs (as stored), in trial order; an odd last trial is
        ignored.
    final_regret : sequence of float or None
    rho : float, optional
    recommendations : sequence, optional
        Identifiers' recommendations (a pair then also needs the same recommendation).
    """
    n = len(decisions) // 2
    if n == 0:
        raise ValueError("need at least one pair (two trials)")
    logs = []
    for arms, counts in decisions[: 2 * n]:
        log = DecisionLog()
        log.record(Batch(np.asarray(arms), np.asarray(counts)))
        logs.append(log)
    recs = list(recommendations) if recommendations is not None else [None] * (2 * n)
    ident = recommendations is not None
    cmp = [_compare(logs[2 * j], logs[2 * j + 1], recs[2 * j], recs[2 * j + 1], ident)
           for j in range(n)]
    regret = None
    if all(r is not None and math.isfinite(r) for r in final_regret[: 2 * n]):
        regret = np.asarray(final_regret[: 2 * n], dtype=float).reshape(n, 2)
    pulls = np.array([int(np.sum(c)) for _, c in decisions[: 2 * n]]).reshape(n, 2)
    return PairStatistics(identical=np.array([c[0] for c in cmp]),
                          differences=np.array([c[1] for c in cmp]), n_pulls=pulls,
                          regret=regret,
                          recommendations=(np.asarray(recs, dtype=object).reshape(n, 2)
                                           if ident else None), rho=rho)


def pairs_frame(records: Sequence[Any], config: Mapping[str, Any]) -> pd.DataFrame:
    """Per (point, algorithm) replicability of stored trials run as pairs (2j, 2j + 1).

    ``records`` are :class:`~banditkit.experiments.records.TrialRecord` s; a pair counts only
    when both of its trials succeeded. The target ρ is the point's ``rho`` parameter, else the
    algorithm's.
    """
    by_key: dict[tuple[int, str], dict[int, Any]] = {}
    for r in records:
        if r.status == "ok":
            by_key.setdefault((r.point, r.algorithm), {})[r.trial] = r
    order = {name: i for i, name in enumerate(config.get("algorithms", []))}
    rows = []
    for (point, algo), trials in sorted(by_key.items(),
                                        key=lambda kv: (kv[0][0], order.get(kv[0][1], 0))):
        pairs = [(trials[2 * j], trials[2 * j + 1]) for j in range(max(trials) // 2 + 1)
                 if 2 * j in trials and 2 * j + 1 in trials]
        if not pairs:
            continue
        point_params = config["points"][point] if point < len(config["points"]) else {}
        rho = point_params.get("rho", config.get("algorithm_params", {}).get(algo, {}).get("rho"))
        flat = [t for pair in pairs for t in pair]
        ident = all(t.correct is not None for t in flat)
        st = pair_statistics([(t.decision_arms, t.decision_counts) for t in flat],
                             [t.final_regret for t in flat], rho=rho,
                             recommendations=[t.recommendation for t in flat] if ident else None)
        lo, hi = st.interval
        rows.append({
            "point": point, "algorithm": algo,
            "label": ", ".join(f"{k}={v}" for k, v in point_params.items()
                               if not isinstance(v, (list, dict))),
            "pairs": st.pairs, "identical": st.n_identical,
            "non_replication": st.non_replication, "ci_lo": lo, "ci_hi": hi, "rho": rho,
            "verdict": st.verdict, "diff_mean": float(st.differences.mean()),
            "diff_min": int(st.differences.min()), "diff_max": int(st.differences.max()),
            "regret_mean": None if st.regret is None else float(st.regret.mean())})
    return pd.DataFrame(rows, columns=["point", "algorithm", "label", "pairs", "identical",
                                       "non_replication", "ci_lo", "ci_hi", "rho", "verdict",
                                       "diff_mean", "diff_min", "diff_max", "regret_mean"])
