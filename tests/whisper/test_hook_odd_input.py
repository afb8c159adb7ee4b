"""The hook client as Claude Code runs it (a subprocess, stdin JSON) against a live server, on input a real prompt can
carry: a pasted log past the server's 100,000-character limit, a lone surrogate escape (a cut emoji), a byte that is
not UTF-8, a NUL, an over-long session id. Each used to reach the server as a request it refused (422/400), so the
agent got no whisper at all; the hook now sends what the server accepts and the memory comes back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

HOOK = Path(__file__).resolve().parents[2] / "whisper" / "hook.py"
TOKEN = "odd-input-token"
QUESTION = "Which port does the Kestrel staging database listen on?"


@pytest.fixture
def server(live_server, transactional_db, settings, home):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return live_server.url


def run_hook(stdin: bytes, url: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ORMAH_URL": url, "ORMAH_API_TOKEN": TOKEN, "ORMAH_WHISPER_TIMEOUT": "10",
           "ORMAH_LOG_DIR": str(tmp_path / "hook-logs"), "LC_ALL": "C.UTF-8"}
    env.pop("ORMAH_SPACE", None)
    return subprocess.run([sys.executable, str(HOOK), "inject"], input=stdin, capture_output=True, env=env,
                          timeout=60)


def event(prompt: str, **extra) -> bytes:
    return json.dumps({"session_id": "odd", "transcript_path": "/nonexistent/t.jsonl", "cwd": "/tmp",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra}).encode("utf-8")


LOG_LINE = "2026-11-29 12:00:01 DEBUG worker heartbeat ok\n"
CASES = {
    "pasted log past the server limit": event(LOG_LINE * (150_000 // len(LOG_LINE)) + QUESTION),
    "lone surrogate escape": event(QUESTION).replace(b"Kestrel", b"Kestrel \\ud83d"),
    "byte that is not UTF-8": event(QUESTION).replace(b"Kestrel", b"Kestrel \xff"),
    "NUL character": event(QUESTION).replace(b"Kestrel", b"Kestrel \\u0000"),
    "over-long session id": event(QUESTION, session_id="s" * 500),
}


@pytest.mark.parametrize("stdin", CASES.values(), ids=CASES.keys())
def test_odd_but_real_input_still_gets_the_whisper(server, mem, tmp_path, stdin):
    node = mem("The Kestrel staging database listens on port 6543, not the default 5432.", auto_link=False)
    done = run_hook(stdin, server, tmp_path)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout, (tmp_path / "hook-logs" / "hook.log").read_text()
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"(id: {node.short_id})" in context


def test_a_non_string_cwd_is_ignored_not_fatal(server, mem, tmp_path):
    node = mem("The Kestrel staging database listens on port 6543, not the default 5432.", auto_link=False)
    done = run_hook(event(QUESTION, cwd=7), server, tmp_path)
    assert done.returncode == 0 and f"(id: {node.short_id})".encode() in done.stdout
