"""The MCP server (`ormah mcp`): Ormah's tools over stdio, each a thin call to the local REST API.

It holds no memory logic: it detects the client's project space once at start-up, passes it as the default
space, calls /api/agent/* with the bearer token, and renders the JSON as short text an agent reads.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from io import TextIOWrapper
from pathlib import Path

import anyio
import httpx
from django.conf import settings
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError

from memory.conf import get_conf
from memory.spaces import git_toplevel, space_detect
from ormah_site.mcp_tools import ApiError, OrmahMCP, register
from ormah_site.tokens import token_current
from whisper.hook_net import foreign_server

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 30.0

INSTRUCTIONS = """Ormah is the user's long-term memory, shared by all their agents.
- recall before answering questions about the user, their projects, past decisions or preferences.
- remember at save points (a decision made, a bug fixed, a preference or correction stated); keep each memory
  atomic (one fact), pick a type, and use about_self=true for facts about the user.
- recall_node fetches one memory with its connections (this counts as using it); mark_outdated retires a memory
  that no longer holds instead of contradicting it silently; update_memory corrects one; forget removes a wrong
  one; list_recent shows what was stored lately; connect links related memories.
Memories default to the current project's space; pass space="global" for things that hold everywhere."""


# ---------------------------------------------------------------------------
# Where the API is and which space the client works in
# ---------------------------------------------------------------------------

def api_base_url() -> str:
    """ORMAH_URL, else http://HOST:PORT of the local server (a wildcard bind address is reached on loopback)."""
    if getattr(settings, "SERVER_URL", None):
        return settings.SERVER_URL.rstrip("/")
    host = settings.HOST or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.PORT}"


def client_space(cwd: Path | None = None) -> str | None:
    """The client's project: ORMAH_SPACE, else the git top-level's name, else the folder's name (None in $HOME or /)."""
    cwd = cwd or Path.cwd()
    return space_detect(configured=get_conf().default_space, cwd=cwd, home=Path.home(), git_root=git_toplevel(cwd))


def not_running_message(base_url: str) -> str:
    return f"Ormah server not running at {base_url}. Start it with: make run (or ormah serve)"


# ---------------------------------------------------------------------------
# The HTTP client
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class OrmahApi:
    """Calls to the REST API; every failure becomes a ToolError with a message an agent can act on."""

    base_url: str
    token: Callable[[], str | None] = token_current
    timeout: float = TIMEOUT_SECONDS

    async def call(self, method: str, path: str, *, body: dict | None = None,
                   params: dict | None = None) -> dict | list:
        # In a thread: the check reads /proc/net/tcp and, for a URL by name, resolves it (a lookup may take seconds);
        # on the event loop it would stall every other call the server is serving meanwhile
        problem = await anyio.to_thread.run_sync(foreign_server, self.base_url)
        if problem:
            raise ToolError(problem)
        token = self.token()
        headers = {"Accept": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
        try:
            async with httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout, headers=headers,
                                         trust_env=False) as client:  # never via HTTP_PROXY: the token stays here
                response = await client.request(method, f"/api/agent{path}", json=body, params=params)
        except httpx.ConnectError:
            raise ToolError(not_running_message(self.base_url)) from None
        except httpx.TimeoutException:
            raise ToolError(f"Ormah at {self.base_url} did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Ormah at {self.base_url} broke off the request: {exc}") from None
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status_code < 400 and isinstance(data, list):
            return data
        if not isinstance(data, dict):
            data = {}
        if response.status_code == 401:
            raise ToolError(f"Ormah at {self.base_url} refused the API token: run `ormah init`, or set "
                            "ORMAH_API_TOKEN to the server's token (the api_token file in ORMAH_HOME)")
        if response.status_code >= 400:
            message = str(data.get("message") or response.reason_phrase).rstrip(".")
            raise ApiError(f"{message}.", code=str(data.get("error") or ""), details=data.get("details"))
        return data


# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------

def build_server(*, api: OrmahApi, default_space: str | None, workspace: str | None = None) -> FastMCP:
    """The MCP server with every tool, bound to one API, one default space and the client's workspace."""
    server = OrmahMCP("ormah", instructions=INSTRUCTIONS)
    register(server, api=api, default_space=default_space, workspace=workspace)
    return server


def well_formed_line(line: str) -> str:
    """A JSON-RPC line with lone surrogate escapes ("\\ud83d" alone: a cut emoji, which JSON allows) replaced by
    U+FFFD; any other line as it came.

    Trigger: the SDK parses each line with pydantic, which refuses a lone surrogate, and then cannot answer the
    request (no id), so the client's call waited for a reply that never came. Outcome: the call is answered.
    """
    if "\\ud" not in line.lower():
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line
    return json.dumps(_well_formed(message))


def _well_formed(value):
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_well_formed(v) for v in value]
    if isinstance(value, dict):
        return {_well_formed(k): _well_formed(v) for k, v in value.items()}
    return value


class _WellFormedLines:
    """stdin as the SDK's stdio transport reads it (`async for line`), each line through well_formed_line."""

    def __init__(self, lines) -> None:
        self._lines = lines

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        return well_formed_line(await self._lines.__anext__())


async def _serve_stdio(server: FastMCP) -> None:
    from mcp.server.stdio import stdio_server

    stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    async with stdio_server(stdin=_WellFormedLines(stdin.__aiter__())) as (read_stream, write_stream):
        low = server._mcp_server  # noqa: SLF001 (FastMCP.run_stdio_async, with our stdin)
        await low.run(read_stream, write_stream, low.create_initialization_options())


def run_stdio() -> None:
    """Serve the tools on stdin/stdout until the client closes the pipe."""
    space = client_space()
    top = git_toplevel(Path.cwd())
    logger.info("MCP server for %s (space: %s)", api_base_url(), space or "global")
    server = build_server(api=OrmahApi(base_url=api_base_url()), default_space=space,
                          workspace=str(top) if top else None)
    anyio.run(_serve_stdio, server)
