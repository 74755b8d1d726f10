"""The reference numbers of the four papers' figures, as data (:class:`~..reference.Reference`).

One module per paper (``rage``, ``p1_rage``, ``replicable_bandits``,
``replicable_constrained``), each defining ``PAPER`` (the citation), ``PREFIX`` (the figure
names' ``paper:`` part) and ``FIGURES``: one :class:`FigureReferences` per registered figure of
that prefix. A figure of the paper (``paper_figure`` set) has references for every sweep point
the paper reports; a figure of ours (an extension: other algorithms, horizons or instances than
any figure of the paper) has references only where a statement of the paper applies to it (a
theorem's "ρ-replicable"), and says why in ``note``.

The numbers move here from the prose of docs/rage.md, docs/p1-rage.md, docs/replicable.md,
docs/constrained.md and docs/replicable-linear.md, which keep the explanations that
``Reference.explained`` links to.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..reference import Reference

__all__ = ["PAPERS", "FigureReferences", "all_figure_references", "all_references",
           "figure_references", "paper_citation", "paper_figures", "point_index"]

#: Paper key (the figure names' prefix, the ``banditkit reproduce`` argument) → module.
PAPERS: dict[str, str] = {
    "rage": "rage",
    "p1-rage": "p1_rage",
    "replicable-bandits": "replicable_bandits",
    "replicable-constrained": "replicable_constrained",
}


@dataclass(frozen=True)
class FigureReferences:
    """The references of one registered figure.

    Attributes
    ----------
    figure : str
        Registered figure name.
    paper_figure : str or None
        The paper's figure it reproduces (``"Figure 1a"``); ``None`` for a figure of ours.
    references : tuple of Reference
    note : str
        For a figure of ours: what it adds to the paper, and which statements of the paper
        apply to it.
    """

    figure: str
    paper_figure: str | None
    references: tuple[Reference, ...] = field(default_factory=tuple)
    note: str = ""


def _module(paper: str) -> Any:
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known papers: {', '.join(PAPERS)}")
    return importlib.import_module(f"{__name__}.{PAPERS[paper]}")


def paper_figures(paper: str) -> list[FigureReferences]:
    """The figures of one paper (every registered figure named ``paper:*``), in name order."""
    return sorted(_module(paper).FIGURES, key=lambda f: f.figure)


def paper_citation(paper: str) -> str:
    """The paper's citation."""
    return str(_module(paper).PAPER)


def all_figure_references() -> list[FigureReferences]:
    """Every figure of the four papers."""
    return [f for paper in PAPERS for f in paper_figures(paper)]


def all_references() -> list[Reference]:
    """Every reference number of the four papers."""
    return [r for f in all_figure_references() for r in f.references]


def figure_references(figure: str) -> FigureReferences:
    """The references of one figure; ``ValueError`` for a figure of no paper listed here."""
    paper = figure.split(":", 1)[0]
    for f in paper_figures(paper):
        if f.figure == figure:
            return f
    raise ValueError(f"figure {figure!r} has no reference entry")


def point_index(figure: str, **params: Any) -> int:
    """Index of the point of ``figure`` whose parameters (environment's and
    ``algorithm_params``) include ``params``; ``ValueError`` unless exactly one does."""
    from ..figures import get_figure

    hits = [i for i, p in enumerate(get_figure(figure).points) if _matches(p, params)]
    if len(hits) != 1:
        raise ValueError(f"{figure}: {len(hits)} points match {params}")
    return hits[0]


def _matches(point: Mapping[str, Any], params: Mapping[str, Any]) -> bool:
    flat = {**dict(point.get("algorithm_params", {})),
            **{k: v for k, v in point.items() if k != "algorithm_params"}}
    return all(k in flat and flat[k] == v for k, v in params.items())
