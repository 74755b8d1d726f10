"""The PostgreSQL lines of the practitioner's guide (docs/guides/practitioner.md, where the
README's moved), run as printed against the suite's own PostgreSQL server
(tests/postgres_support.py), with only the URL swapped for that server's socket form."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from banditkit import Experiment
from service_support import Server, call

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guides" / "practitioner.md"


def _block(language: str, containing: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    (block,) = [b for b in blocks if containing in b]
    return block


def test_the_readme_postgres_snippet_runs_on_a_real_server(postgres_server):
    snippet = _block("python", "postgresql://")
    (printed,) = re.findall(r'url = "(postgresql://[^"]+)"', snippet)
    url = postgres_server.create_database(socket=True)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(snippet.replace(printed, url), "practitioner.md", "exec"), namespace)
    assert len(namespace["units"]) == 100
    # another connection (as another machine would) sees the 100 units, on the arms it names
    with Experiment.open(url, name="checkout", readonly=True) as again:
        stored = again.units()
        assert len(stored) == 100
        assert set(stored["arm"]) <= {"control", "new-button", "new-copy"}


def test_the_readme_serve_on_postgres_line_starts_a_server(postgres_server):
    (line,) = [ln for ln in _block("bash", "serve --db 'postgresql://").splitlines()
               if ln.startswith("banditkit serve")]
    words = shlex.split(line.rstrip("&"))
    assert words[:3] == ["banditkit", "serve", "--db"]
    assert words[3].startswith("postgresql://") and words[4:6] == ["--port", "8750"]
    assert words[6] == "--token"
    url = postgres_server.create_database(socket=True)
    server = Server(url, token="s3cret-long-enough")  # the same command, on a free port
    try:
        status, answer = call(server.port, "POST", "/experiments", {
            "name": "ab", "algorithm": "ReplicableElimination", "arms": ["a", "b", "c"],
            "seed": 7, "horizon": 30_000, "params": {"rho": 0.2}}, token="s3cret-long-enough")
        assert status == 201, answer
        status, answer = call(server.port, "POST", "/experiments/ab/assign", {"n": 3},
                              token="s3cret-long-enough")
        assert status == 200 and len(answer["units"]) == 3, answer
    finally:
        server.stop()
    with Experiment.open(url, name="ab", readonly=True) as stored:
        assert len(stored.units()) == 3
