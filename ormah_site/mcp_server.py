"""The MCP server (`ormah mcp`): eight tools over stdio, each a thin call to the local REST API (reference §5.3).

It holds no memory logic: it detects the client's project space once at start-up, passes it as the default
space, calls /api/agent/* with the bearer token, and renders the JSON as short text an agent reads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

import httpx
from django.conf import settings
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import Field

from memory.conf import get_conf
from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.requests import auto_title
from memory.spaces import git_toplevel, space_detect
from ormah_site.tokens import token_current

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 30.0
GLOBAL = "global"
SELF_LIMIT = 15

NodeTypeName = Literal[tuple(t.value for t in NodeType)]  # type: ignore[valid-type]
TierName = Literal[tuple(t.value for t in Tier)]  # type: ignore[valid-type]
EdgeName = Literal[tuple(e.value for e in EdgeType)]  # type: ignore[valid-type]

INSTRUCTIONS = """Ormah is the user's long-term memory, shared by all their agents.
- recall before answering questions about the user, their projects, past decisions or preferences.
- remember at save points (a decision made, a bug fixed, a preference or correction stated); keep each memory
  atomic (one fact), pick a type, and use about_self=true for facts about the user.
- recall_node fetches one memory with its connections (this counts as using it); mark_outdated retires a memory
  that no longer holds instead of contradicting it silently; connect links related memories.
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

    async def call(self, method: str, path: str, *, body: dict | None = None, params: dict | None = None) -> dict:
        token = self.token()
        headers = {"Accept": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
        try:
            async with httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout, headers=headers) as client:
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
        if not isinstance(data, dict):
            data = {}
        if response.status_code == 401:
            raise ToolError(f"Ormah at {self.base_url} refused the API token: run `ormah init`, or set "
                            "ORMAH_API_TOKEN to the server's token (the api_token file in ORMAH_HOME)")
        if response.status_code >= 400:
            message = data.get("message") or response.reason_phrase
            raise ToolError(f"{message} ({data.get('error', response.status_code)})")
        return data


# ---------------------------------------------------------------------------
# Text renderings
# ---------------------------------------------------------------------------

def _title(item: dict) -> str:
    return item.get("title") or auto_title(item.get("content", ""))


def remembered_text(data: dict) -> str:
    node = data["node"]
    lines = [f"Remembered [{node['type']}]: {_title(node)}", f"ID: {node['id']}"]
    links = data.get("auto_links") or []
    if links:
        lines.append(f"Auto-linked to {len(links)} related memories:")
        lines += [f"  → {link['title']} ({link['similarity']:.0%} similar)" for link in links]
    return "\n".join(lines)


def node_text(data: dict) -> str:
    node = data["node"]
    lines = [f"## [{node['type']}] {_title(node)}", f"ID: {node['id']}",
             f"Tier: {node['tier']} | Space: {node['space'] or 'global'} | Created: {node['created'][:19]}"]
    if node.get("tags"):
        lines.append("Tags: " + ", ".join(node["tags"]))
    if node.get("valid_until"):
        lines.append(f"Outdated since {node['valid_until'][:19]}")
    lines += ["", node["content"]]
    edges = [("→", e) for e in data.get("edges_out", [])] + [("←", e) for e in data.get("edges_in", [])]
    if edges:
        lines += ["", "### Connections"]
        lines += [f"{arrow} {e['edge']} ({e['weight']:.1f}) {e['node']['id']}  {_title(e['node'])}"
                  for arrow, e in edges]
    return "\n".join(lines)


def self_text(data: dict) -> str:
    node = data["node"]
    lines = [f"## Self: {_title(node)}", node["content"]]
    defined = data.get("defines") or []
    if defined:
        lines += ["", f"### What defines them ({len(defined)})"]
        lines += [f"- [{m['type']}] {_title(m)}: {m['content'][:200]} (id: {m['short_id']})" for m in defined]
    else:
        lines += ["", "No identity memories yet; remember facts about the user with about_self=true."]
    return "\n".join(lines)


def context_pack_text(data: dict) -> str:
    footer = f"-- {data['estimated_tokens']}/{data['budget_tokens']} tokens, {len(data['items'])} items"
    return (data["text"].rstrip("\n") + "\n" + footer) if data["items"] else "Nothing to pack.\n" + footer


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------

