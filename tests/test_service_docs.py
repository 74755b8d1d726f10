"""docs/service.md's production set-up (overflow, pause, stop and rollout, audit, archive,
delete), run as printed with real curl against a real ``banditkit serve`` with a token."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service_support import Server

DOC = Path(__file__).resolve().parent.parent / "docs" / "service.md"


def _block() -> list[str]:
    text = DOC.read_text()
    section = text[text.index("## Production set-up"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL).group(1)
    return [c.strip() for c in block.splitlines() if c.strip()]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_production_set_up_runs_as_printed(tmp_path):
    secret = "pr0d-s3cret-long-enough"
    server = Server(tmp_path, token=secret)
    try:
        env = {**os.environ, "U": f"http://127.0.0.1:{server.port}",
               "H": f"Authorization: Bearer {secret}", "J": "Content-Type: application/json"}
        answers = []
        for command in _block():
            done = subprocess.run(["bash", "-c", command.replace("curl -s", "curl -sS", 1)],
                                  cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=60)
            assert done.returncode == 0, done.stderr
            try:
                answers.append(json.loads(done.stdout))
            except json.JSONDecodeError:
                answers.append(done.stdout)  # the CSV
    finally:
        server.stop()
    (created, first, paused, resumed, stopped, after, table, audit, archived,
     deleted) = answers
    assert created["name"] == "shop"
    assert len(first["units"]) == 20 and len(first["overflow_units"]) == 2
    assert paused == {"paused": True} and resumed == {"resumed": 1}
    assert stopped["stopped"]["arm"] == "green"
    u1 = next(u for u in first["units"] if u["key"] == "u1")
    assert after["units"][0]["unit"] == u1["unit"] and after["units"][0]["arm"] == u1["arm"]
    assert after["units"][0]["repeated"] and after["units"][1]["arm"] == "green"
    assert after["overflow_units"] == [after["units"][1]["unit"]]
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [r["arm"] for r in rows] == ["control", "red", "green"]
    assert sum(int(r["assigned"]) for r in rows) == 18
    assert [r["action"] for r in audit["audit"]] == ["create", "pause", "resume", "stop"]
    who = "token:" + hashlib.sha256(secret.encode()).hexdigest()[:12]
    assert {r["who"] for r in audit["audit"]} == {who}
    assert archived == {"archived": True} and deleted == {"deleted": "shop"}
    assert not list(tmp_path.glob("shop.sqlite*"))
