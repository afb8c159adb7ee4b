"""The hook and the MCP server started in a project folder that has a `whisper` package of its own (a speech
project laid out as openai-whisper is; session 24 left it, review14 session 25). `python -m` puts the current folder
first on sys.path, so `python -m whisper.hook` there imports the project's package. What setup wires is immune: the
hook by its script's path (whisper/hook.py puts its own parent first) and `ormah mcp` by the installed script or,
without one beside the interpreter, by `python -P -m` (3.11+: no current folder on sys.path). Real subprocesses, a
real folder, a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ormah_site.cli import agents
from whisper import claude_settings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "shadow-token"


@pytest.fixture
def speech(tmp_path):
    """A project folder with a `whisper` package that leaves a mark when imported and has a hook of its own."""
    folder = tmp_path / "speech"
    (folder / "whisper").mkdir(parents=True)
    (folder / "whisper" / "__init__.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('IMPORTED').write_text('yes')\n")
    (folder / "whisper" / "hook.py").write_text("print('the project hook')\n")
    return folder


def environment(speech: Path | None, **extra: str) -> dict[str, str]:
    """This tree on PYTHONPATH (not the editable install's copy, which -P alone would import), after the project's
    folder when given (a shell that sourced the project's environment: -P does not help there, the script's path
    does)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}
    env["PYTHONPATH"] = os.pathsep.join([str(speech), str(ROOT)] if speech else [str(ROOT)])
    return {**env, **extra}


@pytest.fixture
def server(live_server, transactional_db, settings, home):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return live_server.url


def test_the_hook_setup_wires_runs_ormahs_code_in_such_a_folder(server, mem, speech, tmp_path):
    node = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="speech", auto_link=False)
    command = claude_settings.hook_command("inject", python=sys.executable,
                                           env={"ORMAH_URL": server, "ORMAH_API_TOKEN": TOKEN})
    event = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(speech),
             "hook_event_name": "UserPromptSubmit", "prompt": "How is the ormah index stored? Is it sqlite?"}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event), capture_output=True, text=True,
                          cwd=speech, env=environment(speech, ORMAH_LOG_DIR=str(tmp_path)), timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert f"(id: {node.short_id})" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert not (speech / "whisper" / "IMPORTED").exists()


def test_the_documented_module_form_needs_P_there(speech, tmp_path):
    env = environment(None, ORMAH_URL="http://127.0.0.1:9", ORMAH_API_TOKEN=TOKEN, ORMAH_LOG_DIR=str(tmp_path))
    plain = subprocess.run([sys.executable, "-m", "whisper.hook"], input="{}", capture_output=True, text=True,
                           cwd=speech, env=env, timeout=60)
    assert "the project hook" in plain.stdout  # why the docs and the usage line say -P
    (speech / "whisper" / "IMPORTED").unlink()
    safe = subprocess.run([sys.executable, "-P", "-m", "whisper.hook"], input="{}", capture_output=True,
                          text=True, cwd=speech, env=env, timeout=60)
    assert (safe.returncode, safe.stdout) == (0, "")
    assert "usage: python -P -m whisper.hook" in safe.stderr  # Ormah's hook, asked no command
    assert not (speech / "whisper" / "IMPORTED").exists()


def test_the_mcp_command_without_an_installed_script_runs_ormahs_code_there(speech, tmp_path, monkeypatch):
    python = sys.executable
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python3"))  # no `ormah` script beside it
    command = agents.mcp_command()
    assert command[0] == str(tmp_path / "bin" / "python3")
    done = subprocess.run([python, *command[1:], "--help"], capture_output=True, text=True, cwd=speech,
                          env=environment(None), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (speech / "whisper" / "IMPORTED").exists()


def test_setup_replaces_an_entry_that_runs_the_module_form(tmp_path):
    path = tmp_path / "settings.json"
    old = {"type": "command", "command": "python -m whisper.hook inject", "timeout": 10}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [old]}]}}))
    claude_settings.install(path, python="/venv/bin/python", script=Path("/opt/ormah/whisper/hook.py"))
    commands = [h["command"] for e in json.loads(path.read_text())["hooks"]["UserPromptSubmit"] for h in e["hooks"]]
    assert commands == ["/venv/bin/python /opt/ormah/whisper/hook.py inject"]
