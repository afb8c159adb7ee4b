"""Validated write requests (create, patch) and the pure functions that turn them into nodes."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from memory.domain.enums import INITIAL_STABILITY, EdgeType, NodeType, Tier, edge_type_of
from memory.domain.identity import SELF_TAGS, is_self_node
from memory.domain.node import Connection, Node, Provenance, as_utc, with_connection

MAX_CONTENT_BYTES = 64 * 1024
MAX_TITLE_CHARS = 300
MAX_TAGS = 50
MAX_TAG_CHARS = 64
MAX_SOURCE_CHARS = 200
MAX_SPACE_CHARS = 100
MAX_CONNECTIONS = 200
MAX_REASON_CHARS = 1000
MAX_TARGET_CHARS = 100
MAX_EVENT_IDS = 100
MAX_EVENT_ID_CHARS = 100
MAX_PATH_CHARS = 4096
MAX_BRANCH_CHARS = 255
MAX_AUTHORITY = 1000
AUTO_TITLE_CHARS = 60
ABOUT_SELF_TAG = "about_self"
DEFAULT_SOURCE = "agent:unknown"
RESERVED_SOURCE_PREFIX = "system:"  # the self node's source; nothing a client sends may claim it
RESERVED_TAG = "self"
MIN_YEAR, MAX_YEAR = 1900, 2999  # timestamps outside are typos or sentinels (year 1, 9999), not dates

# The pydantic error type of oversized content, so the service layer can answer 413 instead of 422.
CONTENT_TOO_LARGE = "content_too_large"

_TAG = re.compile(r"[a-z0-9][a-z0-9_\-.:]*")
_EVENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.:]*")
_HEX = re.compile(r"[0-9a-f]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WHITESPACE = re.compile(r"\s+")


def _fail(kind: str, message: str, **context: Any) -> PydanticCustomError:
    return PydanticCustomError(kind, message, context or None)


# ---------------------------------------------------------------------------
# Field rules shared by NodeCreate and NodePatch
# ---------------------------------------------------------------------------

def _content(value: str) -> str:
    """Content is stored verbatim (docs/file-format.md); it must hold more than whitespace."""
    if not value.strip():
        raise _fail("blank", "must not be blank")
    if "\x00" in value:
        raise _fail("nul_byte", "must not contain NUL bytes")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise _fail("not_utf8", "must be valid UTF-8 text") from None
    if size > MAX_CONTENT_BYTES:
        raise _fail(
            CONTENT_TOO_LARGE, "must be at most {limit} bytes of UTF-8 (got {size})", limit=MAX_CONTENT_BYTES, size=size,
        )
    return value


def _title(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    value = value.strip()
    if len(value) > MAX_TITLE_CHARS:
        raise _fail("too_long", "must be at most {limit} characters", limit=MAX_TITLE_CHARS)
    if "\x00" in value:
        raise _fail("nul_byte", "must not contain NUL bytes")
    return value


def _space(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, str):
        return value  # pydantic reports the wrong type
    value = value.strip()
    if value.lower() in ("", "null", "none"):
        return None
    if len(value) > MAX_SPACE_CHARS:
        raise _fail("too_long", "must be at most {limit} characters", limit=MAX_SPACE_CHARS)
    if "/" in value or "\\" in value or _CONTROL.search(value):
        raise _fail("bad_space", "must not contain slashes or control characters")
    return value


def tag_normal(raw: str) -> str:
    """A tag as writes store it: trimmed, lowercased, inner whitespace as "-" (the tag filters ask with this)."""
    return _WHITESPACE.sub("-", raw.strip().lower())


def _tags(values: list[str]) -> list[str]:
    tags: list[str] = []
    for raw in values:
        tag = tag_normal(raw)
        if not tag or tag in tags:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise _fail("bad_tag", "tag '{tag}' is longer than {limit} characters", tag=tag, limit=MAX_TAG_CHARS)
        if not _TAG.fullmatch(tag):
            raise _fail("bad_tag", "tag '{tag}' must be lowercase letters, digits and _ - . :", tag=tag)
        if tag == RESERVED_TAG:
            raise _fail("reserved", "the tag '{tag}' is reserved for the self node", tag=tag)
        tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise _fail("too_many", "at most {limit} tags", limit=MAX_TAGS)
    return tags


def _source(value: str) -> str:
    value = value.strip()
    if not value:
        return DEFAULT_SOURCE
    if len(value) > MAX_SOURCE_CHARS:
        raise _fail("too_long", "must be at most {limit} characters", limit=MAX_SOURCE_CHARS)
    if _CONTROL.search(value):
        raise _fail("control_char", "must not contain control characters")
    if value.lower().startswith(RESERVED_SOURCE_PREFIX):
        raise _fail("reserved", "sources starting with '{prefix}' are reserved for Ormah itself",
                    prefix=RESERVED_SOURCE_PREFIX)
    return value


def _event_ids(values: list[str]) -> list[str]:
    ids: list[str] = []
    for raw in values:
        value = raw.strip()
        if len(value) > MAX_EVENT_ID_CHARS or not _EVENT_ID.fullmatch(value):
            raise _fail("bad_event_id", "event id '{value}' must be letters, digits and _ - . : (at most {limit})",
                        value=value[:40], limit=MAX_EVENT_ID_CHARS)
        if value not in ids:
            ids.append(value)
    if len(ids) > MAX_EVENT_IDS:
        raise _fail("too_many", "at most {limit} event ids", limit=MAX_EVENT_IDS)
    return ids


def _line(limit: int):
    def check(value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if len(value) > limit:
            raise _fail("too_long", "must be at most {limit} characters", limit=limit)
        if _CONTROL.search(value):
            raise _fail("control_char", "must not contain control characters")
        return value
    return check


def _hex(minimum: int, maximum: int):
    def check(value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().lower()
        if not minimum <= len(value) <= maximum or not _HEX.fullmatch(value):
            raise _fail("bad_hex", "must be {minimum} to {maximum} hex digits", minimum=minimum, maximum=maximum)
        return value
    return check


def _edge(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return edge_type_of(value)
        except ValueError:
            return value  # pydantic reports the unknown edge type
    return value


def _iso_only(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise _fail("bad_datetime", "must be an ISO-8601 date-time string, not a number")
    return value


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise _fail("bad_datetime", "year must be between {low} and {high}", low=MIN_YEAR, high=MAX_YEAR)
    return as_utc(value)


def _not_null(value: Any) -> Any:
    if value is None:
        raise _fail("null", "must not be null")
    return value


Content = Annotated[str, AfterValidator(_content)]
Title = Annotated[str | None, AfterValidator(_title)]
Space = Annotated[str | None, BeforeValidator(_space)]
Tags = Annotated[list[str], AfterValidator(_tags)]
Source = Annotated[str, AfterValidator(_source)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
UtcDatetime = Annotated[datetime | None, BeforeValidator(_iso_only), AfterValidator(_utc)]
EventIds = Annotated[list[str], AfterValidator(_event_ids)]
PathText = Annotated[str | None, AfterValidator(_line(MAX_PATH_CHARS))]
Branch = Annotated[str | None, AfterValidator(_line(MAX_BRANCH_CHARS))]
# The patterns only tell the OpenAPI document what _hex accepts (a schema-built body must not be refused; review7).
Commit = Annotated[str | None, AfterValidator(_hex(4, 64)),
                   Field(json_schema_extra={"pattern": r"^\s*([0-9a-fA-F]{4,64})?\s*$"})]
Sha256 = Annotated[str | None, AfterValidator(_hex(64, 64)),
                   Field(json_schema_extra={"pattern": r"^\s*([0-9a-fA-F]{64})?\s*$"})]
Edge = Annotated[EdgeType, BeforeValidator(_edge)]
Authority = Annotated[int, Field(ge=0, le=MAX_AUTHORITY)]


class ConnectionIn(BaseModel):
    """An outgoing connection as a request gives it; `target` may still be an id prefix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = Field(min_length=1, max_length=MAX_TARGET_CHARS)
    edge: Edge = EdgeType.RELATED_TO
    weight: Confidence = 0.5
    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)
    valid_from: UtcDatetime = None
    valid_until: UtcDatetime = None
    source_event_ids: EventIds = Field(default_factory=list)

    @field_validator("target")
    @classmethod
    def _strip_target(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise _fail("blank", "must not be blank")
        return value

    @field_validator("reason")
    @classmethod
    def _strip_reason(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return value.strip() or None


Connections = Annotated[list[ConnectionIn], Field(max_length=MAX_CONNECTIONS)]


class NodeCreate(BaseModel):
    """A new memory (the `remember` request)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: Content
    type: NodeType = NodeType.FACT
    tier: Tier = Tier.WORKING
    source: Source = DEFAULT_SOURCE
    space: Space = None
    space_locked: StrictBool = False
    tags: Tags = Field(default_factory=list)
    connections: Connections = Field(default_factory=list)
    title: Title = None
    about_self: StrictBool = False
    confidence: Confidence = 1.0
    created: UtcDatetime = None
    # trust (docs/trust.md): the evidence it came from, where it was made, core-block flags
    source_event_ids: EventIds = Field(default_factory=list)
    workspace_path: PathText = None
    git_branch: Branch = None
    git_commit: Commit = None
    file_path: PathText = None
    content_sha256: Sha256 = None
    pinned: StrictBool = False
    authority: Authority = 0
    read_only: StrictBool = False

    def provenance(self) -> Provenance:
        """The workspace provenance the request gives."""
        return Provenance(workspace_path=self.workspace_path, git_branch=self.git_branch, git_commit=self.git_commit,
                          file_path=self.file_path, content_sha256=self.content_sha256)


class NodePatch(BaseModel):
    """A partial update: only the fields given change; `space`, `title` and `valid_until` may be set to null."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: Content | None = None
    type: NodeType | None = None
    tier: Tier | None = None
    space: Space = None
    space_locked: StrictBool | None = None
    tags: Tags | None = None
    title: Title = None
    confidence: Confidence | None = None
    valid_until: UtcDatetime = None
    add_connections: Connections | None = None
    pinned: StrictBool | None = None
    authority: Authority | None = None
    read_only: StrictBool | None = None

    @field_validator(
        "content", "type", "tier", "space_locked", "tags", "confidence", "add_connections", "pinned", "authority",
        "read_only", mode="before",
    )
    @classmethod
    def _reject_null(cls, value: Any) -> Any:
        return _not_null(value)

    def changes(self) -> dict[str, Any]:
        """The fields the request actually set, with their validated values."""
        return {name: getattr(self, name) for name in sorted(self.model_fields_set)}


def validation_message(exc: ValidationError) -> str:
    """A short human message for a pydantic error, e.g. "content: must not be blank"."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def is_too_large(exc: ValidationError) -> bool:
    """True when the error is oversized content (maps to PayloadTooLarge, not ValidationFailed)."""
    return any(error["type"] == CONTENT_TOO_LARGE for error in exc.errors(include_url=False))


# ---------------------------------------------------------------------------
# Pure builders
# ---------------------------------------------------------------------------

def _connection(conn: ConnectionIn) -> Connection:
    return Connection(target=conn.target, edge=conn.edge, weight=conn.weight, reason=conn.reason,
                      valid_from=conn.valid_from, valid_until=conn.valid_until,
                      source_event_ids=tuple(conn.source_event_ids))


def build_node(req: NodeCreate, *, node_id: str, now: datetime) -> Node:
    """The node a create request describes; about_self adds the tag, and a person about_self goes to core."""
    now = as_utc(now)
    tags = list(req.tags)
    if req.about_self and ABOUT_SELF_TAG not in tags:
        tags.append(ABOUT_SELF_TAG)
    tier = Tier.CORE if req.about_self and req.type == NodeType.PERSON else req.tier
    node = Node(
        id=node_id, type=req.type, tier=tier, content=req.content, title=req.title,
        created=req.created or now, updated=now, last_accessed=now,
        space=req.space, space_locked=req.space_locked, tags=tuple(tags), source=req.source,
        confidence=req.confidence, stability=INITIAL_STABILITY,
        source_event_ids=tuple(req.source_event_ids), provenance=req.provenance(), pinned=req.pinned,
        authority=req.authority, read_only=req.read_only,
    )
    for conn in req.connections:
        node = with_connection(node, _connection(conn))
    return node


def apply_patch(node: Node, patch: NodePatch, *, now: datetime) -> Node:
    """The node with the patch applied and `updated` set to now; the very same object when nothing changes."""
    changes = patch.changes()
    fields = {k: v for k, v in changes.items() if k != "add_connections"}
    if "tags" in fields:
        kept = [t for t in SELF_TAGS if t in node.tags and t not in fields["tags"]] if is_self_node(node) else []
        fields["tags"] = (*kept, *fields["tags"])  # the self node keeps the tags that make it the self node
    new = replace(node, **fields) if fields else node
    for conn in changes.get("add_connections") or ():
        new = with_connection(new, _connection(conn))
    if new == node:
        return node
    return replace(new, updated=as_utc(now))


def auto_title(content: str) -> str:
    """A display title: the first line, or its first 60 characters cut at a word with "…"."""
    stripped = content.strip()
    line = stripped.splitlines()[0].strip() if stripped else ""
    if len(line) <= AUTO_TITLE_CHARS:
        return line
    head = line[: AUTO_TITLE_CHARS + 1]
    cut = head.rfind(" ")
    head = head[:cut] if cut > 0 else line[:AUTO_TITLE_CHARS]
    return head.rstrip() + "…"
