"""Live experiments: registered algorithms driven by real traffic, durable in an SQLite file
or a PostgreSQL database."""

from .experiment import Experiment, ExperimentStatus
from .journal import ExperimentError

__all__ = ["Experiment", "ExperimentError", "ExperimentStatus"]
