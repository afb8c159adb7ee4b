"""The MCP tools: each with a title, annotations, a description saying when to use it and what it returns, and a
description on every parameter. Names and choices are compared with basic-memory's and mem0's in docs/mcp.md.

Errors reach the agent as one readable sentence (`OrmahMCP.call_tool`): API errors carry the API's message, bad
arguments say which argument and why, with no validation URLs or tool-runner prefixes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from maintenance.detectors.facts import ProposalKind
from memory.domain.enums import EdgeType, NodeType, Tier
from ormah_site import __version__
from ormah_site.mcp_text import (
    changed_text,
    context_pack_text,
    listed_text,
    node_text,
    proposal_result_text,
    proposals_text,
    remembered_text,
    seen_changes,
    self_text,
    title_of,
)

GLOBAL = "global"
SELF_LIMIT = 15
NodeTypeName = Literal[tuple(t.value for t in NodeType)]  # type: ignore[valid-type]
TierName = Literal[tuple(t.value for t in Tier)]  # type: ignore[valid-type]
EdgeName = Literal[tuple(e.value for e in EdgeType)]  # type: ignore[valid-type]
KindName = Literal[tuple(k.value for k in ProposalKind)]  # type: ignore[valid-type]

NodeId = Annotated[str, Field(description="the memory's id, or a unique prefix of it (8 characters usually do)")]
SpaceArg = Annotated[str | None, Field(description='project space; omit for the current project, "global" for a '
                                                   "memory that holds everywhere")]


class ApiError(ToolError):
    """An error answer of the API: its message, and its code and details for a tool that reads them."""

    def __init__(self, message: str, *, code: str = "", details: Any = None) -> None:
        super().__init__(message)
        self.code, self.details = code, details


def _hints(*, read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(readOnlyHint=read_only, destructiveHint=destructive, idempotentHint=idempotent,
                           openWorldHint=False)


def _segment(node_id: str, arg: str = "node_id") -> str:
    """An id as one path segment (the API rejects anything but hex and dashes; one with a slash would match no route
    and read "No such route", so it is refused here, and so is an empty one, which read "'-' is not ...")."""
    ref = node_id.strip()
    if not ref:
        raise ToolError(f"{arg} is empty: give an id or a unique prefix of it (8 characters usually do).")
    if "/" in ref:
        raise ToolError(f"'{ref}' is not an id or an id prefix (hex digits and dashes).")
    return quote(ref, safe="")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _sentence(tool: str, exc: Exception) -> str:
    """One readable sentence for a failed call."""
    cause = exc.__cause__ or exc
    if isinstance(cause, ValidationError):
        first = cause.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "arguments") or "arguments"
        message = first.get("msg", "is not valid").removeprefix("Value error, ")
        return f"Invalid {where} for {tool}: {message}."
    text = str(cause if isinstance(cause, ToolError) else exc)
    return text.removeprefix(f"Error executing tool {tool}: ")


class OrmahMCP(FastMCP):
    """FastMCP whose tool errors are one sentence an agent can act on, and whose serverInfo names Ormah's version
    (FastMCP's default is the mcp package's own)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._mcp_server.version = __version__

    async def call_tool(self, name: str, arguments: dict[str, Any]):
        tool = self._tool_manager.get_tool(name)
        known = list(tool.parameters.get("properties", {})) if tool else []
        unknown = [a for a in arguments or {} if a not in known]
        if tool and unknown:  # pydantic ignores them: a misspelt `tag` or `reason` was dropped without a word
            takes = f"its arguments are {', '.join(known)}" if known else "it takes no arguments"
            raise ToolError(f"{name} has no argument {', '.join(map(repr, unknown))}; {takes}.")
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            raise ToolError(_sentence(name, exc)) from None


