"""banditkit: adaptive experiments with bandits you can trust — replicable, safe under
constraints, robust to non-stationarity, sample-efficient through optimal design."""

from .live import Experiment, ExperimentError
from .protocol import Algorithm, Batch, DecisionLog
from .simulate import simulate
from .trial import Trial

__version__ = "0.1.0"

__all__ = ["Algorithm", "Batch", "DecisionLog", "Experiment", "ExperimentError", "Trial",
           "__version__", "simulate"]
