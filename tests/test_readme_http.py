"""The README's HTTP quick start, run as printed against a real ``banditkit serve`` on
127.0.0.1 (its port chosen free instead of 8750), with real curl."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service_support import Server

README = Path(__file__).resolve().parent.parent / "README.md"


def _http_block() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Quick start: the same over HTTP"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL).group(1)
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.strip()]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_readme_http_quick_start_runs_as_printed(tmp_path):
    activate, serve, *lines = _http_block()
    # shell variables the curl lines use (the token and content-type headers)
    prelude = "; ".join(c for c in lines if not c.startswith("curl"))
    calls = [c for c in lines if c.startswith("curl")]
    # a new shell finds `banditkit` only inside the virtual environment make creates
    assert activate.startswith("source .venv/bin/activate")
    assert serve == 'mkdir exps && banditkit serve --db exps --port 8750 --token "$SECRET" &'
    (tmp_path / "exps").mkdir()
    secret = "s3cret-long-enough"
    server = Server(tmp_path / "exps", token=secret)
    try:
        env = {**os.environ, "SECRET": secret}
        answers = []
        for command in calls:
            line = command.replace("localhost:8750", f"127.0.0.1:{server.port}")
            done = subprocess.run(["bash", "-c", f"{prelude}; curl -sS {line[len('curl '):]}"],
                                  cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=60)
            assert done.returncode == 0, done.stderr
            answers.append(json.loads(done.stdout))
    finally:
        server.stop()
    created, assigned, recorded, status = answers
    assert created["name"] == "ab" and created["algorithm"] == "ReplicableElimination"
    assert [u["unit"] for u in assigned["units"]] == [1, 2, 3]
    assert {u["arm"] for u in assigned["units"]} <= {"a", "b", "c"}
    assert recorded == {"recorded": 2}
    assert sum(a["recorded"] for a in status["arms"]) == 2
    assert sum(a["assigned"] for a in status["arms"]) == 3
    # unit 3 waits: the window the README sets is stored, and status says a unit waits
    assert status["outcome_window"] == 86400 and status["waiting_units"]["units"] == 1
