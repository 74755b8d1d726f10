"""Which of the authors' implementation choices moves P1-Peace's error at T = 2010 on stationary
Soare (d = 10, ω = 0.1) from the authors' stored 0.0421 (21,000 trials,
github.com/FFTypeZero/bobw_linear, ``plot_data/P1-Peace/P1-Peace_results_soare_sto.npz``) to
ours (issue 35 §2):

    .venv/bin/python benchmarks/p1_authors_rules.py [--T 2010] [--trials 5000] [--seed 0]

Variants of our P1Peace, each on the same trials (trial i: ξ = ``stream(seed, "p1-authors", i,
"algorithm")``, noise ``derive_seed(seed, "p1-authors", i, "environment")``):

* ``ours``: Algorithm 4 as printed (R = ⌊T/log₂ρ⌋), ties in the virtual ranking broken
  uniformly at random with ξ;
* ``code epochs``: the authors' R = ⌊T/⌈log₂ρ⌉⌋ (``epoch_rule="code"``);
* ``code epochs + code ties``: also the authors' ranking ``np.flip(np.argsort(θ̂ᵀx))``
  (``algorithms/p1_linear.py``, ``peace_elimination``), which puts tied items in *descending*
  index order — after the first pull the estimate is ``A(λ*)⁻¹ x r``, zero on the 8–10 items
  that x does not measure, so the best arm e₁ (index 0) is ranked last among them.

Prints the error rate with its Wilson 95% interval per variant.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager

import numpy as np

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.identification import P1Peace
from banditkit.identification import p1 as p1_module
from banditkit.intervals import wilson_interval
from banditkit.rng import derive_seed, stream


@contextmanager
def authors_ties():
    """The authors' ranking: ascending stable sort, flipped (ties in descending index order)."""
    original = p1_module.ranked_by
    p1_module.ranked_by = lambda values, xi: np.flip(np.argsort(np.asarray(values),
                                                                kind="stable"))
    try:
        yield
    finally:
        p1_module.ranked_by = original


def error_rate(env, T: int, trials: int, seed: int, **params) -> tuple[int, int]:
    wrong = 0
    for i in range(trials):
        algo = P1Peace(env.X, env.Z, T, rng=stream(seed, "p1-authors", i, "algorithm"),
                       **params)
        trial = simulate(algo, env, horizon=T,
                         seed=derive_seed(seed, "p1-authors", i, "environment"))
        wrong += not trial.correct
    return wrong, trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--T", type=int, default=2010)
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", nargs="+", default=["ours", "code-epochs", "code-ties"],
                        help="which variants to run (ours, code-epochs, code-ties)")
    args = parser.parse_args()
    env = make_instance("soare", d=10, omega=0.1)
    print(f"P1-Peace, stationary Soare d = 10, omega = 0.1, T = {args.T}, {args.trials} "
          f"trials, seed {args.seed}")
    print("| variant | error | Wilson 95% |")
    print("|---|---|---|")
    for key, name, params, patch in (
            ("ours", "ours", {}, False),
            ("code-epochs", "code epochs", {"epoch_rule": "code"}, False),
            ("code-ties", "code epochs + code ties", {"epoch_rule": "code"}, True)):
        if key not in args.variants:
            continue
        if patch:
            with authors_ties():
                k, n = error_rate(env, args.T, args.trials, args.seed, **params)
        else:
            k, n = error_rate(env, args.T, args.trials, args.seed, **params)
        lo, hi = wilson_interval(k, n)
        print(f"| {name} | {k / n:.4f} | [{lo:.4f}, {hi:.4f}] |", flush=True)


if __name__ == "__main__":
    main()
