"""Continuous metrics through :class:`banditkit.Experiment` itself: revenue with and without
CUPED, and a latency guardrail (issue 23 §3).

    .venv/bin/python benchmarks/bench_continuous.py revenue [--runs 100] [--seed 0]
    .venv/bin/python benchmarks/bench_continuous.py latency [--runs 300] [--seed 0]
    .venv/bin/python benchmarks/bench_continuous.py latency --null [--runs 300] [--seed 0]
    .venv/bin/python benchmarks/bench_continuous.py winsor [--runs 1000] [--seed 9]
    .venv/bin/python benchmarks/bench_continuous.py cuped-winsor --null [--runs 300] [--workers 2]
    .venv/bin/python benchmarks/bench_continuous.py cuped-winsor --lift 1.5 [--runs 60]
    .venv/bin/python benchmarks/bench_continuous.py plan-cuped [--runs 300] [--mde 0.1]

**revenue**: revenue per visitor, zero-inflated lognormal as in ``bench_verdicts.py revenue``
(5% of visitors buy, a purchase is lognormal(3.5, 1), about $54; the treatment lifts the
purchase value by 10%: $2.73 → $3.00 per visitor), now with a pre-experiment covariate: each
visitor has a buying propensity q ~ Beta(0.1, 1.9) (mean 0.05) and a taste w ~ N(0, 1); a
purchase is worth exp(3.5 + 0.9w + 0.436e) (still lognormal(3.5, 1)), the visitor buys in the
experiment with probability q, and the covariate is the visitor's revenue over 8 weeks before
it (each week a purchase with probability q). So the reward's distribution is the same as
without a covariate; the within-arm correlation with the covariate is about 0.47. A 50/50
``FixedAllocation`` test, ``reward_type="continuous"``, ``verdicts={"sequence": "asymptotic",
"cuped": True}``, covariates given at ``assign``; at each look (every ``--step`` units per arm)
two statuses of the same file: CUPED (the stored spec) and ``verdicts={"cuped": False}`` (the
plain asymptotic sequence on the same rewards, same looks). Units per arm at the first
``better``, beside the fixed-n z-test's units at 80% power (plain, and × (1 − ρ²) with CUPED).

**latency**: a guardrail ``{"metric": "latency", "rule": "max_increase", "margin": 0}`` on a
lognormal latency of mean 200 and s.d. 100 (the control); the treatment is 10% slower (mean 220,
s.d. 110; ``--null``: the same as the control). Two experiments per run on the same stream:
the guardrail **continuous** (no range: the one-sided asymptotic sequence) and **bounded** with
``range [0, 2000]`` (the exact one-sided difference sequence; latencies above 2000 are cut to
2000, 0.02% of them); a record every ``--step`` units per arm, and each experiment pauses
itself at the breach. Beside them, on the same sums at the same looks, the rule before this
change: two per-arm beta-binomial sequences at α/(G·K), subtracted. Units per arm at the pause,
beside the fixed-n units (one-sided and two-sided z-test at 80% power).

**winsor**: the null level of winsorised verdicts with the cap moving at every look, on arrays
(not through ``Experiment``: its cap is :func:`banditkit.live.readout.winsorize.winsorized_sums`'
order statistic, reproduced here on the same numbers): 2 equal arms, lognormal(0, σ) rewards
for σ = 1, 1.5, 2, 20 looks of 500 units per arm, each look's rewards capped at the pooled
0.99 quantile of all rewards so far, status's own ``compare`` with the asymptotic sequence
(``tune_n`` 5,000); runs with any ``better``/``worse`` at any look, beside the plain sequence
on the same runs.

**cuped-winsor**: CUPED on winsorised rewards (``verdicts={"cuped": True, "winsorize":
0.99}``) through ``Experiment``, on the revenue model above (heavy-tailed, zero-inflated;
the covariate the visitor's 8 weeks before): ``--looks`` looks of ``--step`` visitors per arm
(default 20 of 500), ``tune_n`` 5,000, and at each look the statuses of :data:`COMBINED` on
the same file (CUPED + winsorisation and winsorisation alone, asymptotic and mSPRT τ = 0.3;
CUPED alone and the plain mean). ``--null``: no lift, so any verdict is false; else the
purchase value is lifted ``--lift`` (default 1.5: the capped means differ by $0.61, and a
fixed-n z-test at 80% power on the capped values needs about 7,100 visitors per arm, 5,500
with CUPED's 1 − ρ²; from 400,000 simulated visitors per arm): units per arm to ``better``.
Both report the median width at the last look over winsorisation alone's.

**plan-cuped**: the planner with CUPED (``plan(..., cuped_rho=0.7)``) against experiments
through ``Experiment`` with ``verdicts={"cuped": True}``: a metric of mean 5 and variance 4
correlated ρ = 0.7 within arms with a skewed covariate (lognormal(1, 0.8)), the treatment
``--mde`` higher (default 0.1), a look every ``--step`` units per arm (default 250), cap
``--cap`` (default 40,000), ``tune_n`` 5,000: the planner's expected units per arm over the
simulated mean (goal: within 15%), beside the plan without CUPED.

Runs are seeded (``--seed``: run r's numbers from ``stream(seed, name, r)``), so units are
reproducible exactly; the machine is shared and loaded, so timings are not reported.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path
from statistics import NormalDist

import numpy as np

from banditkit import Experiment
from banditkit.live.readout.anytime import bounded_sequence, difference_bounds
from banditkit.rng import stream

#: The revenue model (module docstring).
BUY_A, BUY_B, TASTE, WEEKS = 0.1, 1.9, 0.9, 8
LOG_MEAN = 3.5


def visitors(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` visitors: their propensity q, taste w and pre-experiment revenue (the covariate)."""
    q = rng.beta(BUY_A, BUY_B, n)
    w = rng.normal(size=n)
    noise = math.sqrt(1 - TASTE ** 2)
    weekly = (rng.random((n, WEEKS)) < q[:, None]) * np.exp(
        LOG_MEAN + TASTE * w[:, None] + noise * rng.normal(size=(n, WEEKS)))
    return q, w, weekly.sum(axis=1)


