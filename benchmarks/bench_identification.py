"""Milliseconds per trial of the RAGE paper's identifiers (Fiez et al., NeurIPS 2019, Section 5),
and their ratio to the authors' released code.

Algorithms: RAGE, XY-static, XY-oracle, XY-adaptive, LinGapE, ALBA, each at δ = 0.05 with the
paper's constants (the factories of ``banditkit.experiments.figures.rage``), on the Soare et al.
benchmark soare(d) for d = 5, 10, 20, 35, the transductive example (d = 20) and on
multivariate_testing(D = 6). Each trial runs through the driver the figures use: LinGapE's block
driver ``simulate_lingape``, XY-static's and XY-oracle's phase driver
``simulate_static_allocation``, Track-and-Stop's ``simulate_track_and_stop``, the others
``simulate`` (``--lingape-sequential`` / ``--xy-sequential`` time LinGapE / XY-static and
XY-oracle through ``simulate`` instead). Trials run with one BLAS thread, as the figure runner
runs them (``banditkit.blas``).

Times are CPU seconds of this process (``time.process_time``: on a shared machine wall time
counts the other jobs too). RAGE and the XY allocations memoise designs, XY-static and
XY-oracle their phase schedules, XY-adaptive its greedy phases, per process, so the first trial
on an instance ("cold ms", everything computed) is reported apart from the mean over the
following ones ("ms/trial", warm: what each of a figure's 20 trials on a fixed instance costs;
with --trials 1 both are the one trial). "us/pull" is the warm time over the mean pulls.

The authors' code (``--authors DIR``, a checkout of github.com/fiezt/Transductive-Linear-Bandit-
Code; not part of banditkit and never imported into this process): its ``RAGE`` (factor 10),
``XY_ORACLE`` and ``XY_STATIC`` classes run ``algorithm(seed)`` on the same X, Z and θ* in a
subprocess with one BLAS thread and logging off, ``--authors-trials`` seeds each (fewer if one
trial passes ``--authors-budget`` seconds). "authors ms" is their CPU ms per trial (their design
solve included: they solve it in every trial), "x authors" = authors ms / our warm ms/trial.
Their XY allocations sample each phase i.i.d. from λ and stop on the known best item, so their
pulls differ from ours (shown as "authors pulls").

Run:  .venv/bin/python benchmarks/bench_identification.py [--trials 3] [--quick]
                     [--only RAGE,XY-static] [--seed 0] [--authors DIR]

Older trees (for before/after): the script needs only names that existed before the phase
schedule; with ``PYTHONPATH`` at an older ``src`` it times that code.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from functools import partial

import numpy as np

from banditkit.blas import single_threaded_blas
from banditkit.envs.instances import make_instance
from banditkit.experiments.figures import rage as fig
from banditkit.identification import rage, xy
from banditkit.identification.fw_sampling import make_fw_sampling
from banditkit.identification.lingape import make_lingape
from banditkit.identification.track_and_stop import make_track_and_stop
from banditkit.rng import stream
from banditkit.simulate import simulate

FACTORIES = {
    "RAGE": fig.make_rage,
    "XY-static": fig.make_xy_static,
    "XY-oracle": fig.make_xy_oracle,
    "XY-adaptive": fig.make_xy_adaptive,
    "LinGapE": make_lingape,
    "ALBA": fig.make_alba,
    # asymptotically optimal identifiers (GLR stopping; issue 18)
    "TaS": make_track_and_stop,
    "TaS-heur": lambda env, rng, *, delta: make_track_and_stop(env, rng, delta=delta,
                                                              threshold="heuristic"),
    "FWS-heur": lambda env, rng, *, delta: make_fw_sampling(env, rng, delta=delta,
                                                           threshold="heuristic"),
}
#: Our algorithm -> (the authors' module and class, constructor arguments after X, θ*).
AUTHORS = {"RAGE": ("RAGE", (10,)), "XY-oracle": ("XY_ORACLE", ()),
           "XY-static": ("XY_STATIC", ())}
HORIZON = 500_000_000
DELTA = 0.05

# Runs in a subprocess with the authors' folder on sys.path: their modules set global state
# (np.random.seed, logging.basicConfig, warnings.filterwarnings('error')).
_AUTHORS_RUNNER = r"""
import json, logging, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
logging.disable(logging.CRITICAL)
data = np.load(sys.argv[2])
module, args, trials, budget, delta = json.loads(sys.argv[3])
cls = getattr(__import__(module), module)
X, Z, theta = data["X"], data["Z"], data["theta"].reshape(-1, 1)
secs, pulls = [], []
for seed in range(trials):
    alg = cls(X, theta, *args, delta, Z=Z)
    t0 = time.process_time()
    alg.algorithm(seed)
    secs.append(time.process_time() - t0)
    pulls.append(int(alg.N))
    if sum(secs) > budget:
        break
