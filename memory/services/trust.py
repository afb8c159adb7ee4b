"""Trust writes on memories: temporal relations (connections with a validity window) and core blocks.

A relation is a connection in the source memory's file (docs/trust.md): `supersedes` is stored as evolved_from
and `derives` as derived_from, so a supersession that the conflict detector already recorded is completed (window,
citations), never written twice. When the caller cites no evidence, a system_event records who related what.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.domain.enums import EdgeType, Tier
from memory.domain.evidence import EvidenceEvent, EvidenceKind, new_event_id
from memory.domain.node import Connection, Node, as_utc, utcnow
from memory.domain.requests import NodePatch
from memory.domain.trust import RELATION_EDGES, RELATION_EVENT, RelationKind
from memory.domain.trust_requests import RelationIn
from memory.models import EdgeRow
from memory.selectors import node_row_get
from memory.services.evidence import evidence_append
from memory.services.nodes import edge_create, node_update


@dataclass(frozen=True)
class RelationResult:
    from_id: str
    to_id: str
    relation: RelationKind
    edge: EdgeType
    connection: Connection
    reused_edge: bool  # the pair already had this edge (e.g. evolved_from from the conflict detector)


def relation_create(*, request: RelationIn, source: str = "agent:unknown", now: datetime | None = None,
                    automated: bool = False) -> RelationResult:
    """Relate two memories in time; returns the stored connection.

    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed (same memory, empty window), ProtectedNode.
    """
    now = as_utc(now or utcnow())
    from_row, to_row = node_row_get(ref=request.from_id), node_row_get(ref=request.to_id)
    edge = RELATION_EDGES[request.relation]
    existing = EdgeRow.objects.filter(source=from_row, target=to_row, edge_type=edge.value).first()
    reason = request.reason if request.reason is not None else (existing.reason if existing else None)
    cited = tuple(request.source_event_ids)
    if not cited and from_row.uid != to_row.uid:
        event = EvidenceEvent(
            id=new_event_id(now), kind=EvidenceKind.SYSTEM_EVENT, at=now, source=source,
            text=f"{from_row.uid} {request.relation.value} {to_row.uid}" + (f": {request.reason}" if request.reason
                                                                                else ""),
            data={"type": RELATION_EVENT, "from_id": from_row.uid, "to_id": to_row.uid,
                  "relation": request.relation.value},
        )
        cited = (evidence_append(events=[event])[0].id,)
    conn = edge_create(source_ref=from_row.uid, target_ref=to_row.uid, edge=edge, weight=request.weight,
                       reason=reason, valid_from=request.valid_from, valid_until=request.valid_until,
                       source_event_ids=cited, automated=automated)
    return RelationResult(from_id=from_row.uid, to_id=to_row.uid, relation=request.relation, edge=edge,
                          connection=conn, reused_edge=existing is not None)


def core_block_set(*, ref: str, pinned: bool | None = None, authority: int | None = None,
                   read_only: bool | None = None, now: datetime | None = None) -> Node:
    """Make a memory a core block (tier core) and set its pinned / authority / read-only flags; returns the node.

    Pinned and read-only blocks are never demoted by the core cap (node_update enforces it on entering core).
    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed.
    """
    fields = {k: v for k, v in (("pinned", pinned), ("authority", authority), ("read_only", read_only))
              if v is not None}
    return node_update(ref=ref, patch=NodePatch(tier=Tier.CORE, **fields), now=now)