def revenue(rng: np.random.Generator, q: np.ndarray, w: np.ndarray, lift: np.ndarray
            ) -> np.ndarray:
    """Each visitor's revenue in the experiment (``lift`` multiplies a purchase's value)."""
    noise = math.sqrt(1 - TASTE ** 2)
    value = np.exp(LOG_MEAN + TASTE * w + noise * rng.normal(size=q.size))
    return (rng.random(q.size) < q) * value * lift


def revenue_run(path: Path, seed: int, run: int, *, step: int, cap: int, tune_n: float,
                lift: float = 1.1) -> dict[str, float]:
    """Units per arm at the first ``better``: CUPED and plain, on the same experiment."""
    rng = stream(seed, "revenue-cuped", run)
    first = {"cuped": math.inf, "plain": math.inf}
    with Experiment.create(path, algorithm="FixedAllocation", arms=["control", "treatment"],
                           seed=run, params={"batch_size": 2 * step},
                           reward_type="continuous",
                           verdicts={"sequence": "asymptotic", "cuped": True,
                                     "tune_n": tune_n}) as exp:
        per_arm = 0
        while per_arm < cap and any(math.isinf(v) for v in first.values()):
            q, w, x = visitors(rng, 2 * step)
            got = exp.assign(2 * step, covariates=x)
            exp.record(got["unit"], revenue(rng, q, w, np.where(got["arm"] == "treatment",
                                                                 lift, 1.0)))
            per_arm += step
            for name, override in (("cuped", None), ("plain", {"cuped": False})):
                if math.isinf(first[name]) and exp.status(verdicts=override).arms.loc[
                        "treatment", "verdict"] == "better":
                    first[name] = per_arm
    return first


#: The statuses read at each look of a ``cuped-winsor`` run: the stored spec (CUPED on the
#: winsorised rewards, asymptotic), winsorisation alone, both again with the mSPRT (τ = 0.3,
#: about a 10% lift), and CUPED alone and the plain mean (no cap: another estimand, the
#: uncapped means; the same under the null).
COMBINED = {"cuped+winsor": None, "winsor": {"cuped": False},
            "cuped+winsor msprt": {"sequence": "msprt", "tau": 0.3},
            "winsor msprt": {"sequence": "msprt", "tau": 0.3, "cuped": False},
            "cuped": {"winsorize": None}, "plain": {"winsorize": None, "cuped": False}}


