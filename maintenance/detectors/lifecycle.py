"""Importance (reference §6.7) and decay (§6.8) as pure arithmetic on a node's facts."""

from __future__ import annotations

import math
from datetime import datetime

from maintenance.detectors.facts import NodeFacts, ProposalDraft, ProposalKind, basis_of, group_of
from maintenance.detectors.payloads import DecayPayload
from memory.domain.lifecycle import ImportanceWeights
from memory.domain.lifecycle import importance as formula


def days_since(then: datetime, now: datetime) -> float:
    return max(0.0, (now - then).total_seconds() / 86400.0)


def importance(node: NodeFacts, degree: int, now: datetime, w: ImportanceWeights = ImportanceWeights()) -> float:
    """The formula (memory.domain.lifecycle.importance, the one remember writes at creation) on a node's facts."""
    return formula(access_count=node.access_count, degree=degree, last_accessed=node.last_accessed, now=now, w=w)


def importance_changes(nodes: list[NodeFacts], degrees: dict[str, int], now: datetime,
                       w: ImportanceWeights = ImportanceWeights()) -> dict[str, float]:
    """New values for the nodes whose importance moved by at least `min_change`."""
    out = {}
    for node in nodes:
        value = importance(node, degrees.get(node.uid, 0), now, w)
        if abs(value - node.importance) >= w.min_change:
            out[node.uid] = value
    return out


def retrievability(node: NodeFacts, now: datetime) -> float:
    """R = exp(−t/S), t in days since the last review (or last access), as memory.domain.lifecycle computes it."""
    anchor = node.last_review or node.last_accessed
    return math.exp(-max(days_since(anchor, now), 0.001) / max(node.stability, 1e-6))


def decays(node: NodeFacts, now: datetime, threshold: float) -> bool:
    """A working memory (never the self node) whose retrievability fell below the threshold."""
    return node.tier == "working" and not node.is_self and retrievability(node, now) < threshold


def decay_draft(node: NodeFacts, r: float) -> ProposalDraft:
    """Identity memories are not archived silently: a proposal instead."""
    return ProposalDraft(
        kind=ProposalKind.DECAY, node_uids=(node.uid,), action="Move this identity memory to archival",
        reason=f"Not recalled for a while (retrievability {r:.2f})", score=round(1.0 - r, 4),
        payload=DecayPayload(node_id=node.uid).as_json(),
        basis=basis_of(node),
        group=group_of(ProposalKind.DECAY, "identity", "Identity memories not recalled for a while"),
    )
