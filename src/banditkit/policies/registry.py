"""Policies by name: the registry behind ``banditkit audit POLICY`` (and any tool that builds an
algorithm from a name and ``k=v`` parameters).

A registered factory is called ``factory(env, rng, horizon=T, **params)`` and returns a fresh
:class:`~banditkit.protocol.Algorithm`; ``rng`` is the internal randomness ξ. Factories are
module-level functions, so they pickle (figures and worker processes can use them too).

Adding a policy is one decorated function, in this module or in the policy's own module::

    @register_policy("MyPolicy")
    def my_policy(env, rng, *, horizon, rho=0.1):
        return MyPolicy(env.n_arms, horizon, rho=rho, rng=rng)

Modules that register policies outside this one are listed in :data:`PROVIDERS` and imported
on the first lookup.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..protocol import Algorithm
from .batched_elimination import BatchedElimination
from .replicable_elimination import ReplicableBatchedElimination, ReplicableElimination
from .ucb import UCB1
from .ucb_lockstep import ucb1_lockstep

__all__ = ["PROVIDERS", "PolicyEntry", "get_policy", "make_policy", "policy_names",
           "register_policy"]

#: Modules imported before the first lookup so that their ``register_policy`` calls run.
PROVIDERS: list[str] = ["banditkit.policies.linear_elimination",
                        "banditkit.policies.replicable_linear",
                        "banditkit.policies.constrained_baselines",
                        "banditkit.policies.debora",
                        "banditkit.identification.named"]


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy: its factory, an optional lock-step runner, and a one-line help."""

    name: str
    factory: Callable[..., Algorithm]
    lockstep: Callable[..., list] | None = None
    description: str = ""

    def parameters(self) -> dict[str, Any]:
        """Keyword parameters of the factory (besides env, rng, horizon) and their defaults."""
        sig = inspect.signature(self.factory)
        return {k: (None if p.default is inspect.Parameter.empty else p.default)
                for k, p in sig.parameters.items() if k not in ("env", "rng", "horizon")}


_REGISTRY: dict[str, PolicyEntry] = {}
_loaded = False


def register_policy(name: str, *, lockstep: Callable[..., list] | None = None,
                    description: str = "") -> Callable[[Callable[..., Algorithm]],
                                                       Callable[..., Algorithm]]:
    """Decorator registering a policy factory under ``name``."""
    def wrap(factory: Callable[..., Algorithm]) -> Callable[..., Algorithm]:
        if name in _REGISTRY:
            raise ValueError(f"policy {name!r} is already registered")
        doc = description or (inspect.getdoc(factory) or "").split("\n")[0]
        _REGISTRY[name] = PolicyEntry(name, factory, lockstep, doc)
        return factory
    return wrap


def _load() -> dict[str, PolicyEntry]:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in PROVIDERS:
            importlib.import_module(module)
    return _REGISTRY


def policy_names() -> list[str]:
    return sorted(_load())


def get_policy(name: str) -> PolicyEntry:
    """The entry called ``name``; unknown names raise ``ValueError`` listing the known ones."""
    registry = _load()
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


def _need_horizon(name: str, horizon: int | None) -> int:
    if horizon is None:
        raise ValueError(f"policy {name!r} needs the horizon T (pass horizon=...)")
    return horizon


# ---------------------------------------------------------------------------------------------
# The K-armed policies

@register_policy("UCB1", lockstep=ucb1_lockstep)
def ucb1(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         exploration: float = 2.0) -> UCB1:
    """UCB1 (Auer et al. 2002), sequential; no internal randomness."""
    return UCB1(env.n_arms, exploration=exploration, horizon=horizon)


@register_policy("BatchedElimination")
def batched_elimination(env: Environment, rng: np.random.Generator, *,
                        horizon: int | None = None, n_batches: int | None = None,
                        q: float | None = None, delta: float | None = None,
                        confidence: float = 1.0, last_batch: str = "smallest_index"
                        ) -> BatchedElimination:
    """Non-replicable batched elimination (Esfandiari et al. 2021)."""
    return BatchedElimination(env.n_arms, _need_horizon("BatchedElimination", horizon),
                              n_batches=n_batches, q=q, delta=delta, confidence=confidence,
                              last_batch=last_batch)


@register_policy("ReplicableBatchedElimination")
def replicable_batched_elimination(
        env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
        rho: float = 0.3, rho_per_estimate: float | None = None, sample_rule: str = "lemma",
        n_batches: int | None = None, q: float | None = None, delta: float | None = None,
        confidence: float = 1.0, last_batch: str = "smallest_index"
        ) -> ReplicableBatchedElimination:
    """Algorithm 1 of Esfandiari et al. (2023): replicable means in batched elimination."""
    return ReplicableBatchedElimination(
        env.n_arms, _need_horizon("ReplicableBatchedElimination", horizon), rho, rng,
        rho_per_estimate=rho_per_estimate, sample_rule=sample_rule, n_batches=n_batches, q=q,
        delta=delta, confidence=confidence, last_batch=last_batch)


@register_policy("ReplicableElimination")
def replicable_elimination(
        env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
        rho: float = 0.3, beta: int | None = None, n_batches: int | None = None,
        q: float | None = None, delta: float | None = None, confidence: float = 1.0,
        last_batch: str = "smallest_index") -> ReplicableElimination:
    """Algorithm 2 of Esfandiari et al. (2023): β blow-up and a random threshold."""
    return ReplicableElimination(
        env.n_arms, _need_horizon("ReplicableElimination", horizon), rho, rng, beta=beta,
        n_batches=n_batches, q=q, delta=delta, confidence=confidence, last_batch=last_batch)
