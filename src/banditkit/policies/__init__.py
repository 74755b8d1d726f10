"""Regret-minimising policies (UCB1, replicable elimination, constrained DEBORA...)."""

from .ucb import UCB1

__all__ = ["UCB1"]
