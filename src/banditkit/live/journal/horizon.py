"""What :meth:`banditkit.Experiment.create` warns about the horizon: one too small for the
algorithm's first batch, so that the experiment would end (or commit) before it compared the
arms. Kept with the experiment and shown first in ``status().warnings``."""

from __future__ import annotations

import numpy as np

from ...protocol import Algorithm, Batch, IIDBatch

__all__ = ["horizon_warnings"]


def horizon_warnings(algorithm: Algorithm, batch: Batch | None, horizon: int | None,
                      names: list[str]) -> list[str]:
    """A warning when the horizon is too small for the algorithm's first batch: it commits
    before observing anything (ReplicableElimination at ρ = 0.2 needs 13,824 pulls for its
    first round, β's 2,304-pull floor per arm: at a horizon of 1,000 it commits at once and
    sent every unit to the first arm), or the batch is cut to its first ``horizon`` pulls (as
    :func:`banditkit.simulate` cuts it), which may cover only some arms."""
    if batch is None or horizon is None:
        return []
    arms = (None if isinstance(batch, IIDBatch)
            else [names[a] for a in np.unique(batch.arms).tolist()])
    if getattr(algorithm, "committed", False) and algorithm.t == 0:
        return [f"horizon ({horizon}) is too small for {type(algorithm).__name__}'s first "
                f"round: it commits before observing any reward, to "
                f"{arms if arms is not None else 'its commit rule'} (no comparison of the "
                "arms is made); use a larger horizon or parameters with a smaller first round"]
    if batch.n_pulls <= horizon:
        return []
    cut = batch.truncated(horizon)
    reached = ("" if isinstance(cut, IIDBatch)
               else f"; the cut batch reaches only arm(s) "
                    f"{[names[a] for a in np.unique(cut.arms).tolist()]} of the "
                    f"{np.unique(batch.arms).size} it asks for")
    return [f"horizon ({horizon}) is smaller than the algorithm's first batch "
            f"({batch.n_pulls} pulls): the experiment ends inside that batch{reached}, so it "
            "cannot compare the arms; use a horizon of at least "
            f"{batch.n_pulls} (or parameters with a smaller first batch)"]
