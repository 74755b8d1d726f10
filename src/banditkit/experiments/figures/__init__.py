"""The figure registry: every module of this package defines ``FIGURES: list[FigureSpec]``.

Modules are discovered, not listed, so adding a figure module needs no edit here. Names are
``"paper:figure"`` and must be unique across modules.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..spec import FigureSpec

__all__ = ["all_figures", "figure_names", "get_figure"]

_FIGURES: dict[str, FigureSpec] | None = None


def _load() -> dict[str, FigureSpec]:
    global _FIGURES
    if _FIGURES is None:
        found: dict[str, FigureSpec] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{__name__}.{info.name}")
            for spec in getattr(module, "FIGURES", ()):
                if not isinstance(spec, FigureSpec):
                    raise TypeError(f"{module.__name__}.FIGURES holds a "
                                    f"{type(spec).__name__}, not a FigureSpec")
                if spec.name in found:
                    raise ValueError(f"figure {spec.name!r} is defined twice (again in "
                                     f"{module.__name__})")
                found[spec.name] = spec
        _FIGURES = found
    return _FIGURES


def figure_names() -> list[str]:
    """Names of all registered figures, sorted."""
    return sorted(_load())


def all_figures() -> list[FigureSpec]:
    """All registered figures, sorted by name."""
    figures = _load()
    return [figures[name] for name in sorted(figures)]


def get_figure(name: str) -> FigureSpec:
    """The figure called ``name``; an unknown name raises ``ValueError`` listing the known ones."""
    figures = _load()
    try:
        return figures[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown figure {name!r}; known figures: "
                         f"{', '.join(sorted(figures)) or '(none)'}") from None
