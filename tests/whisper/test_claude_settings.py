"""`ormah whisper setup`: hooks written into Claude Code's settings idempotently, with a backup."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from django.core.management import call_command

from whisper import claude_settings

SCRIPT = Path("/opt/ormah/whisper/hook.py")


def test_hooks_are_added_next_to_existing_settings(tmp_path):
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    other = {"hooks": [{"type": "command", "command": "echo hi"}]}
    path.write_text(json.dumps({"model": "opus", "hooks": {"UserPromptSubmit": [other]}}))
    changed, backup = claude_settings.install(path, python="/venv/bin/python", script=SCRIPT,
                                              now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert (changed, backup.name) == (True, "settings.local.json.bak-20260102-030405")
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": {
        "UserPromptSubmit": [other, {"hooks": [{"type": "command", "command": "/venv/bin/python "
                                                "/opt/ormah/whisper/hook.py inject", "timeout": 10}]}],
        "PreCompact": [{"matcher": "", "hooks": [{"type": "command", "command": "/venv/bin/python "
                                                  "/opt/ormah/whisper/hook.py store", "timeout": 300,
                                                  "async": True}]}],
        "SessionEnd": [{"matcher": "", "hooks": [{"type": "command", "command": "/venv/bin/python "
                                                  "/opt/ormah/whisper/hook.py store", "timeout": 300,
                                                  "async": True}]}],
    }}


def test_running_setup_twice_changes_nothing_the_second_time(tmp_path):
    path = tmp_path / "settings.json"
    assert claude_settings.install(path, python="py", script=SCRIPT)[0] is True
    before = path.read_text()
    assert claude_settings.install(path, python="py", script=SCRIPT) == (False, None)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_new_interpreter_replaces_our_old_entry(tmp_path):
    path = tmp_path / "settings.json"
    claude_settings.install(path, python="old-python", script=SCRIPT)
    claude_settings.install(path, python="new-python", script=SCRIPT)
    entries = json.loads(path.read_text())["hooks"]["UserPromptSubmit"]
    assert [h["command"] for e in entries for h in e["hooks"]] == ["new-python /opt/ormah/whisper/hook.py inject"]


def test_settings_paths(tmp_path):
    assert claude_settings.settings_path(global_=True, home=tmp_path) == tmp_path / ".claude" / "settings.json"
    assert claude_settings.settings_path(global_=False, cwd=tmp_path) == tmp_path / ".claude" / "settings.local.json"


def test_the_setup_command_writes_the_real_script_path(tmp_path, capsys):
    target = tmp_path / "s.json"
    call_command("whisper", "setup", "--path", str(target))
    command = json.loads(target.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command.endswith("whisper/hook.py inject")
    assert Path(command.split()[-2]).is_file()
    assert "Wrote whisper hooks" in capsys.readouterr().out


def test_a_settings_file_that_is_a_link_stays_one(tmp_path):
    """~/.claude/settings.json kept in a dotfiles repository and linked: setup writes the file the link names and
    keeps the link (review14, session 25: the link was replaced by a file, the repository's copy left without the
    hooks); the backup holds the old content."""
    kept = tmp_path / "dotfiles" / "settings.json"
    kept.parent.mkdir()
    kept.write_text('{"theme": "dark"}\n')
    link = tmp_path / "home" / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(kept)
    changed, backup = claude_settings.install(link, python="python3", script=SCRIPT)
    assert changed and link.is_symlink() and link.resolve() == kept
    written = json.loads(kept.read_text())
    assert written["theme"] == "dark" and "UserPromptSubmit" in written["hooks"]
    assert backup is not None and json.loads(backup.read_text()) == {"theme": "dark"}
    assert claude_settings.install(link, python="python3", script=SCRIPT) == (False, None)
