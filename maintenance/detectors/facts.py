"""The values detectors work on: a node's facts (a row's copy, never the file), candidate pairs, proposal drafts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

ABOUT_SELF_TAG = "about_self"


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

    kind: str
    node_uids: tuple[str, ...]
    action: str
    reason: str
    score: float
    payload: dict = field(default_factory=dict)

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
