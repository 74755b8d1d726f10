"""Named problem instances. ``make_instance(name, rng=..., **params)`` builds one; each module of
this package registers its instances on import (one module per paper or family)."""

from . import p1_rage, rage  # noqa: F401  (register the P1-RAGE and RAGE papers' instances)
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
