"""Which of the authors' implementation choices moves our error rate at a point of P1-RAGE's
Fig. 6 (oscillating Soare, ω = 0.5, d = 10, T = 10⁴) to theirs (issue 35 §2; docs/p1-rage.md
"The authors' stored results"):

    .venv/bin/python benchmarks/fig6_authors_rules.py --repo CHECKOUT ALGORITHM --s 2.5 \\
        --L 900 [--trials 1000] [--seed 0] [--variants ours authors-fw ...]

ALGORITHM: peace, od, p1-peace or p1-rage. Variants of our implementation, each on the same
trials: by default those of ``banditkit run p1-rage:fig6 --seed SEED`` at the point (trial i:
its ξ and noise streams, ``experiments.tasks.algorithm_rng`` and ``noise_seed``; with seed 0
and 1000 trials, ``ours`` is docs/p1-rage.md's Fig. 6 table); ``--streams other`` takes
other trials (ξ = ``stream(seed, "fig6-authors", i, "algorithm")``, noise
``derive_seed(seed, "fig6-authors", i, "environment")``):

* ``ours``: as ``banditkit run p1-rage:fig6`` runs it;
* ``authors-fw``: every design (Peace's and P1's item designs and their values ρ, the G-optimal
  design, OD-LinBAI's phase designs) is instead the authors' ``fw_XY`` (1000 Frank–Wolfe
  steps from the uniform design, ``algorithms/fw.py`` of github.com/FFTypeZero/bobw_linear
  @6cf899c; pass a checkout as ``--repo``), as their ``__fw_XXi`` builds it: the pairwise
  differences of the items in their ranked order;
* ``code-last-phase`` (OD-LinBAI only): the last phase pulls ``⌈π_R(a) m⌉`` of each arm, as
  every other phase and as their code, instead of every pull left (ours, so that exactly T are
  made); the few pulls left (T − Σ_r Σ_a ⌈π_r(a) m⌉) come after the decision, which they
  cannot change, where their code makes none;
* ``code-epochs`` (P1 only): the authors' epoch length ⌊T/⌈log₂ρ⌉⌋ (``epoch_rule="code"``);
* ``code-ties`` (P1 only): also the authors' ``np.flip(np.argsort(θ̂ᵀx))`` ranking
  (benchmarks/p1_authors_rules.py).

Prints the error rate with its Wilson 95% interval per variant, the trials on which it and the
first variant disagree, and for Peace and OD-LinBAI how many items survive each epoch.
"""

from __future__ import annotations

import argparse
import sys
import types
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.estimation.ips import ips_information
from banditkit.experiments.paper_references import point_index
from banditkit.experiments.tasks import algorithm_rng, noise_seed
from banditkit.identification import (
    P1RAGE,
    ODLinBAI,
    P1Peace,
    Peace,
    item_designs,
    od_linbai,
    p1,
    peace,
)
from banditkit.intervals import wilson_interval
from banditkit.rng import derive_seed, stream

sys.path.insert(0, str(Path(__file__).parent))
from p1_authors_rules import authors_ties


@contextmanager
def patched(module, name: str, value):
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


@contextmanager
def authors_fw(repo: str):
    """Every design from the authors' ``fw_XY`` (memoized: it is deterministic)."""
    sys.path.insert(0, repo)
    from algorithms.fw import fw_XY  # their module

    cache: dict = {}

    def fw(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, float]:
        key = (X.tobytes(), Y.shape, Y.tobytes())
        if key not in cache:
            cache[key] = fw_XY(X, Y)
        return cache[key]

    def item_design(X, Z, items, tol):
        items = np.asarray(items, dtype=np.int64)
        if np.unique(items).size < 2:
            return None, 0.0
        W = Z[items]  # their __fw_XXi: the pairs i < j of the ranked items
        rows, cols = np.triu_indices(items.size, k=1)
        design, rho = fw(X, W[rows] - W[cols])
        return types.SimpleNamespace(weights=design), float(rho)

    def halving_prefix(X, Z, ranked, rho, tol):  # their __eliminate_Xi, on their ρ
        ranked = np.asarray(ranked, dtype=np.int64)
        if item_design(X, Z, ranked[:1], tol)[1] > rho / 2:
            return 1
        lo, hi = 1, ranked.size
        while hi - lo > 1:
            mid = (hi + lo) // 2
            if item_design(X, Z, ranked[:mid], tol)[1] > rho / 2:
                hi = mid
            else:
                lo = mid
        return lo

    def g_design(X, tol):
        weights = fw(X, X)[0]
        return weights, ips_information(X, weights)

    def g_optimal(A, tol):
        return types.SimpleNamespace(weights=fw(A, A)[0])

    with ExitStack() as stack:
        for module in (item_designs, peace, p1):
            stack.enter_context(patched(module, "item_design", item_design))
        for module in (peace, p1):
            stack.enter_context(patched(module, "halving_prefix", halving_prefix))
            stack.enter_context(patched(module, "g_design", g_design))
        stack.enter_context(patched(od_linbai, "g_optimal", g_optimal))
        stack.enter_context(patched(item_designs.ITEM_DESIGNS, "get",
                                    lambda key, solve: solve()))
        yield