def build_server(*, api: OrmahApi, default_space: str | None, workspace: str | None = None) -> FastMCP:
    """The FastMCP server with the eight tools, bound to one API, one default space and the client's workspace."""
    server = FastMCP("ormah", instructions=INSTRUCTIONS)
    where = f"the current project ({default_space})" if default_space else "global (no project detected)"

    @server.tool(description=f"Store a memory. It goes to {where} unless `space` says otherwise.")
    async def remember(
        content: Annotated[str, Field(description="the memory itself: one atomic fact, decision, preference…")],
        type: NodeTypeName = "fact",  # noqa: A002
        tier: TierName = "working",
        title: Annotated[str | None, Field(description="short title; derived from the content if omitted")] = None,
        space: Annotated[str | None, Field(
            description='project space; omit for the current project, "global" for a memory that holds everywhere',
        )] = None,
        tags: list[str] | None = None,
        about_self: Annotated[bool, Field(description="true for facts about the user (links to the self node)")]
        = False,
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0,
        links: Annotated[list[str] | None, Field(description="ids of related memories (related_to edges)")] = None,
    ) -> str:
        chosen = None if space == GLOBAL else (space or default_space)
        body = {"content": content, "type": type, "tier": tier, "title": title, "space": chosen,
                "tags": tags or [], "about_self": about_self, "confidence": confidence, "source": "agent:mcp",
                "connections": [{"target": t, "edge": "related_to"} for t in links or []]}
        return remembered_text(await api.call("POST", "/remember", body=body))

    @server.tool(description="Search memories (hybrid full-text and semantic). Results are not counted as use.")
    async def recall(
        query: str,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        types: list[NodeTypeName] | None = None,
        spaces: Annotated[list[str] | None, Field(description="only these spaces; default: all, "
                                                                "the current project first")] = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> str:
        body: dict[str, Any] = {"query": query, "limit": limit, "types": types, "spaces": spaces,
                                "created_after": _iso(created_after), "created_before": _iso(created_before),
                                "default_space": default_space, "format": "text"}
        return (await api.call("POST", "/recall", body={k: v for k, v in body.items() if v is not None}))["text"]

    @server.tool(description="Fetch one memory by id (or unique prefix) with its connections; counts as use.")
    async def recall_node(node_id: str) -> str:
        return node_text(await api.call("GET", f"/nodes/{_segment(node_id)}"))

    @server.tool(description="Mark a memory as no longer true; recall then skips it unless asked for history.")
    async def mark_outdated(node_id: str, reason: str | None = None) -> str:
        node = await api.call("POST", f"/nodes/{_segment(node_id)}/outdated", body={"reason": reason})
        return f"Marked outdated: {_title(node)}\nID: {node['id']}"

    @server.tool(description="Connect two memories with a typed, weighted edge (stored in the source memory).")
    async def connect(
        source_id: str,
        target_id: str,
        edge: EdgeName = "related_to",
        weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5,
        reason: str | None = None,
    ) -> str:
        body = {"source_id": source_id, "target_id": target_id, "edge": edge, "weight": weight, "reason": reason}
        data = await api.call("POST", "/connect", body=body)
        return f"Connected {data['source_id'][:8]}... →[{data['edge']}]→ {data['target_id'][:8]}..."

    @server.tool(description="Who the user is: the self node and the memories that define them.")
    async def get_self() -> str:
        params = {"limit": SELF_LIMIT, **({"space": default_space} if default_space else {})}
        return self_text(await api.call("GET", "/self", params=params))

    @server.tool(description="Say whether a whispered memory helped (1) or misled (-1); pass the whisper_log_id "
                             "the whisper showed. +1 counts as using the memory.")
    async def submit_feedback(
        node_id: str,
        signal: Literal[1, -1],
        source: Literal["explicit", "implicit"] = "explicit",
        whisper_log_id: int | None = None,
    ) -> str:
        body = {"node_id": node_id, "signal": signal, "source": source, "whisper_log_id": whisper_log_id}
        data = await api.call("POST", "/feedback", body={k: v for k, v in body.items() if v is not None})
        return f"Feedback {data['signal']:+d} recorded for {data['node_id'][:8]}..."

    @server.tool(description="A bounded, cited context pack for the task at hand: core rules, the session's state, "
                             "relevant memories, workspace files and evidence, with warnings on anything that may "
                             "be stale, superseded or contradicted. Never above budget_tokens.")
    async def context_pack(
        query: Annotated[str, Field(description="what the task is about")] = "",
        budget_tokens: Annotated[int, Field(ge=0, le=32000)] = 1200,
        policy: Annotated[Literal["auto", "task", "workspace"], Field(
            description="auto: everything; task: core rules and session state; workspace: core rules and files",
        )] = "auto",
        scope: Annotated[str | None, Field(
            description="global, user, project:NAME, workspace:/PATH or session:ID; default: every scope",
        )] = None,
        session_id: str | None = None,
    ) -> str:
        body: dict[str, Any] = {"query": query, "budget_tokens": budget_tokens, "policy": policy, "scope": scope,
                                "session_id": session_id, "default_space": default_space,
                                "workspace": {"path": workspace} if workspace else None}
        return context_pack_text(await api.call("POST", "/context-pack",
                                                body={k: v for k, v in body.items() if v is not None}))

    return server


def _segment(node_id: str) -> str:
    """A node id as one path segment (the API rejects anything but hex and dashes)."""
    return quote(node_id.strip(), safe="") or "-"


def run_stdio() -> None:
    """Serve the tools on stdin/stdout until the client closes the pipe."""
    space = client_space()
    top = git_toplevel(Path.cwd())
    logger.info("MCP server for %s (space: %s)", api_base_url(), space or "global")
    build_server(api=OrmahApi(base_url=api_base_url()), default_space=space,
                 workspace=str(top) if top else None).run("stdio")