def register(server: FastMCP, *, api, default_space: str | None, workspace: str | None) -> None:
    """Add every tool to `server`, bound to one API client, the client's default space and workspace."""
    where = f"the current project ({default_space})" if default_space else "global (no project detected)"

    def space_of(space: str | None) -> str | None:
        return None if space == GLOBAL else (space or default_space)

    @server.tool(title="Remember a memory", annotations=_hints(read_only=False, idempotent=True), description=(
        "Store one memory (a fact, decision, preference, procedure...) so later sessions can recall it. Use at save "
        "points: a decision made, a bug fixed, a preference or correction stated; one atomic fact per call. "
        f"It goes to {where} unless `space` says otherwise. Identical content already stored in that space is not "
        "stored again: the existing memory is returned with a note. Returns the memory's id and what it was "
        "auto-linked to."))
    async def remember(
        content: Annotated[str, Field(description="the memory itself, in a sentence or a short paragraph")],
        type: Annotated[NodeTypeName, Field(description="what kind of memory it is")] = "fact",  # noqa: A002
        tier: Annotated[TierName, Field(description="core: always relevant; working: normal; archival: rarely "
                                                    "needed")] = "working",
        title: Annotated[str | None, Field(description="a short title; derived from the content if omitted")] = None,
        space: SpaceArg = None,
        tags: Annotated[list[str] | None, Field(description="a few lowercase keywords")] = None,
        about_self: Annotated[bool, Field(description="true for facts about the user (links to the self node)")]
        = False,
        confidence: Annotated[float, Field(ge=0.0, le=1.0, description="how sure, 0 to 1")] = 1.0,
        links: Annotated[list[str] | None, Field(description="ids of related memories (related_to edges)")] = None,
    ) -> str:
        body = {"content": content, "type": type, "tier": tier, "title": title, "space": space_of(space),
                "tags": tags or [], "about_self": about_self, "confidence": confidence, "source": "agent:mcp",
                "connections": [{"target": t, "edge": "related_to"} for t in links or []]}
        return remembered_text(await api.call("POST", "/remember", body=body, params={"if_exists": "return"}))

    @server.tool(title="Search memories", annotations=_hints(read_only=True, idempotent=True), description=(
        "Search the user's memories by meaning and words, ranked, the current project's first. Use before answering "
        "about the user, their projects, past decisions or preferences. Returns numbered hits with id, type, score "
        "and the text; searching does not count as using a memory."))
    async def recall(
        query: Annotated[str, Field(description="what to look for, in natural language")],
        limit: Annotated[int, Field(ge=1, le=100, description="how many hits at most")] = 10,
        types: Annotated[list[NodeTypeName] | None, Field(description="only these kinds of memory")] = None,
        spaces: Annotated[list[str] | None, Field(description='only these spaces ("global" for global '
                                                              "memories); default: all, the current project first")]
        = None,
        created_after: Annotated[datetime | None, Field(description="only memories created at or after this time "
                                                                   "(ISO 8601: 2026-11-01 or 2026-11-01T09:00)")]
        = None,
        created_before: Annotated[datetime | None, Field(description="only memories created before this time "
                                                                    "(ISO 8601)")]
        = None,
    ) -> str:
        body: dict[str, Any] = {"query": query, "limit": limit, "types": types, "spaces": spaces,
                                "created_after": _iso(created_after), "created_before": _iso(created_before),
                                "default_space": default_space, "format": "text"}
        return (await api.call("POST", "/recall", body={k: v for k, v in body.items() if v is not None}))["text"]

    @server.tool(title="Read one memory", annotations=_hints(read_only=True, idempotent=True), description=(
        "Fetch one memory by id with its connections in and out. Use when a recall hit or a whisper names an id "
        "and you need the whole memory. Records that the memory was used. Returns its full text, fields and edges."))
    async def recall_node(node_id: NodeId) -> str:
        return node_text(await api.call("GET", f"/nodes/{_segment(node_id)}"))

    @server.tool(title="Update a memory", annotations=_hints(read_only=False, destructive=True, idempotent=True),
                 description=(
        "Correct or refine an existing memory in place: only the fields given change, the rest stay. Use when a "
        "stored memory is wrong or incomplete (for a fact that stopped being true, prefer mark_outdated). Returns "
        "the memory as now stored."))
    async def update_memory(
        node_id: NodeId,
        content: Annotated[str | None, Field(description="the new text (replaces the old one)")] = None,
        title: Annotated[str | None, Field(description="a new title")] = None,
        type: Annotated[NodeTypeName | None, Field(description="a new kind")] = None,  # noqa: A002
        tier: Annotated[TierName | None, Field(description="a new tier")] = None,
        tags: Annotated[list[str] | None, Field(description="the new tags (replace the old ones)")] = None,
        confidence: Annotated[float | None, Field(ge=0.0, le=1.0, description="how sure, 0 to 1")] = None,
    ) -> str:
        patch = {k: v for k, v in {"content": content, "title": title, "type": type, "tier": tier, "tags": tags,
                                   "confidence": confidence}.items() if v is not None}
        if not patch:
            raise ToolError("Give at least one field to change (content, title, type, tier, tags or confidence).")
        node = await api.call("PATCH", f"/nodes/{_segment(node_id)}", body=patch)
        return node_text({"node": node})

    @server.tool(title="Forget a memory", annotations=_hints(read_only=False, destructive=True, idempotent=True),
                 description=(
        "Remove a memory that is wrong, duplicated or unwanted (the user can restore it from the web UI or with "
        "`ormah forget --restore ID`). Use only when asked, or when you stored something by mistake; for a fact "
        "that stopped being true use mark_outdated. Returns the id of the forgotten memory."))
    async def forget(node_id: NodeId) -> str:
        node = await api.call("DELETE", f"/nodes/{_segment(node_id)}")
        return f"Forgot [{node['type']}] {title_of(node)}\nID: {node['id']} (restorable)"

    @server.tool(title="Mark a memory outdated", annotations=_hints(read_only=False), description=(
        "Retire a memory that no longer holds (a changed decision, a moved server) instead of contradicting it "
        "silently; search then skips it unless history is asked for. Returns the memory's id."))
    async def mark_outdated(
        node_id: NodeId,
        reason: Annotated[str | None, Field(description="why it no longer holds (appended to the memory)")] = None,
    ) -> str:
        node = await api.call("POST", f"/nodes/{_segment(node_id)}/outdated", body={"reason": reason})
        return f"Marked outdated: {title_of(node)}\nID: {node['id']}"

    @server.tool(title="Connect two memories", annotations=_hints(read_only=False, idempotent=True), description=(
        "Link two memories with a typed, weighted edge (stored in the source memory); the same pair and type is "
        "replaced, not doubled. Use when one memory supports, depends on, extends or contradicts another. Returns "
        "the edge."))
    async def connect(
        source_id: Annotated[str, Field(description="the memory the edge starts from (id or prefix)")],
        target_id: Annotated[str, Field(description="the memory the edge points to (id or prefix)")],
        edge: Annotated[EdgeName, Field(description="the relation from source to target")] = "related_to",
        weight: Annotated[float, Field(ge=0.0, le=1.0, description="strength of the relation, 0 to 1")] = 0.5,
        reason: Annotated[str | None, Field(description="why they are connected")] = None,
    ) -> str:
        body = {"source_id": source_id, "target_id": target_id, "edge": edge, "weight": weight, "reason": reason}
        data = await api.call("POST", "/connect", body=body)
        return f"Connected {data['source_id'][:8]}... →[{data['edge']}]→ {data['target_id'][:8]}..."

    @server.tool(title="List recent memories", annotations=_hints(read_only=True, idempotent=True), description=(
        "List memories newest first, optionally of some types, a space or a tag, page by page. Use to review "
        "what was stored lately (for instance to fix or remove a wrong memory) rather than to answer a question "
        "(use recall for that). Returns id, type, space, time and a snippet per memory, and a cursor for more."))
    async def list_recent(
        limit: Annotated[int, Field(ge=1, le=100, description="memories per page")] = 20,
        types: Annotated[list[NodeTypeName] | None, Field(description="only these kinds of memory")] = None,
        space: Annotated[str | None, Field(description='only this space ("global" for global memories); '
                                                       "default: every space")] = None,
        tag: Annotated[str | None, Field(description="only memories with this tag")] = None,
        cursor: Annotated[str | None, Field(description="the cursor a previous page ended with")] = None,
    ) -> str:
        params = {"limit": limit, "types": ",".join(types) if types else None, "spaces": space, "tags": tag,
                  "cursor": cursor}
        return listed_text(await api.call("GET", "/nodes", params={k: v for k, v in params.items() if v}))

    @server.tool(title="Who the user is", annotations=_hints(read_only=True, idempotent=True), description=(
        "The self node and the memories that define the user (identity, preferences, background), most important "
        "first. Use at the start of a conversation or before personal advice. Returns a short profile."))
    async def get_self() -> str:
        params = {"limit": SELF_LIMIT, **({"space": default_space} if default_space else {})}
        return self_text(await api.call("GET", "/self", params=params))

    @server.tool(title="Context pack for a task", annotations=_hints(read_only=True, idempotent=True), description=(
        "A bounded, cited context pack for the task at hand: core rules, the session's state, relevant memories, "
        "workspace files and evidence, with warnings on anything that may be stale, superseded or contradicted. "
        "Use once at the start of a task instead of several recalls. Never above budget_tokens."))
    async def context_pack(
        query: Annotated[str, Field(description="what the task is about")] = "",
        budget_tokens: Annotated[int, Field(ge=0, le=32000, description="the most tokens the pack may take")] = 1200,
        policy: Annotated[Literal["auto", "task", "workspace"], Field(
            description="auto: everything; task: core rules and session state; workspace: core rules and files",
        )] = "auto",
        scope: Annotated[str | None, Field(
            description="global, user, project:NAME, workspace:/PATH or session:ID; default: every scope",
        )] = None,
        session_id: Annotated[str | None, Field(description="the session whose active state to include")] = None,
    ) -> str:
        body: dict[str, Any] = {"query": query, "budget_tokens": budget_tokens, "policy": policy, "scope": scope,
                                "session_id": session_id, "default_space": default_space,
                                "workspace": {"path": workspace} if workspace else None}
        return context_pack_text(await api.call("POST", "/context-pack",
                                                body={k: v for k, v in body.items() if v is not None}))

    @server.tool(title="List proposals", annotations=_hints(read_only=True, idempotent=True), description=(
        "The maintenance proposals waiting for a decision (merge duplicates, resolve a conflict, consolidate, "
        "archive). Use when the user asks to review their memory's housekeeping. Returns id, kind, what it would "
        "do and why, per proposal."))
    async def list_proposals(
        kind: Annotated[KindName | None, Field(description="only this kind of proposal")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="how many at most")] = 20,
    ) -> str:
        params = {"status": "pending", "limit": limit, **({"kind": kind} if kind else {})}
        return proposals_text(await api.call("GET", "/proposals", params=params))

    @server.tool(title="What approving a proposal writes", annotations=_hints(read_only=True, idempotent=True),
                 description=(
        "The memory a merge or consolidation proposal would write if approved: its title, tags and full text, and "
        "a `seen` value naming the versions of the memories it was read from. Use before decide_proposal when the "
        "user wants to check or correct the merged text. Returns the text and how to approve it."))
    async def proposal_result(
        proposal_id: Annotated[str, Field(description="the proposal's id or a unique prefix of it")],
    ) -> str:
        return proposal_result_text(await api.call("GET", f"/proposals/{_segment(proposal_id, 'proposal_id')}/result"))

    @server.tool(title="Approve or reject a proposal",
                 annotations=_hints(read_only=False, destructive=True), description=(
        "Carry out (approve) or dismiss (reject) one maintenance proposal. Approving can merge or archive memories, "
        "so do it only when the user agrees. A merge or consolidation can be approved with a corrected title, "
        "content or tags: read it with proposal_result first and pass its `seen`; if a memory changed since, "
        "nothing is applied. Returns the proposal with its new status."))
    async def decide_proposal(
        proposal_id: Annotated[str, Field(description="the proposal's id or a unique prefix of it")],
        action: Annotated[Literal["approve", "reject"], Field(description="approve carries it out; reject drops "
                                                                          "it")],
        title: Annotated[str | None, Field(description="approve with this title instead of the proposed one")]
        = None,
        content: Annotated[str | None, Field(description="approve with this text instead of the proposed one")]
        = None,
        tags: Annotated[list[str] | None, Field(description="approve with these tags instead of the proposed ones")]
        = None,
        seen: Annotated[str | None, Field(description="the seen value proposal_result showed; needed with title, "
                                                      "content or tags; a rejection is not refused for an old "
                                                      "one")] = None,
    ) -> str:
        ref = _segment(proposal_id, "proposal_id")
        edit = {k: v for k, v in {"title": title, "content": content, "tags": tags}.items() if v is not None}
        body: dict[str, Any] = {"action": action, **({"result": edit} if edit else {})}
        if edit and seen is None:
            raise ToolError("To approve with your title, content or tags, first call proposal_result for this "
                            "proposal and pass the seen value it shows.")
        if seen is not None:
            now = await api.call("GET", f"/proposals/{ref}/result")
            changed = seen_changes(seen, now["seen"])
            if changed is None:
                raise ToolError(f"seen '{seen}' is not from proposal {now['proposal_id'][:8]}: call proposal_result "
                                "for it and pass the seen value it shows.")
            if changed and action == "approve":  # a rejection writes nothing: a stale seen still rejects
                raise ToolError(changed_text(now["proposal_id"], [{"id": uid} for uid in changed]))
            body["seen"] = now["seen"]  # the API checks these again under the write lock
        try:
            row = await api.call("POST", f"/proposals/{ref}", body=body)
        except ApiError as exc:
            if exc.code != "proposal_changed":
                raise
            raise ToolError(changed_text(exc.details["proposal_id"], exc.details["changed"])) from None
        edited = f" (with your {', '.join(row['result']['edited'])})" if row["result"].get("edited") else ""
        return f"Proposal {row['id'][:8]} ({row['kind']}) is now {row['status']}{edited}: {row['action_summary']}"

    @server.tool(title="Rate a whispered memory", annotations=_hints(read_only=False), description=(
        "Say whether a memory Ormah whispered helped (1) or misled (-1), passing the whisper_log_id the whisper "
        "showed; +1 counts as using the memory. Returns a confirmation."))
    async def submit_feedback(
        node_id: NodeId,
        signal: Annotated[Literal[1, -1], Field(description="1: it helped; -1: it was wrong or off-topic")],
        source: Annotated[Literal["explicit", "implicit"], Field(
            description="explicit: the user said so; implicit: you inferred it")] = "explicit",
        whisper_log_id: Annotated[int | None, Field(description="the id the whisper showed")] = None,
    ) -> str:
        body = {"node_id": node_id, "signal": signal, "source": source, "whisper_log_id": whisper_log_id}
        data = await api.call("POST", "/feedback", body={k: v for k, v in body.items() if v is not None})
        moved = f" (memory {data['merged_from'][:8]} was merged into it)" if data.get("merged_from") else ""
        return f"Feedback {data['signal']:+d} recorded for {data['node_id'][:8]}...{moved}"
