"""Time to a certified 1% gap for G- and XY-optimal designs (banditkit.design).

Problems: the multivariate-testing arms of Fiez et al. (NeurIPS 2019, Section 5): all
w ∈ {-1, 1}^D with features (1, w, (w_k w_l)_{k<l}), so |X| = 2^D and d = 1 + D + D(D-1)/2,
with Y = Differences(X); random unit-sphere arms in d = 9 with Y = Differences(X) (millions
of directions); and G-optimal designs on large |X|.

Second table: one ``Differences(Z).scan(M, 4096)`` (the top-4096 pairwise forms, as xy_optimal
asks for) on the many-arms items of Fiez et al. (2019, Fig. 1b; seed SeedSequence(1)) with
M = A(λ)^-1 for the uniform and the G-optimal design, and on points uniform on the sphere in
R^9 with M = I, where nothing can be pruned.

Run:  .venv/bin/python benchmarks/bench_design.py [--quick] [--tol 0.01] [--seed 0]
      [--scan-only]

BLAS is pinned to one thread unless OMP_NUM_THREADS is already set: the matrices are small
(d ≤ 40, a few hundred rows), and on a loaded 2-core machine multithreaded BLAS spin-waits
made the XY solves 10-30x slower (see docs/benchmarks-design.md).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from banditkit.design import Differences, g_optimal, xy_optimal  # noqa: E402
from banditkit.design.information import inverse_information  # noqa: E402
from banditkit.envs.instances import make_instance  # noqa: E402


def multivariate_testing_arms(D: int) -> np.ndarray:
    """RAGE paper's multivariate-testing features for all 2^D variants."""
    W = np.array(list(itertools.product([-1.0, 1.0], repeat=D)))
    cols = [np.ones(len(W))] + [W[:, k] for k in range(D)]
    cols += [W[:, k] * W[:, l] for k in range(D) for l in range(k + 1, D)]
    return np.column_stack(cols)


def sphere_arms(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def problems(quick: bool, seed: int):
    rng = np.random.default_rng(seed)
    mvt = range(4, 7) if quick else range(4, 9)
    for D in mvt:
        X = multivariate_testing_arms(D)
        yield f"G  multivariate D={D}", X, None
    for D in mvt:
        X = multivariate_testing_arms(D)
        yield f"XY multivariate D={D}", X, Differences(X)
    for n in (200, 500) if quick else (200, 500, 1000, 2000):
        X = sphere_arms(rng, n, 9)
        yield "XY sphere d=9", X, Differences(X)
    for n, d in ((10_000, 20),) if quick else ((10_000, 20), (100_000, 20), (100_000, 40)):
        yield f"G  sphere d={d}", sphere_arms(rng, n, d), None


def scan_problems(quick: bool, seed: int):
    """(name, Z, M) for the scan table."""
    for n in (10_000,) if quick else (10_000, 30_000):
        env = make_instance("many-arms", rng=np.random.default_rng(np.random.SeedSequence(1)),
                            n=n)
        X = env.X
        yield "many-arms uniform", env.Z, inverse_information(X, np.full(len(X), 1 / len(X)))
        yield "many-arms G-optimal", env.Z, inverse_information(X, g_optimal(X, tol=0.01).weights)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    for n in (2000,) if quick else (2000, 6000):
        yield "sphere d=9, M = I", sphere_arms(rng, n, 9), np.eye(9)


def scan_table(quick: bool, seed: int, k_top: int = 4096) -> None:
    print(f"\n# Differences.scan(M, {k_top}): best of 3 runs")
    cols = [("problem", 24), ("|Z|", 7), ("d", 3), ("pairs", 12), ("seconds", 8)]
    print("| " + " | ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
                            for i, (c, w) in enumerate(cols)) + " |")
    print("|" + "|".join("-" * (w + 2) for _, w in cols) + "|")
    for name, Z, M in scan_problems(quick, seed):
        D = Differences(Z)
        secs = []
        for _ in range(3):
            t0 = time.perf_counter()
            D.scan(M, k_top)
            secs.append(time.perf_counter() - t0)
        print(f"| {name:<24} | {len(Z):>7} | {Z.shape[1]:>3} | {len(D) // 2:>12,} | "
              f"{min(secs):>8.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--tol", type=float, default=0.01, help="certified relative gap")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scan-only", action="store_true", help="only the scan table")
    args = parser.parse_args()
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"numpy {np.__version__}, tol={args.tol}, seed={args.seed}, "
          f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, cores={os.cpu_count()}")
    if args.scan_only:
        scan_table(args.quick, args.seed)
        return
    cols = [("problem", 24), ("|X|", 7), ("d", 3), ("|Y|", 10), ("seconds", 8),
            ("rel. gap", 8), ("iters", 6), ("support", 7)]
    print("| " + " | ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
                            for i, (c, w) in enumerate(cols)) + " |")
    print("|" + "|".join("-" * (w + 2) for _, w in cols) + "|")
    for name, X, Y in problems(args.quick, args.seed):
        t0 = time.perf_counter()
        design = g_optimal(X, tol=args.tol) if Y is None else xy_optimal(X, Y, tol=args.tol)
        secs = time.perf_counter() - t0
        n_y = len(X) if Y is None else len(Y)
        print(f"| {name:<24} | {len(X):>7} | {X.shape[1]:>3} | {n_y:>10,} | {secs:>8.3f} | "
              f"{design.relative_gap:>8.4f} | {design.iterations:>6} | "
              f"{design.support.size:>7} |", flush=True)
    scan_table(args.quick, args.seed)


if __name__ == "__main__":
    main()
