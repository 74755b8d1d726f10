"""Package attributes imported on first use (PEP 562), so that importing a package does not
import every module below it.

The CLI's start-up was dominated by imports nothing in the call used (scipy's optimisers through
``envs``, every policy through ``policies``): about 1.6 s of ``banditkit --version``.
``tests/test_startup.py`` keeps it from coming back.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: Mapping[str, Iterable[str]],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any],
                                                     Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` whose public names live in submodules.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    where : mapping
        Relative module name (``".base"``) → the names it provides.
    namespace : dict
        The package's ``globals()``: a name, once imported, is stored there, so later look-ups
        no longer reach ``__getattr__``.
    """
    module_of = {name: module for module, names in where.items() for name in names}
    # A name that is also its module's name (``simulate`` in ``.simulate``): importing the
    # submodule would bind the module over it, as the eager ``from .simulate import simulate``
    # never let happen; the package's class keeps the name for the function.
    shadowed = {name for name, module in module_of.items() if module == f".{name}"}
    if shadowed:
        sys.modules[package].__class__ = _guarded(frozenset(shadowed))

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *module_of})

    return __getattr__, __dir__


def _guarded(names: frozenset[str]) -> type[types.ModuleType]:
    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in names and isinstance(value, types.ModuleType):
                return  # the submodule stays reachable in sys.modules, not as this attribute
            super().__setattr__(name, value)

    return _Package
