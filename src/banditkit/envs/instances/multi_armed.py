"""K-armed instances: the Bernoulli arms of Esfandiari et al. (Appendix H), and evenly spaced."""

from __future__ import annotations

import numpy as np

from ..base import Environment
from ..multi_armed import BernoulliBandit
from .registry import register_instance

__all__ = ["bernoulli", "bernoulli_linspace"]


@register_instance("bernoulli")
def bernoulli(means: tuple[float, ...] = (0.44, 0.47, 0.50, 0.53, 0.56, 0.59)) -> Environment:
    """K Bernoulli arms; the default is the 6-armed instance of Esfandiari et al., Appendix H."""
    return BernoulliBandit(np.asarray(means, dtype=float))


@register_instance("bernoulli-linspace")
def bernoulli_linspace(K: int = 6, low: float = 0.44, high: float = 0.59) -> Environment:
    """K Bernoulli arms with means evenly spaced in [low, high]."""
    return BernoulliBandit(np.linspace(low, high, int(K)))
