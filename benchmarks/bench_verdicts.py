"""How fast do live verdicts come, through :class:`banditkit.Experiment` itself?

    .venv/bin/python benchmarks/bench_verdicts.py speed [--runs 300] [--seed 0] [--reward binary]
    .venv/bin/python benchmarks/bench_verdicts.py revenue [--runs 100] [--seed 0]
    .venv/bin/python benchmarks/bench_verdicts.py plan [--runs 300] [--seed 0]
    .venv/bin/python benchmarks/bench_verdicts.py floor [--runs 100] [--seed 0]
    .venv/bin/python benchmarks/bench_verdicts.py cover [--runs 300] [--seed 12]
    (any of them: --workers N runs the experiments in N processes; the same numbers)

**speed** (issue 23, "What it must show"): a 50/50 ``FixedAllocation`` test, control 0.10 against
0.11 (``--reward binary``: 0/1 rewards; ``--reward beta``: Beta rewards with those means and
concentration 10, a bounded metric), a fresh SQLite file per run, ``status()`` after every look
(a look every ``--step`` = 500 units per arm). At each look three statuses of the same file are
read: the stored default (``sequence="exact"``), and with ``verdicts={"sequence": "asymptotic"}``
and ``{"sequence": "msprt", "tau": --tau}``: the three methods see the same reward streams at
the same looks. A run stops once all three said ``better`` (or at ``--cap`` units per arm). The
units per arm at the first ``better`` are reported (median, 80th percentile, runs undecided at
the cap), and the width of each method's difference interval at ``--width-at`` units per arm
against the fixed-n interval of the same status (``intervals="fixed"``).

**revenue**: revenue per visitor, zero-inflated lognormal (5% of visitors buy; a purchase is
lognormal(3.5, 1), about $54), the treatment lifting the purchase value by 10% (the mean per
visitor from $2.73 to $3.00). ``reward_type="continuous"``: the asymptotic sequence; units to
``better`` against the fixed-n sample size at 80% power.

**plan**: :func:`banditkit.live.readout.plan.plan` (its own simulation on sums) against the units
the speed runs took through ``Experiment`` (runs undecided by the cap count at the cap in both).

**floor**: BatchedThompson's control floor (:func:`control_floor`): control units, verdicts
and reward per unit for each floor.

Numbers come from a shared, loaded machine; every run is seeded (``--seed``), so the units are
reproducible exactly; timings are not reported.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np

from banditkit import Experiment
from banditkit.rng import stream

METHODS = ("exact", "asymptotic", "msprt")


@dataclass(frozen=True)
class Speed:
    """Per run and method, units per arm at the first ``better`` (inf: not by the cap), and the
    median width ratio to fixed-n at ``width_at`` units per arm."""

    units: dict[str, np.ndarray]
    width_ratio: dict[str, float]
    runs: int


def _rewards(rng: np.random.Generator, arm: np.ndarray, means: tuple[float, float],
             reward: str) -> np.ndarray:
    mu = np.where(arm == 1, means[1], means[0])
    if reward == "binary":
        return (rng.random(arm.size) < mu).astype(float)
    if reward == "beta":  # Beta(mu*c, (1-mu)*c), concentration c = 10: variance mu(1-mu)/11
        return rng.beta(mu * 10.0, (1.0 - mu) * 10.0)
    if reward == "revenue":  # mu here: the lift factor of the purchase value per arm
        buy = rng.random(arm.size) < 0.05
        return np.where(buy, rng.lognormal(3.5, 1.0, arm.size) * mu, 0.0)
    raise ValueError(reward)


def one_run(path: Path, seed: int, run: int, *, means: tuple[float, float], reward: str,
            step: int, cap: int, tau: float, tune_n: float, width_at: int,
            methods: tuple[str, ...] = METHODS) -> tuple[dict[str, float], dict[str, float]]:
    """One experiment: units per arm at each method's first ``better`` and width ratios."""
    rng = stream(seed, "verdicts", run)
    kind = {"binary": "binary", "beta": "bounded", "revenue": "continuous"}[reward]
    options = {"exact": None, "asymptotic": {"sequence": "asymptotic"},
               "msprt": {"sequence": "msprt", "tau": tau}}
    first = {m: math.inf for m in methods}
    widths: dict[str, float] = {}
    with Experiment.create(path, algorithm="FixedAllocation", arms=["control", "treatment"],
                           seed=run, params={"batch_size": 2 * step}, reward_type=kind,
                           reward_range=(0.0, 1.0) if kind == "bounded" else None,
                           verdicts={"tune_n": tune_n,
                                     "sequence": "asymptotic" if kind == "continuous"
                                     else "exact"}) as exp:
        per_arm = 0
        while per_arm < cap and (any(math.isinf(v) for v in first.values())
                                 or per_arm < width_at):
            got = exp.assign(2 * step)
            arm = (got["arm"] == "treatment").to_numpy().astype(int)
            exp.record(got["unit"], _rewards(rng, arm, means, reward))
            per_arm += step
            for m in methods:
                if math.isinf(first[m]) or per_arm == width_at:
                    row = exp.status(verdicts=options[m]).arms.loc["treatment"]
                    if row["verdict"] == "better" and math.isinf(first[m]):
                        first[m] = per_arm
                    if per_arm == width_at:
                        widths[m] = float(row["diff_high"] - row["diff_low"])
            if per_arm == width_at:
                fixed = exp.status(intervals="fixed").arms.loc["treatment"]
                fixed_width = float(fixed["diff_high"] - fixed["diff_low"])
                widths = {m: w / fixed_width for m, w in widths.items()}
    return first, widths