@contextmanager
def code_last_phase():
    """OD-LinBAI's last phase as its other phases: ``⌈π_R(a) m⌉`` pulls of each arm."""
    original = ODLinBAI._allocation

    def allocation(self, design):
        if self.n_phases - 1 - self.phase > 0 or self.short_budget:
            return original(self, design)
        counts = np.ceil(design.weights * self.m).astype(np.int64)
        return counts if counts.sum() <= self.remaining else original(self, design)

    with patched(ODLinBAI, "_allocation", allocation):
        yield


CLASSES = {"peace": Peace, "od": ODLinBAI, "p1-peace": P1Peace, "p1-rage": P1RAGE}


def trial_streams(streams: str, seed: int, point: int, i: int):
    """(ξ, noise seed) of trial i: the figure's, or others."""
    if streams == "figure":
        return (algorithm_rng(seed, "p1-rage:fig6", point, i),
                noise_seed(seed, "p1-rage:fig6", point, i))
    return (stream(seed, "fig6-authors", i, "algorithm"),
            derive_seed(seed, "fig6-authors", i, "environment"))


def errors(cls, env, T: int, trials: int, streams, **params
           ) -> tuple[np.ndarray, Counter]:
    """Whether each trial recommended a wrong arm, and for Peace and OD-LinBAI how many
    items survived each epoch (trials, wrong ones) per sequence of survivor counts."""
    wrong = np.zeros(trials, dtype=bool)
    paths: Counter = Counter()
    for i in range(trials):
        xi, noise = streams(i)
        algo = cls(env.X, env.Z, T, rng=xi, **params)
        wrong[i] = not simulate(algo, env, horizon=T, engine="reference", seed=noise).correct
        if "survivors" in algo.info:
            path = tuple(algo.info["survivors"])
            paths[path, "trials"] += 1
            paths[path, "wrong"] += int(wrong[i])
    return wrong, paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", help="a checkout of the authors' repository (authors-fw)")
    parser.add_argument("algorithm", choices=tuple(CLASSES))
    parser.add_argument("--s", type=float, required=True)
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--streams", choices=("figure", "other"), default="figure")
    parser.add_argument("--variants", nargs="+", default=["ours", "authors-fw"],
                        choices=("ours", "authors-fw", "code-last-phase", "code-epochs",
                                 "code-ties"))
    args = parser.parse_args()
    if "authors-fw" in args.variants and not args.repo:
        parser.error("authors-fw needs --repo")
    T = 10_000
    env = make_instance("oscillating-soare", s=args.s, L=args.L, T=T)
    cls = CLASSES[args.algorithm]
    point = point_index("p1-rage:fig6", s=args.s, L=args.L)
    print(f"{args.algorithm}, oscillating Soare s = {args.s:g}, L = {args.L}, T = {T}, "
          f"{args.trials} trials, seed {args.seed}, {args.streams} streams")
    print("| variant | error | Wilson 95% | trials wrong here only / right here only, "
          "against the first variant |")
    print("|---|---|---|---|")
    first, summary = None, []
    for key in args.variants:
        with ExitStack() as stack:
            params = {}
            if key == "authors-fw":
                stack.enter_context(authors_fw(args.repo))
            if key == "code-last-phase":
                stack.enter_context(code_last_phase())
            if key in ("code-epochs", "code-ties"):
                params["epoch_rule"] = "code"
            if key == "code-ties":
                stack.enter_context(authors_ties())
            wrong, paths = errors(cls, env, T, args.trials,
                                  lambda i: trial_streams(args.streams, args.seed, point, i),
                                  **params)
        first = wrong if first is None else first
        k, n = int(wrong.sum()), wrong.size
        lo, hi = wilson_interval(k, n)
        print(f"| {key} | {k / n:.4f} | [{lo:.4f}, {hi:.4f}] | "
              f"{int(np.sum(wrong & ~first))} / {int(np.sum(~wrong & first))} |", flush=True)
        if paths:
            summary.append(f"{key}: " + ", ".join(
                f"{'→'.join(map(str, path))}: {paths[path, 'trials']} "
                f"({paths[path, 'wrong']} wrong)"
                for path, what in sorted(paths) if what == "trials"))
    if summary:
        print("\nItems surviving each epoch: trials (wrong ones)")
        print("\n".join(summary))


if __name__ == "__main__":
    main()
