"""References of Fiez, Jain, Jamieson & Ratliff, NeurIPS 2019, Section 5 (Figures 1a–d, 2a–b).

The paper's figures are images absent from its text, so no sample complexity can be read off
them; the text states one number for every figure, the empirical failure probability (zero for
every algorithm), and a few claims that are ratios of sample complexities (RAGE outperforms ALBA
on Fig. 1c and the static allocation on Fig. 1d; LinGapE samples every arm first on Fig. 1b;
RAGE and XY-adaptive "nearly equivalent" on Fig. 1a). docs/rage.md checks the claims in prose.
"""

from __future__ import annotations

from ..figures import get_figure
from ..figures.rage import PAPER
from ..reference import Reference
from . import FigureReferences

__all__ = ["FIGURES", "PAPER", "PREFIX"]

PREFIX = "rage"

_ZERO = ("Section 5: 'The empirical failure probability of each of the algorithms in the "
         "simulations is zero'")
#: The paper's algorithms per figure (TaS, TaS-heur and FWS-heur of Fig. 1a/1b are ours).
_PAPER_ALGORITHMS = {
    "rage:fig1a": ("RAGE", "XY-adaptive", "LinGapE", "ALBA", "XY-static", "XY-oracle"),
    "rage:fig1b": ("RAGE", "LinGapE", "ALBA", "XY-static", "XY-oracle"),
    "rage:fig1c": ("RAGE", "LinGapE", "ALBA", "XY-static", "XY-oracle"),
    "rage:fig1d": ("RAGE", "XY-static", "XY-oracle"),
    "rage:fig2a": ("RAGE", "XY-static", "XY-oracle", "LinGapE", "ALBA"),
    "rage:fig2b": ("RAGE", "XY-static", "XY-oracle", "LinGapE", "ALBA"),
}


def _zero_failures(figure: str) -> list[Reference]:
    label = figure.split(":")[1].replace("fig", "Fig. ")
    return [Reference(figure, p, a, "failure_rate", 0.0, "paper-text", f"{_ZERO} ({label})")
            for p in range(len(get_figure(figure).points)) for a in _PAPER_ALGORITHMS[figure]]


def _claims(figure: str) -> list[Reference]:
    points = get_figure(figure).points
    out: list[Reference] = []
    for p, point in enumerate(points):
        if figure == "rage:fig1a":
            out.append(Reference(
                figure, p, "RAGE", "n_pulls", 1.0, "paper-text",
                "Section 5, Fig. 1a: XY-adaptive 'performs nearly equivalently' to RAGE (read "
                "as a ratio of mean pulls within 1 ± 0.25)",
                versus="XY-adaptive", by="ratio", tolerance=0.25))
        elif figure == "rage:fig1b":
            out.append(Reference(
                figure, p, "LinGapE", "n_pulls", float(point["n"]), "paper-text",
                "Section 5, Fig. 1b: 'LinGapE ... must sample each arm as an initialization' "
                "(at least n pulls)", relation=">="))
        elif figure == "rage:fig1c":
            out.append(Reference(
                figure, p, "RAGE", "n_pulls", 1.0, "paper-text",
                "Section 5, Fig. 1c: 'RAGE significantly outperforms ALBA' (ratio of mean "
                "pulls at most 1)", relation="<=", versus="ALBA", by="ratio"))
        elif figure == "rage:fig1d":
            out.append(Reference(
                figure, p, "RAGE", "n_pulls", 1.0, "paper-text",
                "Section 5, Fig. 1d: 'RAGE significantly outperforms the static allocation' "
                "(ratio of mean pulls at most 1)", relation="<=", versus="XY-static",
                by="ratio"))
    return out


FIGURES = [
    FigureReferences(name, f"Figure {name.split(':fig')[1]}",
                     tuple(_zero_failures(name) + _claims(name)))
    for name in _PAPER_ALGORITHMS
]
