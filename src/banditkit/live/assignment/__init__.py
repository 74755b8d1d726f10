"""Assignment in a live experiment: the pending batch's slots handed to units, sticky keys,
overflow and rollout units, and the operator's pause, stop and archive
(:class:`~banditkit.live.assignment.assigner.Assigner`).

:class:`Assignment` is what :meth:`banditkit.Experiment.assign_rows` returns."""

from .rows import Assignment

__all__ = ["Assignment"]
