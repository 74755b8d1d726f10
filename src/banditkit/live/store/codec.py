"""How a live experiment's values are stored: the tables' time text (microseconds since the
epoch, exact), a batch's runs or i.i.d. description as bytes with their digest, and a file's
identity."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from ...draws import uniforms_at
from ...protocol import IIDBatch

__all__ = ["file_identity", "micros", "now", "pack_draws", "pack_runs", "parse_stamp", "stamp",
           "stamps", "unpack_draws", "unpack_runs"]


def now() -> str:
    """The time stored in the tables (``assigned_at``, ``recorded_at``...): UTC, ISO 8601 to the
    microsecond, so that text order is time order on both backends."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(seconds: float) -> int:
    """POSIX seconds (what a clock such as :func:`time.time` returns) as whole microseconds:
    the outcome window's comparisons are exact integer arithmetic on these."""
    return round(float(seconds) * 1_000_000)


def stamp(us: int) -> str:
    """Microseconds since the epoch as the tables' time text (as :func:`now` writes it),
    exactly: text order is time order."""
    return (_EPOCH + timedelta(microseconds=int(us))).isoformat(timespec="microseconds")


def stamps(us: list[int]) -> list[str]:
    """:func:`stamp` of each of ``us`` (µs from 1970 to year 9999), in numpy's loop: an
    ingest body's 500 exposures each have a time of their own."""
    text = np.datetime_as_string(np.asarray(us, dtype=np.int64).astype("datetime64[us]"),
                                 unit="us")
    return [t + "+00:00" for t in text.tolist()]


def parse_stamp(text: str) -> int:
    """The tables' time text back to microseconds since the epoch (exact)."""
    delta = datetime.fromisoformat(text) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def pack_runs(arms: np.ndarray, counts: np.ndarray) -> tuple[bytes, bytes, str]:
    """A batch's runs as stored: little-endian int64 bytes of ``arms`` and ``counts``, and the
    SHA-256 digest of both (compared on every call instead of the runs themselves)."""
    a = np.ascontiguousarray(arms, dtype="<i8").tobytes()
    c = np.ascontiguousarray(counts, dtype="<i8").tobytes()
    digest = hashlib.sha256(len(a).to_bytes(8, "little") + a + c).hexdigest()
    return a, c, digest


def unpack_runs(arms: object, counts: object) -> tuple[np.ndarray, np.ndarray]:
    """The runs :func:`pack_runs` stored; ``ValueError`` for anything else (an edited file)."""
    if not isinstance(arms, bytes) or not isinstance(counts, bytes) or len(arms) % 8 \
            or len(arms) != len(counts):
        raise ValueError("runs must be two int64 arrays of one length")
    a, c = np.frombuffer(arms, dtype="<i8"), np.frombuffer(counts, dtype="<i8")
    if c.size and (c.min() < 1 or a.min() < 0):
        raise ValueError("runs need arms >= 0 and counts >= 1")
    return a.astype(np.int64), c.astype(np.int64)


def pack_draws(batch: IIDBatch) -> tuple[bytes, str, str]:
    """An i.i.d. batch as stored: its cdf (little-endian float64 bytes), ξ's state (JSON with
    sorted keys) and the SHA-256 digest of both with the number of pulls."""
    cdf = np.ascontiguousarray(batch.cdf, dtype="<f8").tobytes()
    state = json.dumps(batch.state, sort_keys=True)
    digest = hashlib.sha256(b"iid" + batch.n_pulls.to_bytes(8, "little") + cdf
                            + state.encode()).hexdigest()
    return cdf, state, digest


def unpack_draws(cdf: object, state: object, n_pulls: object) -> IIDBatch:
    """The batch :func:`pack_draws` stored; ``ValueError`` for anything else (an edited file)."""
    if not isinstance(cdf, bytes) or not cdf or len(cdf) % 8 or not isinstance(state, str) \
            or isinstance(n_pulls, bool) or not isinstance(n_pulls, int):
        raise ValueError("an i.i.d. batch needs a float64 cdf, a JSON state and a pull count")
    try:
        batch = IIDBatch(np.frombuffer(cdf, dtype="<f8").astype(float), json.loads(state),
                         n_pulls)
        uniforms_at(batch.state, 0, 1)  # a state numpy refuses is refused here, by name
        return batch
    except (TypeError, KeyError, OverflowError) as error:  # JSONDecodeError: a ValueError
        raise ValueError(f"its state cannot be read ({error})") from None


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path``, or ``None`` when it is gone: a file replaced or moved has
    another identity (the journal and the service's folder both check it)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino
