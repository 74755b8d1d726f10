"""Which arm a live experiment's algorithm is committed to or recommends, and why.

Every registered algorithm family exposes its state differently: identifiers a
``recommendation`` once they have decided, the batched eliminations an ``active`` set and, once
the next exploration batch no longer fits, a commit batch played under a named rule
(:mod:`banditkit.policies.commit`), the phased linear eliminations a ``final_arm``, sequential
and constrained policies none of these. :func:`leader` reads them in that order and says which
one answered, so :class:`banditkit.ExperimentStatus` always names an arm (or says why none)
with the reason.
"""

from __future__ import annotations

import numpy as np

from ...protocol import Algorithm, Batch

__all__ = ["leader"]

_RULES = {
    "lowest-index": "the surviving arm with the smallest index (the paper's rule)",
    "argmax": ("the surviving arm with the highest observed mean (replicability of this "
               "commit is measured, not proved)"),
    "replicable-argmax": "the best surviving arm after a replicable rounding of the means",
    "round-robin": "an even split over the surviving arms",
}


def _commit_batch(algorithm: Algorithm) -> Batch | None:
    """The batch that plays the rest of the horizon, once the algorithm has chosen it."""
    pending = algorithm.pending
    if pending is not None:
        return pending
    batches = algorithm.decisions.batches() if algorithm.decisions.n_batches else []
    return batches[-1] if batches else None


def leader(algorithm: Algorithm, means: np.ndarray, names: list[str], *, finished: bool
           ) -> tuple[int | None, str]:
    """(arm index or ``None``, reason): the arm the algorithm recommends or is committed to,
    else the arm leading on the observed means, and why.

    Parameters
    ----------
    algorithm : Algorithm
        The experiment's algorithm, brought up to date with the file.
    means : array, shape (K,)
        Observed mean reward per arm (NaN for an arm without a recorded reward).
    names : list of str
        The arms' names, for the reason's text.
    finished : bool
        Whether the algorithm asks for nothing more.
    """
    active = getattr(algorithm, "active", None)
    active = None if active is None else np.asarray(active, dtype=np.int64)
    recommendation = algorithm.recommendation
    if recommendation is not None:
        how = ("the others eliminated" if active is not None and active.size == 1
               else "its recommendation at the end of its budget" if finished
               else "its recommendation")
        return int(recommendation), f"identified ({how})"
    commit = getattr(algorithm, "commit", None)
    committed = bool(getattr(algorithm, "committed", False)) or \
        getattr(algorithm, "final_arm", None) is not None
    if committed:
        batch = _commit_batch(algorithm)
        rule = _RULES.get(commit, f"rule {commit!r}") if commit else "its final-arm rule"
        arms = [] if batch is None else np.unique(batch.arms).tolist()
        if len(arms) == 1:
            why = ("the only arm left after eliminating the others"
                   if active is not None and active.size == 1 else rule)
            return int(arms[0]), f"committed for the rest of the horizon: {why}"
        if arms:
            return None, (f"committed for the rest of the horizon: {rule}, over "
                          + ", ".join(names[a] for a in arms))
    if active is not None and active.size == 1:
        return int(active[0]), "the only arm left (the others eliminated)"
    batch = _commit_batch(algorithm)
    if batch is not None and batch.strategy is not None:
        # a constrained policy plays a distribution over arms (DEBORA's LP strategy): the
        # arm it weighs most is where its traffic goes
        strategy = np.asarray(batch.strategy, dtype=float)
        top = int(np.argmax(strategy))
        mix = ", ".join(f"{names[a]} {w:.2f}" for a, w in enumerate(strategy) if w > 0)
        return top, (f"largest weight of the strategy it {'played last' if finished else 'plays'}"
                     f" ({mix}); a strategy, not an identification")
    candidates = np.arange(len(names)) if active is None else active
    observed = np.asarray(means, dtype=float)[candidates]
    if candidates.size == 0 or np.all(np.isnan(observed)):
        return None, "no reward recorded yet"
    best = int(candidates[int(np.nanargmax(observed))])
    scope = ("among the arms still active" if active is not None and active.size < len(names)
             else "")
    state = "finished without a recommendation" if finished else "not decided yet"
    return best, (f"leads on the observed mean{' ' + scope if scope else ''} ({state}; "
                  "not a decision of the algorithm)")
