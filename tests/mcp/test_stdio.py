"""The real thing: `python manage.py mcp` as a subprocess, spoken to over stdio by the SDK's client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memory.models import NodeRow
from ormah_site import __version__
from tests.mcp.conftest import TOKEN

pytestmark = pytest.mark.slow
MANAGE = Path(settings.BASE_DIR) / "manage.py"


def _session(ormah_server: str, cwd: Path, client_home: Path, **env) -> StdioServerParameters:
    """The server as an MCP client would start it: its own ORMAH_HOME, the token and port from the environment."""
    return StdioServerParameters(
        command=sys.executable, args=[str(MANAGE), "mcp"], cwd=str(cwd),
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(client_home), "ORMAH_HOME": str(client_home / "ormah"),
             "ORMAH_API_TOKEN": TOKEN, "ORMAH_HOST": "127.0.0.1", "ORMAH_PORT": str(urlsplit(ormah_server).port),
             "ORMAH_WATCH": "false", **env},
    )


async def _round_trip(params: StdioServerParameters) -> dict:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        started = await client.initialize()
        tools = await client.list_tools()
        remembered = await client.call_tool("remember", {"content": "The billing service retries webhooks "
                                                                    "five times with exponential backoff"})
        recalled = await client.call_tool("recall", {"query": "how many times are webhooks retried"})
        return {"tools": [t.name for t in tools.tools], "remembered": remembered, "recalled": recalled,
                "server": started.serverInfo}


def test_remember_then_recall_over_stdio(ormah_server, tmp_path):
    project = tmp_path / "billing-service"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    result = asyncio.run(asyncio.wait_for(_round_trip(_session(ormah_server, project / "src", tmp_path)), 60))
    assert result["tools"][:3] == ["remember", "recall", "recall_node"] and len(result["tools"]) == 14
    assert (result["server"].name, result["server"].version) == ("ormah", __version__)  # not the mcp package's
    assert not result["remembered"].isError, result["remembered"].content[0].text
    node_id = result["remembered"].content[0].text.split("ID: ")[1].split()[0]
    assert NodeRow.objects.get(uid=node_id).space == "billing-service"
    recalled = result["recalled"].content[0].text
    assert recalled.startswith("Found ")
    assert f"ID: {node_id}" in recalled


def test_ormah_space_wins_over_the_folder(ormah_server, tmp_path):
    async def remember(params):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await client.call_tool("remember", {"content": "Search uses BM25 weights 10, 5, 1"})

    params = _session(ormah_server, tmp_path, tmp_path, ORMAH_SPACE="search")
    text = asyncio.run(asyncio.wait_for(remember(params), 60)).content[0].text
    assert NodeRow.objects.get(uid=text.split("ID: ")[1].split()[0]).space == "search"
