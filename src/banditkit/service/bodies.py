"""The JSON bodies the service accepts: read, checked for shape, and turned into the arguments
of :class:`banditkit.Experiment`'s methods. Only the shape is checked here (an object, known
fields, required ones present); the values are checked by the library itself, whose one-line
messages the client then gets, so the rules live in one place."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..live import ExperimentError
from .deadlines import Deadlines

__all__ = [
    "BadRequest",
    "Forbidden",
    "Gone",
    "TooLarge",
    "TooSlow",
    "assign_arguments",
    "check_count",
    "create_arguments",
    "expire_arguments",
    "parse_body",
    "read_body",
    "record_arguments",
    "resume_arguments",
    "units_arguments",
]


class BadRequest(ExperimentError):
    """A body that is not the JSON a route takes (HTTP 400)."""


class Forbidden(ExperimentError):
    """A call the request's token may not make (HTTP 403): an experiment outside its prefix."""


class TooLarge(ExperimentError):
    """A body above the limit (HTTP 413)."""


class TooSlow(ExperimentError):
    """A body not sent within the body timeout (HTTP 408)."""


class Gone(Exception):
    """The client went away before its body was in: nobody to answer."""


async def read_body(receive: Callable[[], Awaitable[Any]], content_length: str | None,
                    max_body: int, timeout: float, deadlines: Deadlines | None = None) -> bytes:
    """The request's body from the ASGI ``receive``: refused (:class:`TooLarge`) when its
    declared length, or the bytes sent so far (a chunked body has none), pass ``max_body``,
    before the rest is read; :class:`TooSlow` when it is not all in within ``timeout``
    seconds. The one reader of a body: the routes and the fast path (:mod:`.fast`) call it
    after :func:`.guard.refusal` has checked the token and the content type, so that no one
    without the token makes the server read a body.

    With ``deadlines`` (of ``timeout`` seconds, :mod:`.deadlines`), the timeout is one of
    theirs rather than a timer of its own (``asyncio.timeout``): the same cut, at the same
    moment, without a timer per request."""
    if content_length is not None and content_length.isdigit() \
            and int(content_length) > max_body:
        raise TooLarge(f"the body ({int(content_length)} bytes) is above this server's limit "
                       f"of {max_body} bytes; send fewer units per call")
    if deadlines is None:
        try:
            async with asyncio.timeout(timeout):
                return await _receive_body(receive, max_body)
        except TimeoutError:
            raise _too_slow(timeout) from None
    # as asyncio.timeout does it: cancel the task at the deadline, and tell that cancellation
    # from any other (the client gone, the server stopping) by the task's count of them
    task = asyncio.current_task()
    assert task is not None
    cancelling, cut = task.cancelling(), []

    def expire() -> None:
        cut.append(True)
        task.cancel()

    deadlines.add(task, expire)
    try:
        return await _receive_body(receive, max_body)
    except asyncio.CancelledError:
        if cut and task.uncancel() <= cancelling:
            raise _too_slow(timeout) from None
        raise
    finally:
        deadlines.discard(task)


def _too_slow(timeout: float) -> TooSlow:
    return TooSlow(f"the body was not sent within {timeout:g} s (--body-timeout)")


async def _receive_body(receive: Callable[[], Awaitable[Any]], max_body: int) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Gone()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_body:  # a chunked body without a length: stop at the limit
            raise TooLarge(f"the body is above this server's limit of {max_body} "
                           "bytes; send fewer units per call")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def parse_body(raw: bytes, max_depth: int = 32) -> dict[str, Any]:
    """The request's JSON object (an empty body reads as ``{}``), nested at most ``max_depth``
    levels (no route takes more than 3; a body nested thousands deep would otherwise end in
    Python's RecursionError, a 500)."""
    if not raw.strip():
        return {}
    try:
        # NaN and Infinity are not JSON: refuse them here rather than pass them on
        # one decoder for every body (json.loads with an option builds a new one per call);
        # bytes decoded as json.loads decodes them (UTF-8, -16 or -32 by their first bytes)
        encoding = json.detect_encoding(raw)
        text = raw.decode(encoding, "surrogatepass")
        body = _DECODER.decode(text)
    except BadRequest:  # a repeated key (_unique_keys): its own message
        raise
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequest(f"the body is not valid JSON ({error})") from None
    except RecursionError:
        raise BadRequest(f"the body nests deeper than {max_depth} levels, this server's "
                         "limit") from None
    # a body cannot nest deeper than it has brackets: most are counted, not walked
    if text.count("[") + text.count("{") > max_depth \
            and _deeper(raw, encoding, max_depth):
        depth = _depth(body)
        if depth > max_depth:
            raise BadRequest(f"the body nests {depth} levels, deeper than {max_depth}, this "
                             "server's limit")
    if not isinstance(body, dict):
        raise BadRequest(f"the body must be a JSON object, got {type(body).__name__}")
    return body


