"""Log files are 0600 and a hook that runs before `ormah init` makes its folders 0700 (session 23, review11).

The hook created the Ormah home and `logs/` with the umask's mode (0755) when it ran before `ormah init`, which
keeps a home's mode, and every log file was created 0644: every user of the machine could then read ormah.log
(memory file names at INFO, memory text and prompts at DEBUG) and hook.log.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ormah_site.logfiles import SharedRotatingFileHandler

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _record(text: str) -> logging.LogRecord:
    return logging.LogRecord("ormah.test", logging.INFO, __file__, 1, text, None, None)


def test_a_hook_before_init_makes_the_home_and_logs_private(tmp_path):
    home = tmp_path / "user"
    home.mkdir(mode=0o755)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ORMAH_PORT": "9"}
    event = {"prompt": "the staging database password is hunter2", "session_id": "s1", "cwd": str(tmp_path)}
    subprocess.run(["sh", "-c", f"umask 022; exec {sys.executable} {ROOT / 'whisper' / 'hook.py'} inject"],
                   input=json.dumps(event), text=True, env=env, timeout=30, check=True, capture_output=True)
    ormah = home / ".local" / "share" / "ormah"
    assert mode(ormah) == 0o700 and mode(ormah / "logs") == 0o700
    assert mode(ormah / "logs" / "hook.log") == 0o600
    assert (ormah / "logs" / "hook.log").read_text()  # the failure (no server) is logged


def test_the_hook_makes_a_readable_hook_log_private(tmp_path):
    log = tmp_path / "hook.log"
    log.write_text("")
    log.chmod(0o644)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "ORMAH_LOG_DIR": str(tmp_path),
           "ORMAH_PORT": "9"}
    subprocess.run([sys.executable, str(ROOT / "whisper" / "hook.py"), "inject"], input='{"prompt": "hello there"}',
                   text=True, env=env, timeout=30, check=True, capture_output=True)
    assert mode(log) == 0o600


def test_the_server_log_is_created_0600(tmp_path, umask_022):
    handler = SharedRotatingFileHandler(str(tmp_path / "ormah.log"), maxBytes=200, backupCount=2)
    try:
        for n in range(5):
            handler.emit(_record(f"record {n} " + "x" * 80))
    finally:
        handler.close()
    files = sorted(tmp_path.glob("ormah.log*"))
    assert {p.name for p in files} >= {"ormah.log", "ormah.log.1"}
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_a_readable_server_log_is_made_private_again(tmp_path, umask_022):
    log = tmp_path / "ormah.log"
    log.write_text("old line\n")
    log.chmod(0o644)
    handler = SharedRotatingFileHandler(str(log))
    try:
        handler.emit(_record("new line"))
    finally:
        handler.close()
    assert mode(log) == 0o600
    assert log.read_text() == "old line\nnew line\n"


def test_without_backups_the_log_starts_over_and_stays_private(tmp_path, umask_022):
    log = tmp_path / "ormah.log"
    handler = SharedRotatingFileHandler(str(log), maxBytes=50, backupCount=0)
    try:
        handler.emit(_record("a" * 40))
        handler.emit(_record("b" * 40))
    finally:
        handler.close()
    assert log.read_text() == "b" * 40 + "\n"
    assert mode(log) == 0o600


def test_a_full_hook_log_starts_over_and_keeps_one_older_file(tmp_path):
    """hook.log grew a line a prompt for as long as the server was down (review14, session 25); past
    1 MiB (whisper.hook.HOOK_LOG_BYTES) it moves to hook.log.1 (private as it was) and a new private hook.log starts."""
    full = 1024 * 1024
    log = tmp_path / "hook.log"
    log.write_text("x" * full)
    log.chmod(0o600)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "ORMAH_LOG_DIR": str(tmp_path),
           "ORMAH_PORT": "9"}
    for _ in range(2):
        subprocess.run([sys.executable, str(ROOT / "whisper" / "hook.py"), "inject"], input='{"prompt": "hello"}',
                       text=True, env=env, timeout=30, check=True, capture_output=True)
    assert (tmp_path / "hook.log.1").read_text() == "x" * full
    assert log.read_text().count("hook inject failed") == 2 and log.stat().st_size < 4096
    assert mode(log) == 0o600 and mode(tmp_path / "hook.log.1") == 0o600
