"""Where tasks run: in this process, in a pool of local processes, or on a Dask cluster.

A backend sends one shared object (the figure spec) to each worker once, runs
``fn(shared, task)`` for every task and yields ``(task, result)`` pairs as tasks finish, in
whatever order they finish. ``result`` is the function's return value or, when the task could
not run at all (a worker process died, the cluster went away), the exception. Numbers never
depend on the backend: every trial derives its seeds from its own key (:mod:`.tasks`), and the
parent sorts what it stores.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a pool is started: `banditkit --help` builds this parser
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["BACKENDS", "Backend", "BackendUnavailable", "DaskBackend", "ProcessBackend",
           "SerialBackend", "make_backend"]

Outcome = tuple[Any, Any]


class Backend(ABC):
    """Runs tasks; use as a context manager so workers are released."""

    name: str

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    @abstractmethod
    def run(self, fn: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any]
            ) -> Iterator[Outcome]:
        """Yield ``(task, fn(shared, task))`` for every task, as each finishes."""

    def close(self) -> None:
        """Release workers (the default backend holds none)."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialBackend(Backend):
    """Everything in this process, in task order (tests, debugging, profiling)."""

    name = "serial"

    def __init__(self, workers: int | None = None) -> None:
        super().__init__(1)

    def run(self, fn: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any]
            ) -> Iterator[Outcome]:
        for task in tasks:
            try:
                result = fn(shared, task)
            except Exception as error:
                result = error
            yield task, result


# Set once in each worker process by the pool's initializer: the function and the spec, so that
# tasks carry only indices and seeds.
_WORKER_STATE: tuple[Callable[[Any, Any], Any], Any] | None = None


def _init_worker(fn: Callable[[Any, Any], Any], shared: Any) -> None:
    global _WORKER_STATE
    _WORKER_STATE = (fn, shared)


def _run_in_worker(task: Any) -> Any:
    assert _WORKER_STATE is not None, "worker was not initialised"
    fn, shared = _WORKER_STATE
    return fn(shared, task)


class ProcessBackend(Backend):
    """A ``concurrent.futures.ProcessPoolExecutor`` on this machine (all cores by default)."""

    name = "processes"

    def __init__(self, workers: int | None = None) -> None:
        super().__init__(workers or os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None

    def run(self, fn: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any]
            ) -> Iterator[Outcome]:
        if not tasks:
            return
        workers = min(self.workers, len(tasks))
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        self._pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker,
                                         initargs=(fn, shared))
        pending: dict[Future, Any] = {self._pool.submit(_run_in_worker, t): t for t in tasks}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    task = pending.pop(future)
                    error = future.exception()
                    yield task, (future.result() if error is None else error)
        finally:
            # Interrupted (Ctrl-C, an error in the parent): drop queued work, stop workers.
            self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


#: Seconds to wait for a Dask scheduler before giving up.
SCHEDULER_TIMEOUT = 10.0


class BackendUnavailable(RuntimeError):
    """The backend cannot start: an unreachable scheduler, a missing optional dependency."""


class DaskBackend(Backend):
    """A Dask distributed cluster: the scheduler at ``scheduler`` (``"tcp://host:8786"``), or a
    ``LocalCluster`` of ``workers`` single-threaded worker processes when no address is given.
    """

    name = "dask"

    def __init__(self, workers: int | None = None, scheduler: str | None = None) -> None:
        super().__init__(workers)
        self.scheduler = scheduler
        self._client = None
        self._cluster = None

    def _connect(self) -> Any:
        try:
            from distributed import Client, LocalCluster
        except ImportError as error:  # optional dependency
            raise ImportError("the dask backend needs dask.distributed: "
                              "pip install 'banditkit[dask]'") from error
        if self._client is None:
            if self.scheduler is not None:
                try:
                    self._client = Client(self.scheduler, timeout=SCHEDULER_TIMEOUT)
                except (OSError, TimeoutError, ValueError) as error:
                    raise BackendUnavailable(
                        f"cannot reach the Dask scheduler at {self.scheduler!r} within "
                        f"{SCHEDULER_TIMEOUT:g} s ({type(error).__name__}: {error}); check the "
                        "address, or leave out --scheduler for a local cluster") from None
            else:
                self._cluster = LocalCluster(n_workers=self.workers or os.cpu_count() or 1,
                                             threads_per_worker=1, processes=True,
                                             dashboard_address=":0")  # any free port
                self._client = Client(self._cluster)
        return self._client

    def run(self, fn: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any]
            ) -> Iterator[Outcome]:
        if not tasks:
            return
        from distributed import as_completed

        client = self._connect()
        # Send the spec to every worker once rather than with every task.
        [shared_future] = client.scatter([shared], broadcast=True, hash=False)
        futures = {client.submit(fn, shared_future, t, pure=False): t for t in tasks}
        try:
            for future in as_completed(list(futures)):
                task = futures.pop(future)
                if future.status == "finished":
                    yield task, future.result()
                else:
                    yield task, future.exception()
                future.release()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


#: Backend names accepted by the runner and the CLI.
BACKENDS = ("serial", "processes", "dask")


def make_backend(name: str, workers: int | None = None, scheduler: str | None = None
                 ) -> Backend:
    """The backend called ``name`` (one of :data:`BACKENDS`)."""
    if name == "serial":
        return SerialBackend()
    if name == "processes":
        return ProcessBackend(workers)
    if name == "dask":
        return DaskBackend(workers, scheduler)
    raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {name!r}")
