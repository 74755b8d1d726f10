"""Policies by name: the registry behind ``banditkit audit POLICY`` (and any tool that builds an
algorithm from a name and ``k=v`` parameters).

A registered factory is called ``factory(env, rng, horizon=T, **params)`` and returns a fresh
:class:`~banditkit.protocol.Algorithm`; ``rng`` is the internal randomness ξ. Factories are
module-level functions, so they pickle (figures and worker processes can use them too).

It sits below both algorithm families (``policies/`` and ``identification/`` each register
theirs, and neither imports the other). Adding a policy is one decorated function in the
policy's own module::

    @register_policy("MyPolicy")
    def my_policy(env, rng, *, horizon, rho=0.1):
        return MyPolicy(env.n_arms, horizon, rho=rho, rng=rng)

Modules that register policies are listed in :data:`PROVIDERS` and imported on the first
lookup.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .envs.base import Environment
from .protocol import Algorithm

__all__ = ["ALIASES", "PROVIDERS", "PolicyEntry", "canonical_name", "get_policy", "make_policy",
           "need_horizon", "policy_names", "register_policy"]

#: Modules imported before the first lookup so that their ``register_policy`` calls run.
PROVIDERS: list[str] = ["banditkit.policies.named",
                        "banditkit.policies.linear.elimination",
                        "banditkit.policies.linear.replicable",
                        "banditkit.policies.constrained.baselines",
                        "banditkit.policies.constrained.oplb",
                        "banditkit.policies.constrained.debora",
                        "banditkit.identification.named",
                        # issue 18: OFUL and linear Thompson sampling
                        "banditkit.policies.linear.lockstep"]


#: Old registry names → the current one. One name per algorithm: the registry name is the
#: class's name. The old names stay accepted (with a ``DeprecationWarning``) because experiment
#: files and result stores recorded them, but are listed nowhere.
ALIASES: dict[str, str] = {
    "TrackAndStop": "LinearTrackAndStop",  # Jedra & Proutière's linear (lazy) Track-and-Stop
    "FWSampling": "FrankWolfeSampling",
    "LinTS": "LinearThompson",
}


def canonical_name(name: str) -> str:
    """The current registry name of ``name``: itself, or (with a ``DeprecationWarning``) the
    name an old one in :data:`ALIASES` stands for."""
    new = ALIASES.get(name)
    if new is None:
        return name
    warnings.warn(f"{name!r} is the old registry name of {new!r}; use {new!r} (the class's "
                  "name)", DeprecationWarning, stacklevel=3)
    return new


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy: its factory and a one-line help.

    Engines are not registered here: the algorithm class declares them (its ``engines``
    attribute, :mod:`banditkit.engines`, the one way), and ``simulate``, ``simulate_trials``,
    ``audit`` and the figures take them from the algorithm."""

    name: str
    factory: Callable[..., Algorithm]
    description: str = ""

    def parameters(self) -> dict[str, Any]:
        """Keyword parameters of the factory (besides env, rng, horizon) and their defaults."""
        sig = inspect.signature(self.factory)
        return {k: (None if p.default is inspect.Parameter.empty else p.default)
                for k, p in sig.parameters.items() if k not in ("env", "rng", "horizon")}


_REGISTRY: dict[str, PolicyEntry] = {}
_imported = 0  # providers imported so far, in PROVIDERS' order


def register_policy(name: str, *, description: str = ""
                    ) -> Callable[[Callable[..., Algorithm]], Callable[..., Algorithm]]:
    """Decorator registering a policy factory under ``name``."""
    def wrap(factory: Callable[..., Algorithm]) -> Callable[..., Algorithm]:
        if name in _REGISTRY or name in ALIASES:
            raise ValueError(f"policy {name!r} is already registered")
        doc = description or (inspect.getdoc(factory) or "").split("\n")[0]
        _REGISTRY[name] = PolicyEntry(name, factory, doc)
        return factory
    return wrap


def _load(name: str | None = None) -> dict[str, PolicyEntry]:
    """The registry with every provider imported, or (``name`` given) only as many providers,
    in order, as it takes to find ``name``: building one algorithm does not import all the
    others (the constrained policies' LP solvers cost a CLI call about a second)."""
    global _imported
    while _imported < len(PROVIDERS) and (name is None or name not in _REGISTRY):
        _imported += 1
        importlib.import_module(PROVIDERS[_imported - 1])
    return _REGISTRY


def policy_names() -> list[str]:
    return sorted(_load())


def get_policy(name: str) -> PolicyEntry:
    """The entry called ``name`` (an old name of :data:`ALIASES` too, with a
    ``DeprecationWarning``); unknown names raise ``ValueError`` listing the known ones."""
    name = canonical_name(name)
    registry = _load(name)
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(registry))}"
                         ) from None


def make_policy(name: str, env: Environment, rng: np.random.Generator,
                horizon: int | None = None, **params: Any) -> Algorithm:
    """Build the named policy for ``env`` with internal randomness ``rng``.

    Parameters the factory does not take are refused by name before anything is built.
    """
    entry = get_policy(name)
    check_policy_params(entry, params)
    return entry.factory(env, rng, horizon=horizon, **params)


def check_policy_params(entry: PolicyEntry, params: dict[str, Any]) -> None:
    known = entry.parameters()
    unknown = [p for p in params if p not in known]
    if unknown:
        raise ValueError(f"policy {entry.name!r} takes no parameter(s) {unknown}; it takes "
                         f"{sorted(known)}")


def need_horizon(name: str, horizon: int | None) -> int:
    """``horizon``, refusing ``None`` for a policy that needs T (a factory's check)."""
    if horizon is None:
        raise ValueError(f"policy {name!r} needs the horizon T (pass horizon=...)")
    return horizon