def cuped_winsor_run(path: Path, seed: int, run: int, *, step: int, looks: int,
                     lift: float = 1.0, q: float = 0.99, tune_n: float = 10_000
                     ) -> dict[str, float]:
    """One experiment on the revenue model (heavy-tailed, zero-inflated), created with
    ``verdicts={"cuped": True, "winsorize": q}``: ``looks`` looks of ``step`` units per arm,
    covariates given at ``assign``. Per status of :data:`COMBINED`: the units per arm at its
    first verdict other than ``undecided`` (``inf``: none), whether that verdict was ``better``,
    and the difference's width at the last look."""
    rng = stream(seed, "cuped-winsor", run)
    first = dict.fromkeys(COMBINED, math.inf)
    right = dict.fromkeys(COMBINED, False)
    widths: dict[str, float] = {}
    with Experiment.create(path, algorithm="FixedAllocation", arms=["control", "treatment"],
                           seed=run, params={"batch_size": 2 * step},
                           reward_type="continuous",
                           verdicts={"sequence": "asymptotic", "cuped": True, "winsorize": q,
                                     "tune_n": tune_n}) as exp:
        for look in range(1, looks + 1):
            visitor_q, w, x = visitors(rng, 2 * step)
            got = exp.assign(2 * step, covariates=x)
            exp.record(got["unit"], revenue(rng, visitor_q, w,
                                            np.where(got["arm"] == "treatment", lift, 1.0)))
            for name, override in COMBINED.items():
                row = exp.status(verdicts=override).arms.loc["treatment"]
                if math.isinf(first[name]) and row["verdict"] != "undecided":
                    first[name] = look * step
                    right[name] = row["verdict"] == "better"
                if look == looks:
                    widths[name] = float(row["diff_high"] - row["diff_low"])
    return {**{f"first {k}": v for k, v in first.items()},
            **{f"better {k}": float(v) for k, v in right.items()},
            **{f"width {k}": v for k, v in widths.items()}}


def capped_correlation(seed: int, n: int = 2_000_000, q: float = 0.99
                       ) -> dict[str, float]:
    """Within-arm correlations on ``n`` simulated visitors: of the reward capped at its
    q-quantile with the covariate capped at its own (what CUPED on winsorised rewards
    uses), with the raw covariate, and of the raw pair."""
    rng = stream(seed, "revenue-moments")
    visitor_q, w, x = visitors(rng, n)
    y = revenue(rng, visitor_q, w, np.ones(n))
    y_c, x_c = np.minimum(y, np.quantile(y, q)), np.minimum(x, np.quantile(x, q))
    return {"capped_both": float(np.corrcoef(x_c, y_c)[0, 1]),
            "capped_reward_raw_covariate": float(np.corrcoef(x, y_c)[0, 1]),
            "raw": float(np.corrcoef(x, y)[0, 1])}


#: ``plan-cuped``'s metric: the control's mean and variance, the covariate's correlation.
PLAN_MEAN, PLAN_VARIANCE, PLAN_RHO = 5.0, 4.0, 0.7


def plan_cuped_run(path: Path, seed: int, run: int, *, step: int, cap: int, mde: float,
                   tune_n: float, rho: float = PLAN_RHO) -> float:
    """Units per arm at the first ``better`` of a CUPED experiment through ``Experiment``
    (``inf``: none by ``cap``): a skewed covariate x ~ lognormal(1, 0.8), the metric
    y = PLAN_MEAN + b (x − E x) + noise with variance PLAN_VARIANCE and within-arm
    correlation ``rho`` with x, the treatment ``mde`` higher; a look every ``step`` units per
    arm (a 50/50 ``FixedAllocation`` batch of 2 ``step``), covariates given at ``assign``."""
    rng = stream(seed, "plan-cuped", run)
    x_mean = math.exp(1 + 0.8 ** 2 / 2)
    x_sd = x_mean * math.sqrt(math.exp(0.8 ** 2) - 1)
    slope = rho * math.sqrt(PLAN_VARIANCE) / x_sd
    noise = math.sqrt(PLAN_VARIANCE * (1 - rho ** 2))
    with Experiment.create(path, algorithm="FixedAllocation", arms=["control", "treatment"],
                           seed=run, params={"batch_size": 2 * step},
                           reward_type="continuous",
                           verdicts={"sequence": "asymptotic", "cuped": True,
                                     "tune_n": tune_n}) as exp:
        for per_arm in range(step, cap + 1, step):
            x = rng.lognormal(1.0, 0.8, 2 * step)
            got = exp.assign(2 * step, covariates=x)
            y = (PLAN_MEAN + slope * (x - x_mean) + rng.normal(0, noise, 2 * step)
                 + mde * (got["arm"] == "treatment").to_numpy())
            exp.record(got["unit"], y)
            if exp.status().arms.loc["treatment", "verdict"] == "better":
                return float(per_arm)
    return math.inf


