"""A figure of ours (issue 25): the cost of replicability in best-arm identification.

ReplicableRAGE (docs/replicable-bai.md) against RAGE (Fiez et al. 2019, Algorithm 1) on the
Soare et al. benchmark, δ = 0.05: sample complexity against ρ, and the measured
non-replication of both (trials run as pairs sharing ξ, as ``banditkit audit`` runs them).
No paper plots it: there is no paper value to compare with.
"""

from __future__ import annotations

import numpy as np

from ...envs.base import Environment
from ...envs.instances import make_instance
from ...identification.rage import RAGE
from ...identification.replicable_rage import ReplicableRAGE
from ...identification.replicable_rule import ReplicableGapRule
from ..numbers import short_number
from ..spec import AlgorithmSpec, FigureSpec, PlotSpec

__all__ = ["COST", "FIGURES", "cost_table", "make_rage_at_rho", "make_replicable_rage",
           "make_soare_d", "predicted_factor"]

DELTA = 0.05
COST_RHOS = (0.05, 0.1, 0.2, 0.3, 0.5)
COST_DS = (5, 10)


def make_soare_d(rng: np.random.Generator, *, d: int, omega: float = 0.1) -> Environment:
    """The Soare et al. benchmark in R^d (fixed instance; ``rng`` unused)."""
    return make_instance("soare", d=int(d), omega=float(omega))


def make_rage_at_rho(env: Environment, rng: np.random.Generator, *, delta: float,
                     rho: float | None = None) -> RAGE:
    """RAGE at a point of the ρ sweep: it has no ρ (the point's ρ is only what its pairs are
    judged against)."""
    return RAGE(env.X, env.Z, delta, rng=rng)


def make_replicable_rage(env: Environment, rng: np.random.Generator, *, delta: float,
                         rho: float, split: str = "window") -> ReplicableRAGE:
    """ReplicableRAGE at replicability ρ."""
    return ReplicableRAGE(env.X, env.Z, delta, rho, rng=rng, split=split)


def _points(ds: tuple[int, ...], rhos: tuple[float, ...]) -> tuple:
    return tuple({"d": d, "omega": 0.1, "algorithm_params": {"rho": rho}}
                 for d in ds for rho in rhos)


COST = FigureSpec(
    name="replicable-bai:cost",
    full_minutes=5.9,  # 356 s, --workers 1 on the loaded 2-core machine (docs/replicable-bai.md)
    title="Cost of replicability in best-arm identification: ReplicableRAGE vs RAGE, "
          "Soare et al. (omega = 0.1), delta = 0.05",
    paper="A figure of ours (issue 25; docs/replicable-bai.md): no paper plots it",
    make_env=make_soare_d,
    points=_points(COST_DS, COST_RHOS),
    algorithms=(AlgorithmSpec("RAGE", make_rage_at_rho, {"delta": DELTA}),
                AlgorithmSpec("ReplicableRAGE", make_replicable_rage, {"delta": DELTA})),
    trials=200,
    horizon=10**18,
    paired=True,
    plot=PlotSpec(kind="sweep", metric="n_pulls", x="rho", xlabel="rho",
                  ylabel="sample complexity (pulls)", xscale="log", yscale="log"),
    ratios=(("ReplicableRAGE", "RAGE"),),
    quick={"trials": 16, "points": _points((5,), (0.1, 0.3))},
    notes=("Soare et al.'s instance (X = Z = {e_1..e_d, cos(omega) e_1 + sin(omega) e_2}, "
           "theta* = 2 e_1), d = {d}, omega = 0.1; {pairs} pairs per point (trials 2j, 2j+1 "
           "share xi and draw independent noise). ReplicableRAGE with the 'window' split: "
           "every phase's accuracy is RAGE's 2^-t times (rho - 2 delta_s)/(2.5(|Z| - 1)), "
           "delta_s = min(delta, rho/4), so its samples are RAGE's times about "
           "(2.5(|Z| - 1)/(rho - 2 delta_s))^2 (docs/replicable-bai.md). RAGE has no rho: its "
           "pairs are judged against the point's rho. The horizon {horizon} is a safety cap "
           "that no run reaches."),
)

FIGURES = [COST]


def predicted_factor(d: int, rho: float, delta: float = DELTA) -> float:
    """(2.5(|Z| − 1)/ρ_q)², the rule's factor on every phase's samples (ρ_q = ρ − 2δ_s,
    δ_s = min(δ, ρ/4)) on Soare's instance in R^d (|Z| = d + 1)."""
    return ReplicableGapRule(rho, delta, d + 1).blowup(1, d + 1)


def cost_table(result: object) -> str:
    """The ρ × d table of docs/replicable-bai.md from a run of :data:`COST` (full or quick):
    per d, the measured ratio of mean pulls ReplicableRAGE / RAGE at every ρ, then the
    rule's factor (2.5(|Z| − 1)/ρ_q)² that the ratio follows.

    ``result`` is a :class:`~banditkit.experiments.runner.RunResult`; the table is regenerated
    by ``tests/test_replicable_bai_cost_table.py`` from the quick run and compared with the
    page's quick table."""
    summary, points = result.summary, result.config["points"]
    mean = summary.set_index(["point", "algorithm"])["n_pulls_mean"]
    cells: dict[tuple[int, float], float] = {}
    for i, point in enumerate(points):
        d, rho = int(point["d"]), float(point["rho"])  # the stored (flattened) point
        cells[(d, rho)] = float(mean[(i, "ReplicableRAGE")] / mean[(i, "RAGE")])
    ds = sorted({d for d, _ in cells})
    rhos = sorted({r for _, r in cells})
    lines = ["| ρ | " + " | ".join(f"{r:g}" for r in rhos) + " |",
             "|---|" + "---|" * len(rhos)]
    for d in ds:
        lines.append(f"| d = {d}, measured | "
                     + " | ".join(short_number(cells[(d, r)]) if (d, r) in cells else "–"
                                  for r in rhos) + " |")
        lines.append(f"| d = {d}, (2.5(\\|Z\\| − 1)/ρ_q)² | "
                     + " | ".join(short_number(predicted_factor(d, r)) for r in rhos) + " |")
    return "\n".join(lines)
