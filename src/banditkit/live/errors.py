"""The errors of a live experiment: one type for every call it refuses, and the two a service
answers with their own status (409, 404)."""

from __future__ import annotations

__all__ = ["ExperimentError", "ExperimentExists", "ExperimentNotFound"]


class ExperimentError(ValueError):
    """A call a live experiment refuses: bad input, a unit it does not know, or a file that is
    not an experiment, is damaged, or is locked."""


class ExperimentExists(ExperimentError):
    """``Experiment.create`` on a path or a (database, name) that holds an experiment already
    (a service answers 409)."""


class ExperimentNotFound(ExperimentError):
    """``Experiment.open`` where there is no experiment (a service answers 404)."""
