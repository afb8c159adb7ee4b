"""Ormah's own command line: its commands only, help on every option, clear errors before anything starts."""

from __future__ import annotations

import argparse
import os
import socket
import sqlite3
import subprocess
import sys

import pytest

from memory.domain.enums import NodeType, Tier
from memory.domain.packing import PackPolicy
from ormah_site import __version__
from ormah_site.cli import parser as cli_parser

DJANGO_ONLY = ("flush", "dbshell", "sqlflush", "startproject", "migrate", "runserver", "shell")


def ormah(*args, home=None, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "ORMAH_API_TOKEN": "", **env}
    if home is not None:
        full["ORMAH_HOME"] = str(home)
    full.pop("ORMAH_DB_PATH", None)
    return subprocess.run([sys.executable, "-m", "ormah_site.cli", *args], env=full, capture_output=True, text=True,
                          timeout=60)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_help_lists_ormah_commands_only():
    out = ormah("--help").stdout
    for command in ("remember", "recall", "show", "serve", "init", "import", "admin"):
        assert f"\n    {command}" in out
    for command in DJANGO_ONLY:
        assert f"\n    {command} " not in out and f"\n    {command}\n" not in out


def test_version_is_ormahs():
    out = ormah("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"ormah {__version__}"


def test_every_option_has_help_and_choices_are_listed():
    commands = subcommands(cli_parser.build_parser("0"))
    for name, sub in commands.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"ormah {name} {action.dest} has no help"
    remember = {a.dest: a for a in commands["remember"]._actions}
    assert remember["type"].choices == [t.value for t in NodeType]
    assert all(t.value in remember["type"].help for t in NodeType)
    assert all(t.value in remember["tier"].help for t in Tier)
    assert cli_parser.PACK_POLICIES == [p.value for p in PackPolicy]


def test_unknown_type_is_refused_before_anything_starts(tmp_path):
    out = ormah("remember", "x", "--type", "nonsense", home=tmp_path)
    assert out.returncode == 2
    assert "invalid choice: 'nonsense'" in out.stderr


def test_missing_home_is_an_error_and_is_not_created(tmp_path):
    home = tmp_path / "typo"
    out = ormah("recall", "anything", home=home)
    assert out.returncode == 1
    assert out.stderr.strip() == f"ormah: ORMAH_HOME {home} does not exist: check ORMAH_HOME, or run `ormah init` " \
                                 "to create it"
    assert not home.exists()


@pytest.mark.parametrize("command", [["recall", "x"], ["show", "abcd"], ["doctor"], ["tasks", "list"], ["rebuild"]])
def test_uninitialised_home_says_run_init(tmp_path, command):
    out = ormah(*command, home=tmp_path)
    assert out.returncode == 1
    assert "run `ormah init`" in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_serve_refuses_a_busy_port(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with sqlite3.connect(tmp_path / "index.sqlite3") as conn:  # what the home check looks for
            conn.execute("CREATE TABLE django_migrations (id INTEGER PRIMARY KEY)")
        out = ormah("serve", "--port", str(port), home=tmp_path)
    assert out.returncode == 1
    assert f"cannot serve on 127.0.0.1:{port}: address already in use" in out.stderr
    assert "serving" not in out.stdout


def test_serve_port_check_names_the_port():
    from ormah_site.cli.serving import port_problem

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        problem = port_problem("127.0.0.1", port)
    assert problem and f"127.0.0.1:{port}" in problem and "address already in use" in problem
    assert port_problem("127.0.0.1", port) is None  # free again


@pytest.mark.parametrize("env, url", [
    ({"ORMAH_URL": "http://127.0.0.1:9001/"}, "http://127.0.0.1:9001"),
    ({"ORMAH_URL": "http://127.0.0.1:9001", "ORMAH_PORT": "9002"}, "http://127.0.0.1:9001"),
    ({"ORMAH_PORT": "8841"}, "http://127.0.0.1:8841"),
    ({"ORMAH_HOST": "::1", "ORMAH_PORT": "8841"}, "http://[::1]:8841"),
    ({}, "http://127.0.0.1:8787"),
])
def test_server_url_is_ormah_url_else_host_and_port(monkeypatch, env, url):
    from whisper.hook_env import server_url

    for key in ("ORMAH_URL", "ORMAH_HOST", "ORMAH_PORT"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert server_url() == url
