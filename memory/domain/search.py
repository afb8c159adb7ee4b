"""Search request and result values shared by the pipeline, the API, the MCP server and whisper."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory.domain.enums import NodeType, Tier
from memory.domain.requests import MAX_SPACE_CHARS, tag_normal
from memory.domain.trust import RecallWarning
from memory.domain.trust_requests import WorkspaceIn

MAX_QUERY_CHARS = 2000


class SearchQuery(BaseModel):
    """What a caller asks of recall (deliberate search)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    limit: int = Field(default=10, ge=1, le=100)
    types: list[NodeType] | None = None
    tiers: list[Tier] | None = None
    spaces: list[str | None] | None = None
    tags: list[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    # the caller's current project, for space scoring; logged with the surfacing (a varchar(100) on PostgreSQL)
    default_space: str | None = Field(default=None, max_length=MAX_SPACE_CHARS)
    include_outdated: bool = False
    activation: bool = True
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)  # None: RecallConf.min_relevance (0.3)
    workspace: WorkspaceIn | None = None  # the agent's workspace: hits get drift warnings (docs/trust.md)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("tags")
    @classmethod
    def _tags_as_stored(cls, value: list[str] | None) -> list[str] | None:
        """The asked tags as writes store them (lowercased), so the filter matches in any case on every backend."""
        return None if value is None else [t for t in map(tag_normal, value) if t]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked result; `legs` names what found it (fts, vector, activation, temporal).

    `warnings` say why it may not hold any more (superseded, contradicted, citation missing, workspace drift);
    recall attaches them and never drops a hit for them.
    """

    node_id: str
    row_id: int
    short_id: str
    title: str
    content: str
    type: str
    tier: str
    space: str | None
    tags: tuple[str, ...]
    created: datetime
    updated: datetime
    valid_until: datetime | None
    confidence: float
    score: float
    source: str  # hybrid | fts | vector | activated | conflict | temporal
    legs: tuple[str, ...] = ()
    raw_cosine: float | None = None
    fts_rank: int | None = None
    vector_rank: int | None = None
    activated_by: str | None = None
    activation_edge: str | None = None
    warnings: tuple[RecallWarning, ...] = ()
    passage: tuple[int, int] | None = None  # (start, end) in content of the passage that matched a long memory

    @property
    def snippet_text(self) -> str:
        """The matching passage of a long memory, else the content."""
        return self.content[self.passage[0]:self.passage[1]] if self.passage else self.content
