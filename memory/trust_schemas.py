"""Ninja schemas of the trust API (docs/trust.md): warnings, context packs, evidence, relations, checks, sessions.

Inputs are the domain request models of memory.domain.trust_requests; these are the outputs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema
from pydantic import ConfigDict, Field

from memory.domain.requests import MAX_AUTHORITY


class WarningOut(Schema):
    """Why a recalled item may not hold any more; `related_id` names the other memory, the event or the file."""

    kind: str
    item_id: str
    message: str
    related_id: str | None = None


class VerificationWarningOut(Schema):
    """The latest check of an item when it did not pass."""

    item_id: str
    status: str
    message: str
    checker: str
    checked_at: datetime


class PackItemOut(Schema):
    """One packed item: a core block, a session state, a fact, a resource (file-bound memory) or an event."""

    kind: str
    id: str
    text: str
    citations: list[str]
    score: float
    tokens: int
    truncated: bool


class ContextPackOut(Schema):
    query: str
    policy: str
    budget_tokens: int
    items: list[PackItemOut]
    estimated_tokens: int
    verification_warnings: list[VerificationWarningOut]
    recall_warnings: list[WarningOut]
    text: str


class EvidenceOut(Schema):
    """One evidence event."""

    id: str
    kind: str
    at: datetime
    text: str
    session_id: str | None
    scope: dict[str, str]
    source: str
    data: dict[str, Any]


class EvidenceListOut(Schema):
    events: list[EvidenceOut]


class RelationOut(Schema):
    """A temporal relation as stored: the connection in `from_id`'s file (`edge` is its stored edge type)."""

    from_id: str
    to_id: str
    relation: str
    edge: str
    weight: float
    reason: str | None
    valid_from: datetime | None
    valid_until: datetime | None
    source_event_ids: list[str]
    reused_edge: bool


class VerificationOut(Schema):
    id: int
    target_id: str
    status: str
    checker: str
    message: str
    detail: dict[str, Any]
    evidence_event_id: str | None
    created: datetime

    @staticmethod
    def resolve_target_id(obj) -> str:
        return obj.target_uid


class SessionStateOut(Schema):
    session_id: str
    status: str
    current_goal: str
    summary: str
    working_set: list[str]
    scope: dict[str, str]
    source_event_ids: list[str]
    updated: datetime

    @staticmethod
    def resolve_scope(obj) -> dict[str, str]:
        return {"type": obj.scope_type, "id": obj.scope_id}


class CoreBlockIn(Schema):
    """Make a memory a core block and set its flags (omitted flags keep their value)."""

    model_config = ConfigDict(extra="forbid")

    pinned: bool | None = None
    authority: int | None = Field(default=None, ge=0, le=MAX_AUTHORITY)
    read_only: bool | None = None