def plan_cuped(args: argparse.Namespace) -> dict:
    """``plan-cuped``: :func:`banditkit.live.readout.plan.plan` with ``cuped_rho`` against
    :func:`plan_cuped_run` through ``Experiment`` (mean units per arm; undecided runs at the
    cap, as the planner counts them)."""
    from banditkit.live.readout.plan import plan

    step, cap, mde = args.step or 250, args.cap or 40_000, args.mde
    tune_n = args.tune_n or 5_000
    with tempfile.TemporaryDirectory() as folder:
        units = np.array([_progress(r, {"units": plan_cuped_run(
            Path(folder) / f"p{r}.sqlite", args.seed, r, step=step, cap=cap, mde=mde,
            tune_n=tune_n)})["units"] for r in range(args.runs)])
    predicted = plan(mean=PLAN_MEAN, variance=PLAN_VARIANCE, mde=mde, daily_units=2 * step,
                     look_every=step, tune_n=tune_n, runs=1000, seed=args.seed, max_units=cap,
                     cuped_rho=PLAN_RHO)
    plain = plan(mean=PLAN_MEAN, variance=PLAN_VARIANCE, mde=mde, daily_units=2 * step,
                 look_every=step, tune_n=tune_n, runs=1000, seed=args.seed, max_units=cap)
    simulated = np.where(np.isinf(units), cap, units)
    return {"runs": args.runs, "seed": args.seed, "step": step, "cap": cap, "mde": mde,
            "tune_n": tune_n, "rho": PLAN_RHO, "simulated_mean": float(simulated.mean()),
            "simulated_median": float(np.percentile(simulated, 50, method="inverted_cdf")),
            "simulated_p90": float(np.percentile(simulated, 90, method="inverted_cdf")),
            "undecided": int(np.isinf(units).sum()),
            "planned": predicted.as_json(), "planned_without_cuped": plain.as_json(),
            "planned_over_simulated": predicted.expected_units / float(simulated.mean())}


def correlation(seed: int, n: int = 2_000_000) -> tuple[float, float, float]:
    """The control's per-visitor mean and s.d. of revenue and its correlation with the
    covariate, from ``n`` simulated visitors."""
    rng = stream(seed, "revenue-moments")
    q, w, x = visitors(rng, n)
    y = revenue(rng, q, w, np.ones(n))
    return float(y.mean()), float(y.std()), float(np.corrcoef(x, y)[0, 1])


def latency_run(folder: Path, seed: int, run: int, *, step: int, cap: int, null: bool,
                alpha: float = 0.05) -> dict[str, float]:
    """Units per arm at the pause: continuous guardrail, bounded guardrail (both through
    Experiment) and the old subtraction of per-arm beta-binomial sequences (same sums)."""
    rng = stream(seed, "latency", run)
    sigma2 = math.log(1 + 0.25)  # s.d. / mean = 0.5
    mu = math.log(200.0) - sigma2 / 2
    slower = 1.0 if null else 1.1
    rails = {"continuous": {"metric": "latency", "rule": "max_increase", "margin": 0},
             "bounded": {"metric": "latency", "rule": "max_increase", "margin": 0,
                         "range": [0, 2000]}}
    first = {"continuous": math.inf, "bounded": math.inf, "subtracted": math.inf}
    exps = {k: Experiment.create(folder / f"{k}{run}.sqlite", algorithm="FixedAllocation",
                                 arms=["control", "treatment"], seed=run,
                                 params={"batch_size": 2 * step}, reward_type="binary",
                                 guardrails=[g], guardrail_alpha=alpha)
            for k, g in rails.items()}
    n, total = np.zeros(2), np.zeros(2)
    try:
        per_arm = 0
        while per_arm < cap and any(math.isinf(v) for v in first.values()):
            arms = np.repeat([0, 1], step)
            latency = np.minimum(rng.lognormal(mu, math.sqrt(sigma2), 2 * step)
                                 * np.where(arms == 1, slower, 1.0), 2000.0)
            reward = (rng.random(2 * step) < 0.1).astype(float)
            per_arm += step
            for k, exp in exps.items():
                if math.isinf(first[k]):
                    got = exp.assign(2 * step)
                    order = (got["arm"] == "treatment").to_numpy().astype(int)
                    # each arm's values in the stream's order, whatever the slots' order
                    values = np.empty(2 * step)
                    for a in (0, 1):
                        values[order == a] = latency[arms == a]
                    exp.record(got["unit"], reward, metrics={"latency": values})
                    if exp.status().paused is not None:
                        first[k] = per_arm
            n += step
            total += [latency[arms == 0].sum(), latency[arms == 1].sum()]
            if math.isinf(first["subtracted"]):
                low, high = bounded_sequence(total[None], n[None], 0.0, 2000.0, alpha / 2)
                d_low, _ = difference_bounds(low, high, 0)
                if d_low[0, 1] > 0:
                    first["subtracted"] = per_arm
    finally:
        for exp in exps.values():
            exp.close()
    return first


