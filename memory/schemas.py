"""Ninja schemas of the memory API: what comes in (validated by the domain request models) and what goes out."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from memory.domain import requests as domain
from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.search import SearchQuery
from memory.health_schemas import HealthOut, RebuildOut  # noqa: F401 (the routes import them from here)
from memory.trust_schemas import WarningOut

MAX_BATCH = 1000
MAX_SESSION_CHARS = 200
BATCH_TOO_LARGE = "batch_too_large"
TOO_LARGE_ERRORS = frozenset({domain.CONTENT_TOO_LARGE, BATCH_TOO_LARGE})


NO_NUL = r"^[^\x00]*$"  # PostgreSQL text holds no NUL; content and titles refuse it in memory.domain.requests
CLOCK_SKEW = timedelta(days=1)  # how far ahead of this machine's clock a `created` may be (another machine's clock)


def _utc(value: datetime) -> datetime:
    """An aware datetime (a naive one is UTC, as the domain reads it), so naive and aware values compare."""
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


# ---------------------------------------------------------------------------
# In
# ---------------------------------------------------------------------------

class NodeIn(domain.NodeCreate):
    """A new memory. `space` is used as given (null: global); `created` back-dates imports.

    Remembering appends an explicit_memory evidence event (of `session_id`, when given) that the memory cites.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, title="NodeIn")

    session_id: str | None = Field(default=None, max_length=MAX_SESSION_CHARS, pattern=NO_NUL)

    @model_validator(mode="after")
    def _created_not_ahead(self) -> NodeIn:
        """A memory from the future (a typo in a year: 2062 for 2026) would rank and decay as if it were new forever."""
        if self.created is not None and _utc(self.created) > datetime.now(timezone.utc) + CLOCK_SKEW:
            raise ValueError(f"created: {self.created.isoformat()} is in the future (back-date with a past date)")
        return self

    def to_create(self) -> domain.NodeCreate:
        """The create request without the API-only fields."""
        return domain.NodeCreate.model_validate(self.model_dump(exclude={"session_id"}))


class NodePatch(domain.NodePatch):
    """A partial update; only the fields given change. `space`, `title` and `valid_until` may be set to null."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="NodePatch")


def _batch_size(value: Any) -> Any:
    if isinstance(value, list) and len(value) > MAX_BATCH:
        raise PydanticCustomError(BATCH_TOO_LARGE, "at most {limit} memories per batch (got {size})",
                                  {"limit": MAX_BATCH, "size": len(value)})
    return value


class BatchIn(Schema):
    """Up to 1,000 new memories, validated all together before any is written."""

    model_config = ConfigDict(extra="forbid")

    nodes: Annotated[list[NodeIn], BeforeValidator(_batch_size), Field(min_length=1)]


class RecallIn(SearchQuery):
    """A deliberate search; `format` picks JSON hits or the text an agent reads."""

    model_config = ConfigDict(extra="forbid", title="RecallIn")

    format: Literal["json", "text"] = "json"
    session_id: str | None = Field(default=None, max_length=MAX_SESSION_CHARS, pattern=NO_NUL)
    full: bool = Field(default=False, description="JSON hits carry their full content instead of a snippet")

    @model_validator(mode="after")
    def _window_not_inverted(self) -> RecallIn:
        """after > before matches nothing: say so rather than answer an empty list that looks like no memory."""
        after, before = self.created_after, self.created_before
        if after is not None and before is not None and _utc(after) > _utc(before):
            raise ValueError(f"created_after ({after.isoformat()}) is later than created_before ({before.isoformat()}):"
                             " no memory can match")
        return self

    def to_query(self) -> SearchQuery:
        """The search part of the request."""
        return SearchQuery.model_validate(self.model_dump(exclude={"format", "session_id", "full"}))


class ConnectIn(Schema):
    """A typed, weighted edge from `source_id` to `target_id` (ids or unique prefixes)."""

    model_config = ConfigDict(extra="forbid")

    source_id: str = Field(min_length=1, max_length=domain.MAX_TARGET_CHARS)
    target_id: str = Field(min_length=1, max_length=domain.MAX_TARGET_CHARS)
    edge: EdgeType = EdgeType.RELATED_TO
    weight: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    reason: str | None = Field(default=None, max_length=domain.MAX_REASON_CHARS)


class SelfQuery(Schema):
    """Which identity memories to list."""

    model_config = ConfigDict(extra="forbid")

    space: str | None = Field(default=None, max_length=domain.MAX_SPACE_CHARS,
                              description="keep identity memories of this project and global ones")
    limit: int = Field(default=50, ge=1, le=100)


class OutdatedIn(Schema):
    """Why a memory no longer holds (appended to its content)."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=domain.MAX_REASON_CHARS)


# ---------------------------------------------------------------------------
# Out
# ---------------------------------------------------------------------------

class ErrorOut(Schema):
    """The one error shape of the API."""

    error: str
    message: str
    details: Any = None


class ConnectionOut(Schema):
    target: str
    edge: EdgeType
    weight: float
    reason: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    source_event_ids: list[str] = []


