"""The README's HTTP quick start, run as printed in a fresh shell (no variable set before it,
real curl, a real ``banditkit serve``): the block makes its own token and waits for ``/ready``
itself. Only the port changes (a free one for 8750), and ``.venv`` is this checkout's."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _http_block() -> str:
    text = README.read_text()
    section = text[text.index("## Quick start: the same over HTTP"):]
    return re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL).group(1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(text: str) -> list:
    """The JSON answers curl printed one after another (without newlines between them)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        value, at = decoder.raw_decode(text, at)
        found.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return found


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_readme_http_quick_start_runs_as_printed(tmp_path):
    block = _http_block()
    assert "SECRET=" in block and "/ready" in block  # it sets its token and waits
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")  # the checkout's, as `make` made it
    script = block.replace("8750", str(_free_port()))
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET", "BANDITKIT_TOKEN")}
    process = subprocess.Popen(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        # the shell ends (the server it started holds the pipes); a loaded CI worker beside
        # another module once took over 120 s to start the server, its readers and all four calls
        process.wait(timeout=300)
    finally:  # the block leaves its server running, as a user's shell would
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    created, assigned, recorded, status = _answers(out)
    assert created["name"] == "ab" and created["algorithm"] == "ReplicableElimination"
    assert [u["unit"] for u in assigned["units"]] == [1, 2, 3]
    assert {u["arm"] for u in assigned["units"]} <= {"a", "b", "c"}
    assert recorded == {"recorded": 2}
    assert sum(a["recorded"] for a in status["arms"]) == 2
    assert sum(a["assigned"] for a in status["arms"]) == 3
    # unit 3 waits: the window the README sets is stored, and status says a unit waits
    assert status["outcome_window"] == 86400 and status["waiting_units"]["units"] == 1
    # the server the block started made its files for this user only
    assert oct((tmp_path / "exps" / "ab.sqlite").stat().st_mode & 0o777) == "0o600"