def winsor_null(runs: int, seed: int, *, looks: int = 20, step: int = 500, q: float = 0.99
                ) -> dict[str, dict[str, int]]:
    """False verdicts of winsorised and plain asymptotic verdicts under the null (module
    docstring)."""
    from banditkit.live.readout.statistics import compare
    from banditkit.live.readout.sums import ArmSums
    from banditkit.live.readout.verdict_spec import check_verdicts

    capped_spec = check_verdicts("continuous", None, {"winsorize": q, "tune_n": 5000}, None)
    plain_spec = check_verdicts("continuous", None, {"tune_n": 5000}, None)
    out = {}
    for sigma in (1.0, 1.5, 2.0):
        rng = stream(seed, "winsor-null-doc", int(sigma * 10))
        y = rng.lognormal(0.0, sigma, (runs, looks * step, 2))
        false = np.zeros(runs, dtype=bool)
        false_plain = np.zeros(runs, dtype=bool)
        for t in range(1, looks + 1):
            seen = y[:, : t * step]
            rank = math.ceil(q * 2 * t * step) - 1
            cap = np.partition(seen.reshape(runs, -1), rank, axis=1)[:, rank]
            capped = np.minimum(seen, cap[:, None, None])
            n = np.full((runs, 2), t * step)
            for values, spec, flags in ((capped, capped_spec, false),
                                        (seen, plain_spec, false_plain)):
                c = compare(ArmSums(n, n, values.sum(1), (values ** 2).sum(1),
                                    np.zeros((runs, 2), bool)), None, intervals="anytime",
                            alpha=0.05, control=0, spec=spec)
                flags |= c.verdict[:, 1] != "undecided"
        out[f"lognormal_sigma_{sigma}"] = {"winsorized_false": int(false.sum()),
                                           "plain_false": int(false_plain.sum()), "runs": runs}
    return out


def _cuped_winsor_one(job: tuple) -> dict[str, float]:
    folder, seed, run, step, looks, lift, tune_n = job
    return _progress(run, cuped_winsor_run(Path(folder) / f"cw{run}.sqlite", seed, run,
                                           step=step, looks=looks, lift=lift, tune_n=tune_n))


def cuped_winsor(args: argparse.Namespace) -> dict:
    """``cuped-winsor``: :func:`cuped_winsor_run` for ``--runs`` runs (``--null``: no lift),
    spread over ``--workers`` processes (each run seeded by its index: the same numbers for
    any worker count). Per status of :data:`COMBINED`: false (null) or ``better`` verdicts
    and units per arm to the first, and the median width over winsorisation alone's."""
    from concurrent.futures import ProcessPoolExecutor

    step = args.step or 500
    lift = 1.0 if args.null else args.lift
    tune_n = args.tune_n or 5_000
    with tempfile.TemporaryDirectory() as folder:
        jobs = [(folder, args.seed, r, step, args.looks, lift, tune_n)
                for r in range(args.runs)]
        if args.workers > 1:
            with ProcessPoolExecutor(args.workers) as pool:
                results = list(pool.map(_cuped_winsor_one, jobs))
        else:
            results = [_cuped_winsor_one(job) for job in jobs]
    out: dict = {"runs": args.runs, "seed": args.seed, "step": step, "looks": args.looks,
                 "lift": lift, "tune_n": tune_n, "q": 0.99,
                 "rho": capped_correlation(args.seed)}
    for name in COMBINED:
        first = np.array([r[f"first {name}"] for r in results])
        better = np.array([r[f"better {name}"] for r in results], dtype=bool)
        decided = np.isfinite(first)
        width = np.median([r[f"width {name}"] / r["width winsor"] for r in results])
        out[name] = {"any_verdict": int(decided.sum()), "better": int(better.sum()),
                     "wrong": int((decided & ~better).sum()),
                     "median_units": float(np.percentile(first, 50, method="inverted_cdf")),
                     "p80_units": float(np.percentile(first, 80, method="inverted_cdf")),
                     "median_width_over_winsor": float(width)}
    return out


