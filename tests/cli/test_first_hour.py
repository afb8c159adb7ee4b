"""What a new user met in their first hour with `ormah` (session 23, docs/first-hour.md): help that says what a
command does and the truth about its options, errors in one voice naming the command, lists that show where a
memory's start was cut, and a doctor line saying what to do with a malformed file."""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ormah_site.cli import agents
from ormah_site.cli.parser import build_parser
from ormah_site.cli.render import remembered, self_text
from tests.support.doctor import doctor_checks
from whisper import claude_settings


def ormah(*args, home=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "ORMAH_API_TOKEN": ""}
    for key in ("ORMAH_DB_PATH", "ORMAH_TOKEN_FILE", "ORMAH_DATABASE_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(key, None)
    if home is not None:
        env["ORMAH_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "ormah_site.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return dict(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)


def test_every_command_help_says_what_the_command_does():
    for name, command in subcommands(build_parser("0")).items():
        if name == "admin":  # Django's own help answers `ormah admin help`
            continue
        assert command.description, f"`ormah {name} --help` says nothing about what it does"
        assert " ".join(command.description.split()) in " ".join(command.format_help().split())


def test_forget_restore_help_says_a_prefix_will_do():
    restore = next(a for a in subcommands(build_parser("0"))["forget"]._actions if a.dest == "restore")
    assert "prefix" in restore.help and "full id" not in restore.help


def test_init_and_mcp_help_say_what_a_new_user_needs():
    commands = subcommands(build_parser("0"))
    assert "Safe to run again" in commands["init"].format_help()
    mcp = " ".join(commands["mcp"].format_help().split())
    assert "an agent starts it" in mcp and "ormah setup claude|codex" in mcp and "ORMAH_URL" in mcp


@pytest.mark.parametrize("args, command", [(["remember", "x", "--bogus"], "remember"),
                                           (["recall", "two", "words"], "recall"),
                                           (["show", "abcd", "--markdwn"], "show")])
def test_an_unknown_argument_is_reported_with_its_commands_usage(tmp_path, args, command):
    done = ormah(*args, home=tmp_path / "none")
    assert done.returncode == 2
    assert f"usage: ormah {command} " in done.stderr
    assert f"ormah {command}: error: unrecognized arguments: {args[-1]}" in done.stderr


@pytest.mark.slow
def test_errors_of_the_django_commands_read_like_every_other(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert ormah("admin", "migrate", "--verbosity", "0", home=home).returncode == 0
    restore = ormah("restore", "nosuch", home=home)
    export = ormah("export", str(tmp_path / "out.txt"), home=home)
    assert restore.returncode == 1 and restore.stderr.startswith("ormah: No backup 'nosuch' in "), restore.stderr
    assert export.returncode == 1 and export.stderr.startswith("ormah: out.txt: the export must end in "), export.stderr
    assert "CommandError" not in restore.stderr + export.stderr


def test_a_long_memory_is_named_by_its_start_cut_at_a_word():
    content = "Deploys of the billing service happen on Tuesdays after the standup, never on Fridays"
    node = {"id": "05529912-4707-4b18-b451-ad1448a5580f", "type": "procedure", "title": None, "content": content}
    first = remembered({"node": node, "auto_links": []}).splitlines()[0]
    assert first == "Remembered [procedure]: Deploys of the billing service happen on Tuesdays after the…"
    me = {"id": "617ddb59-086b-4554-b872-328ffe983048", "type": "person", "title": "Self", "tier": "core",
          "space": None, "created": "2026-11-29T18:24:00Z", "content": "Me"}
    row = {"type": "preference", "title": None, "content": "I prefer tabs\nover spaces", "short_id": "7131e17f",
           "tier": "working"}
    assert "  [preference] I prefer tabs  (7131e17f, working)" in self_text({"node": me, "defines": [row]})


def test_doctor_says_what_to_do_with_a_malformed_file(home, db):
    nodes = home / "memory" / "nodes"
    nodes.mkdir(parents=True, exist_ok=True)
    (nodes / "notes.md").write_text("just some notes, no front matter\n")
    check = doctor_checks()["malformed_files"]
    assert check["ok"] is False
    assert f"{nodes / 'notes.md'}: no front matter" in check["detail"]
    assert "left untouched" in check["detail"] and "fix the front matter" in check["detail"]
    assert "`ormah import FOLDER`" in check["detail"]
    assert (nodes / "notes.md").read_text() == "just some notes, no front matter\n"


@pytest.mark.slow
def test_a_person_is_told_once_when_no_server_answers_and_a_script_is_not(tmp_path):
    from tests.support.ports import free_port

    home = tmp_path / "home"
    home.mkdir()
    assert ormah("admin", "migrate", "--verbosity", "0", home=home).returncode == 0
    port = free_port()
    env = {**os.environ, "ORMAH_HOME": str(home), "ORMAH_PORT": str(port), "ORMAH_API_TOKEN": ""}
    for key in ("ORMAH_URL", "ORMAH_DB_PATH", "ORMAH_TOKEN_FILE", "ORMAH_DATABASE_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(key, None)
    controller, terminal = pty.openpty()
    try:
        at_terminal = subprocess.run([sys.executable, "-m", "ormah_site.cli", "show", "abcd"], env=env,
                                     stdout=subprocess.PIPE, stderr=terminal, timeout=120)
        said = os.read(controller, 65536).decode()
    finally:
        os.close(terminal)
        os.close(controller)
    scripted = ormah("show", "abcd", home=home)
    note = f"ormah: no server answers at http://127.0.0.1:{port}, so this runs in-process"
    assert at_terminal.returncode == 1 and said.count(note) == 1, said
    assert "No memory with id abcd" in said
    assert scripted.returncode == 1 and note not in scripted.stderr and "No memory with id abcd" in scripted.stderr


@pytest.mark.slow
def test_a_forgotten_memory_is_named_as_forgotten_with_the_way_back(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert ormah("admin", "migrate", "--verbosity", "0", home=home).returncode == 0
    made = ormah("remember", "The staging database listens on port 6543", "--json", home=home)
    node_id = json.loads(made.stdout)["node"]["id"]
    assert ormah("forget", node_id[:6], home=home).returncode == 0

    shown = ormah("show", node_id[:6], home=home)
    marked = ormah("outdated", node_id, home=home)
    unknown = ormah("show", "ffff0000", home=home) if not node_id.startswith("ffff0000") else None

    assert shown.returncode == 1
    assert shown.stderr == (f"ormah: No memory with id {node_id[:6]}: it was forgotten; "
                            f"`ormah forget --restore {node_id[:6]}` brings it back\n")
    assert marked.returncode == 1 and f"`ormah forget --restore {node_id}` brings it back" in marked.stderr
    assert unknown is None or unknown.stderr == "ormah: No memory with id ffff0000\n"
    assert ormah("forget", "--restore", node_id[:6], home=home).returncode == 0


def test_the_first_make_run_says_it_is_installing_before_its_quiet_minute(tmp_path):
    root = Path(__file__).resolve().parents[2]
    # Run from `make test` this make is a sub-make: MAKELEVEL and MAKEFLAGS come from the parent and make prints
    # "make[1]: Entering directory ..." first (the session 23 CI failure). Plan it as a person's own `make run` would.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    planned = subprocess.run(["make", "--no-print-directory", "-n", f"VENV={tmp_path / 'venv'}", "run"], cwd=root,
                             capture_output=True, text=True, check=True, env=env).stdout.splitlines()
    assert "Installing Ormah and its dependencies" in planned[0], planned
    assert planned[1].endswith(f"-m venv {tmp_path / 'venv'}")


@pytest.mark.slow
def test_recall_names_the_date_options_the_person_typed(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert ormah("admin", "migrate", "--verbosity", "0", home=home).returncode == 0
    after = ormah("recall", "tabs", "--after", "yesterday", home=home)
    before = ormah("recall", "tabs", "--before", "2026-13-01", home=home)
    assert after.returncode == 1 and after.stderr.startswith("ormah: --after: Input should be a valid datetime"), \
        after.stderr
    assert before.returncode == 1 and before.stderr.startswith("ormah: --before: "), before.stderr


def test_a_silent_check_says_how_to_see_a_memory_come_back(live_server, transactional_db, settings, home, mem,
                                                           tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text("setup-token\n")
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": "setup-token"}
    monkeypatch.delenv("ORMAH_URL", raising=False)
    monkeypatch.setenv("ORMAH_PORT", str(urlsplit(live_server.url).port))
    monkeypatch.setenv("ORMAH_TOKEN_FILE", str(token_file))
    env = claude_settings.hook_env()
    mem("Deploys of the billing service happen on Tuesdays after the standup", auto_link=False)
    project = tmp_path / "proj"
    project.mkdir()
    agents.claude_install(env, project=True, cwd=project, home=tmp_path / "home")
    monkeypatch.chdir(project)
    ok, report = agents.check("claude", env, project=True, cwd=project, home=tmp_path / "home",
                              prompt="Write a haiku about autumn leaves")
    assert ok, report
    assert "The agent would see nothing for it" in report
    assert 'ask what one of yours answers: `ormah setup claude --check --prompt "..."`' in report
