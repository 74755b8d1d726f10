"""The stdlib-only client (banditkit.client) and the JavaScript client (clients/js/): the same
arm for the same allocation and key, sticky keys across weight changes, no scientific stack."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from banditkit.client import Assigner, CookieStore, DictStore, FunctionStore, uniform

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "clients" / "js"


def _vectors_module():
    sys.path.insert(0, str(JS))
    try:
        import make_vectors
    finally:
        sys.path.remove(str(JS))
    return make_vectors


def test_import_needs_no_numpy_pandas_or_server():
    code = ("import sys\n"
            "for name in ('numpy', 'pandas', 'scipy', 'starlette', 'psycopg'):\n"
            "    sys.modules[name] = None  # an import of them fails\n"
            "from banditkit.client import Assigner\n"
            "a = Assigner({'version': 'v', 'salt': 's', 'arms': ['a', 'b'], "
            "'weights': [0.5, 0.5]})\n"
            "assert a.assign('k') in ('a', 'b')\n"
            "loaded = [m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'pandas', 'scipy', 'starlette', 'psycopg')\n"
            "          and sys.modules[m] is not None]\n"
            "live = [m for m in sys.modules\n"
            "        if m.startswith(('banditkit.live', 'banditkit.service'))]\n"
            "print(loaded, live)\n"
            "assert not loaded and not live\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr + run.stdout


def test_python_matches_the_checked_in_vectors():
    """The vectors file is what the Python client gives now (a change of the hash changes the
    arms of every application's users: it must be deliberate)."""
    stored = json.loads((JS / "vectors.json").read_text())
    assert stored == json.loads(json.dumps(_vectors_module().vectors()))
    for block in stored["vectors"]:
        assigner = Assigner(block["allocation"])
        for case in block["cases"]:
            assert uniform(block["allocation"]["salt"], case["key"]) == case["uniform"]
            assert assigner.assign(case["key"]) == case["arm"]


def test_javascript_gives_the_same_arms():
    node = shutil.which("node")
    if node is None:
        pytest.fail("no node: `make nodejs` installs Debian's package (make test runs it)")
    run = subprocess.run([node, str(JS / "test.mjs")], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1])["failures"] == 0


def test_hash_is_the_documented_one():
    import hashlib

    digest = hashlib.sha256(b"salt:key-1").hexdigest()
    assert uniform("salt", "key-1") == int(digest[:13], 16) / 16**13
    assert uniform("salt", 17) == uniform("salt", "17")
    # the cumulative rule: u·total < c_i, arms of weight 0 skipped
    allocation = {"version": "v", "salt": "salt", "arms": ["a", "b", "c"],
                  "weights": [0.2, 0.0, 0.8]}
    for key in range(300):
        u = uniform("salt", key)
        assert Assigner(allocation).assign(key) == ("a" if u < 0.2 else "c")


def test_shares_follow_the_weights():
    allocation = {"version": "v", "salt": "x", "arms": ["a", "b", "c"],
                  "weights": [0.1, 0.3, 0.6]}
    arms = Assigner(allocation).assign_many(range(30_000))
    shares = [arms.count(a) / len(arms) for a in "abc"]
    # binomial s.d. at most 0.003: 4 s.d.
    assert all(abs(s - w) < 0.012 for s, w in zip(shares, [0.1, 0.3, 0.6], strict=True))


def test_sticky_keys_keep_their_arm_while_the_weights_move():
    first = {"version": "1", "salt": "s", "arms": ["a", "b", "c"], "weights": [1, 1, 1]}
    moved = {"version": "2", "salt": "s", "arms": ["a", "b", "c"], "weights": [0.1, 0.1, 0.8]}
    store = DictStore()
    assigner = Assigner(first, store)
    before = assigner.assign_many(f"u{i}" for i in range(600))
    assigner.update(moved)
    assert assigner.assign_many(f"u{i}" for i in range(600)) == before
    # without the store, about 2/3 of keys on a or b move to c
    plain = Assigner(moved).assign_many(f"u{i}" for i in range(600))
    assert sum(p != b for p, b in zip(plain, before, strict=True)) > 150
    # an arm no longer offered (weight 0) is assigned afresh, and the store follows
    assigner.update({"version": "3", "salt": "s", "arms": ["a", "b", "c"],
                     "weights": [1, 0, 0]})
    assert set(assigner.assign_many(f"u{i}" for i in range(600))) == {"a"}
    assert set(store.arms.values()) == {"a"}


def test_cookie_and_function_stores():
    allocation = {"name": "exp", "version": "1", "salt": "s", "arms": ["a", "b"],
                  "weights": [0.5, 0.5]}
    assigner = Assigner(allocation)
    cookie = CookieStore(None)
    arm = assigner.assign("visitor-1", store=cookie)
    assert cookie.changed and CookieStore(cookie.value).get("exp") == arm
    other = "b" if arm == "a" else "a"
    returning = CookieStore(None)
    returning.set("exp", other)
    assert assigner.assign("visitor-1", store=CookieStore(returning.value)) == other
    assert CookieStore("%7Bnot json").arms == {}  # a tampered cookie: a fresh assignment
    table: dict[str, str] = {}
    store = FunctionStore(table.get, table.__setitem__)
    assert assigner.assign("u1", store=store) == table["u1"]


@pytest.mark.parametrize("bad, word", [
    ({"salt": "s", "arms": ["a"], "weights": [1]}, "version"),
    ({"version": "v", "salt": "s", "arms": [], "weights": []}, "arms"),
    ({"version": "v", "salt": "s", "arms": ["a", "b"], "weights": [1]}, "weights"),
    ({"version": "v", "salt": "s", "arms": ["a"], "weights": [-1]}, "weights"),
    ({"version": "v", "salt": "s", "arms": ["a"], "weights": [0]}, "weights"),
    ({"version": "v", "salt": "s", "arms": ["a"], "weights": [float("nan")]}, "weights"),
    ([1, 2], "allocation"),
])
def test_bad_allocations_are_refused_by_name(bad, word):
    with pytest.raises(ValueError, match=word):
        Assigner(bad)
    good = Assigner({"version": "v", "salt": "s", "arms": ["a"], "weights": [1]})
    with pytest.raises(ValueError, match=word):
        good.update(bad)
    assert good.version == "v"  # kept
    for key in ("", None, 1.5, True):
        with pytest.raises(ValueError, match="key"):
            good.assign(key)
