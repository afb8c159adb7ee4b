"""`make test` installs what pip cannot (scripts/system-deps.sh): quiet when Chromium is there, one clear line if not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "system-deps.sh"


def run(**env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT)], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=30)


def test_present_chromium_needs_nothing(tmp_path):
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    result = run(ORMAH_CHROMIUM=str(browser))
    assert result.returncode == 0
    assert result.stdout == result.stderr == ""


def test_missing_chromium_without_apt_says_what_to_install(tmp_path):
    result = run(ORMAH_CHROMIUM=str(tmp_path / "absent"), ORMAH_NO_APT="1")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "apt-get install -y chromium" in lines[0]


def test_makefile_runs_it_before_the_suite():
    makefile = (SCRIPT.parents[1] / "Makefile").read_text()
    assert "test: setup system-deps" in makefile
    assert "./scripts/system-deps.sh" in makefile