print(json.dumps({"secs": secs, "pulls": pulls}))
"""


def authors_trial(directory: str, name: str, env, trials: int, budget: float) -> dict | None:
    """CPU seconds and pulls per trial of the authors' class for ``name`` on ``env``."""
    if name not in AUTHORS:
        return None
    module, args = AUTHORS[name]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "instance.npz")
        np.savez(path, X=env.X, Z=env.Z, theta=env.theta)
        spec = json.dumps([module, list(args), trials, budget, DELTA])
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _AUTHORS_RUNNER, directory, path, spec],
                capture_output=True, text=True, check=False, timeout=3 * budget + 60,
                env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "OMP_NUM_THREADS": "1"})
        except subprocess.TimeoutExpired:
            print(f"# authors' {module} on this instance: one trial took over "
                  f"{3 * budget + 60:.0f} s; not timed", file=sys.stderr)
            return None
    if proc.returncode != 0:
        print(f"# authors' {module} failed: {proc.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def instances(quick: bool, seed: int):
    for d in (5, 10) if quick else (5, 10, 20, 35):
        yield f"soare(d={d})", make_instance("soare", d=d)
    if not quick:
        yield "transductive(d=20)", make_instance("transductive", d=20)
    D = 4 if quick else 6
    yield f"multivariate_testing({D})", make_instance(
        "multivariate-testing", D=D, rng=stream(seed, "bench", "instance"))


def memos() -> list:
    """Every per-process memo of these identifiers (those an older tree has)."""
    found = [xy.PATH_MEMO, xy.DESIGN_MEMO, rage.DESIGN_MEMO]
    try:
        from banditkit.identification.xy_schedule import SCHEDULE_MEMO
    except ImportError:  # a tree from before the phase schedule
        return found
    return [*found, SCHEDULE_MEMO]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller instances")
    parser.add_argument("--only", default="", help="comma-separated algorithm names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lingape-sequential", action="store_true",
                        help="run LinGapE through simulate instead of its block driver")
    parser.add_argument("--xy-sequential", action="store_true",
                        help="run XY-static/XY-oracle through simulate instead of their driver")
    parser.add_argument("--authors", default="", metavar="DIR",
                        help="checkout of the authors' code (fiezt/Transductive-Linear-Bandit-"
                             "Code) to time RAGE, XY-oracle and XY-static against")
    parser.add_argument("--authors-trials", type=int, default=3)
    parser.add_argument("--authors-budget", type=float, default=60.0,
                        help="stop the authors' trials of one cell after this many CPU s")
    args = parser.parse_args()
    # simulate takes each algorithm's own engine; the flags force the protocol loop
    reference = partial(simulate, engine="reference")
    runners = {"LinGapE": reference} if args.lingape_sequential else {}
    if args.xy_sequential:
        runners.update({"XY-static": reference, "XY-oracle": reference})
    names = [n for n in FACTORIES if not args.only or n in args.only.split(",")]
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}"
          f", numpy {np.__version__}; {args.trials} trials, seed {args.seed}; CPU time, "
          f"one BLAS thread")
    print(f"{'instance':<26} {'algorithm':<12} {'ms/trial':>9} {'cold ms':>8} {'pulls':>10} "
          f"{'correct':>8} {'us/pull':>8} {'authors ms':>10} {'authors pulls':>13} "
          f"{'x authors':>9}")
    for label, env in instances(args.quick, args.seed):
        for name in names:
            for memo in memos():
                memo.clear()  # every algorithm starts cold on every instance
            secs, pulls, correct = [], [], 0
            with single_threaded_blas():
                for trial in range(args.trials):
                    alg = FACTORIES[name](env, stream(args.seed, label, trial, "algorithm"),
                                          delta=DELTA)
                    t0 = time.process_time()
                    run = runners.get(name, simulate)
                    tr = run(alg, env, seed=stream(args.seed, label, trial, "environment"),
                             horizon=HORIZON)
                    secs.append(time.process_time() - t0)
                    pulls.append(tr.n_pulls)
                    correct += bool(tr.correct)
            warm = secs[1:] if len(secs) > 1 else secs
            ms = 1e3 * float(np.mean(warm))
            theirs = (authors_trial(args.authors, name, env, args.authors_trials,
                                    args.authors_budget) if args.authors else None)
            tail = ""
            if theirs:
                their_ms = 1e3 * float(np.mean(theirs["secs"]))
                tail = (f" {their_ms:>10.1f} {np.mean(theirs['pulls']):>13.4g} "
                        f"{their_ms / ms:>9.0f}")
            print(f"{label:<26} {name:<12} {ms:>9.2f} {1e3 * secs[0]:>8.1f} "
                  f"{np.mean(pulls):>10.4g} {correct:>5}/{args.trials} "
                  f"{1e3 * ms / np.mean(pulls[-len(warm):]):>8.3g}{tail}", flush=True)


if __name__ == "__main__":
    main()