def _run(task: tuple) -> tuple[dict[str, float], dict[str, float]]:
    folder, seed, r, kwargs = task
    return one_run(Path(folder) / f"run{r}.sqlite", seed, r, **kwargs)


def speed(runs: int, seed: int, *, means: tuple[float, float] = (0.10, 0.11),
          reward: str = "binary", step: int = 500, cap: int = 80_000, tau: float = 0.01,
          tune_n: float = 10_000, width_at: int = 20_000,
          methods: tuple[str, ...] = METHODS, workers: int = 1) -> Speed:
    """``runs`` experiments (run r's rewards from ``stream(seed, "verdicts", r)``: the same
    numbers on any number of ``workers``)."""
    units = {m: np.full(runs, math.inf) for m in methods}
    ratios: dict[str, list[float]] = {m: [] for m in methods}
    kwargs = {"means": means, "reward": reward, "step": step, "cap": cap, "tau": tau,
              "tune_n": tune_n, "width_at": width_at, "methods": methods}
    with tempfile.TemporaryDirectory() as folder:
        tasks = [(folder, seed, r, kwargs) for r in range(runs)]
        if workers > 1:
            from multiprocessing import get_context

            with get_context("spawn").Pool(workers) as pool:
                results = pool.map(_run, tasks, chunksize=1)
        else:
            results = [_run(t) for t in tasks]
    for r, (first, widths) in enumerate(results):
        for m in methods:
            units[m][r] = first[m]
            if m in widths:
                ratios[m].append(widths[m])
    return Speed(units, {m: float(np.median(v)) if v else math.nan
                         for m, v in ratios.items()}, runs)


