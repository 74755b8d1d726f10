"""Do `Experiment.status()`'s verdicts stay valid when when an outcome arrives depends on its
value? Measured through `Experiment` itself (a real SQLite file per run, the real calls).

    .venv/bin/python benchmarks/bench_reporting.py [--runs 300] [--seed 1]
        [--rewards binary --rewards beta --rewards zero-inflated] [--ticks 60]

Each run is a **null** experiment: 4 arms with one reward distribution (no arm better), driven by
the README's kind of adaptive design, ``BatchedThompson`` (batches of ``--batch`` units). Time
is the experiment's injected clock (``clock=``), one tick per call: every tick the client
assigns ``--per-tick`` units and, in the same tick, records the outcomes that come **at once**;
the others come later, by value:

``binary``
    Bernoulli(``--rate``, 0.1): a conversion (1) is recorded in the tick its unit was assigned; a
    non-conversion is never sent: the outcome window (``--window`` ticks, ``missing="zero"``)
    records its 0 when it closes.
``beta``
    Beta(2, 5) rewards in [0, 1]: values >= 0.3 are recorded at once, the others
    ``--window`` − 1 ticks later (before the window closes; nothing is imputed).
``zero-inflated``
    0 with probability 0.8, else Beta(2, 2): non-zeros at once, zeros left to the window
    (``missing="zero"``).

After every tick the user reads ``status()`` twice on the same experiment: the default
(``count="resolved"``: every arm up to the one cursor G) and the behaviour before outcome windows
(``count="recorded"``: everything recorded so far). A run errs when any look shows any arm
``better`` or ``worse`` than the control (every verdict is false: the arms are equal). The
fraction of runs that err, with a Wilson 95% interval, is compared with alpha = 0.05.

Runs are seeded (``--seed``; run r's rewards and the experiment's seed come from
``SeedSequence([seed, r])``), so the numbers are reproducible exactly. Timings from a shared
2-core machine.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from banditkit import Experiment
from banditkit.intervals import wilson_interval

REWARDS = ("binary", "beta", "zero-inflated")
ARMS = ["control", "b", "c", "d"]
ALPHA = 0.05


@dataclass(frozen=True)
class Setting:
    """One benchmark setting (see the module docstring)."""

    rewards: str = "binary"
    ticks: int = 60
    per_tick: int = 200
    batch: int = 400
    window: int = 4
    rate: float = 0.1  # binary: the conversion rate of every arm


@dataclass(frozen=True)
class RunResult:
    """One run: the first tick with a false verdict under each way of counting (None: never),
    and the units assigned by the end."""

    resolved: int | None
    recorded: int | None
    units: int


def _draw(rng: np.random.Generator, kind: str, n: int, rate: float = 0.1) -> np.ndarray:
    if kind == "binary":
        return (rng.random(n) < rate).astype(float)
    if kind == "beta":
        return rng.beta(2.0, 5.0, n)
    zero = rng.random(n) < 0.8
    return np.where(zero, 0.0, rng.beta(2.0, 2.0, n))


def _at_once(kind: str, rewards: np.ndarray) -> np.ndarray:
    """Which outcomes the client sends in the tick of their assignment."""
    if kind == "beta":
        return rewards >= 0.3
    return rewards > 0


def run_one(setting: Setting, seed: int, run: int, folder: Path) -> RunResult:
    """One null experiment through :class:`banditkit.Experiment` (module docstring)."""
    rewards_seq, experiment_seq = np.random.SeedSequence([seed, run]).spawn(2)
    rng = np.random.default_rng(rewards_seq)
    now = [1_000_000.0]
    exp = Experiment.create(
        folder / f"run{run}.sqlite", algorithm="BatchedThompson", arms=ARMS,
        seed=int(experiment_seq.generate_state(1)[0]),
        params={"batch_size": setting.batch, "draws": 2000},
        outcome_window=float(setting.window), missing="zero", clock=lambda: now[0])
    later: dict[int, tuple[list[int], list[float]]] = {}  # tick -> units, rewards to send
    first = {"resolved": None, "recorded": None}
    units = 0
    try:
        for tick in range(setting.ticks):
            now[0] = 1_000_000.0 + tick
            frame = exp.assign(setting.per_tick)
            ids = frame["unit"].to_numpy()
            units += ids.size
            values = _draw(rng, setting.rewards, ids.size, setting.rate)
            quick = _at_once(setting.rewards, values)
            if quick.any():
                exp.record(ids[quick], values[quick])
            if setting.rewards == "beta" and (~quick).any():  # sent before the window closes
                due = tick + setting.window - 1
                sent = later.setdefault(due, ([], []))
                sent[0].extend(ids[~quick].tolist())
                sent[1].extend(values[~quick].tolist())
            if tick in later:
                late_ids, late_values = later.pop(tick)
                exp.record(late_ids, late_values)
            for count in first:
                if first[count] is None:
                    verdicts = exp.status(count=count).arms["verdict"]
                    if verdicts.isin(["better", "worse"]).any():
                        first[count] = tick
    finally:
        exp.close()
    return RunResult(first["resolved"], first["recorded"], units)


def measure(setting: Setting, runs: int, seed: int) -> dict:
    """``runs`` runs of ``setting``: the error rates of both ways of counting."""
    start = time.perf_counter()
    results = []
    # a RAM folder where there is one: the files are thrown away, and a disk sync per call
    # (most of a call's time on a disk) measures nothing here
    ram = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="bench-reporting-", dir=ram) as folder:
        for r in range(runs):
            results.append(run_one(setting, seed, r, Path(folder)))
    out = {"setting": setting.__dict__, "runs": runs, "seed": seed,
           "seconds": round(time.perf_counter() - start, 1),
           "units_per_run": int(np.median([r.units for r in results]))}
    for count in ("resolved", "recorded"):
        ticks = [getattr(r, count) for r in results]
        errs = sum(t is not None for t in ticks)
        low, high = wilson_interval(np.array(errs, float), np.array(runs, float), 0.95)
        out[count] = {"false_verdicts": errs, "rate": errs / runs,
                      "wilson95": [round(float(low), 4), round(float(high), 4)],
                      "median_first_tick": (None if not errs else
                                            float(np.median([t for t in ticks
                                                             if t is not None])))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rewards", action="append", choices=REWARDS, default=None)
    parser.add_argument("--ticks", type=int, default=Setting.ticks)
    parser.add_argument("--per-tick", type=int, default=Setting.per_tick)
    parser.add_argument("--batch", type=int, default=Setting.batch)
    parser.add_argument("--window", type=int, default=Setting.window)
    parser.add_argument("--rate", type=float, default=Setting.rate)
    args = parser.parse_args()
    for kind in args.rewards or REWARDS:
        setting = Setting(kind, args.ticks, args.per_tick, args.batch, args.window, args.rate)
        print(json.dumps(measure(setting, args.runs, args.seed)), flush=True)


if __name__ == "__main__":
    main()
