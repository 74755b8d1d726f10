"""Does what `Experiment.status()` shows stay valid for a person who looks after every record
call? And does its missing-outcome check fire on a planted logging bug, and only then?

    .venv/bin/python benchmarks/bench_anytime.py [--runs 1000] [--seed 1]
        [--policy ReplicableElimination --policy BatchedElimination ...]

**Coverage.** Each run is a live A/B/n test on Bernoulli arms with known means, driven by a
registered batched policy (any name: ``--policy BatchedThompson`` once it is registered). The
units of each batch go out in a shuffled order (the experiment's default) and come back in
record calls of ``--call-size`` units; after every record call the user reads the status. The
simulation is exact from the experiment's sufficient statistics: after each call it takes each
arm's count and sum of rewards — what ``status()`` aggregates from its SQL table — and feeds
them, for every look of every run at once, to :func:`banditkit.live.readout.statistics.compare`, the
function ``status()`` itself calls. A run *errs* when any look shows an interval that excludes
the truth: an arm's mean (``low``/``high``) or an arm's difference to the control
(``diff_low``/``diff_high``). Measured for the anytime-valid intervals (default) and the fixed-n
ones (``intervals="fixed"``), with a Clopper-Pearson 95% interval on each rate, and the width
cost of anytime validity at the last look (median over runs of anytime width / fixed width).

**Missing outcomes.** Units arrive in calls of ``--call-size``, allocated uniformly at random
over K arms (the check sees only units and whether they were answered, not the policy); every
arm loses ``--loss`` of its outcomes (users who leave), answers arrive up to ``--delay`` calls
after assignment, and a daily job expires units unanswered after ``--expire-after`` calls.
Clean runs: the rate of runs that ever warn. Planted bug: arm 1 additionally loses 20% of its
outcomes; units assigned before the first warning (median and quartiles over runs).

Timings and numbers from a shared 2-core machine; runs are seeded (``--seed``), so the numbers
are reproducible exactly.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np

from banditkit.live.problem import LiveArms
from banditkit.live.readout.statistics import compare, losing_arms
from banditkit.live.readout.sums import ArmSums
from banditkit.registry import make_policy
from banditkit.rng import stream

MEANS = (0.10, 0.12, 0.15)
PARAMS = {"ReplicableElimination": {"rho": 0.2, "beta_floor": False, "commit": "argmax"},
          "BatchedElimination": {"commit": "argmax"}}


@dataclass(frozen=True)
class Looks:
    """Every look of every run: per-arm counts ``n`` and reward sums ``S`` (shape (looks, K)),
    the run each look belongs to, and the index of each run's last look."""

    n: np.ndarray
    S: np.ndarray
    run: np.ndarray
    last: np.ndarray


def simulate_looks(policy: str, means: tuple[float, ...], horizon: int, call_size: int,
                   runs: int, seed: int, params: dict | None = None) -> Looks:
    """Drive ``runs`` live experiments of ``policy`` on Bernoulli arms, recording each arm's
    count and reward sum after every record call.

    Each batch the policy asks for (cut at the horizon, as a live experiment cuts it) is handed
    out in a uniformly random order and answered in calls of ``call_size`` units; the policy
    observes the batch's run sums once all its units are answered, exactly as
    :class:`banditkit.Experiment` does. Run r draws the policy's randomness from
    ``stream(seed, "anytime-looks", r, "algorithm")`` and rewards and orders from
    ``stream(seed, "anytime-looks", r, "environment")``.
    """
    K = len(means)
    mu = np.asarray(means, dtype=float)
    params = dict(PARAMS.get(policy, {}) if params is None else params)
    ns, Ss, run_of, last = [], [], [], []
    for r in range(runs):
        algorithm = make_policy(policy, LiveArms(K), stream(seed, "anytime-looks", r,
                                                            "algorithm"),
                                horizon=horizon, **params)
        noise = stream(seed, "anytime-looks", r, "environment")
        n, S = np.zeros(K), np.zeros(K)
        while (batch := algorithm.next_batch()) is not None:
            left = horizon - algorithm.t
            if left <= 0:
                break
            if batch.n_pulls > left:
                batch = batch.truncated(left)
            arms = np.repeat(batch.arms, batch.counts)
            rewards = (noise.random(arms.size) < mu[arms]).astype(float)
            order = noise.permutation(arms.size)
            for start in range(0, arms.size, call_size):  # one record call, then a look
                chunk = order[start: start + call_size]
                n += np.bincount(arms[chunk], minlength=K)
                S += np.bincount(arms[chunk], weights=rewards[chunk], minlength=K)
                ns.append(n.copy())
                Ss.append(S.copy())
                run_of.append(r)
            algorithm.observe(batch, batch.sum_runs(rewards))
        last.append(len(ns) - 1)
    return Looks(np.asarray(ns), np.asarray(Ss), np.asarray(run_of), np.asarray(last))


