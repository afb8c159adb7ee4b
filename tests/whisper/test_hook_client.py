"""The hook client against a stub HTTP server (the end-to-end tests use the real one): request, output, limits."""

from __future__ import annotations

import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from whisper import hook


class Stub(BaseHTTPRequestHandler):
    answers: dict = {}
    seen: list = []
    delay = 0.0

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        Stub.seen.append((self.path, self.headers.get("Authorization"), body))
        time.sleep(Stub.delay)
        payload = json.dumps(Stub.answers.get(self.path, {})).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub(monkeypatch, tmp_path):
    server = HTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Stub.answers, Stub.seen, Stub.delay = {}, [], 0.0
    for name in ("ORMAH_SPACE", "ORMAH_TOKEN_FILE", "ORMAH_WHISPER_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORMAH_URL", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("ORMAH_API_TOKEN", "tok")
    monkeypatch.setenv("ORMAH_LOG_DIR", str(tmp_path / "logs"))
    yield Stub
    server.shutdown()


def run(monkeypatch, capsys, command: str, event) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO(event if isinstance(event, str) else json.dumps(event)))
    assert hook.main([command]) == 0
    return capsys.readouterr().out


def test_inject_prints_the_hook_output_and_confirms_delivery(stub, monkeypatch, capsys, tmp_path):
    stub.answers["/api/agent/whisper"] = {"text": "# Ormah whispers\n- x", "whisper_log_id": 12, "store_due": False}
    out = run(monkeypatch, capsys, "inject", {"prompt": "how do we deploy?", "session_id": "s1",
                                              "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"})
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                      "additionalContext": "# Ormah whispers\n- x"}}
    (path, auth, body), (ack_path, _, _) = stub.seen
    assert (path, auth, ack_path) == ("/api/agent/whisper", "Bearer tok", "/api/agent/whisper/12/delivered")
    assert (body["prompt"], body["session_id"], body["space"], body["cwd"]) == (
        "how do we deploy?", "s1", tmp_path.name, str(tmp_path))
    assert 4000 < body["timeout_ms"] < 5000


def test_silence_prints_nothing_and_sends_no_confirmation(stub, monkeypatch, capsys):
    stub.answers["/api/agent/whisper"] = {"text": "", "whisper_log_id": 3}
    assert run(monkeypatch, capsys, "inject", {"prompt": "thanks"}) == ""
    assert [s[0] for s in stub.seen] == ["/api/agent/whisper"]


def test_the_nudge_is_appended_or_sent_alone(stub, monkeypatch, capsys):
    stub.answers["/api/agent/whisper"] = {"text": "", "nudge": "Remember to remember."}
    out = run(monkeypatch, capsys, "inject", {"prompt": "next step"})
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == "Remember to remember."
    stub.answers["/api/agent/whisper"] = {"text": "T", "nudge": "Remember to remember."}
    out = run(monkeypatch, capsys, "inject", {"prompt": "next step"})
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == "T\n\n---\nRemember to remember."


def test_empty_prompt_and_bad_json_stay_silent_without_a_request(stub, monkeypatch, capsys):
    assert run(monkeypatch, capsys, "inject", {"prompt": "  "}) == ""
    assert run(monkeypatch, capsys, "inject", "{not json") == ""
    assert stub.seen == []


def test_a_slow_server_is_cut_at_the_time_limit(stub, monkeypatch, capsys, tmp_path):
    stub.delay = 8.0
    monkeypatch.setenv("ORMAH_WHISPER_TIMEOUT", "0.5")
    started = time.monotonic()
    assert run(monkeypatch, capsys, "inject", {"prompt": "how do we deploy?"}) == ""
    assert time.monotonic() - started < 6.0  # cut well before the server's answer (slack for a loaded machine)
    assert "hook inject failed" in (tmp_path / "logs" / "hook.log").read_text()


def test_store_posts_the_transcript_and_final_events_capture_everything(stub, monkeypatch, capsys):
    run(monkeypatch, capsys, "store", {"transcript_path": "/t/s.jsonl", "session_id": "s1",
                                       "hook_event_name": "SessionEnd"})
    run(monkeypatch, capsys, "store", {"transcript_path": "/t/s.jsonl", "session_id": "s1"})
    assert [(p, b["transcript_path"], b["min_user_turns"]) for p, _, b in stub.seen] == [
        ("/api/agent/ingest/transcript", "/t/s.jsonl", 1), ("/api/agent/ingest/transcript", "/t/s.jsonl", None)]


@pytest.mark.parametrize(("layout", "cwd", "space"), [
    ("repo/.git", "repo/src/pkg", "repo"),
    ("plain", "plain", "plain"),
])
def test_space_is_the_git_top_level_name_or_the_folder_name(tmp_path, monkeypatch, layout, cwd, space):
    monkeypatch.delenv("ORMAH_SPACE", raising=False)
    (tmp_path / layout).mkdir(parents=True)
    (tmp_path / cwd).mkdir(parents=True, exist_ok=True)
    assert hook.space_for(str(tmp_path / cwd), home=tmp_path / "home") == space


def test_home_and_root_have_no_space(tmp_path, monkeypatch):
    monkeypatch.delenv("ORMAH_SPACE", raising=False)
    assert hook.space_for(str(tmp_path), home=tmp_path) is None
    assert hook.space_for("/", home=tmp_path) is None


def test_configured_space_wins(monkeypatch):
    monkeypatch.setenv("ORMAH_SPACE", "billing")
    assert hook.space_for("/anything") == "billing"


def test_token_from_the_token_file(tmp_path, monkeypatch):
    monkeypatch.delenv("ORMAH_API_TOKEN", raising=False)
    (tmp_path / "api_token").write_text("from-file\n")
    monkeypatch.setenv("ORMAH_TOKEN_FILE", str(tmp_path / "api_token"))
    assert hook.api_token() == "from-file"


@pytest.mark.parametrize(("raw", "limit"), [(None, 5.0), ("2", 2.0), ("0.01", 0.1), ("60", 10.0), ("x", 5.0)])
def test_time_limit(monkeypatch, raw, limit):
    if raw is None:
        monkeypatch.delenv("ORMAH_WHISPER_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("ORMAH_WHISPER_TIMEOUT", raw)
    assert hook.time_limit() == limit


def test_the_hook_client_imports_no_django_numpy_or_models():
    """Loaded by its path from elsewhere, as Claude Code runs it: the standard library and its own copy's stand-alone
    siblings (whisper/hook_env.py, hook_net.py), never another installed whisper's (this venv's editable one)."""
    import subprocess
    import sys

    code = (f"import importlib.util, sys; spec = importlib.util.spec_from_file_location('hook', {hook.__file__!r}); "
            "spec.loader.exec_module(importlib.util.module_from_spec(spec)); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'django', 'numpy', 'fastembed', 'onnxruntime', 'memory', 'maintenance', 'ormah_site', 'pydantic'})); "
            "print(sorted((m, sys.modules[m].__file__) for m in sys.modules if m.split('.')[0] == 'whisper'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=30)
    folder = str(Path(hook.__file__).parent)
    siblings = [(f"whisper{name}", f"{folder}/{file}") for name, file in
                (("", "__init__.py"), (".hook_env", "hook_env.py"), (".hook_net", "hook_net.py"))]
    assert (done.returncode, done.stdout.splitlines()) == (0, ["[]", str(siblings)]), done.stderr
