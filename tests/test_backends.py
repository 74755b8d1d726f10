"""Backends: the same root seed gives bit-identical results on every backend and worker count."""

from __future__ import annotations

import pytest

import test_runner_support as support
from banditkit.experiments.backends import (
    DaskBackend,
    ProcessBackend,
    SerialBackend,
    make_backend,
)
from banditkit.experiments.runner import run_figure


@pytest.fixture(scope="module")
def dask_backend():
    """A dask backend that starts its own LocalCluster of two single-threaded worker
    processes, shared by the whole module (starting a cluster takes seconds)."""
    backend = DaskBackend(workers=2)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def scheduler(dask_backend):
    """The address of that cluster's scheduler, for the ``scheduler=ADDR`` path."""
    dask_backend._connect()
    return dask_backend._cluster.scheduler_address


def _runs(spec, dask_backend, scheduler, **kwargs):
    serial = run_figure(spec, backend="serial", progress=False, **kwargs)
    others = {
        "processes-1": run_figure(spec, backend="processes", workers=1, progress=False,
                                  **kwargs),
        "processes-2": run_figure(spec, backend="processes", workers=2, progress=False,
                                  **kwargs),
        "dask-local-cluster-2": run_figure(spec, backend=dask_backend, progress=False,
                                           **kwargs),
        "dask-scheduler-address": run_figure(spec, backend="dask", scheduler=scheduler,
                                             progress=False, **kwargs),
    }
    return serial, others


@pytest.mark.parametrize(("spec", "trials"), [(support.SMALL, 3), (support.IDENTIFY, 4),
                                              (support.FAILING, 6)],
                         ids=["regret", "identification-random-instances", "failing"])
def test_results_are_bit_identical_on_every_backend(spec, trials, dask_backend, scheduler):
    serial, others = _runs(spec, dask_backend, scheduler, seed=7, trials=trials)
    assert len(serial.trials) == len(spec.points) * len(spec.algorithms) * trials
    assert serial.trials["final_regret"].nunique() > 1 or serial.trials["correct"].notna().all()
    for name, other in others.items():
        try:
            support.frames_equal(serial, other)
        except AssertionError as error:
            raise AssertionError(f"{name} differs from serial: {error}") from None
        assert list(other.trials["error"].fillna("")) == list(serial.trials["error"].fillna(""))


def test_a_given_backend_is_left_open(dask_backend):
    run_figure(support.SMALL, backend=dask_backend, trials=1, progress=False)
    assert dask_backend._client is not None and dask_backend._cluster is not None
    assert len(dask_backend._client.scheduler_info()["workers"]) == 2
    with pytest.raises(ValueError, match="workers"):
        run_figure(support.SMALL, backend=dask_backend, workers=2, progress=False)


@pytest.mark.parametrize("backend", [SerialBackend(), ProcessBackend(2)],
                         ids=["serial", "processes"])
def test_backend_yields_every_task_once_with_its_result_or_error(backend):
    with backend:
        outcomes = dict(backend.run(support.square, 10, list(range(6))))
    assert sorted(outcomes) == list(range(6))
    assert isinstance(outcomes.pop(3), ValueError)
    assert outcomes == {i: 10 * i * i for i in (0, 1, 2, 4, 5)}


def test_dask_backend_yields_every_task_once(dask_backend):
    outcomes = dict(dask_backend.run(support.square, 10, list(range(6))))
    assert isinstance(outcomes.pop(3), ValueError)
    assert outcomes == {i: 10 * i * i for i in (0, 1, 2, 4, 5)}


def test_make_backend_defaults_and_refusals():
    assert make_backend("processes").workers >= 1
    assert make_backend("processes", 3).workers == 3
    assert make_backend("serial").workers == 1
    with pytest.raises(ValueError, match="backend must be one of"):
        make_backend("threads")
