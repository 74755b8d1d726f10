"""What a live experiment knows of its problem: the arms (names, and features for linear
algorithms) and, for constrained policies, the cost thresholds — never the reward model.

:class:`LiveArms` is an :class:`~banditkit.envs.base.Environment` only so that the registry's
factories (:func:`banditkit.registry.make_policy`) build algorithms for it exactly as they do for
a simulation; asking it for rewards or regret is an error, since live rewards come from
:meth:`banditkit.Experiment.record`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..envs.base import Environment, Outcome
from ..protocol import Batch
from .errors import ExperimentError

__all__ = ["LiveArms", "arm_names"]


def arm_names(arms: object) -> tuple[list[str], np.ndarray | None]:
    """Names of the arms and their feature matrix (``None`` for K-armed experiments).

    ``arms`` is a sequence of distinct names (K-armed), a 2-D array of features (one row per
    arm, named ``"0"``, ``"1"``, ...), or a pandas DataFrame of features whose index names the
    arms. Names are stored as text: ``[1, 2, 3]`` names the arms ``"1"``, ``"2"``, ``"3"``.
    """
    if isinstance(arms, pd.DataFrame):
        if arms.index.isna().any():
            raise ExperimentError("arms: every arm needs a name (the DataFrame's index has a "
                                  "missing one)")
        X = _features(arms.to_numpy())
        names = [str(i) for i in arms.index]
    elif isinstance(arms, np.ndarray) and arms.ndim >= 2:
        X = _features(arms)  # refuses 3-D and more, by shape
        names = [str(i) for i in range(X.shape[0])]
    elif isinstance(arms, Sequence) and not isinstance(arms, str) and arms and all(
            isinstance(a, Sequence) and not isinstance(a, str) for a in arms):
        X = _features(arms)
        names = [str(i) for i in range(X.shape[0])]
    elif isinstance(arms, (Sequence, np.ndarray)) and not isinstance(arms, str):
        X = None
        if any(a is None or (np.ndim(a) == 0 and bool(pd.isna(a))) for a in arms):
            raise ExperimentError("arms: every arm needs a name (None or NaN was given)")
        names = [str(a) for a in arms]
        if any(not name.strip() for name in names):
            raise ExperimentError("arms: every arm name must be a non-empty string")
    else:
        raise ExperimentError(f"arms must be a list of arm names or a 2-D feature matrix, got "
                         f"{type(arms).__name__}")
    if len(names) < 2:
        raise ExperimentError(f"arms: an experiment needs at least 2 arms, got {len(names)}")
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ExperimentError(f"arms: names must be distinct, repeated: {dupes}")
    return names, X


def _features(values: object) -> np.ndarray:
    try:
        X = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ExperimentError("arms: a feature matrix must hold numbers only, one row of the "
                              "same length per arm") from None
    if X.ndim != 2 or X.shape[1] < 1:
        raise ExperimentError(f"arms: a feature matrix must be 2-D (arms × features), got shape "
                         f"{X.shape}")
    if not np.isfinite(X).all():
        raise ExperimentError("arms: the feature matrix must be finite (no NaN or inf)")
    if np.abs(X).max() > 1e30:  # the designs form fourth powers of the features
        raise ExperimentError(f"arms: features must be at most 1e30 in absolute value (the "
                              f"designs compute their fourth powers), got {np.abs(X).max():.3g}: "
                              "rescale them")
    return X


class LiveArms(Environment):
    """The arms of a live experiment, for building algorithms by name.

    Parameters
    ----------
    n_arms : int
        K.
    X : array, shape (K, d), optional
        Arm features (linear algorithms); the items of identification are the arms (Z = X).
    thresholds : array, shape (m,), optional
        Cost thresholds α of a constrained policy (m costs recorded per unit).
    """

    def __init__(self, n_arms: int, X: np.ndarray | None = None,
                 thresholds: np.ndarray | None = None) -> None:
        self.n_arms = int(n_arms)
        self.n_items = self.n_arms
        self.X = None if X is None else np.asarray(X, dtype=float)
        self.Z = self.X
        self.alpha = None if thresholds is None else np.asarray(thresholds, dtype=float)
        self.n_costs = 0 if self.alpha is None else int(self.alpha.size)

    def _no_model(self) -> RuntimeError:
        return RuntimeError("a live experiment has no reward model: rewards come from "
                            "Experiment.record()")

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        raise self._no_model()

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        raise self._no_model()

    def best_item(self, horizon: int | None = None) -> int:
        raise self._no_model()
