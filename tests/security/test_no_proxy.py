"""The clients of the local server never go through HTTP_PROXY (session 23, review11).

urllib and httpx send a loopback URL through the proxy of HTTP_PROXY / http_proxy unless NO_PROXY names it. On a
laptop with a company proxy set that way, the hook, the CLI, the MCP server and `ormah setup claude --check` handed
the proxy the API token and every prompt, and the LLM jobs handed it memories meant for a local Ollama. The proxy
here is a real HTTP server that records what it gets; the Ormah address is a free port where nothing listens, so
a client that goes direct finds no server and the proxy gets nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import anyio
import pytest

from tests.security.recorder import recorded, start

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "proxied-token-0123456789abcdef"
PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def proxy(monkeypatch):
    """A recording proxy named by every proxy variable, no NO_PROXY, and an Ormah address nothing listens on."""
    proc, port = start("127.0.0.1", as_nobody=False)
    for name in PROXY_VARS:
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("ORMAH_URL", raising=False)
    monkeypatch.setenv("ORMAH_PORT", str(_free_port()))
    monkeypatch.setenv("ORMAH_API_TOKEN", TOKEN)
    monkeypatch.setattr(urllib.request, "_opener", None)  # urlopen's opener reads the proxy variables once
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_the_hook_goes_direct(proxy, tmp_path):
    event = {"prompt": "what is the staging database password?", "session_id": "s1", "cwd": "/tmp",
             "hook_event_name": "UserPromptSubmit"}
    env = {**os.environ, "ORMAH_HOME": str(tmp_path), "ORMAH_LOG_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "whisper" / "hook.py"), "inject"], input=json.dumps(event),
                          capture_output=True, text=True, env=env, timeout=30, check=True)
    assert done.stdout == ""
    assert recorded(proxy) == ""


def test_the_cli_goes_direct(proxy):
    from ormah_site.cli.client import ServerDown, http_call

    with pytest.raises(ServerDown):
        http_call("POST", "/agent/recall", {"query": "passwords"})
    assert recorded(proxy) == ""


def test_the_mcp_server_goes_direct(proxy):
    from mcp.server.fastmcp.exceptions import ToolError

    from ormah_site.mcp_server import OrmahApi

    api = OrmahApi(base_url=f"http://127.0.0.1:{os.environ['ORMAH_PORT']}", token=lambda: TOKEN)
    with pytest.raises(ToolError, match="not running"):
        anyio.run(lambda: api.call("POST", "/recall", body={"query": "passwords"}))
    assert recorded(proxy) == ""


def test_the_setup_check_goes_direct(proxy, tmp_path):
    from ormah_site.cli.agents import _server_problem

    token_file = tmp_path / "api_token"
    token_file.write_text(TOKEN)
    problem = _server_problem({"ORMAH_URL": f"http://127.0.0.1:{os.environ['ORMAH_PORT']}",
                               "ORMAH_TOKEN_FILE": str(token_file)})
    assert problem and "no Ormah server answers" in problem
    assert recorded(proxy) == ""


def _llm(base_url: str):
    from maintenance.conf import LLMConf
    from maintenance.llm.openai import OpenAICompatibleProvider

    return OpenAICompatibleProvider(LLMConf(provider="maintenance.llm.openai.OpenAICompatibleProvider",
                                            base_url=base_url, model="m", api_key="llm-key-0123", timeout=10,
                                            max_retries=0, backoff=0, max_calls_per_run=5, pairs_per_call=8))


def test_a_local_llm_is_reached_direct(proxy):
    from pydantic import BaseModel

    from maintenance.errors import LLMUnavailable

    llm = _llm(f"http://localhost:{os.environ['ORMAH_PORT']}/v1")
    with pytest.raises(LLMUnavailable):
        llm.complete_json(system="s", user="memory text: the staging password is hunter2", schema=BaseModel)
    llm.close()
    assert recorded(proxy) == ""


def test_a_remote_llm_keeps_the_proxy(proxy):
    from pydantic import BaseModel

    from maintenance.errors import LLMUnavailable

    llm = _llm("http://llm.example.invalid/v1")
    with pytest.raises(LLMUnavailable):
        llm.complete_json(system="s", user="u", schema=BaseModel)
    llm.close()
    assert "http://llm.example.invalid/v1/chat/completions" in recorded(proxy)
