"""Progress of long work (figure runs, audits): a bar on a terminal, plain lines in a log."""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["progress_bar"]


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _LineProgress:
    """Progress for a log file (stderr not a terminal): a plain line at every tenth of the
    trials and at most every 30 s, instead of a bar redrawn with carriage returns."""

    def __init__(self, total: int, name: str, unit: str = "trial") -> None:
        self.total, self.name, self.done, self.unit = total, name, 0, unit
        self.start = self.last = time.perf_counter()
        self.next_tenth = 1

    def update(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        tenth = 10 * self.done // self.total
        finished = self.done >= self.total
        # like tqdm's delay: work done within a second prints only its last line
        if now - self.start < 1.0 and not finished:
            return
        if tenth >= self.next_tenth or now - self.last >= 30.0:
            self.next_tenth = tenth + 1
            self.last = now
            print(f"{self.name}: {self.done}/{self.total} {self.unit}s "
                  f"({100 * self.done / self.total:.0f}%), {now - self.start:.0f} s",
                  file=sys.stderr, flush=True)

    def __enter__(self) -> _LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(total: int, name: str, enabled: bool, unit: str = "trial") -> Any:
    """A progress bar over ``total`` units of work: a tqdm bar on a terminal, plain lines in a
    log file (stderr not a terminal), nothing when not ``enabled``. Use as a context manager;
    call ``update(n)`` as work completes."""
    if not enabled or total == 0:
        return _NoBar()
    if not sys.stderr.isatty():
        return _LineProgress(total, name, unit)
    from tqdm.auto import tqdm

    # delay: short runs show no bar at all.
    return tqdm(total=total, desc=name, unit=unit, delay=1.0, file=sys.stderr,
                dynamic_ncols=True)
