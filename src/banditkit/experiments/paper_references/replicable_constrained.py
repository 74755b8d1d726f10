"""References of Bollini et al., Replicable Constrained Bandits.

The paper has no experiment: every ``replicable-constrained:*`` figure is ours. Its lemmas give
the references that apply to them: DEBORA (Lemma 3.1), DEBORA-S (Lemma 4.2) and DEBORA-H
(Lemma 5.2) are ρ-replicable (non-replication ≤ ρ = 0.3 at the paper's constants), and DEBORA-H
plays a safe strategy in every round with probability at least 1 − δ (Lemma 5.1: the fraction
of trials with an unsafe round ≤ δ = 0.05). Its regret and violation bounds exceed T at the
figures' horizons (docs/constrained.md), so they give no number to compare.
"""

from __future__ import annotations

from ..figures import get_figure
from ..figures.replicable_constrained import DELTA, PAPER, RHO
from ..reference import Reference
from . import FigureReferences, point_index

__all__ = ["FIGURES", "PAPER", "PREFIX"]

PREFIX = "replicable-constrained"


def _replicable(figure: str, algorithm: str, lemma: str,
                points: tuple[int, ...] | None = None) -> tuple[Reference, ...]:
    n = len(get_figure(figure).points)
    return tuple(Reference(figure, p, algorithm, "non_replication", RHO, "paper-text",
                           f"{lemma}: {algorithm.split(' ')[0]} is ρ-replicable (ρ = {RHO:g})",
                           relation="<=")
                 for p in (range(n) if points is None else points))


_HARD_SAFE = tuple(
    Reference("replicable-constrained:hard", p, "DEBORA-H", "any_unsafe", DELTA, "paper-text",
              f"Lemma 5.1: 'With a probability of at least 1 − δ, DEBORA-H plays a safe "
              f"strategy x_t at every round' (δ = {DELTA:g})", relation="<=")
    for p in range(len(get_figure("replicable-constrained:hard").points)))

_WIDTH_PAPER = point_index("replicable-constrained:width", width_scale=1.0)

FIGURES = [
    FigureReferences("replicable-constrained:hard", None,
                     _replicable("replicable-constrained:hard", "DEBORA-H", "Lemma 5.2")
                     + _HARD_SAFE,
                     "Ours (the paper has no experiment): DEBORA-H against the optimistic "
                     "strategy mixed by Eq. (4); Lemmas 5.1 and 5.2 apply."),
    FigureReferences("replicable-constrained:soft", None,
                     _replicable("replicable-constrained:soft", "DEBORA-S", "Lemma 4.2"),
                     "Ours (the paper has no experiment); Lemma 4.2 applies."),
    FigureReferences("replicable-constrained:soft-long", None,
                     _replicable("replicable-constrained:soft-long", "DEBORA-S", "Lemma 4.2"),
                     "Ours (the paper has no experiment); Lemma 4.2 applies."),
    FigureReferences("replicable-constrained:unconstrained", None,
                     _replicable("replicable-constrained:unconstrained", "DEBORA", "Lemma 3.1"),
                     "Ours (the paper has no experiment); Lemma 3.1 applies."),
    FigureReferences("replicable-constrained:width", None,
                     _replicable("replicable-constrained:width", "DEBORA-S", "Lemma 4.2",
                                 (_WIDTH_PAPER,)),
                     "Ours: DEBORA-S with its confidence widths scaled by c; Lemma 4.2 applies "
                     "to the paper's widths (c = 1) only."),
]
