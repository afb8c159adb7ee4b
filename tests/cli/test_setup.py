"""`ormah setup claude|codex`: what is written (URL and token file in every command, async store hooks), backups,
idempotence, other settings kept, --print, and the installed hook reaching a server on a non-default port."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ormah_site.cli import agents
from whisper import claude_settings

ENV = {"ORMAH_URL": "http://127.0.0.1:8841", "ORMAH_TOKEN_FILE": "/home/u/.local/share/ormah/api_token"}


def test_claude_install_writes_mcp_and_hooks_with_url_and_token_file(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}))
    changes = agents.claude_install(ENV, project=False, cwd=tmp_path, home=home)
    assert [(c.what, c.changed, c.backup is not None) for c in changes] == [
        ("MCP server", True, True), ("whisper hooks", True, False)]
    state = json.loads((home / ".claude.json").read_text())
    assert state["numStartups"] == 3 and state["mcpServers"]["other"] == {"command": "x"}
    assert state["mcpServers"]["ormah"]["env"] == ENV and state["mcpServers"]["ormah"]["args"] == ["mcp"]
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    for event in ("UserPromptSubmit", "PreCompact", "SessionEnd"):
        (hook,) = hooks[event][0]["hooks"]
        assert hook["command"].startswith("ORMAH_URL=http://127.0.0.1:8841 ORMAH_TOKEN_FILE=/home/u/")
        assert hook.get("async") is (event != "UserPromptSubmit" or None)
    again = agents.claude_install(ENV, project=False, cwd=tmp_path, home=home)
    assert [c.changed for c in again] == [False, False]
    assert len(list(home.glob(".claude.json.bak-*"))) == 1


def test_claude_project_scope_uses_the_project_files(tmp_path):
    agents.claude_install(ENV, project=True, cwd=tmp_path, home=tmp_path / "nohome")
    assert "ormah" in json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert (tmp_path / ".claude" / "settings.local.json").is_file()
    assert not (tmp_path / "nohome").exists()


def test_codex_install_keeps_other_tables_and_replaces_its_own(tmp_path):
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o4"\n\n[mcp_servers.ormah]\ncommand = "old"\n\n[mcp_servers.ormah.env]\nA = "1"\n\n'
                      '[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["serve"]\n')
    (change,) = agents.codex_install(ENV, home=tmp_path)
    assert change.changed and change.backup.read_text().startswith('model = "o4"')
    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "o4"
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["serve"]}
    assert parsed["mcp_servers"]["ormah"]["env"] == ENV and parsed["mcp_servers"]["ormah"]["args"] == ["mcp"]
    before = config.read_text()
    assert agents.codex_install(ENV, home=tmp_path)[0].changed is False
    assert config.read_text() == before


def test_codex_refuses_a_broken_config(tmp_path):
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[mcp_servers\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        agents.codex_install(ENV, home=tmp_path)
    assert config.read_text() == "[mcp_servers\n"


def test_print_writes_nothing(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "ORMAH_PORT": "8841", "ORMAH_HOME": str(tmp_path / "o")}
    env.pop("ORMAH_URL", None)
    for agent in ("claude", "codex"):
        out = subprocess.run([sys.executable, "-m", "ormah_site.cli", "setup", agent, "--print"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "ORMAH_URL" in out.stdout and "http://127.0.0.1:8841" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.slow
def test_installed_hook_on_a_non_default_port_gets_the_memory_back(live_server, transactional_db, settings, home,
                                                                    mem, tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text("setup-token\n")
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": "setup-token"}
    port = urlsplit(live_server.url).port
    assert port != 8787
    monkeypatch.delenv("ORMAH_URL", raising=False)
    monkeypatch.setenv("ORMAH_PORT", str(port))
    monkeypatch.setenv("ORMAH_TOKEN_FILE", str(token_file))
    env = claude_settings.hook_env()
    assert {k: env[k] for k in ("ORMAH_URL", "ORMAH_TOKEN_FILE")} == {  # + ORMAH_LOG_DIR: the suite sets ORMAH_HOME
        "ORMAH_URL": f"http://127.0.0.1:{port}", "ORMAH_TOKEN_FILE": str(token_file)}
    node = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)
    project = tmp_path / "ormah"
    (project / ".git").mkdir(parents=True)
    agents.claude_install(env, project=True, cwd=project, home=tmp_path / "home")
    command = agents.hook_command_installed(project / ".claude" / "settings.local.json")

    payload = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project),
               "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
               "prompt": "How is the ormah index stored? Is it sqlite?"}
    agent_env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}  # the agent knows nothing
    agent_env["ORMAH_LOG_DIR"] = str(tmp_path / "logs")
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          env=agent_env, cwd=project, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"(id: {node.short_id})" in context and "FTS5" in context
    monkeypatch.chdir(project)
    ok, report = agents.check("claude", env, project=True, cwd=project, home=tmp_path / "home",
                              prompt="How is the ormah index stored? Is it sqlite?")
    assert ok, report
    assert "token accepted" in report and f"(id: {node.short_id})" in report


def test_the_check_says_why_the_server_refused_a_host_name(live_server, transactional_db, settings, home, tmp_path):
    """ORMAH_URL naming this machine by a name the server does not answer to: --check said only "answered 400"
    (review14, session 25); it passes on the server's reason."""
    import socket

    name = socket.gethostname()
    try:
        loopback = all(a[4][0].startswith("127.") for a in socket.getaddrinfo(name, None, socket.AF_INET))
    except OSError:
        loopback = False
    if not loopback or name == "localhost":
        pytest.skip("this machine's name does not resolve to a loopback address")
    token_file = tmp_path / "token"
    token_file.write_text("setup-token\n")
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": "setup-token"}
    url = f"http://{name}:{urlsplit(live_server.url).port}"
    problem = agents._server_problem({"ORMAH_URL": url, "ORMAH_TOKEN_FILE": str(token_file)})
    assert problem and "answered 400" in problem and "ORMAH_ALLOWED_HOSTS" in problem
