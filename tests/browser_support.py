"""Debian's headless Chromium (which ``make test`` installs) for the tests that look at a page
as a person would: one way to start it, so every test gets the same flags and the same message
when it is missing."""

from __future__ import annotations

import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(tmp_path, *args: str) -> str:
    """Run headless Chromium with ``args`` (e.g. ``--dump-dom URL`` or ``--screenshot=FILE
    URL``) in a fresh profile under ``tmp_path``; its standard output. Fails the test, never
    skips it, when Chromium is missing or exits with an error."""
    if CHROMIUM is None:
        pytest.fail("no chromium: `make chromium` installs Debian's package (make test runs it)")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
