"""`ormah mcp` as an agent starts it, for the tests: `python -m ormah_site.cli mcp` as a child process (a home of its
own, the test server's URL and token), spoken to over stdio by the SDK's own client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.mcp.conftest import TOKEN

ROOT = Path(__file__).resolve().parents[2]


def cli_params(url: str, cwd: Path, **env: str) -> StdioServerParameters:
    """The CLI's MCP server run in `cwd` (its home: cwd/client-home) against the server at `url`; `env` adds to it."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ormah_site.cli", "mcp"], cwd=str(cwd),
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "PYTHONPATH": str(ROOT),
             "ORMAH_HOME": str(cwd / "client-home"), "ORMAH_URL": url, "ORMAH_API_TOKEN": TOKEN, **env},
    )


async def tool_calls(params: StdioServerParameters, steps: list[tuple[str, dict]]) -> list[tuple[bool, str]]:
    """Each (tool, arguments) of `steps` called in turn in one session: (is an error, the answer's text) each."""
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        for name, args in steps:
            result = await client.call_tool(name, args)
            out.append((result.isError, result.content[0].text))
    return out


def run_tool_calls(url: str, cwd: Path, steps: list[tuple[str, dict]]) -> list[tuple[bool, str]]:
    """tool_calls against the server at `url` from `cwd`, within 120 s."""
    return asyncio.run(asyncio.wait_for(tool_calls(cli_params(url, cwd), steps), 120))
