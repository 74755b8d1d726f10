"""Named problem instances. ``make_instance(name, rng=..., **params)`` builds one; each module of
this package registers its instances on import (one module per paper or family)."""

from . import constrained, p1_rage, rage  # noqa: F401  (register each paper's instances)
from .multi_armed import bernoulli, bernoulli_linspace
from .registry import instance_names, make_instance, register_instance
from .replicable_linear import grid_net, linear_grid, linear_random_unit  # noqa: F401

__all__ = [
    "bernoulli",
    "bernoulli_linspace",
    "instance_names",
    "make_instance",
    "register_instance",
]
