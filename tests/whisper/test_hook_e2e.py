"""End to end: the hook client as a subprocess, on real Claude Code hook JSON, against a live server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from whisper.models import WhisperDecisionRow

pytestmark = pytest.mark.slow

HOOK = Path(__file__).resolve().parents[2] / "whisper" / "hook.py"
TOKEN = "e2e-token"


def hook_event(prompt: str, cwd: Path, transcript: Path, session: str = "e2e-session") -> str:
    return json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def run_hook(command: str, stdin: str, url: str, tmp_path: Path,
             timeout: str = "5") -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "ORMAH_URL": url, "ORMAH_API_TOKEN": TOKEN, "ORMAH_WHISPER_TIMEOUT": timeout,
           "ORMAH_LOG_DIR": str(tmp_path / "hook-logs")}
    env.pop("ORMAH_SPACE", None)
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(HOOK), command], input=stdin, capture_output=True, text=True,
                          env=env, timeout=30)
    return done, time.monotonic() - started


@pytest.fixture
def project(tmp_path):
    repo = tmp_path / "ormah"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    return repo


@pytest.fixture
def server(live_server, transactional_db, settings, home):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return live_server.url


def test_inject_prints_the_whisper_for_a_relevant_prompt(server, mem, project, tmp_path):
    node = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)
    done, _ = run_hook("inject", hook_event("How is the ormah index stored? Is it sqlite?", project / "src",
                                            tmp_path / "t.jsonl"), server, tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    output = json.loads(done.stdout)
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert context.startswith("# Ormah whispers") and f"(id: {node.short_id})" in context
    decision = WhisperDecisionRow.objects.get()
    assert (decision.decision, decision.space, decision.session_id, decision.delivered) == (
        "injected", "ormah", "e2e-session", True)


def test_inject_stays_silent_for_chit_chat(server, mem, project, tmp_path):
    mem("Ormah keeps its search index in SQLite.", space="ormah", auto_link=False)
    done, _ = run_hook("inject", hook_event("thanks, that was great!", project, tmp_path / "t.jsonl"), server, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_server_down_is_silent_exit_0_and_fast(tmp_path, project):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done, elapsed = run_hook("inject", hook_event("how is the index stored?", project, tmp_path / "t.jsonl"),
                             f"http://127.0.0.1:{port}", tmp_path, timeout="25")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert elapsed < 20.0  # a refused connection returns at once: it never waits out the 25 s limit
    assert "URLError" in (tmp_path / "hook-logs" / "hook.log").read_text()


def test_a_server_that_never_answers_is_cut_at_the_time_limit(tmp_path, project):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    try:
        done, elapsed = run_hook("inject", hook_event("how is the index stored?", project, tmp_path / "t.jsonl"),
                                 f"http://127.0.0.1:{listener.getsockname()[1]}", tmp_path, timeout="1")
    finally:
        listener.close()
    assert (done.returncode, done.stdout) == (0, "")
    assert 0.9 < elapsed < 20.0  # cut at the 1 s limit (a server that never answers would hold it 30 s)


def test_store_captures_memories_from_the_transcript(server, project, tmp_path):
    from memory.models import NodeRow

    transcript = tmp_path / "e2e-session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content":
                                      "Remember that the release train leaves every second Tuesday."}}) + "\n")
    event = json.dumps({"session_id": "e2e-session", "transcript_path": str(transcript), "cwd": str(project),
                        "hook_event_name": "SessionEnd", "reason": "exit"})
    done, _ = run_hook("store", event, server, tmp_path)
    assert (done.returncode, done.stdout) == (0, "")
    row = NodeRow.objects.get(source="transcript:claude_code")
    assert (row.content, row.space) == ("The release train leaves every second Tuesday.", "ormah")