def _from_provenance(name: str) -> staticmethod:
    """A ninja resolver (`resolve_<field>`) that reads the field from the memory's provenance."""
    return staticmethod(lambda obj: getattr(obj.provenance, name))


class NodeOut(Schema):
    """A memory as its markdown file holds it."""

    id: str
    short_id: str
    type: NodeType
    tier: Tier
    title: str | None
    content: str
    space: str | None
    space_locked: bool
    tags: list[str]
    source: str
    connections: list[ConnectionOut]
    confidence: float
    importance: float
    access_count: int
    stability: float
    created: datetime
    updated: datetime
    last_accessed: datetime
    last_review: datetime | None
    valid_until: datetime | None
    source_event_ids: list[str] = []
    workspace_path: str | None = None
    git_branch: str | None = None
    git_commit: str | None = None
    file_path: str | None = None
    content_sha256: str | None = None
    pinned: bool = False
    authority: int = 0
    read_only: bool = False

    resolve_workspace_path = _from_provenance("workspace_path")
    resolve_git_branch = _from_provenance("git_branch")
    resolve_git_commit = _from_provenance("git_commit")
    resolve_file_path = _from_provenance("file_path")
    resolve_content_sha256 = _from_provenance("content_sha256")


class AutoLinkOut(Schema):
    """A similar memory the new one was linked to (`related_to`, weight = similarity)."""

    id: str
    title: str
    similarity: float

    @staticmethod
    def resolve_id(obj) -> str:
        return obj.target_id


class RememberOut(Schema):
    node: NodeOut
    auto_links: list[AutoLinkOut]
    existing: bool = Field(default=False, description="true: identical content was already stored (if_exists=return); "
                                                      "this is that memory and nothing was written")

    @staticmethod
    def resolve_auto_links(obj) -> list:
        return list(obj.auto_links)


class BatchOut(Schema):
    results: list[RememberOut]


class HitOut(Schema):
    """One recall result; `legs` names what found it, `source` how it entered the list."""

    id: str
    short_id: str
    title: str
    content: str
    type: str
    tier: str
    space: str | None
    tags: list[str]
    created: datetime
    valid_until: datetime | None
    score: float
    legs: list[str]
    source: str
    activated_by: str | None = None
    activation_edge: str | None = None
    warnings: list[WarningOut] = []
    content_truncated: bool = Field(default=False, description="content is a snippet; ask with full=true for all")

    @staticmethod
    def resolve_id(obj) -> str:
        return obj.node_id


class RecallOut(Schema):
    results: list[HitOut]
    surfacing_id: int | None = None


class RecallTextOut(Schema):
    text: str
    surfacing_id: int | None = None


class MemoryOut(Schema):
    """A memory as the index lists it (neighbours, identity)."""

    id: str
    short_id: str
    title: str
    content: str
    type: str
    tier: str
    space: str | None
    tags: list[str]
    importance: float

    @staticmethod
    def resolve_id(obj) -> str:
        return obj.uid

    @staticmethod
    def resolve_tags(obj) -> list[str]:
        return obj.tags_text.split()


class EdgeOut(Schema):
    """An edge of a memory with the memory at its other end."""

    edge: EdgeType
    weight: float
    reason: str | None
    node: MemoryOut

    @staticmethod
    def resolve_edge(obj) -> str:
        return obj.edge_type

    @staticmethod
    def resolve_node(obj):
        return obj.row


class NodeDetailOut(Schema):
    node: NodeOut
    edges_out: list[EdgeOut]
    edges_in: list[EdgeOut]


class SelfOut(Schema):
    node: NodeOut
    defines: list[MemoryOut]


class ConnectOut(Schema):
    source_id: str
    target_id: str
    edge: EdgeType
    weight: float
    reason: str | None


SNIPPET_CHARS = 300


class NodeListQuery(Schema):
    """Filters and paging of GET /api/agent/nodes."""

    model_config = ConfigDict(extra="forbid")

    types: str | None = Field(default=None, description="comma-separated node types")
    tiers: str | None = Field(default=None, description="comma-separated tiers")
    spaces: str | None = Field(default=None, description="comma-separated spaces ('global' for global memories)")
    tags: str | None = Field(default=None, description="comma-separated tags; a memory must carry all of them")
    include_outdated: bool = Field(default=False, description="also list memories marked outdated")
    order: Literal["updated", "created"] = Field(default="updated", description="newest first by this time")
    limit: int = Field(default=20, ge=1, le=100, description="memories per page")
    cursor: str | None = Field(default=None, max_length=400, description="next_cursor of the previous page")
    full: bool = Field(default=False, description=f"full content instead of a {SNIPPET_CHARS}-character snippet")


class ListedOut(Schema):
    """A memory in a listing: its content is a snippet unless `full=true` was asked for."""

    id: str
    short_id: str
    title: str
    content: str
    content_truncated: bool
    type: str
    tier: str
    space: str | None
    tags: list[str]
    importance: float
    created: datetime
    updated: datetime
    valid_until: datetime | None


class NodeListOut(Schema):
    results: list[ListedOut]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null on the last page")
