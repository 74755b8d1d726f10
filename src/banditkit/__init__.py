"""banditkit: adaptive experiments with bandits you can trust — replicable, safe under
constraints, robust to non-stationarity, sample-efficient through optimal design."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

__version__ = "0.1.0"

__all__ = ["Algorithm", "Batch", "DecisionLog", "Experiment", "ExperimentError", "Trial",
           "__version__", "simulate"]

# imported on first use: `import banditkit` (and `banditkit --version`) imports no numpy,
# pandas or scipy
__getattr__, __dir__ = lazy_exports(__name__, {
    ".live": ["Experiment", "ExperimentError"],
    ".protocol": ["Algorithm", "Batch", "DecisionLog"],
    ".simulate": ["simulate"],
    ".trial": ["Trial"],
}, globals())

if TYPE_CHECKING:
    from .live import Experiment, ExperimentError
    from .protocol import Algorithm, Batch, DecisionLog
    from .simulate import simulate
    from .trial import Trial
