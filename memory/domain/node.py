"""The memory node and its outgoing connections: immutable values, UTC datetimes throughout."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from memory.domain.enums import INITIAL_STABILITY, EdgeType, NodeType, Tier

# Front-matter keys owned by Node fields; anything else found in a file lives in Node.extra.
RESERVED_KEYS = frozenset({
    "id", "type", "tier", "source", "created", "updated", "last_accessed", "access_count", "confidence",
    "importance", "stability", "last_review", "valid_until", "deleted_at", "title", "space", "space_locked",
    "tags", "connections",
    # trust (docs/trust.md): evidence citations, workspace provenance, core-block flags
    "source_event_ids", "workspace_path", "git_branch", "git_commit", "file_path", "content_sha256",
    "pinned", "authority", "read_only",
})
PROVENANCE_KEYS = ("workspace_path", "git_branch", "git_commit", "file_path", "content_sha256")


def utcnow() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


def new_node_id() -> str:
    """A fresh node id (uuid4, canonical lowercase string)."""
    return str(uuid.uuid4())


def as_utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is taken to be UTC already."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class FrozenMapping(Mapping[str, Any]):
    """A read-only mapping that, unlike MappingProxyType, can be pickled and deep-copied."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", copy.deepcopy(dict(data or {})))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FrozenMapping is read-only")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMapping, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"


@dataclass(frozen=True, slots=True)
class Connection:
    """A directed, typed, weighted edge stored in its source node's file.

    `valid_from` / `valid_until` bound when the relation holds (open ends when None); `source_event_ids` cite the
    evidence that supports it (docs/trust.md).
    """

    target: str
    edge: EdgeType = EdgeType.RELATED_TO
    weight: float = 0.5
    reason: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    source_event_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "edge", EdgeType(self.edge))
        object.__setattr__(self, "source_event_ids", tuple(self.source_event_ids))
        for name in ("valid_from", "valid_until"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, as_utc(value))

    def is_active(self, now: datetime) -> bool:
        """True when `now` lies inside the validity window [valid_from, valid_until)."""
        now = as_utc(now)
        return (self.valid_from is None or self.valid_from <= now) and (self.valid_until is None or now < self.valid_until)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory was made: workspace root, git branch and commit, a file in it and that file's SHA-256."""

    workspace_path: str | None = None
    git_branch: str | None = None
    git_commit: str | None = None
    file_path: str | None = None
    content_sha256: str | None = None

    @property
    def is_empty(self) -> bool:
        """True when no provenance key is set."""
        return all(getattr(self, key) is None for key in PROVENANCE_KEYS)


NO_PROVENANCE = Provenance()


@dataclass(frozen=True, slots=True)
class Node:
    """One memory, exactly as its markdown file holds it.

    Datetimes are normalised to aware UTC (naive ones are taken as UTC). `extra` holds front-matter keys this
    version does not know, read-only and detached from the caller's dict; it is compared but not hashed.
    `source_event_ids`, `provenance`, `pinned`, `authority` and `read_only` are the trust fields (docs/trust.md).
    """

    id: str
    type: NodeType
    tier: Tier
    content: str
    created: datetime
    updated: datetime
    last_accessed: datetime
    title: str | None = None
    space: str | None = None
    space_locked: bool = False
    tags: tuple[str, ...] = ()
    source: str = "agent:unknown"
    connections: tuple[Connection, ...] = ()
    confidence: float = 1.0
    importance: float = 0.5
    access_count: int = 0
    last_review: datetime | None = None
    valid_until: datetime | None = None
    stability: float = INITIAL_STABILITY
    deleted_at: datetime | None = None
    source_event_ids: tuple[str, ...] = ()
    provenance: Provenance = NO_PROVENANCE
    pinned: bool = False
    authority: int = 0
    read_only: bool = False
    extra: Mapping[str, Any] = field(default_factory=FrozenMapping, hash=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "type", NodeType(self.type))
        set_(self, "tier", Tier(self.tier))
        set_(self, "tags", tuple(self.tags))
        set_(self, "connections", tuple(self.connections))
        set_(self, "source_event_ids", tuple(self.source_event_ids))
        for name in ("created", "updated", "last_accessed"):
            set_(self, name, as_utc(getattr(self, name)))
        for name in ("last_review", "valid_until", "deleted_at"):
            value = getattr(self, name)
            if value is not None:
                set_(self, name, as_utc(value))
        clash = RESERVED_KEYS.intersection(self.extra)
        if clash:
            raise ValueError(f"extra must not hold node fields: {sorted(clash)}")
        set_(self, "extra", FrozenMapping(self.extra))

    @property
    def short_id(self) -> str:
        """The first uuid segment (8 hex characters), used in filenames and displays."""
        return self.id[:8]

    def is_outdated(self, now: datetime) -> bool:
        """True once valid_until has passed (mark_outdated sets it to the moment of marking)."""
        return self.valid_until is not None and self.valid_until <= as_utc(now)


def with_connection(node: Node, conn: Connection) -> Node:
    """The node with `conn` added, replacing a connection to the same target with the same edge type.

    Returns `node` itself when it already holds exactly this connection.
    """
    if conn in node.connections:
        return node
    kept = []
    replaced = False
    for existing in node.connections:
        if existing.target == conn.target and existing.edge == conn.edge:
            if not replaced:
                kept.append(conn)
                replaced = True
            continue
        kept.append(existing)
    if not replaced:
        kept.append(conn)
    return replace(node, connections=tuple(kept))


def without_connection(node: Node, target: str, edge: EdgeType | None = None) -> Node:
    """The node without its connections to `target` (only those of type `edge` when given).

    Returns `node` itself when nothing matched.
    """
    kept = tuple(
        c for c in node.connections if not (c.target == target and (edge is None or c.edge == edge))
    )
    if len(kept) == len(node.connections):
        return node
    return replace(node, connections=kept)
