"""A process of another user listening on the server's port is sent neither the token nor a prompt (session 23).

Any user may listen on a free loopback port. While Ormah is not running, such a process on its port received the
API token (the key to every memory) and every prompt from the hook, the CLI, the MCP server and `ormah setup
claude --check`, and could answer the hook with text of its choosing. Each client now asks the kernel who listens
there first (whisper.hook.foreign_server). The squatter here is a real HTTP server run as user 65534, which needs
root to start; the check itself is also tested as a non-root user by naming another uid as "mine".
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.security.recorder import NOBODY, assert_the_cli_refuses, squatting
from tests.security.recorder import SQUATTED_TOKEN as TOKEN
from tests.security.recorder import recorded as _recorded
from tests.security.recorder import start as _start_squatter
from whisper.hook import foreign_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def squatter():
    """A real HTTP server of user 65534 on 127.0.0.1 that records what it is sent."""
    with squatting("127.0.0.1") as found:
        yield found


def test_the_hook_sends_nothing_to_another_users_process(squatter, tmp_path):
    proc, port = squatter
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}
    env.update(ORMAH_HOME=str(tmp_path), ORMAH_PORT=str(port), ORMAH_API_TOKEN=TOKEN, ORMAH_LOG_DIR=str(tmp_path))
    event = {"prompt": "what is the staging database password?", "session_id": "s1", "cwd": "/tmp",
             "hook_event_name": "UserPromptSubmit", "transcript_path": str(tmp_path / "t.jsonl")}
    done = subprocess.run([sys.executable, str(ROOT / "whisper" / "hook.py"), "inject"], input=json.dumps(event),
                          capture_output=True, text=True, env=env, timeout=30, check=True)
    assert done.stdout == ""  # nothing of the squatter's reaches the agent
    assert _recorded(proc) == ""  # neither the token nor the prompt reached it
    log = (tmp_path / "hook.log").read_text()
    assert f"uid {NOBODY}" in log and "ForeignServer" in log


def test_the_cli_refuses_instead_of_sending_the_token(squatter, monkeypatch):
    proc, port = squatter
    assert_the_cli_refuses(proc, monkeypatch, ORMAH_PORT=str(port))


def test_the_mcp_server_refuses_instead_of_sending_the_token(squatter):
    from mcp.server.fastmcp.exceptions import ToolError

    from ormah_site.mcp_server import OrmahApi

    proc, port = squatter
    api = OrmahApi(base_url=f"http://localhost:{port}", token=lambda: TOKEN)
    with pytest.raises(ToolError, match=f"uid {NOBODY}"):
        anyio.run(lambda: api.call("POST", "/recall", body={"query": "passwords"}))
    assert _recorded(proc) == ""


def test_the_setup_check_refuses_instead_of_sending_the_token(squatter, tmp_path):
    from ormah_site.cli.agents import _server_problem

    proc, port = squatter
    token_file = tmp_path / "api_token"
    token_file.write_text(TOKEN)
    problem = _server_problem({"ORMAH_URL": f"http://127.0.0.1:{port}", "ORMAH_TOKEN_FILE": str(token_file)})
    assert problem and f"uid {NOBODY}" in problem
    assert _recorded(proc) == ""


@pytest.mark.parametrize("address", ["127.0.0.1", "0.0.0.0", "::", "::1"])
def test_a_listener_of_another_uid_is_named_at_each_loopback_or_wildcard_address(address):
    try:
        proc, port = _start_squatter(address, as_nobody=False)
    except (OSError, ValueError):
        pytest.skip(f"cannot listen on {address} here")
    try:
        me = os.getuid()
        someone_else = me + 1000 if me else None  # root's own listeners are always trusted (Docker's forwarder)
        host = "[::1]" if address in ("::", "::1") else "127.0.0.1"
        if someone_else is not None:
            assert f"uid {me}" in (foreign_server(f"http://{host}:{port}/api", uid=someone_else) or "")
            assert foreign_server(f"http://localhost:{port}", uid=someone_else)
        assert foreign_server(f"http://{host}:{port}/api") is None  # this user's own server
        assert foreign_server(f"http://example.invalid:{port}") is None  # not on this machine: not checked
    finally:
        _recorded(proc)


def test_a_free_port_is_no_problem():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert foreign_server(f"http://127.0.0.1:{port}") is None
