"""Session state: the compact projection of a session's current task, backed by evidence (docs/trust.md).

Setting a state appends a system_event (`data.type = session_state`) to the evidence ledger; the SessionStateRow
is projected from that event by the evidence indexer, so a rebuild from the day files yields the same states.
"""

from __future__ import annotations

from datetime import datetime

from memory.domain.evidence import EvidenceEvent, EvidenceKind, new_event_id
from memory.domain.node import as_utc, utcnow
from memory.domain.scopes import Scope, ScopeType
from memory.domain.trust import SESSION_STATE_EVENT
from memory.domain.trust_requests import SessionStateIn
from memory.context.selectors import session_state_get
from memory.errors import ValidationFailed
from memory.models import SessionStateRow
from memory.services.evidence import evidence_append

MAX_SESSION_CHARS = 200


def session_state_set(*, session_id: str, request: SessionStateIn, source: str = "agent:unknown",
                      now: datetime | None = None) -> SessionStateRow:
    """Record a session's state as evidence and return its projection. Raises ValidationFailed, StorageError."""
    session_id = (session_id or "").strip()
    if not session_id or len(session_id) > MAX_SESSION_CHARS:
        raise ValidationFailed(f"session_id must be 1 to {MAX_SESSION_CHARS} characters")
    now = as_utc(now or utcnow())
    scope = request.scope.to_scope() if request.scope is not None else Scope(ScopeType.SESSION, session_id)
    summary = request.summary.strip()
    event = EvidenceEvent(
        id=new_event_id(now), kind=EvidenceKind.SYSTEM_EVENT, at=now, session_id=session_id, scope=scope,
        source=source, text=" ".join(p for p in (request.current_goal.strip(), summary) if p),
        data={"type": SESSION_STATE_EVENT, "status": request.status.value, "current_goal": request.current_goal,
              "summary": summary, "working_set": list(dict.fromkeys(request.working_set)),
              "source_event_ids": list(request.source_event_ids)},
    )
    evidence_append(events=[event])
    return session_state_get(session_id=session_id)
