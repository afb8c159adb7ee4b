"""REST routes of trust in recall (mounted under /api/agent/): context packs, evidence, relations, verification
records, session states and core blocks (docs/trust.md).

Routes call services and selectors and shape the answer; errors are OrmahError, mapped in ormah_site.api.
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import ConfigDict, Field

from memory.context.pack import context_pack_build
from memory.context.selectors import evidence_list, evidence_rows, session_state_get, verification_list
from memory.domain.evidence import EvidenceEvent, EvidenceKind
from memory.domain.packing import pack_text
from memory.domain.trust_requests import (
    ContextPackIn,
    EvidenceBatchIn,
    RelationIn,
    SessionStateIn,
    VerificationIn,
)
from memory.models import EvidenceRow
from memory.schemas import ErrorOut, NodeOut
from memory.search.evidence import evidence_search
from memory.selectors import node_row_get
from memory.services import (
    core_block_set,
    evidence_record,
    relation_create,
    session_state_set,
    verification_record,
)
from memory.trust_schemas import (
    ContextPackOut,
    CoreBlockIn,
    EvidenceListOut,
    RelationOut,
    SessionStateOut,
    VerificationOut,
)

router = Router(tags=["trust"])


def _answers(ok: dict | type, *codes: int) -> dict:
    success = ok if isinstance(ok, dict) else {200: ok}
    return {**success, **{code: ErrorOut for code in {400, 401, 422, *codes}}}


def _event_out(e: EvidenceEvent) -> dict:
    return {"id": e.id, "kind": e.kind.value, "at": e.at, "text": e.text, "session_id": e.session_id,
            "scope": {"type": e.scope.type.value, "id": e.scope.id}, "source": e.source, "data": dict(e.data)}


def _row_out(r: EvidenceRow) -> dict:
    return {"id": r.uid, "kind": r.kind, "at": r.at, "text": r.text, "session_id": r.session_id,
            "scope": {"type": r.scope_type, "id": r.scope_id}, "source": r.source, "data": r.data}


# ---------------------------------------------------------------------------
# Context packs
# ---------------------------------------------------------------------------

@router.post("/context-pack", response=_answers(ContextPackOut), summary="A budgeted, cited context pack")
def context_pack(request: HttpRequest, payload: ContextPackIn):
    """Core blocks, session state, memories, resources and evidence by policy, never above `budget_tokens`.

    Items are never dropped for their warnings: `recall_warnings` and `verification_warnings` say what to doubt.
    """
    result = context_pack_build(request=payload)
    return {"query": result.query, "policy": result.policy.value, "budget_tokens": result.budget_tokens,
            "items": result.items, "estimated_tokens": result.estimated_tokens,
            "verification_warnings": result.verification_warnings, "recall_warnings": result.recall_warnings,
            "text": pack_text(result)}


# ---------------------------------------------------------------------------
# Evidence
# ---------------------------------------------------------------------------

@router.post("/evidence", response=_answers({201: EvidenceListOut}, 413, 507), summary="Append evidence events")
def evidence_append_route(request: HttpRequest, payload: EvidenceBatchIn):
    """Append events to today's evidence file (fsynced) and index them; ids are assigned here."""
    return Status(201, {"events": [_event_out(e) for e in evidence_record(items=payload.events)]})


class EvidenceQuery(Schema):
    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(default=None, max_length=2000, description="full-text query")
    session_id: str | None = Field(default=None, max_length=200)
    kind: EvidenceKind | None = None
    limit: int = Field(default=20, ge=1, le=200)


@router.get("/evidence", response=_answers(EvidenceListOut), summary="Search or list evidence")
def evidence_query(request: HttpRequest, filters: Query[EvidenceQuery]):
    """Full-text search over evidence (`q`), or the newest events; optionally one session's or one kind."""
    if filters.q:
        hits = evidence_search(filters.q, filters.limit, session_id=filters.session_id,
                               kinds=(filters.kind.value,) if filters.kind else ())
        rows = evidence_rows(uids=[h.uid for h in hits])
        found = [rows[h.uid] for h in hits if h.uid in rows]
    else:
        found = evidence_list(session_id=filters.session_id, kind=filters.kind.value if filters.kind else None,
                              limit=filters.limit)
    return {"events": [_row_out(r) for r in found]}


# ---------------------------------------------------------------------------
# Relations, verification, sessions, core blocks
# ---------------------------------------------------------------------------

@router.post("/relations", response=_answers(RelationOut, 404, 409), summary="Relate two memories in time")
def relation_route(request: HttpRequest, payload: RelationIn):
    """supersedes (stored as evolved_from), contradicts, derives (derived_from), extends, supports; optional window."""
    made = relation_create(request=payload, source="api")
    conn = made.connection
    return {"from_id": made.from_id, "to_id": made.to_id, "relation": made.relation.value, "edge": made.edge.value,
            "weight": conn.weight, "reason": conn.reason, "valid_from": conn.valid_from,
            "valid_until": conn.valid_until, "source_event_ids": list(conn.source_event_ids),
            "reused_edge": made.reused_edge}


@router.post("/verifications", response=_answers({201: VerificationOut}, 404, 409), summary="Record a check")
def verification_route(request: HttpRequest, payload: VerificationIn):
    """The outcome of checking a memory; the latest non-passed one shows as a warning in context packs."""
    return Status(201, verification_record(request=payload))


@router.get("/nodes/{node_id}/verifications", response=_answers(list[VerificationOut], 404, 409),
            summary="Checks of a memory")
def verification_history(request: HttpRequest, node_id: str, limit: int = Query(20, ge=1, le=200)):
    """The checks of one memory, newest first."""
    return verification_list(target_uid=node_row_get(ref=node_id).uid, limit=limit)


@router.put("/sessions/{session_id}/state", response=_answers(SessionStateOut, 507), summary="Set session state")
def session_state_put(request: HttpRequest, session_id: str, payload: SessionStateIn):
    """Record the session's current task (an evidence event) and return the projected state."""
    return session_state_set(session_id=session_id, request=payload, source="api")


@router.get("/sessions/{session_id}/state", response=_answers(SessionStateOut, 404), summary="Session state")
def session_state_read(request: HttpRequest, session_id: str):
    """The latest recorded state of a session."""
    return session_state_get(session_id=session_id)


@router.post("/nodes/{node_id}/core-block", response=_answers(NodeOut, 404, 409), summary="Make a core block")
def core_block_route(request: HttpRequest, node_id: str, payload: CoreBlockIn):
    """Move a memory to core and set pinned / authority / read_only (read-only: tooling never edits it)."""
    return core_block_set(ref=node_id, pinned=payload.pinned, authority=payload.authority,
                          read_only=payload.read_only)
