"""The readout practitioners compare us with (issue 37): widths across base rates, the planner's
bias, and side-by-side numbers with statsmodels / gbstats on identical data.

    .venv/bin/python benchmarks/bench_readout.py widths [--runs 40] [--seed 0]
    .venv/bin/python benchmarks/bench_readout.py plan [--runs 300] [--seed 0]
    /tmp/venv/bin/python benchmarks/bench_readout.py compare [--seed 0]

**widths**: the exact default's difference width ÷ the fixed-n (Newcombe) width at 20,000 units
per arm, through :func:`banditkit.live.statistics.compare` with the plug-in's sums from each
arm's 0/1 rewards in order (what status computes), ``tune_n`` 10,000, for base rates 0.01,
0.02, 0.05, 0.10, 0.20, 0.30, 0.50 with a 15% relative lift on the treatment; median over runs.

**plan**: :func:`banditkit.live.plan.plan` on 0.05 vs 0.0575 (a look every 1,000 units per arm)
against an independent simulation of the same scenario written run by run (its own reward
stream per run, each arm's plug-in sums from its rewards, ``compare`` at each look).

**compare** (needs statsmodels and gbstats, which are not dependencies of banditkit: install
them into a throwaway venv, e.g. ``python -m venv /tmp/venv && /tmp/venv/bin/pip install -e .
statsmodels gbstats``): on one seeded data set, banditkit's fixed-n difference interval against
statsmodels' ``confint_proportions_2indep`` (Newcombe) and ``ttest_ind`` (Welch), its relative
lift against gbstats' delta-method relative interval (frequentist, fixed-n) — ours is
anytime-valid, so it should be wider, by the factor reported —, its Bayesian summaries against
gbstats' chance to win and risk, and its group-sequential bounds against the published
Lan-DeMets Pocock values. Only what computes the same thing is compared for equality.

Numbers on a shared, loaded machine; seeded (numpy ``default_rng``); timings not reported.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from banditkit.live.resolved_prefix import PluginTuning
from banditkit.live.sequences import plugin_terms
from banditkit.live.statistics import ArmSums, compare
from banditkit.live.verdict_spec import check_verdicts

BASE_RATES = (0.01, 0.02, 0.05, 0.10, 0.20, 0.30, 0.50)


def _plugin_sums(x: np.ndarray, tuning: PluginTuning, chunk: int = 5000) -> np.ndarray:
    """Plug-in sums of rewards x (runs, arms, n) in order, in chunks (bounded memory)."""
    runs, arms, n = x.shape
    out = np.zeros((runs, arms, 4))
    N, S, Q = np.zeros((runs, arms)), np.zeros((runs, arms)), np.zeros((runs, arms))
    for start in range(0, n, chunk):
        part = x[..., start: start + chunk]
        out += np.stack([t.sum(-1) for t in plugin_terms(
            part, n_tune=tuning.n_tune, level=tuning.level, prior=(N, S, Q))], axis=-1)
        N, S, Q = N + part.shape[-1], S + part.sum(-1), Q + (part * part).sum(-1)
    return out


def widths(runs: int, seed: int, n: int = 20_000, lift: float = 0.15) -> dict:
    spec = check_verdicts("binary", None, {"tune_n": 10_000}, None)
    tuning = PluginTuning.of(spec, 2)
    out = {}
    for p in BASE_RATES:
        rng = np.random.default_rng([seed, int(p * 1000)])
        means = np.array([p, min(p * (1 + lift), 0.99)])
        x = (rng.random((runs, 2, n)) < means[None, :, None]).astype(float)
        N = np.full((runs, 2), float(n))
        S = x.sum(-1)
        sums = ArmSums(N, N, S, S, np.ones((runs, 2), bool), plugin=_plugin_sums(x, tuning))
        exact = compare(sums, (0.0, 1.0), intervals="anytime", alpha=0.05, control=0,
                        spec=spec)
        fixed = compare(sums, (0.0, 1.0), intervals="fixed", alpha=0.05, control=0,
                        spec=spec)
        ratio = (exact.diff_high - exact.diff_low)[:, 1] / (fixed.diff_high
                                                           - fixed.diff_low)[:, 1]
        out[str(p)] = {"median_ratio": round(float(np.median(ratio)), 4),
                       "p10": round(float(np.percentile(ratio, 10)), 4),
                       "p90": round(float(np.percentile(ratio, 90)), 4)}
    return {"runs": runs, "seed": seed, "units_per_arm": n, "relative_lift": lift,
            "width_over_fixed_n": out}


def plan_check(runs: int, seed: int, p: float = 0.05, mde: float = 0.0075,
               step: int = 1000) -> dict:
    """The planner against an independent run-by-run simulation of its scenario."""
    from banditkit.live.plan import plan

    predicted = plan(base_rate=p, mde=mde, daily_units=2 * step, runs=max(runs, 1000),
                     seed=seed)
    spec = check_verdicts("binary", None, {"tune_n": 10_000}, None)
    tuning = PluginTuning.of(spec, 2)
    cap = int(20 * predicted.fixed_n_units) + step
    units = []
    for r in range(runs):
        rng = np.random.default_rng([seed, 7, r])
        n, S, P = np.zeros(2), np.zeros(2), np.zeros((2, 4))
        while n[0] < cap:
            for a, m in enumerate((p, p + mde)):
                x = (rng.random(step) < m) * 1.0
                P[a] += tuning.terms(x, n[a], S[a], S[a])
                n[a] += step
                S[a] += x.sum()
            c = compare(ArmSums(n, n, S, S, np.ones(2, bool), plugin=P), (0.0, 1.0),
                        intervals="anytime", alpha=0.05, control=0, spec=spec)
            if c.verdict[1] == "better":
                break
        units.append(n[0])
    u = np.array(units)
    return {"runs": runs, "seed": seed, "independent_mean": float(u.mean()),
            "independent_se": float(u.std(ddof=1) / np.sqrt(runs)),
            "plan": predicted.as_json(),
            "plan_over_independent": float(predicted.expected_units / u.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["widths", "plan", "compare"])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.what == "widths":
        result = widths(args.runs or 40, args.seed)
    elif args.what == "plan":
        result = plan_check(args.runs or 300, args.seed)
    else:
        from bench_readout_compare import compare_all  # noqa: PLC0415

        result = compare_all(args.seed)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
