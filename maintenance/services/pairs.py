"""Candidate pairs for a chunk of nodes, and the edge writes the pair jobs share."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from maintenance.detectors.facts import EdgeDraft, NodeFacts, Pair
from memory.domain.enums import EdgeType
from memory.services import audit_note_many, edge_create


def pairs_by_node(
    chunk: Sequence[NodeFacts], facts: dict[int, NodeFacts], neighbours: dict[int, list[tuple[int, float]]], *,
    seen: set[str], gone: set[str],
) -> dict[str, list[Pair]]:
    """Each node's pairs with its neighbours, skipping pairs already taken this run and nodes merged away."""
    out: dict[str, list[Pair]] = {}
    for node in chunk:
        if node.uid in gone:
            continue
        pairs = out.setdefault(node.uid, [])
        for row_id, cos in neighbours.get(node.row_id, []):
            other = facts.get(row_id)
            if other is None or other.uid in gone:
                continue
            pair = Pair(node, other, cos)
            if pair.key not in seen:
                seen.add(pair.key)
                pairs.append(pair)
    return out


def edge_apply(draft: EdgeDraft, *, job: str, now: datetime) -> None:
    """Write one edge into its source's file (through memory services) and note it in the audit log."""
    edge_create(source_ref=draft.source_uid, target_ref=draft.target_uid, edge=EdgeType(draft.edge),
                weight=round(draft.weight, 3), reason=draft.reason or None)
    audit_note_many(operation="connect", now=now, entries=[(draft.source_uid, {
        "target": draft.target_uid, "edge": draft.edge, "weight": round(draft.weight, 3), "job": job})])
