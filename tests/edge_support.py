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
        pending = e._replay.ask()
        if pending is None:
            return
        batch = e._replay.observed
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
        counts = e._replay.ask().allocation(len(e.arm_names))
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


def null_run(path, seed: int, run: int, *, arms: int = 4, p: float = 0.3, horizon: int = 2000,
             batch_size: int = 200, chunk: int = 100, look_every: int = 1,
             ingest: Callable | None = None) -> dict:
    """One null experiment fed from the edge (every arm's mean ``p``): BatchedThompson's
    weights move every ``batch_size`` exposures; each ``chunk`` of keys is assigned by the
    allocation published then, and its exposures reach the experiment 0, 1 or 2 allocation
    versions late; outcomes arrive in value-dependent order (a 1 with its exposure, a 0 two
    rounds later). ``status`` is read every ``look_every`` rounds (peeking) and at the end.
    Returns whether any look showed a ``better`` or ``worse`` verdict, and the counts."""
    from banditkit import Experiment
    from banditkit.rng import stream

    rng = stream(seed, "edge-null", run)
    names = ["control"] + [f"arm{i}" for i in range(1, arms)]
    with Experiment.create(path, algorithm="BatchedThompson", arms=names, seed=seed + run,
                           horizon=horizon, params={"batch_size": batch_size, "draws": 1000}
                           ) as e:
        send = ingest or (lambda x, o: e.ingest(x, o).as_json())
        queue: list[tuple[int, list, list]] = []  # (round due, exposures, outcomes)
        looks, false, key, versions = 0, False, 0, set()
        for r in range(10 * horizon // chunk):
            doc = e.allocation().as_json()
            if doc["mode"] not in ("batch", "sampling", "overflow"):
                break
            versions.add(doc["version"])
            assigner = Assigner(doc)
            keys = [f"r{run}k{key + i}" for i in range(chunk)]
            key += chunk
            exposures = [assigner.exposure(k, assigner.assign(k)) for k in keys]
            values = (rng.random(chunk) < p).astype(float)
            lag = int(rng.integers(0, 3))  # up to two versions late
            ones = [{"key": k, "value": 1.0} for k, v in zip(keys, values, strict=True) if v]
            zeros = [{"key": k, "value": 0.0} for k, v in zip(keys, values, strict=True)
                     if not v]
            queue.append((r + lag, exposures, ones))
            queue.append((r + lag + 2, [], zeros))  # the zeros come later
            due = [q for q in queue if q[0] <= r]
            queue = [q for q in queue if q[0] > r]
            answer = send([x for q in due for x in q[1]], [o for q in due for o in q[2]])
            assert answer["refused"] == 0, answer["refusals"][:3]
            if r % look_every == 0:
                verdicts = set(e.status().arms["verdict"])
                looks += 1
                false = false or bool(verdicts & {"better", "worse"})
        if queue:
            send([x for q in queue for x in q[1]], [o for q in queue for o in q[2]])
        verdicts = set(e.status().arms["verdict"])
        false = false or bool(verdicts & {"better", "worse"})
        units = e.units()
    return {"false": false, "looks": looks + 1, "versions": len(versions), "units": len(units),
            "overflow": int((units["kind"] == "overflow").sum())}
