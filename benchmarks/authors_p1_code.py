"""Run the P1-RAGE authors' own algorithms (github.com/FFTypeZero/bobw_linear, commit 6cf899c,
``algorithms/``) with one ``np.random.seed`` per trial, so that the trials are independent
(their runner's forked workers share NumPy's global state; docs/p1-rage.md "The authors'
stored results"). Their code is not part of banditkit: pass the folder of a checkout.

    .venv/bin/python benchmarks/authors_p1_code.py --repo CHECKOUT ALGORITHM T TRIALS
    .venv/bin/python benchmarks/authors_p1_code.py --repo CHECKOUT ALGORITHM 10000 TRIALS \\
        --s 2.5 --L 900

ALGORITHM: od, peace, p1-peace, p1-rage, g-bai or mixed-peace, built as their
``utils.single_trial`` builds them. Without ``--s``/``--L``: their stationary Soare instance
(d = 10, ω = 0.1, θ* = 2e₁, Fig. 2a). With them: their oscillating Soare instance
(``run_adv_soare.get_adv_Soare``: d = 10, ω = 0.5, θ_t = [0.3, 0, …, 0, −s sin(2πt/L) + 0.5]
for t = 0..T−1, Fig. 6), whose best arm is e_d. Noise N(0, 1) in both. With ``--multi``:
their stationary multivariate instance (``run_single.run_sto_multi``: ``np.random.seed(6)``,
then ``get_sto_multi(4, T)``, the θ* of ``AUTHORS_THETA``; Figs. 4-5), noise N(0, 0.3²).

Their ``fw_XY`` (1000 Frank–Wolfe steps, no randomness) is memoized on its arguments: it
returns the same arrays, so every trial is exactly what their code computes, only faster.

Prints wrong recommendations every 100 trials (trial i uses ``np.random.seed(10_000 + i)``;
``--first`` moves the first i).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time

import numpy as np


def memoize_fw(fw_module, modules) -> None:
    """Replace their ``fw_XY`` (deterministic) by a memoized copy in each importing module."""
    original, cache = fw_module.fw_XY, {}

    def fw_XY(X, Y, *args, **kwargs):
        key = (X.shape, X.tobytes(), Y.shape, Y.tobytes(), args, tuple(sorted(kwargs.items())))
        if key not in cache:
            design, rho = original(X, Y, *args, **kwargs)
            cache[key] = (design, rho)
        design, rho = cache[key]
        return design.copy(), rho

    for module in modules:
        module.fw_XY = fw_XY


def instance(s: float | None, L: int | None, T: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Their arms, their θ_t (one row per t) and the index of their best arm."""
    d = 10
    omega = 0.1 if s is None else 0.5
    X = np.vstack((np.eye(d), np.r_[np.cos(omega), np.sin(omega), np.zeros(d - 2)]))
    if s is None:
        theta = np.zeros(d)
        theta[0] = 2.0
        return X, np.tile(theta, (T, 1)), 0
    thetas = np.zeros((T, d))
    thetas[:, 0] = 0.3
    thetas[:, -1] = -s * np.sin(2 * np.arange(T) * np.pi / L) + 0.5
    return X, thetas, d - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True, help="a checkout of their repository")
    parser.add_argument("algorithm",
                        choices=("od", "peace", "p1-peace", "p1-rage", "g-bai", "mixed-peace"))
    parser.add_argument("T", type=int)
    parser.add_argument("trials", type=int)
    parser.add_argument("--s", type=float, help="oscillation magnitude (Fig. 6)")
    parser.add_argument("--L", type=int, help="oscillation period (Fig. 6)")
    parser.add_argument("--first", type=int, default=0, help="index of the first trial")
    parser.add_argument("--multi", action="store_true",
                        help="their stationary multivariate instance (Fig. 5)")
    args = parser.parse_args()
    if (args.s is None) != (args.L is None):
        parser.error("--s and --L go together")
    sys.path.insert(0, args.repo)
    from algorithms import fw, g_bai, od_linbai, p1_linear, peace  # their modules

    memoize_fw(fw, (g_bai, od_linbai, p1_linear, peace))
    builders = {  # as their utils.single_trial
        "od": lambda X, rf: od_linbai.OD_LinBAI(X, args.T, rf),
        "peace": lambda X, rf: peace.Peace(X, args.T, rf, mixed=False),
        "mixed-peace": lambda X, rf: peace.Peace(X, args.T, rf, mixed=True),
        "p1-peace": lambda X, rf: p1_linear.P1_Linear(X, args.T, rf, batch=True, alt=True),
        "p1-rage": lambda X, rf: p1_linear.P1_Linear(X, args.T, rf, batch=True, alt=False,
                                                     subroutine_max_iter=15),
        "g-bai": lambda X, rf: g_bai.BAI_G_Design(X, args.T, rf),
    }
    X, thetas, best = instance(args.s, args.L, args.T)
    where = "" if args.s is None else f" s={args.s:g} L={args.L}"
    sigma = 1.0
    if args.multi:
        import run_adv_multi  # their module (imports matplotlib)

        np.random.seed(6)  # noqa: NPY002  (as their run_sto_multi)
        X, thetas = run_adv_multi.get_sto_multi(4, args.T)
        best, sigma, where = int(np.argmax(X @ thetas[0])), 0.3, " multivariate"
    wrong, start = 0, time.process_time()
    for n, i in enumerate(range(args.first, args.first + args.trials), start=1):
        np.random.seed(10_000 + i)  # noqa: NPY002  (their code draws from the global state)

        def reward(x, t):
            return np.random.normal(x @ thetas[t], sigma)  # noqa: NPY002

        with contextlib.redirect_stdout(io.StringIO()):  # their code prints per trial
            rec = builders[args.algorithm](X, reward).run()
        wrong += not np.all(rec == X[best])
        if n % 100 == 0 or n == args.trials:
            print(f"{args.algorithm} T={args.T}{where} trials={n} wrong={wrong} "
                  f"rate={wrong / n:.4f} cpu={time.process_time() - start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
