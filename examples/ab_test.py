"""An A/B/n test run the way a team runs one: a few thousand visitors a day, the experiment's
state in a file, and every day a restart (each day opens the file afresh, as a daily job in a
new process would).

The visitors' conversions are simulated here from hidden rates; in a real test they come from
your logs. Run it with::

    python examples/ab_test.py                # writes ab_test.sqlite in a temporary folder
    python examples/ab_test.py --path my.sqlite --days 12 --visitors 3000 --seed 1

Algorithm: Algorithm 2 of Esfandiari et al. (2023), replicable elimination, with two
documented options (docs/replicable.md): beta without the 2304 floor, and the final commit to
the empirical best surviving arm. With the paper's defaults (beta = 2304, commit to the
lowest index) a 30,000-visitor test eliminates nothing and ends on the control arm.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from banditkit import Experiment

ARMS = ["control", "new-button", "new-copy"]
HIDDEN_RATES = {"control": 0.10, "new-button": 0.12, "new-copy": 0.15}  # unknown in real life


def run_day(path: Path, visitors: int, rng: np.random.Generator) -> None:
    """One day, in a process of its own: assign the day's visitors, then record their
    conversions (in any order, in several uploads). A batch of the algorithm may end mid-day:
    assign() then hands out what is left of it, the day's conversions complete it, and the
    next assign() starts the next batch."""
    with Experiment.open(path) as exp:
        served = 0
        while served < visitors:
            units = exp.assign(visitors - served)
            if units.empty:  # the algorithm has finished
                return
            rates = units["arm"].map(HIDDEN_RATES).to_numpy()
            converted = (rng.random(len(units)) < rates).astype(float)
            for part in np.array_split(rng.permutation(len(units)), 3):
                exp.record(units["unit"].to_numpy()[part], converted[part])
            served += len(units)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=None, help="experiment file to create")
    parser.add_argument("--days", type=int, default=12)
    parser.add_argument("--visitors", type=int, default=3000, help="visitors per day")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    path = args.path or Path(tempfile.mkdtemp()) / "ab_test.sqlite"

    horizon = 30_000
    Experiment.create(path, algorithm="ReplicableElimination", arms=ARMS, seed=args.seed,
                      horizon=horizon,
                      params={"rho": 0.2, "beta_floor": False, "commit": "argmax"},
                      # conversions arrive at once here, so a batch that ends mid-day is
                      # complete before the day's next visitors come: they start the next
                      # batch. With real, delayed outcomes keep the default ("design"): the
                      # visitors beyond a batch then get overflow units (docs/service.md)
                      overflow="off").close()
    traffic = np.random.default_rng(args.seed + 1000)  # the visitors' behaviour (simulated)
    for day in range(1, args.days + 1):
        run_day(path, args.visitors, traffic)
        with Experiment.open(path) as exp:
            state = exp.status()
        # the verdicts hold at every look (anytime-valid), so reading them daily is sound
        print(f"day {day:2d}: {state.pulls_observed:6d} visitors observed, per arm "
              f"{state.arms['recorded'].to_dict()}, vs {state.control}: "
              f"{state.arms['verdict'].drop(state.control).to_dict()}")
        for warning in state.warnings:
            print(f"WARNING: {warning}")
        if state.finished:
            break
    with Experiment.open(path) as exp:
        state = exp.status()
    print()
    print(state)
    best = state.arms["recorded"].idxmax()
    print(f"\nmost visitors went to: {best}")
    return 0 if state.finished else 1


if __name__ == "__main__":
    raise SystemExit(main())
