"""The values detectors work on: a node's facts (a row's copy, never the file), candidate pairs, proposal drafts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

ABOUT_SELF_TAG = "about_self"


def text_hash(title: str | None, content: str) -> str:
    """The hash of what a memory says (title and content): a proposal made from it is stale once it changes."""
    return hashlib.sha256(f"{title or ''}\n\x00{content}".encode()).hexdigest()


class ProposalKind(StrEnum):
    MERGE = "merge"
    CONFLICT = "conflict"
    DECAY = "decay"
    LINK = "link"
    CONSOLIDATION = "consolidation"


@dataclass(frozen=True, slots=True)
class NodeFacts:
    row_id: int
    uid: str
    type: str
    tier: str
    space: str | None
    space_locked: bool
    title: str
    content: str
    tags: tuple[str, ...]
    created: datetime
    updated: datetime
    last_accessed: datetime
    last_review: datetime | None
    stability: float
    importance: float
    access_count: int
    is_self: bool
    embed_hash: str
    indexed_seq: int

    @property
    def identity(self) -> bool:
        """About the user (tagged about_self): changes to it are proposed, never applied silently."""
        return ABOUT_SELF_TAG in self.tags

    @property
    def label(self) -> str:
        return self.title or self.content[:60]

    @property
    def text_hash(self) -> str:
        return text_hash(self.title, self.content)


@dataclass(frozen=True, slots=True)
class Pair:
    """Two nodes and the cosine of their embeddings; `a` is the node the search started from."""

    a: NodeFacts
    b: NodeFacts
    cosine: float

    @property
    def key(self) -> str:
        return ":".join(sorted((self.a.uid, self.b.uid)))


@dataclass(frozen=True, slots=True)
class ProposalDraft:
    """A change to offer for review; `payload` holds what approving it applies."""

    kind: ProposalKind
    node_uids: tuple[str, ...]
    action: str
    reason: str
    score: float
    payload: dict = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)  # uid -> text hash of each memory as it was judged
    group: tuple[str, str] | None = None  # (key, label) of the cause it shares with other proposals

    @property
    def key(self) -> str:
        return f"{self.kind}:" + ":".join(sorted(self.node_uids))


@dataclass(frozen=True, slots=True)
class EdgeDraft:
    """An edge a detector decided on: source -> target."""

    source_uid: str
    target_uid: str
    edge: str
    weight: float
    reason: str


def group_of(kind: ProposalKind, cause: str, label: str) -> tuple[str, str]:
    """(key, label) of a group: proposals of one kind with the same cause share it and take one decision."""
    return f"{kind}:{hashlib.sha1(cause.encode()).hexdigest()[:16]}", label[:300]


def basis_of(*nodes: NodeFacts) -> dict[str, str]:
    """What each memory said when a draft was made from it."""
    return {n.uid: n.text_hash for n in nodes}
