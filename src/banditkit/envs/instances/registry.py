"""Named problem instances: a registry from a name to a factory, so figures, the CLI
(``banditkit audit --instance NAME``) and tests build instances the same way.

A factory takes keyword parameters (and ``rng``, a ``Generator`` from the instance stream, when
the instance is random) and returns an :class:`~banditkit.envs.base.Environment`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from ..base import Environment

__all__ = ["instance_names", "make_instance", "register_instance"]

_REGISTRY: dict[str, Callable[..., Environment]] = {}


def register_instance(name: str) -> Callable[[Callable[..., Environment]],
                                             Callable[..., Environment]]:
    """Decorator registering an instance factory under ``name``."""
    def wrap(factory: Callable[..., Environment]) -> Callable[..., Environment]:
        if name in _REGISTRY:
            raise ValueError(f"instance {name!r} is already registered")
        _REGISTRY[name] = factory
        return factory
    return wrap


def instance_names() -> list[str]:
    return sorted(_REGISTRY)


def make_instance(name: str, rng: np.random.Generator | None = None, **params: object
                  ) -> Environment:
    """Build the named instance. ``rng`` is passed to factories of random instances."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown instance {name!r}; known: {', '.join(instance_names())}"
                         ) from None
    sig = inspect.signature(factory)
    unknown = [p for p in params if p not in sig.parameters]
    if unknown:
        raise ValueError(f"instance {name!r} takes no parameter(s) {unknown}; it takes "
                         f"{[p for p in sig.parameters if p != 'rng']}")
    if "rng" in sig.parameters:
        if rng is None:
            raise ValueError(f"instance {name!r} is random: pass rng (a numpy Generator)")
        return factory(rng=rng, **params)
    return factory(**params)
