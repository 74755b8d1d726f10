"""Feeding a live experiment two ways with the same rewards per arm: through assign/record, and
from the edge (allocation → the client's Assigner → ingest). Shared by tests/test_ingest.py and
the service tests."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from banditkit.client import Assigner

#: The arms' success probabilities of the two feeds.
MEANS_DEFAULT = [0.3, 0.5, 0.7]


def reward(arm: int, k: int, batch: int, means: list[float]) -> float:
    """The k-th algorithm unit of ``arm`` in ``batch`` gets this 0/1 reward (a fixed hash, so
    both feeds give each arm the same rewards)."""
    h = int(hashlib.sha256(f"{arm}:{k}:{batch}".encode()).hexdigest()[:8], 16) / 2**32
    return float(h < means[arm])


def feed_assign(e, means: list[float], rounds: int = 200) -> None:
    """Every batch through assign/record, each arm's units given reward(arm, k, batch)."""
    for _ in range(rounds):
        e.status()  # brings the algorithm up to date
        pending = e._ask()
        if pending is None:
            return
        batch = e._observed
        units = e.assign(pending.n_pulls)
        if units.attrs["overflow_units"]:
            return
        k: dict[int, int] = {}
        values = []
        for a in units.arm_index:
            values.append(reward(int(a), k.setdefault(int(a), 0), batch, means))
            k[int(a)] += 1
        e.record(units.unit, values)


def feed_edge(e, means: list[float], ingest: Callable | None = None,
              allocation: Callable | None = None, chunk: int = 97, rounds: int = 200,
              prefix: str = "u") -> int:
    """Every batch from the edge: keys assigned by the published allocation (refreshed every
    ``chunk`` keys) until the batch's slots are filled (the extra exposures are overflow,
    reward 0), then every outcome. ``ingest(exposures, outcomes)`` and ``allocation()``
    default to the experiment's own (a service's routes, with ``e`` the same experiment opened
    read-only, for the batch's slots); returns the keys used."""
    ingest = ingest or (lambda x, o: e.ingest(x, o).as_json())
    allocation = allocation or (lambda: e.allocation().as_json())
    key = 0
    for _ in range(rounds):
        doc = allocation()
        if doc["mode"] not in ("batch", "sampling"):
            return key
        batch = doc["batch"]
        e.status()
        counts = e._ask().allocation(len(e.arm_names))
        taken = np.zeros(len(counts), dtype=np.int64)
        outcomes = []
        while (taken < counts).any():
            assigner = Assigner(allocation())
            exposures = []
            for _ in range(chunk):
                name = f"{prefix}{key}"
                key += 1
                arm = assigner.assign(name)
                a = doc["arms"].index(arm)
                exposures.append(assigner.exposure(name, arm))
                if taken[a] < counts[a]:
                    outcomes.append({"key": name, "value": reward(a, int(taken[a]), batch,
                                                                   means)})
                    taken[a] += 1
                else:
                    outcomes.append({"key": name, "value": 0.0})
            answer = ingest(exposures, [])
            assert answer["refused"] == 0, answer
        answer = ingest([], outcomes)
        assert answer["refused"] == 0, answer
    return key