def errs(looks: Looks, means: tuple[float, ...], intervals: str, alpha: float = 0.05,
         control: int = 0) -> dict[str, np.ndarray]:
    """Per run: whether any look's interval excluded an arm's mean (``"arms"``), an arm's
    difference to the control (``"differences"``), or either (``"any"``); and the status's
    comparison at every look (``"comparison"``)."""
    mu = np.asarray(means, dtype=float)
    sums = ArmSums(looks.n, looks.n, looks.S, looks.S, np.ones(looks.n.shape, dtype=bool))
    c = compare(sums, (0.0, 1.0), intervals=intervals, alpha=alpha, control=control)
    truth = mu - mu[control]
    # NaN (no data yet, or the control's own difference) compares False: never a miss
    arm_miss = ((c.low > mu) | (c.high < mu)).any(axis=1)
    diff_miss = ((c.diff_low > truth) | (c.diff_high < truth)).any(axis=1)
    runs = looks.last.size
    per_run = {name: np.bincount(looks.run, weights=miss, minlength=runs) > 0
               for name, miss in (("arms", arm_miss), ("differences", diff_miss))}
    per_run["any"] = per_run["arms"] | per_run["differences"]
    per_run["comparison"] = c
    return per_run


def rate_interval(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval of a rate k/n."""
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def coverage_table(policy: str, means: tuple[float, ...], horizon: int, call_size: int,
                   runs: int, seed: int, alpha: float, params: dict | None = None
                   ) -> list[str]:
    started = time.perf_counter()
    looks = simulate_looks(policy, means, horizon, call_size, runs, seed, params)
    simulated = time.perf_counter() - started
    rows = []
    results = {kind: errs(looks, means, kind, alpha) for kind in ("anytime", "fixed")}
    for kind, result in results.items():
        cells = []
        for what in ("any", "arms", "differences"):
            k = int(result[what].sum())
            lo, hi = rate_interval(k, runs)
            cells.append(f"{k}/{runs} = {k / runs:.1%} [{lo:.1%}, {hi:.1%}]")
        rows.append(f"| {policy} | {kind} | " + " | ".join(cells) + " |")
    end = looks.last
    a, f = results["anytime"]["comparison"], results["fixed"]["comparison"]
    arm_ratio = np.nanmedian((a.high - a.low)[end] / (f.high - f.low)[end], axis=0)
    others = [k for k in range(len(means)) if k != 0]  # the control (arm 0) has no difference
    diff_ratio = np.nanmedian(((a.diff_high - a.diff_low) / (f.diff_high - f.diff_low))[end][
        :, others], axis=0)
    pulls = looks.n[end]
    rows.append(f"|  | width anytime/fixed at the last look (median over runs), per arm: "
                f"{', '.join(f'{x:.2f}' for x in arm_ratio)}; differences to control: "
                f"{', '.join(f'{x:.2f}' for x in diff_ratio)} | looks per run: "
                f"{looks.run.size / runs:.1f}; final pulls per arm (median): "
                f"{', '.join(f'{x:.0f}' for x in np.median(pulls, axis=0))} | "
                f"simulation {simulated:.1f} s |")
    return rows


def missing_outcome_looks(runs: int, K: int, units: int, call_size: int, loss: float,
                          bad_arm: int | None, extra_loss: float, delay: int,
                          expire_after: int, seed: int, alpha: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """For each run: whether it ever warned and the units assigned by its first warning (NaN
    if none), with the looks (after each call) evaluated by
    :func:`banditkit.live.readout.statistics.losing_arms`, the decision ``status()`` warns on.

    A unit is *resolved* once answered (``delay`` calls at most after its call, uniformly) or
    expired (``expire_after`` calls after its call, if never answered); what ``status()``
    counts per arm is the prefix of the arm's units before its oldest unresolved one.
    """
    calls = -(-units // call_size)
    warned = np.zeros(runs, dtype=bool)
    first = np.full(runs, np.nan)
    for r in range(runs):
        rng = stream(seed, "anytime-missing", r, "environment")
        arm = rng.integers(K, size=units)
        call = np.arange(units) // call_size
        keep = np.full(units, 1.0 - loss)
        if bad_arm is not None:
            keep[arm == bad_arm] *= 1.0 - extra_loss
        answered = rng.random(units) < keep
        resolved_at = np.where(answered, call + rng.integers(0, delay + 1, size=units),
                               call + expire_after)
        looks = np.arange(calls)
        resolved = np.zeros((calls, K))
        n_answered = np.zeros((calls, K))
        for a in range(K):
            mine = arm == a
            # the arm's units before its oldest unresolved one at look c: the leading units
            # whose running maximum of resolution times is at most c
            prefix = np.searchsorted(np.maximum.accumulate(resolved_at[mine]), looks,
                                     side="right")
            cum = np.concatenate([[0], np.cumsum(answered[mine])])
            resolved[:, a], n_answered[:, a] = prefix, cum[prefix]
        flags, _, _ = losing_arms(resolved, n_answered, alpha)
        hits = np.flatnonzero(flags.any(axis=1))
        if hits.size:
            warned[r] = True
            first[r] = min((hits[0] + 1) * call_size, units)
    return warned, first


def missing_outcome_rows(runs: int, seed: int, alpha: float, K: int = 3, units: int = 20_000,
                         call_size: int = 100, loss: float = 0.1, delay: int = 5,
                         expire_after: int = 10) -> list[str]:
    rows = []
    for label, bad in (("clean", None), ("arm 1 loses 20% more", 1)):
        warned, first = missing_outcome_looks(runs, K, units, call_size, loss, bad, 0.2,
                                              delay, expire_after, seed, alpha)
        k = int(warned.sum())
        lo, hi = rate_interval(k, runs)
        when = ("" if not k else
                "units by the first warning: median {:.0f}, quartiles {:.0f}-{:.0f}, "
                "90th percentile {:.0f}".format(*np.nanpercentile(first, [50, 25, 75, 90])))
        rows.append(f"| {label} | {k}/{runs} = {k / runs:.1%} [{lo:.1%}, {hi:.1%}] | {when} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", action="append",
                        help="registered batched policy (repeat; default ReplicableElimination "
                             "and BatchedElimination)")
    parser.add_argument("--params", type=json.loads, default=None,
                        help="JSON parameters for every --policy (default: PARAMS)")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--means", type=lambda s: tuple(float(x) for x in s.split(",")),
                        default=MEANS)
    parser.add_argument("--horizon", type=int, default=6000)
    parser.add_argument("--call-size", type=int, default=300)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--skip-missing", action="store_true")
    args = parser.parse_args()
    print(f"Coverage: means {args.means}, horizon {args.horizon}, a look after every record "
          f"call of {args.call_size} units, alpha {args.alpha}, {args.runs} runs, seed "
          f"{args.seed}; rate of runs in which some look's interval excluded the truth")
    print("| policy | intervals | any | arms | differences to control |")
    print("|---|---|---|---|---|")
    for policy in args.policy or ["ReplicableElimination", "BatchedElimination"]:
        for row in coverage_table(policy, args.means, args.horizon, args.call_size, args.runs,
                                  args.seed, args.alpha, args.params):
            print(row, flush=True)
    if not args.skip_missing:
        print(f"\nMissing outcomes: 3 arms, 20,000 units in calls of 100, 10% lost on every "
              f"arm, answers within 5 calls, expiry after 10 calls, {args.runs} runs, seed "
              f"{args.seed}: runs that ever warn")
        print("| experiment | runs warned | when |")
        print("|---|---|---|")
        for row in missing_outcome_rows(args.runs, args.seed, args.alpha):
            print(row, flush=True)


if __name__ == "__main__":
    main()
