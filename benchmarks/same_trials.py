"""Are two run folders' trials the same numbers? Compares every stored trial of each figure
(``results.sqlite``), leaving out only the columns that time or place a trial (wall time,
worker, session): used to check that a Dask cluster gives what the process pool gave
(docs/benchmarks.md, "The whole reproduction").

    python benchmarks/same_trials.py runs/reproduce runs/dask-subset
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

PLACE_OR_TIME = {"id", "wall", "wall_s", "seconds", "elapsed", "worker", "pid", "host",
                 "started", "finished", "session", "session_id", "duration", "cpu"}


def _rows(folder: Path) -> list[tuple]:
    with sqlite3.connect(folder / "results.sqlite") as db:
        columns = [r[1] for r in db.execute("PRAGMA table_info(trials)")
                   if r[1] not in PLACE_OR_TIME]
        return sorted(db.execute(f"SELECT {', '.join(columns)} FROM trials").fetchall(),
                      key=repr)


def main(argv: list[str]) -> int:
    reference, other = Path(argv[0]), Path(argv[1])
    differ = 0
    for folder in sorted(p for p in other.iterdir() if (p / "results.sqlite").exists()):
        a, b = _rows(reference / folder.name), _rows(folder)
        same = a == b
        differ += not same
        print(f"{folder.name}: {len(b)} trials, {'identical' if same else 'DIFFERENT'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
