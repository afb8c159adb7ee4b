"""Validated trust requests: evidence events, relations, verification records, session states, scopes, workspaces."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from memory.domain.evidence import MAX_EVENT_TEXT, EvidenceKind
from memory.domain.packing import MAX_BUDGET_TOKENS, PackPolicy
from memory.domain.requests import MAX_REASON_CHARS, MAX_SPACE_CHARS, MAX_TARGET_CHARS, Branch, Commit, EventIds, \
    PathText, Source, UtcDatetime
from memory.domain.scopes import Scope, ScopeType
from memory.domain.trust import RelationKind, SessionStatus, VerificationStatus

MAX_DATA_BYTES = 64 * 1024
MAX_SESSION_CHARS = 200
MAX_SCOPE_ID_CHARS = 300
MAX_WORKING_SET = 200
MAX_SUMMARY_CHARS = 8000
MAX_EVENTS = 500


def _data(value: dict[str, Any]) -> dict[str, Any]:
    try:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        raise ValueError("must be JSON (and not nested too deeply)") from None
    if size > MAX_DATA_BYTES:
        raise ValueError(f"must be at most {MAX_DATA_BYTES} bytes of JSON")
    if _holds_nul(value):
        raise ValueError("must not contain NUL characters")
    return value


def _holds_nul(value: Any) -> bool:
    """A NUL in any key or string of the JSON (the ledger and PostgreSQL's jsonb and text refuse it)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_holds_nul(v) for v in value)
    return False


def _text(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _scope(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parsed = Scope.parse(value)
        except ValueError:
            raise ValueError(f"'{value}' is not one of global, user, project:NAME, workspace:/PATH or "
                             "session:ID") from None
        return {"type": parsed.type.value, "id": parsed.id}
    return value


def _session(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    return value.strip()


Data = Annotated[dict[str, Any], AfterValidator(_data)]
SessionId = Annotated[str | None, Field(default=None, max_length=MAX_SESSION_CHARS), AfterValidator(_session)]


class ScopeIn(BaseModel):
    """A scope: `{"type": "project", "id": "ormah"}` (or the string `project:ormah`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ScopeType
    id: str = Field(min_length=1, max_length=MAX_SCOPE_ID_CHARS)

    def to_scope(self) -> Scope:
        """The domain value."""
        return Scope(type=self.type, id=self.id.strip() or self.type.value)


ScopeField = Annotated[ScopeIn | None, BeforeValidator(_scope)]


class WorkspaceIn(BaseModel):
    """The agent's workspace: its folder and, optionally, the git branch and commit it is on (else read from git)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Annotated[PathText, Field(json_schema_extra={"pattern": r"^\s*/"})]  # what _absolute accepts (review7)
    branch: Branch = None
    commit: Commit = None

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is None or not value.startswith("/"):
            raise ValueError("must be an absolute path")
        return value


class EvidenceIn(BaseModel):
    """One evidence event to append."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EvidenceKind
    text: Annotated[str, AfterValidator(_text)] = Field(default="", max_length=MAX_EVENT_TEXT)
    session_id: SessionId = None
    scope: ScopeField = None
    source: Source = ""
    data: Data = Field(default_factory=dict)


class EvidenceBatchIn(BaseModel):
    """Up to 500 events, appended in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    events: list[EvidenceIn] = Field(min_length=1, max_length=MAX_EVENTS)


class RelationIn(BaseModel):
    """A temporal relation `from_id` -> `to_id`, stored as a connection in `from_id`'s file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    from_id: str = Field(min_length=1, max_length=MAX_TARGET_CHARS)
    to_id: str = Field(min_length=1, max_length=MAX_TARGET_CHARS)
    relation: RelationKind
    weight: float = Field(default=0.9, ge=0.0, le=1.0, allow_inf_nan=False)
    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)
    valid_from: UtcDatetime = None
    valid_until: UtcDatetime = None
    source_event_ids: EventIds = Field(default_factory=list)


class VerificationIn(BaseModel):
    """The outcome of one check of a memory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target_id: str = Field(min_length=1, max_length=MAX_TARGET_CHARS)
    status: VerificationStatus
    checker: str = Field(default="", max_length=200)
    message: str = Field(default="", max_length=MAX_REASON_CHARS)
    detail: Data = Field(default_factory=dict)
    evidence_event_id: str | None = Field(default=None, max_length=100)


class SessionStateIn(BaseModel):
    """A session's current task: status, goal, summary and the files it works on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: SessionStatus = SessionStatus.ACTIVE
    current_goal: str = Field(default="", max_length=MAX_REASON_CHARS)
    summary: str = Field(default="", max_length=MAX_SUMMARY_CHARS)
    working_set: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(default_factory=list,
                                                                                   max_length=MAX_WORKING_SET)
    scope: ScopeField = None
    source_event_ids: EventIds = Field(default_factory=list)


class ContextPackIn(BaseModel):
    """What to pack: a query, a token budget, a policy, and optionally a scope, a workspace and a session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(default="", max_length=2000)
    budget_tokens: int = Field(default=1200, ge=0, le=MAX_BUDGET_TOKENS)
    policy: PackPolicy = PackPolicy.AUTO
    scope: ScopeField = None
    workspace: WorkspaceIn | None = None
    session_id: SessionId = None
    default_space: str | None = Field(default=None, max_length=100)

    @field_validator("scope")
    @classmethod
    def _project_is_a_space(cls, value: ScopeIn | None) -> ScopeIn | None:
        # a project scope's id is the space recall ranks first (SearchQuery.default_space, at most a space's length)
        if value is not None and value.type == ScopeType.PROJECT and len(value.id.strip()) > MAX_SPACE_CHARS:
            raise ValueError(f"a project's id is a space: at most {MAX_SPACE_CHARS} characters")
        return value