def fixed_n(sd_per_arm: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Units per arm of a two-sided fixed-horizon z-test with this power."""
    z = NormalDist().inv_cdf
    return (z(1 - alpha / 2) + z(power)) ** 2 * 2 * sd_per_arm ** 2 / delta ** 2


def summary(result: Speed) -> dict:
    out = {}
    for m, u in result.units.items():
        # inverted_cdf: a percentile among undecided runs is inf, not an interpolated NaN
        out[m] = {"median": float(np.percentile(u, 50, method="inverted_cdf")),
                  "p80": float(np.percentile(u, 80, method="inverted_cdf")),
                  "mean_decided": float(u[np.isfinite(u)].mean()) if np.isfinite(u).any()
                  else math.nan, "undecided": int(np.isinf(u).sum()),
                  "width_ratio": result.width_ratio.get(m)}
    if "msprt" in out:
        for m in out:
            out[m]["median_vs_msprt"] = out[m]["median"] / out["msprt"]["median"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["speed", "revenue", "plan", "floor", "cover"])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reward", choices=["binary", "beta"], default="binary")
    parser.add_argument("--step", type=int, default=500)
    parser.add_argument("--cap", type=int, default=80_000)
    parser.add_argument("--tau", type=float, default=0.01)
    parser.add_argument("--tune-n", type=float, default=10_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--width-at", type=int, default=20_000,
                        help="units per arm at which the widths are compared")
    args = parser.parse_args()
    common = {"step": args.step, "cap": args.cap, "tune_n": args.tune_n,
              "workers": args.workers}
    if args.what == "speed":
        result = speed(args.runs, args.seed, reward=args.reward, tau=args.tau,
                       width_at=args.width_at, **common)
        # the per-arm variance averaged over the two arms (0.10 and 0.11)
        var = (0.10 * 0.90 + 0.11 * 0.89) / 2
        sd = math.sqrt(var if args.reward == "binary" else var / 11)
        print(json.dumps({"runs": args.runs, "seed": args.seed, "reward": args.reward,
                          "fixed_n_80_power": fixed_n(sd, 0.01), **summary(result)}, indent=1))
    elif args.what == "revenue":
        result = speed(args.runs, args.seed, means=(1.0, 1.1), reward="revenue",
                       methods=("asymptotic",), width_at=args.step, **common)
        # per-visitor s.d. of the control: E[X^2] - E[X]^2 with X = B * LogNormal(3.5, 1)
        m1 = 0.05 * math.exp(3.5 + 0.5)
        m2 = 0.05 * math.exp(2 * 3.5 + 2.0)
        print(json.dumps({"runs": args.runs, "seed": args.seed,
                          "fixed_n_80_power": fixed_n(math.sqrt(m2 - m1 ** 2), 0.1 * m1),
                          **summary(result)}, indent=1))
    elif args.what == "plan":
        from banditkit.live.readout.plan import plan

        result = speed(args.runs, args.seed, tau=args.tau, methods=("exact",), **common)
        u = result.units["exact"]
        predicted = plan(base_rate=0.10, mde=0.01, alpha=0.05, daily_units=2 * args.step,
                         look_every=args.step, tune_n=args.tune_n, seed=args.seed,
                         max_units=args.cap)
        print(json.dumps({"runs": args.runs, "seed": args.seed,
                          "simulated_mean": float(np.minimum(u, args.cap).mean()),
                          "simulated_p90": float(np.percentile(np.minimum(u, args.cap), 90,
                                                               method="inverted_cdf")),
                          "undecided": int(np.isinf(u).sum()),
                          "predicted": predicted.as_json()}, indent=1))
    elif args.what == "cover":
        print(json.dumps([coverage(args.runs, args.seed, means)
                          for means in ((0.30, 0.25, 0.45), (0.05, 0.05, 0.05))], indent=1))
    else:
        print(json.dumps({"runs": args.runs, "seed": args.seed,
                          **control_floor(args.runs, args.seed)}, indent=1))


def control_floor(runs: int, seed: int, floors: tuple[float, ...] = (0.0, 0.1, 0.2, 1 / 3),
                  means: tuple[float, ...] = (0.10, 0.11, 0.12), horizon: int = 40_000,
                  batch_size: int = 1000) -> dict:
    """BatchedThompson with each control floor, driven on its own (the allocation does not
    depend on the store): per floor, the control's units at the horizon (median), the share of
    runs whose best arm is called ``better`` than the control by the exact sequence at the
    horizon, the first batch at which it is (median over runs that get there), and the mean
    reward per unit (what the floor costs)."""
    from banditkit.live.problem import LiveArms
    from banditkit.live.readout.statistics import compare
    from banditkit.live.readout.sums import ArmSums
    from banditkit.registry import make_policy

    K = len(means)
    out = {}
    for f in floors:
        control_units, rewards, looks_n, looks_s = [], [], [], []
        for r in range(runs):
            noise = stream(seed, "floor", r)
            policy = make_policy("BatchedThompson", LiveArms(K, None, None),
                                 stream(seed, "floor-xi", r), horizon=horizon,
                                 batch_size=batch_size, control_floor=f)
            n, S = np.zeros(K), np.zeros(K)
            while (batch := policy.next_batch()) is not None:
                pulls = np.bincount(batch.arms, weights=batch.counts, minlength=K)
                got = noise.binomial(pulls.astype(np.int64), means)
                sums = np.asarray(got, dtype=float)[batch.arms]
                policy.observe(batch, sums)
                n += pulls
                S += got
                looks_n.append(n.copy())
                looks_s.append(S.copy())
            control_units.append(n[0])
            rewards.append(S.sum() / n.sum())
        N, T = np.array(looks_n), np.array(looks_s)
        c = compare(ArmSums(N, N, T, T, np.ones(N.shape, bool)), (0.0, 1.0),
                    intervals="anytime", alpha=0.05, control=0)
        better = (c.verdict[:, K - 1] == "better").reshape(runs, -1)
        first = np.where(better.any(1), better.argmax(1) + 1, np.nan) * batch_size
        out[f"{f:.3g}"] = {"control_units_median": float(np.median(control_units)),
                           "best_better_share": float(better.any(1).mean()),
                           "units_to_better_median": float(np.nanmedian(first))
                           if np.isfinite(first).any() else None,
                           "reward_per_unit": float(np.mean(rewards))}
    return out



def coverage(runs: int, seed: int, means: tuple[float, ...], horizon: int = 10_000,
             batch_size: int = 200) -> dict:
    """BatchedThompson without a control floor (the paper's rule) on Bernoulli arms, a look at
    every batch end: the share of runs in which any exact difference interval ever excludes
    the true difference, and the control's units at the end (median)."""
    from banditkit.live.problem import LiveArms
    from banditkit.live.readout.statistics import compare
    from banditkit.live.readout.sums import ArmSums
    from banditkit.registry import make_policy

    mu = np.asarray(means, dtype=float)
    K = mu.size
    looks_n, looks_s, run_of = [], [], []
    for r in range(runs):
        noise = stream(seed, "cover", r)
        policy = make_policy("BatchedThompson", LiveArms(K, None, None),
                             stream(seed, "cover-xi", r), horizon=horizon,
                             batch_size=batch_size, draws=500)
        n, S = np.zeros(K), np.zeros(K)
        while (batch := policy.next_batch()) is not None:
            pulls = np.bincount(batch.arms, weights=batch.counts, minlength=K)
            got = noise.binomial(pulls.astype(np.int64), mu).astype(float)
            policy.observe(batch, got[batch.arms])
            n, S = n + pulls, S + got
            looks_n.append(n)
            looks_s.append(S)
            run_of.append(r)
    N, T = np.array(looks_n), np.array(looks_s)
    c = compare(ArmSums(N, N, T, T, np.ones(N.shape, bool)), (0.0, 1.0),
                intervals="anytime", alpha=0.05, control=0)
    truth = mu - mu[0]
    miss = ((c.diff_low[:, 1:] > truth[1:]) | (c.diff_high[:, 1:] < truth[1:])).any(axis=1)
    run = np.array(run_of)
    per_run = np.bincount(run, weights=miss, minlength=runs) > 0
    last = np.r_[np.diff(run) != 0, True]
    return {"means": list(means), "runs": runs, "miscoverage": float(per_run.mean()),
            "control_units_median": float(np.median(N[last][:, 0]))}


if __name__ == "__main__":
    main()
