"""Proposal view-models: each proposal with cards of its memories; the merge history.

Built on maintenance.selectors and memory.cards (reads only); every value returned is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from maintenance.selectors import merges_list, proposal_get, proposals_list
from memory.cards import NodeCard, node_cards

# ---------------------------------------------------------------------------
# Proposals
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ProposalView:
    id: str
    kind: str
    status: str
    action: str
    reason: str
    score: float
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None
    decided_by: str
    result: dict
    nodes: list[NodeCard]
    preview_title: str | None = None
    preview_content: str | None = None
    keep_id: str | None = None
    discard_id: str | None = None
    edge: dict | None = None  # link/conflict: source, target, edge, weight
    payload: dict | None = None
    group_key: str = ""  # proposals that share a cause (set by the detectors when they group)
    group_label: str = ""


def proposal_views(rows: list) -> list[ProposalView]:
    """Views of proposal rows with cards of their memories (one query for all the cards)."""
    cards = node_cards(uids=sorted({u for r in rows for u in r.node_uids}))
    out = []
    for r in rows:
        p = r.payload or {}
        edge = None
        if r.kind in ("link", "conflict") and p.get("source_id"):
            edge = {"source": p.get("source_id"), "target": p.get("target_id"), "edge": p.get("edge"),
                    "weight": p.get("weight")}
        out.append(ProposalView(
            id=r.proposal_id, kind=r.kind, status=r.status, action=r.action, reason=r.reason, score=r.score,
            created_at=r.created_at, expires_at=r.expires_at, decided_at=r.decided_at, decided_by=r.decided_by,
            result=r.result or {}, nodes=[cards[u] for u in r.node_uids],
            preview_title=p.get("merged_title") or p.get("title"),
            preview_content=p.get("merged_content") or p.get("content"),
            keep_id=p.get("keep_id"), discard_id=p.get("discard_id"), edge=edge, payload=p,
            group_key=getattr(r, "group_key", "") or "", group_label=getattr(r, "group_label", "") or "",
        ))
    return out


def proposal_view(*, proposal_id: str) -> ProposalView | None:
    """One proposal for re-rendering after a decision (None when there is no such proposal)."""
    row = proposal_get(proposal_id=proposal_id)
    return proposal_views([row])[0] if row is not None else None


def proposals_for_node(*, uid: str, limit: int = 20) -> list[ProposalView]:
    """Pending proposals that name a memory (for the node panel)."""
    rows = [r for r in proposals_list(status="pending", limit=500) if uid in r.node_uids][:limit]
    return proposal_views(rows)


@dataclass(frozen=True)
class MergeView:
    merge_id: str
    kept: NodeCard
    removed: NodeCard
    reason: str
    merged_at: datetime
    undone_at: datetime | None


def merge_history(*, limit: int = 20) -> list[MergeView]:
    """Recent merges, newest first, with cards of both memories (the removed one exists again after an undo)."""
    rows = merges_list(limit=limit)
    cards = node_cards(uids=sorted({u for m in rows for u in (m.kept_uid, m.removed_uid)}))
    return [MergeView(merge_id=m.merge_id, kept=cards[m.kept_uid], removed=cards[m.removed_uid], reason=m.reason,
                      merged_at=m.merged_at, undone_at=m.undone_at) for m in rows]
