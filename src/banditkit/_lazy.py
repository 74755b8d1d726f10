"""Package attributes imported on first use (PEP 562), so that importing a package does not
import every module below it.

The CLI's start-up was dominated by imports nothing in the call used (scipy's optimisers through
``envs``, every policy through ``policies``): about 1.6 s of ``banditkit --version``.
``tests/test_startup.py`` keeps it from coming back.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["alias_moved_modules", "lazy_exports"]


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


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import PACKAGE.OLD`` gives ``PACKAGE.NEW`` itself (one module object under both
    names), so code and pickles written against a package's former layout keep working."""

    def __init__(self, package: str, moved: Mapping[str, str]) -> None:
        self.package, self.moved = package, dict(moved)

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        head, _, tail = fullname.rpartition(".")
        if head != self.package or tail not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> object:
        return importlib.import_module(
            f"{self.package}.{self.moved[spec.name.rpartition('.')[2]]}")

    def exec_module(self, module: object) -> None:
        pass  # already executed under its own name


def alias_moved_modules(package: str, moved: Mapping[str, str]) -> None:
    """Let ``package.OLD`` import as ``package.NEW`` for every ``OLD → NEW`` of ``moved``
    (once per package, whatever the number of calls)."""
    if not any(isinstance(f, _MovedModules) and f.package == package for f in sys.meta_path):
        sys.meta_path.append(_MovedModules(package, moved))
