"""The service's nesting limit on a JSON body (banditkit.service.bodies): the brackets counted in
the raw bytes (``_deeper``) tell what walking the parsed body (``_depth``) tells, strings with
brackets, quotes and backslashes in them included."""

from __future__ import annotations

import json
import random

import pytest

from banditkit.service.bodies import BadRequest, _deeper, _depth, parse_body

_ATOMS = [1, None, 2.5, True, "a[{\"", "x\\\"]", "\\\\", "\\", "é{ü", "\\\\\"[", "]\u2028",
          "\\n\"}", "", "}}]]"]
_TEXTS = [a for a in _ATOMS if isinstance(a, str)]


def _value(rng: random.Random, depth: int):
    if depth == 0 or rng.random() < 0.1:
        return rng.choice(_ATOMS)
    if rng.random() < 0.5:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 2))]
    return {rng.choice(_TEXTS) + str(i): _value(rng, depth - 1) for i in range(rng.randint(0, 2))}


def test_counted_depth_is_the_walked_depth():
    rng = random.Random(38)
    for _ in range(600):
        value = _value(rng, rng.randint(0, 40))
        walked = _depth(value)
        for ascii_only in (True, False):
            raw = json.dumps(value, ensure_ascii=ascii_only).encode()
            for limit in (0, 1, 2, walked - 1, walked, 32):
                if limit >= 0:
                    assert _deeper(raw, "utf-8", limit) == (walked > limit), (raw, limit)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32-le"])
def test_deep_bodies_refused_in_every_encoding(encoding):
    deep = {"a": [[[[{"b": [[["x"]]]}]]]]}  # 9 levels
    raw = json.dumps(deep).encode(encoding)
    with pytest.raises(BadRequest, match="nests 9 levels, deeper than 8"):
        parse_body(raw, max_depth=8)
    assert parse_body(raw, max_depth=9) == deep
    wide = {"events": [{"key": f"k{i}", "v": [i]} for i in range(50)]}  # many brackets, 4 deep
    assert parse_body(json.dumps(wide).encode(encoding), max_depth=4) == wide
    with pytest.raises(BadRequest, match="nests 4 levels"):
        parse_body(json.dumps(wide).encode(encoding), max_depth=3)
