"""Write ``clients/js/vectors.json``: allocations, keys and the arm (and uniform number) the
Python client gives each, which ``clients/js/test.mjs`` checks the JavaScript client against
(both run by ``make test``: tests/test_client.py). Run from the repository root:
``python clients/js/make_vectors.py``."""

from __future__ import annotations

import json
from pathlib import Path

from banditkit.client import Assigner, uniform

ALLOCATIONS = [
    {"version": "a1", "salt": "826e399a0c5c90ad", "arms": ["control", "b", "c", "d"],
     "weights": [0.25, 0.25, 0.25, 0.25]},
    {"version": "a2", "salt": "2ff1a65ebee22f9d", "arms": ["a", "b", "c"],
     "weights": [0.33039100000000005, 0.331361, 0.33824800000000005]},
    {"version": "a3", "salt": "s", "arms": ["a", "b", "c", "d"], "weights": [0.0, 0.7, 0.0, 0.3]},
    {"version": "a4", "salt": "x:y", "arms": ["only"], "weights": [1]},
    {"version": "a5", "salt": "0123456789abcdef0123456789abcdef0123456789abcdef",
     "arms": ["a", "b"], "weights": [1e-9, 3.0]},
]
KEYS = ([str(i) for i in range(40)] + [i for i in range(40, 60)]
        + ["user-42", "ü-ñ-é", "😀", "k" * 80, "a:b", " ", "0", "-1"])


def vectors() -> dict:
    out = []
    for allocation in ALLOCATIONS:
        assigner = Assigner(allocation)
        out.append({"allocation": allocation,
                    "cases": [{"key": k, "uniform": uniform(allocation["salt"], k),
                               "arm": assigner.assign(k)} for k in KEYS]})
    return {"about": "banditkit client test vectors: Python and JavaScript must agree",
            "vectors": out}


if __name__ == "__main__":
    path = Path(__file__).with_name("vectors.json")
    path.write_text(json.dumps(vectors(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path}")
