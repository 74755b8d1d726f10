"""Per-unit values beside the reward (:mod:`banditkit.live.readout.adjusted`): storing the CUPED
covariates ``assign`` was given, and checking a unit's covariate and denominator at ``record``
(given once; a CUPED experiment's reward needs one), and their sums over every recorded reward
for ``status(count="recorded")``. The values themselves are checked by
:func:`banditkit.live.readout.verdict_spec.check_unit_values` before any work."""

from __future__ import annotations

import numpy as np

from ..errors import ExperimentError
from ..store.base import Connection, Store

__all__ = ["check_stored", "recorded_unit_sums", "store_covariates", "store_segments"]


def store_covariates(conn: Connection, units: list[int], unit_keys: list[str] | None,
                     keys: list[str] | None, values: np.ndarray) -> None:
    """The covariates of ``assign``'s units (``units``, with ``unit_keys`` their keys when the
    call gave ``keys``): the i-th value for the i-th unit handed out (with keys: the key's
    value); a unit that has one already (a sticky key's unit assigned before) keeps it."""
    if keys is None:
        pairs = zip(values[: len(units)].tolist(), units, strict=True)
    else:
        assert unit_keys is not None
        of_key = dict(zip(keys, values.tolist(), strict=True))
        pairs = ((of_key[k], u) for k, u in zip(unit_keys, units, strict=True))
    conn.executemany("UPDATE units SET covariate = COALESCE(covariate, ?) WHERE id = ?",
                     [(float(x), int(u)) for x, u in pairs])


def check_stored(unit: int, i: int, stored_covariate: float | None,
                 covariates: np.ndarray | None, stored_denominator: float | None,
                 denominators: np.ndarray | None, needs_covariate: bool) -> None:
    """A unit's covariate and denominator: given once (a retry gives the same), and a
    CUPED experiment's reward comes with a covariate (here or at assign)."""
    if covariates is not None and stored_covariate is not None \
            and stored_covariate != covariates[i]:
        raise ExperimentError(f"covariates: unit {unit} already has covariate "
                              f"{stored_covariate} (got {covariates[i]}); a covariate is "
                              "given once")
    if needs_covariate and stored_covariate is None and covariates is None:
        raise ExperimentError(f"covariates are required: unit {unit} got none at assign "
                              "(verdicts={'cuped': True}: each unit's pre-experiment value "
                              "comes with its assign or its record)")
    if denominators is not None and stored_denominator is not None \
            and stored_denominator != denominators[i]:
        raise ExperimentError(f"denominators: unit {unit} already has denominator "
                              f"{stored_denominator} (got {denominators[i]}); it is "
                              "recorded once")


def recorded_unit_sums(conn: Connection, store: Store, n_arms: int,
                       algorithm_units_only: bool = False) -> np.ndarray:
    """Per arm, shape (K, 6): Σx, Σx², Σxy of the covariates and Σd, Σd², Σdy of the
    denominators over every recorded reward (``status(count="recorded")``; with
    ``algorithm_units_only``, the algorithm's units alone, as fixed-n intervals count) — the
    sums the resolved prefix keeps for ``count="resolved"``, in the same order
    (:class:`banditkit.live.readout.statistics.ArmSums`'s ``extra``); a unit without a value counts
    0, as there."""
    x, d = "COALESCE(covariate, 0)", "COALESCE(denominator, 0)"
    columns = ", ".join(store.total(e) for e in (x, f"{x} * {x}", f"{x} * reward", d,
                                                  f"{d} * {d}", f"{d} * reward"))
    sums = np.zeros((n_arms, 6))
    for arm, *values in conn.execute(
            f"SELECT arm, {columns} FROM units WHERE reward IS NOT NULL"
            + (" AND kind = 0" if algorithm_units_only else "") + " GROUP BY arm"):
        if 0 <= arm < n_arms:
            sums[arm] = values
    return sums


def store_segments(conn: Connection, units: list[int], unit_keys: list[str] | None,
                   keys: list[str] | None, labels: list[str]) -> None:
    """The segment labels of ``assign``'s units, as :func:`store_covariates` stores covariates
    (with keys: the key's label; a unit that has one already keeps it)."""
    if keys is None:
        pairs = zip(labels[: len(units)], units, strict=True)
    else:
        assert unit_keys is not None
        of_key = dict(zip(keys, labels, strict=True))
        pairs = ((of_key[k], u) for k, u in zip(unit_keys, units, strict=True))
    conn.executemany("UPDATE units SET segment = COALESCE(segment, ?) WHERE id = ?",
                     [(str(x), int(u)) for x, u in pairs])
