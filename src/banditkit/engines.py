"""Engines: faster exact ways to run an algorithm's trials than the protocol loop (DESIGN.md,
"Engines").

The protocol loop of :func:`banditkit.simulate` (``next_batch`` / ``pull`` / ``observe``) is the
reference: it is what a live experiment does. Some algorithms also have engines that give the
same :class:`~banditkit.trial.Trial` from the same streams, faster: a compiled (numba) kernel of
one trial, a block driver, a lock-step runner vectorised over the trials of one point.

An algorithm declares its engines by overriding :meth:`Algorithm.engine
<banditkit.protocol.Algorithm.engine>`::

    class MyPolicy(Algorithm):
        def engine(self, env, horizon):
            if type(self) is not MyPolicy or type(env) is not BernoulliBandit:
                return None          # the protocol loop
            from .my_kernel import run_one, run_many   # imported only when used
            return Engine("compiled kernel", run=run_one, run_trials=run_many)

It is asked only about a fresh algorithm (no pull observed, no batch pending) and may say
``None`` for any pair it cannot run exactly (another environment, a subclass that may change
the rule, numba missing); :func:`banditkit.simulate` then takes the protocol loop. What an
engine promises:

* ``run(algorithm, env, *, horizon, seed, checkpoints) -> Trial`` (optional): one trial, equal
  to the protocol loop's trial — the same pulls, counts, regret curve, recommendation, stopping
  time and ``stopped`` flag — from the algorithm's own ξ and the noise stream ``seed`` (a
  Generator given as ``seed`` ends where the loop leaves it). ``horizon`` and ``checkpoints``
  arrive validated (``checkpoints`` may be ``None``: the loop's default). The algorithm object
  may be left in its final state or untouched; pass ``engine="reference"`` to inspect it after
  the run.
* ``run_trials(algorithms, envs, seeds, horizon, checkpoints) -> list[Trial]`` (optional): many
  trials at once, algorithm ``i`` (fresh, built by one factory with the same parameters, its
  own ξ) on ``envs[i]`` with noise seed ``seeds[i]``; trial ``i`` equals ``run`` of that trial
  (or the protocol loop's), whatever the other trials of the call are. An engine without
  ``run`` also runs single trials through ``run_trials`` (except when ``seed`` is a Generator:
  a lock-step runner may read the noise stream ahead, and the caller's Generator must end where
  the loop leaves it).

Engines must take no shortcut that changes a number: the tests compare every declared engine
with the protocol loop, bit for bit, compiled and with ``BANDITKIT_JIT=0``
(``tests/test_engines.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ENGINE_CHOICES", "Engine", "check_engine"]

#: What ``simulate(..., engine=)`` accepts: ``"auto"`` (the algorithm's fastest exact engine,
#: the protocol loop when it declares none) or ``"reference"`` (always the protocol loop).
ENGINE_CHOICES = ("auto", "reference")

# an engine returns banditkit.trial.Trial objects; typed Any here because trial.py imports the
# protocol, which imports this module: naming Trial would close an import cycle
RunOne = Callable[..., Any]
RunMany = Callable[[Sequence[Any], Sequence[Any], Sequence[Any], "int | None", Any], list[Any]]


@dataclass(frozen=True)
class Engine:
    """An exact engine an algorithm declares (see the module docstring).

    Attributes
    ----------
    name : str
        What it is, for benchmarks and messages (``"compiled kernel"``, ``"lock-step"``,
        ``"blocks"``).
    run : callable, optional
        ``run(algorithm, env, *, horizon, seed, checkpoints) -> Trial``: one trial.
    run_trials : callable, optional
        ``run_trials(algorithms, envs, seeds, horizon, checkpoints) -> list[Trial]``: many
        trials at once (a lock-step runner).
    """

    name: str
    run: RunOne | None = None
    run_trials: RunMany | None = None

    def __post_init__(self) -> None:
        if self.run is None and self.run_trials is None:
            raise ValueError(f"engine {self.name!r} needs run or run_trials")


def check_engine(engine: object) -> str:
    """``engine`` if it is one of :data:`ENGINE_CHOICES`, else a ``ValueError`` naming them."""
    if engine not in ENGINE_CHOICES:
        raise ValueError(f"engine must be one of {ENGINE_CHOICES} ('auto': the algorithm's "
                         f"fastest exact engine; 'reference': the protocol loop), got "
                         f"{engine!r}")
    return str(engine)