#: bytes.translate's table and deletions: braces read as brackets, all but brackets and
#: quotes dropped.
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKET = bytes(c for c in range(256) if c not in b'[]{}"')


def _deeper(raw: bytes, encoding: str, max_depth: int) -> bool:
    """Whether ``raw``, valid JSON, nests deeper than ``max_depth``, from its brackets outside
    strings (innermost pairs removed once per level) with ``bytes``' C loops only: walking the
    parsed body cost more than parsing a bulk ``events`` body. In UTF-8 (a byte of a multi-byte
    character is never a bracket or a quote); in another, ``True``: the caller walks the body
    (:func:`_depth`)."""
    if encoding not in ("utf-8", "utf-8-sig"):
        return True
    if b"\\" in raw:  # escapes: a pair of backslashes, then an escaped quote, are no quote
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(raw.translate(_AS_BRACKETS, _NOT_BRACKET).split(b'"')[::2])
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar 0, ``[]`` 1), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        stack.extend((v, level + 1) for v in item if isinstance(v, (list, dict)))
    return deepest


def check_count(what: str, count: int, max_units: int) -> None:
    """Refuse more than ``max_units`` units in one call, by name, before any work."""
    if count > max_units:
        raise BadRequest(f"{what} must be at most {max_units} per call on this server "
                         f"(--max-units), got {count}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all distinct: JSON allows ``{"n": 1, "n": 1000}`` and most
    parsers keep the last, a proxy or a log the first, so a repeated key is refused by name
    rather than read as one of its values."""
    found = dict(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                break
            seen.add(key)
        raise BadRequest(f"the body repeats the key {key[:100]!r}: each key may appear "
                         "once in an object")
    return found


_DECODER = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=_unique_keys)


def _fields(body: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...],
            route: str) -> dict[str, Any]:
    unknown = sorted(set(body) - set(required) - set(optional))
    if unknown:
        raise BadRequest(f"{route}: unknown field(s) {unknown}; it takes "
                         f"{sorted(required + optional)}")
    missing = [k for k in required if k not in body]
    if missing:
        raise BadRequest(f"{route}: missing field(s) {missing}")
    return dict(body)


def create_arguments(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(name, keyword arguments of Experiment.create)``. Arms are names, or ``features`` (a
    list of lists, one row per arm) with optional ``arms`` naming the rows."""
    fields = _fields(body, ("name", "algorithm", "seed"),
                     ("arms", "features", "horizon", "params", "thresholds", "order",
                      "guardrails", "guardrail_alpha", "outcome_window", "missing",
                      "overflow", "reward_type", "reward_range", "verdicts"),
                     "POST /experiments")
    name = fields.pop("name")
    features = fields.pop("features", None)
    arms = fields.pop("arms", None)
    if arms is not None and not (isinstance(arms, list)
                                 and all(isinstance(a, str) for a in arms)):
        # JSON gives names as strings; anything else would be named by its Python repr
        raise BadRequest(f"arms must be a list of names (strings), got {arms!r}")
    if features is None:
        if arms is None:
            raise BadRequest("POST /experiments: give arms (a list of names) or features (a "
                             "list of lists, one row per arm)")
        fields["arms"] = arms
    else:
        if not (isinstance(features, list) and features
                and all(isinstance(row, list) for row in features)):
            raise BadRequest(f"features must be a list of lists of numbers (one row per arm), "
                             f"got {features!r}")
        if arms is None:
            fields["arms"] = features  # named 0, 1, ... by the library
        else:
            import pandas as pd

            if len(arms) != len(features):
                raise BadRequest(f"arms must name the {len(features)} rows of features, got "
                                 f"{arms!r}")
            try:
                fields["arms"] = pd.DataFrame(features, index=pd.Index(arms, dtype=object))
            except (ValueError, TypeError) as error:  # ragged rows
                raise BadRequest(f"features must be a list of lists of numbers of one length "
                                 f"(one row per arm): {error}") from None
    if fields.get("params") is not None and not isinstance(fields["params"], dict):
        raise BadRequest(f"params must be a JSON object, got {fields['params']!r}")
    return name, fields


def assign_arguments(body: Mapping[str, Any], max_units: int = 100_000
                     ) -> tuple[Any, Any, Any, Any]:
    """``(n, keys, covariates, segments)``: ``n`` may be omitted when ``keys`` (sticky units)
    are given; at most ``max_units`` units a call."""
    fields = _fields(body, (), ("n", "keys", "covariates", "segments"), "assign")
    if "n" not in fields and fields.get("keys") is None:
        raise BadRequest("assign: missing field(s) ['n'] (or give keys, one per unit)")
    n, keys = fields.get("n"), fields.get("keys")
    if isinstance(n, int) and not isinstance(n, bool):
        check_count("n", n, max_units)
    if isinstance(keys, list):
        check_count("keys", len(keys), max_units)
    # the library refuses anything but an integer n >= 1 and a list of distinct string or
    # integer keys, one per unit, by name
    _number_list(fields, "covariates")
    if fields.get("segments") is not None and not isinstance(fields["segments"], list):
        raise BadRequest(f"segments must be a list of labels (one per unit), got "
                         f"{fields['segments']!r}")
    return fields.get("n"), fields.get("keys"), fields.get("covariates"), fields.get("segments")


def _number_list(fields: Mapping[str, Any], key: str) -> None:
    """A per-unit list (covariates, denominators): a JSON list, or absent; the library checks
    its numbers and length by name."""
    value = fields.get(key)
    if value is not None and not isinstance(value, list):
        raise BadRequest(f"{key} must be a list of numbers (one per unit), got {value!r}")


def record_arguments(body: Mapping[str, Any], max_units: int = 100_000
                     ) -> tuple[Any, Any, Any, Any, Any, Any]:
    """``(units, rewards, costs, metrics, covariates, denominators)`` of
    ``Experiment.record``."""
    fields = _fields(body, ("units", "rewards"), ("costs", "metrics", "covariates",
                                                  "denominators"), "record")
    units, rewards = fields["units"], fields["rewards"]
    # lists only: a JSON string would otherwise reach numpy as one text value
    for key, value in (("units", units), ("rewards", rewards)):
        if not isinstance(value, list):
            raise BadRequest(f"{key} must be a list, got {value!r}")
    check_count("units", len(units), max_units)
    if any(isinstance(u, bool) for u in units):
        raise BadRequest("units must be integer unit ids, not true/false")
    metrics = fields.get("metrics")
    if metrics is not None and not (isinstance(metrics, dict) and all(
            isinstance(v, list) for v in metrics.values())):
        raise BadRequest(f"metrics must be a JSON object: metric name → a list of numbers, "
                         f"got {metrics!r}")
    for key in ("covariates", "denominators"):
        _number_list(fields, key)
    return (units, rewards, fields.get("costs"), metrics, fields.get("covariates"),
            fields.get("denominators"))


def expire_arguments(body: Mapping[str, Any], max_units: int = 100_000) -> tuple[Any, Any]:
    fields = _fields(body, (), ("units", "older_than"), "expire")
    units = fields.get("units")
    if units is not None and not isinstance(units, list):
        raise BadRequest(f"units must be a list of unit ids, got {units!r}")
    if units is not None:
        check_count("units", len(units), max_units)
    return units, fields.get("older_than")


def resume_arguments(body: Mapping[str, Any]) -> None:
    """``POST /experiments/{name}/resume`` takes no fields (an empty object)."""
    _fields(body, (), (), "resume")


def units_arguments(query: Mapping[str, str], accept: str) -> tuple[bool, Any, Any, bool]:
    """``(unanswered, after, limit, csv)`` of ``GET /experiments/{name}/units?unanswered=true
    &after=ID&limit=N&format=csv`` (CSV also with ``Accept: text/csv``); the library checks
    ``after`` and ``limit`` by name. Without ``limit`` a page holds :data:`UNITS_PAGE` units
    (the next starts after ``next_after``): a list of 100,000 units was 30 MB in one answer."""
    unknown = sorted(set(query) - {"unanswered", "after", "limit", "format"})
    if unknown:
        raise BadRequest(f"units: unknown query parameter(s) {unknown}; it takes after, format, "
                         "limit and unanswered")
    flags = {"true": True, "1": True, "false": False, "0": False}
    text = query.get("unanswered", "false").lower()
    if text not in flags:
        raise BadRequest(f"unanswered must be true or false, got {query['unanswered']!r}")
    numbers = []
    for key in ("after", "limit"):
        value = query.get(key)
        if value is not None:
            try:
                value = int(value)
            except ValueError:
                raise BadRequest(f"{key} must be an integer, got {value!r}") from None
        numbers.append(value)
    kind = query.get("format")
    if kind not in (None, "json", "csv"):
        raise BadRequest(f"format must be json or csv, got {kind!r}")
    csv = kind == "csv" or (kind is None and "text/csv" in accept)
    return flags[text], numbers[0], UNITS_PAGE if numbers[1] is None else numbers[1], csv


#: Units in a page of ``GET /experiments/{name}/units`` without ``limit``.
UNITS_PAGE = 1000
