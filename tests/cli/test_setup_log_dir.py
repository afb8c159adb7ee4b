"""With ORMAH_HOME set when `ormah setup claude` runs, the installed hook logs to $ORMAH_HOME/logs/hook.log, where the
server's own log is: the hook command carried only ORMAH_URL and ORMAH_TOKEN_FILE, so the hook, started by an agent
whose environment knows nothing of Ormah, wrote hook.log under ~/.local/share/ormah (review7)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

from whisper import claude_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_installed_hook_logs_under_the_chosen_home(tmp_path, monkeypatch):
    chosen = tmp_path / "ormah-home"
    agent_home = tmp_path / "agent-home"
    agent_home.mkdir()
    for name in ("ORMAH_URL", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORMAH_HOME", str(chosen))
    monkeypatch.setenv("ORMAH_PORT", str(free_port()))  # nothing listens: the hook logs the refusal
    settings_file = tmp_path / "settings.json"
    claude_settings.install(settings_file, env=claude_settings.hook_env())
    command = json.loads(settings_file.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]

    agent_env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}
    agent_env["HOME"] = str(agent_home)
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps({"prompt": "where is the index?"}),
                          capture_output=True, text=True, env=agent_env, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "Connection refused" in (chosen / "logs" / "hook.log").read_text()
    assert not (agent_home / ".local" / "share" / "ormah").exists()


def test_the_default_home_adds_nothing_to_the_command(monkeypatch):
    for name in ("ORMAH_URL", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert set(claude_settings.hook_env()) == {"ORMAH_URL", "ORMAH_TOKEN_FILE"}
    assert Path(claude_settings.hook_env()["ORMAH_TOKEN_FILE"]).name == "api_token"
