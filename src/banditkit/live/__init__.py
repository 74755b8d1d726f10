"""Live experiments: registered algorithms driven by real traffic, durable in an SQLite file
or a PostgreSQL database."""

from .errors import ExperimentError
from .experiment import Experiment, ExperimentStatus

__all__ = ["Experiment", "ExperimentError", "ExperimentStatus"]
