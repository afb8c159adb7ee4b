"""Writes to memories: create (remember), update, forget, restore, connect, mark outdated.

Every write goes through the write door (memory.writes): validate and build with pure domain code, then save
the file and index it in one unit of work under the cross-process write lock (docs/architecture.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime

from memory import index, runtime
from memory.conf import MemoryConf
from memory.domain.enums import EdgeType, Tier
from memory.domain.identity import is_self_node
from memory.domain.node import Connection, Node, new_node_id, utcnow, with_connection
from memory.domain.requests import NodeCreate, NodePatch, apply_patch, build_node
from memory.embeddings import embedding_text
from memory.errors import NodeNotFound, ProtectedNode, ValidationFailed
from memory.models import NodeRow
from memory.search.semantic import vector_search
from memory.selectors import node_row_get, self_row
from memory.services.guard import guard_write
from memory.writes import WriteUnit, write_unit

logger = logging.getLogger(__name__)
AUTO_LINK_CANDIDATES = 6


@dataclass(frozen=True)
class AutoLink:
    target_id: str
    title: str
    similarity: float


@dataclass(frozen=True)
class CreateResult:
    node: Node
    auto_links: list[AutoLink] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Validation and auto-links
# ---------------------------------------------------------------------------

def _resolve_connections(node: Node, *, before: Node | None = None) -> Node:
    """Replace id prefixes in connections with full ids; unknown targets are a validation error.

    Connections the node already had (`before`) are kept as they are, even when their target is gone: a dangling
    connection never blocks an edit (`ormah doctor` reports them, `doctor --heal` prunes them).
    """
    existing = set(before.connections) if before is not None else set()
    resolved = []
    for conn in node.connections:
        if conn in existing:
            resolved.append(conn)
            continue
        try:
            target = node_row_get(ref=conn.target).uid
        except NodeNotFound:
            raise ValidationFailed(f"Connection target {conn.target} does not exist") from None
        if target == node.id:
            raise ValidationFailed("A memory cannot connect to itself")
        resolved.append(replace(conn, target=target))
    return replace(node, connections=tuple(resolved))


def _auto_links(node: Node, conf: MemoryConf) -> list[AutoLink]:
    """Existing memories at or above the auto-link threshold (cosine, minus the cross-space penalty)."""
    emb = runtime.embedder(conf)
    index.ensure_vector_table(emb)
    vec = index.embed_text(embedding_text(node.title, node.content), emb)
    links = []
    linked = {c.target for c in node.connections}
    hits = vector_search(vec, AUTO_LINK_CANDIDATES + 1)  # the in-process matrix: no vec0 scan per remember
    rows = NodeRow.objects.in_bulk([hit.row_id for hit in hits])
    for hit in hits:
        row = rows.get(hit.row_id)
        if row is None or row.is_self or row.uid in linked:
            continue
        sim = hit.cosine - (conf.cross_space_penalty if (row.space or "") != (node.space or "") else 0.0)
        if sim >= conf.auto_link_threshold:
            links.append(AutoLink(target_id=row.uid, title=row.title or row.content[:60], similarity=round(sim, 3)))
    return links[:AUTO_LINK_CANDIDATES]


# ---------------------------------------------------------------------------
# Services
# ---------------------------------------------------------------------------

def node_create(*, request: NodeCreate, now: datetime | None = None, auto_link: bool = True) -> CreateResult:
    """Remember: write the file, index it, link it to the self node and to similar memories, keep the core cap.

    Raises ValidationFailed for unknown connection targets, StorageError when the file cannot be written.
    """
    now = now or utcnow()
    with write_unit() as unit:
        node = _resolve_connections(build_node(request, node_id=new_node_id(), now=now))
        links = _auto_links(node, unit.conf) if auto_link else []
        for link in links:
            node = with_connection(node, Connection(
                target=link.target_id, edge=EdgeType.RELATED_TO, weight=link.similarity,
                reason=f"auto-linked at {link.similarity:.2f} similarity",
            ))
        unit.save(node, fresh=True)
        if request.about_self:
            _link_to_self(unit, node)
        if node.tier == Tier.CORE:
            core_cap_enforce(now=now)
    return CreateResult(node=node, auto_links=links)


def node_update(*, ref: str, patch: NodePatch, now: datetime | None = None, automated: bool = False) -> Node:
    """Apply a partial update; a no-op leaves the file and `updated` untouched.

    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed, WriteConflict, ProtectedNode (an automated write to a
    read-only block, see memory.services.guard).
    """
    now = now or utcnow()
    with write_unit() as unit:
        node, stored = unit.read(ref)
        new = apply_patch(node, patch, now=now)
        if new is node:
            return node
        guard_write(node, automated=automated)
        new = _resolve_connections(new, before=node)
        if is_self_node(node) and not is_self_node(new):
            raise ProtectedNode("The self node keeps its source and `self` tag")
        unit.audit(operation="update", node=node, now=now, detail={"fields": sorted(patch.changes())})
        unit.save(new, expected=stored)
        if new.tier == Tier.CORE and node.tier != Tier.CORE:
            core_cap_enforce(now=now)
    return new


def node_forget(*, ref: str, now: datetime | None = None) -> Node:
    """Soft delete: the file moves to deleted/ (restorable); the self node cannot be forgotten."""
    now = now or utcnow()
    with write_unit() as unit:
        node, stored = unit.read(ref)
        if is_self_node(node):
            raise ProtectedNode("The self node cannot be forgotten")
        guard_write(node)
        unit.audit(operation="delete", node=node, now=now)
        unit.forget(node.id, now=now, expected=stored)
    return node


def node_restore(*, node_id: str, now: datetime | None = None) -> Node:
    """Bring a forgotten memory back from deleted/ and index it again (its edges return with it)."""
    with write_unit() as unit:
        node = unit.restore(node_id)
        unit.audit(operation="restore", node=node, now=now or utcnow())
    return node


def edge_create(
    *, source_ref: str, target_ref: str, edge: EdgeType = EdgeType.RELATED_TO, weight: float = 0.5,
    reason: str | None = None, valid_from: datetime | None = None, valid_until: datetime | None = None,
    source_event_ids: tuple[str, ...] = (), automated: bool = False,
) -> Connection:
    """Connect two memories with a typed, weighted edge stored in the source node's file.

    `valid_from`/`valid_until` bound a temporal relation; raises ValidationFailed for a window that ends before it
    starts, ProtectedNode for an automated write to a read-only source.
    """
    if valid_from is not None and valid_until is not None and valid_until <= valid_from:
        raise ValidationFailed("valid_until must be after valid_from")
    if not 0.0 <= weight <= 1.0:
        raise ValidationFailed("weight must be between 0 and 1")
    with write_unit() as unit:
        source_row = node_row_get(ref=source_ref)
        target_row = node_row_get(ref=target_ref)
        if source_row.uid == target_row.uid:
            raise ValidationFailed("A memory cannot connect to itself")
        node, stored = unit.read_row(source_row)
        conn = Connection(target=target_row.uid, edge=EdgeType(edge), weight=weight, reason=reason,
                          valid_from=valid_from, valid_until=valid_until, source_event_ids=tuple(source_event_ids))
        new = with_connection(node, conn)
        if new != node:
            guard_write(node, automated=automated)
            unit.save(replace(new, updated=utcnow()), expected=stored)
    return conn


def node_mark_outdated(*, ref: str, reason: str | None = None, now: datetime | None = None) -> Node:
    """Set valid_until to now and append the reason to the content; search then skips it unless asked for history."""
    now = now or utcnow()
    with write_unit() as unit:
        node, stored = unit.read(ref)
        if is_self_node(node):
            raise ProtectedNode("The self node cannot be marked outdated")
        guard_write(node)
        content = node.content + (f"\n\n[Outdated: {reason.strip()}]" if reason and reason.strip() else "")
        new = replace(node, valid_until=now, content=content, updated=now)
        unit.audit(operation="mark_outdated", node=node, now=now, detail={"reason": reason})
        unit.save(new, expected=stored)
    return new


def node_set_tier(*, ref: str, tier: Tier, now: datetime | None = None, automated: bool = False) -> Node:
    """Promote or demote a memory; moving into core enforces the core cap."""
    return node_update(ref=ref, patch=NodePatch(tier=tier), now=now, automated=automated)


# ---------------------------------------------------------------------------
# Identity and tiers
# ---------------------------------------------------------------------------

def _link_to_self(unit: WriteUnit, node: Node) -> None:
    me = self_row()
    if me is None or me.uid == node.id:
        return
    self_node, stored = unit.read_row(me)
    conn = Connection(target=node.id, edge=EdgeType.DEFINES, weight=1.0, reason="about_self")
    unit.save(with_connection(self_node, conn), expected=stored)


def core_cap_enforce(*, now: datetime | None = None) -> list[str]:
    """Demote the least important core memories to working until core holds at most the cap.

    Never the self node, a pinned block or a read-only block: the cap is automatic, and those are standing rules a
    person put there (docs/trust.md), so core may hold more than the cap when they alone exceed it.
    """
    now = now or utcnow()
    demoted = []
    with write_unit() as unit:
        conf = unit.conf
        core = NodeRow.objects.filter(tier=Tier.CORE, is_self=False)
        excess = core.count() - conf.core_cap
        if excess <= 0:
            return []
        movable = core.filter(pinned=False, read_only=False)
        for row in movable.order_by("importance", "last_accessed", "created")[:excess]:
            node, stored = unit.read_row(row)
            unit.save(replace(node, tier=Tier.WORKING, updated=now), expected=stored)
            unit.audit(operation="demote", node=node, now=now, detail={"reason": "core cap"})
            demoted.append(node.id)
    logger.info("Core cap %s: demoted %s memories to working", conf.core_cap, len(demoted))
    return demoted

