"""Named problem instances. ``make_instance(name, rng=..., **params)`` builds one; each module of
this package registers its instances on import (one module per paper or family)."""

from .multi_armed import bernoulli, bernoulli_linspace
from .registry import instance_names, make_instance, register_instance

__all__ = [
    "bernoulli",
    "bernoulli_linspace",
    "instance_names",
    "make_instance",
    "register_instance",
]