def _progress(run: int, result: dict[str, float]) -> dict[str, float]:
    """Each run's result on stderr as it ends (a long run's partial numbers)."""
    print(json.dumps({"run": run, **result}), file=sys.stderr, flush=True)
    return result


def _z_units(sd_pair: tuple[float, float], delta: float, z_alpha: float, power: float = 0.8
             ) -> float:
    return (z_alpha + NormalDist().inv_cdf(power)) ** 2 * (sd_pair[0] ** 2 + sd_pair[1] ** 2) \
        / delta ** 2


def _summary(units: np.ndarray) -> dict[str, float]:
    return {"median": float(np.percentile(units, 50, method="inverted_cdf")),
            "p80": float(np.percentile(units, 80, method="inverted_cdf")),
            "undecided": int(np.isinf(units).sum()), "runs": int(units.size)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["revenue", "latency", "winsor", "cuped-winsor",
                                         "plan-cuped"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--step", type=int, default=None)
    parser.add_argument("--cap", type=int, default=None)
    parser.add_argument("--tune-n", type=float, default=None,
                        help="default 100,000 (revenue), 5,000 (cuped-winsor)")
    parser.add_argument("--null", action="store_true")
    parser.add_argument("--looks", type=int, default=20)
    parser.add_argument("--lift", type=float, default=1.5)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--mde", type=float, default=0.1)
    args = parser.parse_args()
    if args.what == "winsor":
        print(json.dumps({"seed": args.seed, **winsor_null(args.runs, args.seed)}, indent=1))
        return
    if args.what == "cuped-winsor":
        print(json.dumps(cuped_winsor(args), indent=1))
        return
    if args.what == "plan-cuped":
        print(json.dumps(plan_cuped(args), indent=1))
        return
    with tempfile.TemporaryDirectory() as folder:
        if args.what == "revenue":
            step, cap = args.step or 10_000, args.cap or 400_000
            results = [_progress(r, revenue_run(Path(folder) / f"r{r}.sqlite", args.seed, r,
                                                step=step, cap=cap,
                                                tune_n=args.tune_n or 100_000))
                       for r in range(args.runs)]
            mean, sd, rho = correlation(args.seed)
            plain = _z_units((sd, sd), 0.1 * mean, NormalDist().inv_cdf(0.975))
            out = {"runs": args.runs, "seed": args.seed, "step": step, "cap": cap,
                   "tune_n": args.tune_n or 100_000, "mean_per_visitor": mean, "sd": sd,
                   "rho": rho,
                   "fixed_n_80_power": plain, "fixed_n_cuped": plain * (1 - rho ** 2)}
        else:
            step, cap = args.step or 50, args.cap or (4_000 if args.null else 80_000)
            results = [_progress(r, latency_run(Path(folder), args.seed, r, step=step,
                                                cap=cap, null=args.null))
                       for r in range(args.runs)]
            z = NormalDist().inv_cdf
            out = {"runs": args.runs, "seed": args.seed, "step": step, "cap": cap,
                   "null": args.null,
                   "fixed_n_one_sided": _z_units((100.0, 110.0), 20.0, z(0.95)),
                   "fixed_n_two_sided": _z_units((100.0, 110.0), 20.0, z(0.975)),
                   "fixed_n_two_sided_sd100": _z_units((100.0, 100.0), 20.0, z(0.975))}
    for name in results[0]:
        units = np.array([r[name] for r in results])
        out[name] = _summary(units)
        if args.what == "latency" and args.null:
            out[name]["false_pauses"] = int(np.isfinite(units).sum())
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
