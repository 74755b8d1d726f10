"""banditkit: adaptive experiments with bandits you can trust — replicable, safe under
constraints, robust to non-stationarity, sample-efficient through optimal design."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from ._version import __version__

__all__ = ["Algorithm", "Batch", "DecisionLog", "Engine", "Experiment", "ExperimentError",
           "Trial", "__version__", "simulate", "simulate_trials"]

# imported on first use: `import banditkit` (and `banditkit --version`) imports no numpy,
# pandas or scipy
__getattr__, __dir__ = lazy_exports(__name__, {
    ".live": ["Experiment", "ExperimentError"],
    ".engines": ["Engine"],
    ".protocol": ["Algorithm", "Batch", "DecisionLog"],
    ".simulate": ["simulate", "simulate_trials"],
    ".trial": ["Trial"],
}, globals())

if TYPE_CHECKING:
    from .engines import Engine
    from .live import Experiment, ExperimentError
    from .protocol import Algorithm, Batch, DecisionLog
    from .simulate import simulate, simulate_trials
    from .trial import Trial
