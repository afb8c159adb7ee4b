"""Trust reads: relations, citations, provenance, verification, core blocks, session states, evidence rows.

Everything here reads the derived index and the ledgers; nothing writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from memory.domain.enums import Tier
from memory.domain.node import PROVENANCE_KEYS, Provenance
from memory.domain.requests import ABOUT_SELF_TAG, auto_title
from memory.domain.scopes import Scope, ScopeType
from memory.domain.trust import (
    WARNING_EDGES,
    Relation,
    RelationKind,
    SessionStatus,
    VerificationStatus,
    VerificationWarning,
    relation_of,
)
from memory.errors import SessionStateNotFound
from memory.index_rows import SUPERSEDED_BY_KEY
from memory.models import (
    EvidenceRow,
    NodeCitationRow,
    NodeRow,
    NodeTagRow,
    SessionStateRow,
    VerificationRow,
)
from memory.search.rows import trust_rows


# ---------------------------------------------------------------------------
# Per-memory trust facts
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TrustFacts:
    """What the warnings of one memory depend on."""

    uid: str
    provenance: Provenance
    citations: tuple[str, ...]
    relations: tuple[Relation, ...]


def _trust_data(row_json: str) -> dict:
    try:
        data = json.loads(row_json or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def trust_facts(*, uids: Sequence[str]) -> dict[str, TrustFacts]:
    """Provenance, citations and the temporal relations touching each memory (both directions, live ends only)."""
    uids = list(dict.fromkeys(uids))
    if not uids:
        return {}
    found = trust_rows(uids, WARNING_EDGES)
    uid_of = {row_id: uid for row_id, uid, _ in found.nodes}
    cites: dict[str, list[str]] = {uid: [] for uid in uid_of.values()}
    for node_id, event_id in found.citations:
        cites[uid_of[node_id]].append(event_id)
    rels: dict[str, list[Relation]] = {uid: [] for uid in uid_of.values()}
    for src, dst, edge, start, end in found.edges:
        rel = relation_of(edge, from_id=src, to_id=dst, valid_from=start, valid_until=end)
        for uid in (src, dst):
            if rel is not None and uid in rels:
                rels[uid].append(rel)
    data = {uid: _trust_data(tj) for _, uid, tj in found.nodes}
    successors = {d[SUPERSEDED_BY_KEY] for d in data.values() if isinstance(d.get(SUPERSEDED_BY_KEY), str)}
    live = set(NodeRow.objects.filter(uid__in=list(successors)).values_list("uid", flat=True)) if successors else set()
    for uid, d in data.items():
        successor = d.get(SUPERSEDED_BY_KEY)
        if successor in live and successor != uid:  # consolidation's marker is a supersession too
            rels[uid].append(Relation(kind=RelationKind.SUPERSEDES, from_id=successor, to_id=uid))
    return {uid: TrustFacts(
        uid=uid, provenance=Provenance(**{k: data[uid].get(k) for k in PROVENANCE_KEYS}),
        citations=tuple(dict.fromkeys(cites[uid])), relations=tuple(rels[uid]),
    ) for uid in data}


def known_events(*, ids: Sequence[str]) -> set[str]:
    """Which of these evidence ids the ledger holds."""
    return set(EvidenceRow.objects.filter(uid__in=list(set(ids))).values_list("uid", flat=True))


def node_labels(*, uids: Sequence[str]) -> dict[str, str]:
    """A short display title per memory."""
    return {uid: (title or auto_title(content))[:80] for uid, title, content in
            NodeRow.objects.filter(uid__in=list(set(uids))).values_list("uid", "title", "content")}


def outdated_uids(*, uids: Sequence[str], now: datetime) -> set[str]:
    """Which of these memories were marked outdated by `now`."""
    return set(NodeRow.objects.filter(uid__in=list(set(uids)), valid_until__lte=now).values_list("uid", flat=True))


def verification_warnings(*, ids: Sequence[str]) -> dict[str, VerificationWarning]:
    """The latest check of each id when it did not pass (failed, stale, unknown, warning)."""
    latest: dict[str, VerificationRow] = {}
    for row in VerificationRow.objects.filter(target_uid__in=list(set(ids))).order_by("target_uid", "-created",
                                                                                        "-id"):
        latest.setdefault(row.target_uid, row)
    return {uid: VerificationWarning(item_id=uid, status=VerificationStatus(r.status), message=r.message,
                                     checker=r.checker, checked_at=r.created)
            for uid, r in latest.items() if r.status != VerificationStatus.PASSED}


def verification_list(*, target_uid: str, limit: int = 20) -> list[VerificationRow]:
    """The checks of one memory, newest first."""
    return list(VerificationRow.objects.filter(target_uid=target_uid).order_by("-created", "-id")[:limit])


# ---------------------------------------------------------------------------
# Scopes, core blocks and session states
# ---------------------------------------------------------------------------

def scope_spaces(scope: Scope | None, *, workspace_space: str | None = None) -> list[str | None] | None:
    """The spaces a scope reads (None: every space). Global memories belong to every scope."""
    if scope is None or scope.type == ScopeType.SESSION:
        return None
    if scope.type in (ScopeType.GLOBAL, ScopeType.USER):
        return [None]
    space = scope.id if scope.type == ScopeType.PROJECT else workspace_space
    return [space, None] if space else [None]


def core_blocks(*, spaces: list[str | None] | None, now: datetime, limit: int = 50) -> list[NodeRow]:
    """Live core-tier memories of these spaces: pinned first, then by authority and importance."""
    rows = NodeRow.objects.filter(tier=Tier.CORE, is_self=False).filter(
        Q(valid_until__isnull=True) | Q(valid_until__gt=now))
    if spaces is not None:
        named = [s for s in spaces if s is not None]
        rows = rows.filter(Q(space__in=named) | Q(space__isnull=True)) if None in spaces else rows.filter(
            space__in=named)
    return list(rows.order_by("-pinned", "-authority", "-importance", "uid")[:limit])


def about_self_uids() -> set[str]:
    """Memories about the user (the user scope)."""
    return set(NodeTagRow.objects.filter(tag=ABOUT_SELF_TAG).values_list("node__uid", flat=True))


def session_uids(*, session_id: str) -> set[str]:
    """Memories citing evidence of this session (the session scope)."""
    events = EvidenceRow.objects.filter(session_id=session_id).values_list("uid", flat=True)
    return set(NodeCitationRow.objects.filter(event_id__in=events).values_list("node__uid", flat=True))


def session_state_get(*, session_id: str) -> SessionStateRow:
    """The projected state of one session. Raises SessionStateNotFound."""
    row = SessionStateRow.objects.filter(session_id=session_id.strip()).first()
    if row is None:
        raise SessionStateNotFound(f"No state recorded for session {session_id}")
    return row


def active_session_states(*, session_id: str | None, scope: Scope | None, limit: int = 3) -> list[SessionStateRow]:
    """Active states the router may pack: the named session's, else those recorded for exactly this scope."""
    rows = SessionStateRow.objects.filter(status=SessionStatus.ACTIVE.value)
    if session_id:
        rows = rows.filter(session_id=session_id)
    elif scope is not None and scope.type != ScopeType.SESSION:
        rows = rows.filter(scope_type=scope.type.value, scope_id=scope.id)
    elif scope is not None:
        rows = rows.filter(session_id=scope.id)
    else:
        return []
    return list(rows.order_by("-updated", "session_id")[:limit])


def evidence_rows(*, uids: Sequence[str]) -> dict[str, EvidenceRow]:
    """Evidence rows by id."""
    return {r.uid: r for r in EvidenceRow.objects.filter(uid__in=list(set(uids)))}


def evidence_list(*, session_id: str | None = None, kind: str | None = None, limit: int = 50) -> list[EvidenceRow]:
    """The newest evidence events, optionally of one session or kind."""
    rows = EvidenceRow.objects.all()
    if session_id:
        rows = rows.filter(session_id=session_id)
    if kind:
        rows = rows.filter(kind=kind)
    return list(rows.order_by("-at", "-id")[:limit])
