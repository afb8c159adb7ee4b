"""Writes to memories: create (remember), update, forget, restore, connect, mark outdated.

Every write goes through the write door (memory.writes): validate and build with pure domain code, then save
the file and index it in one unit of work under the cross-process write lock (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from memory import index, runtime
from memory.conf import MemoryConf, get_conf
from memory.domain.enums import EdgeType, Tier
from memory.domain.identity import is_self_node
from memory.domain.lifecycle import creation_degrees, with_creation_importance
from memory.domain.node import Connection, Node, new_node_id, utcnow, with_connection
from memory.domain.requests import NodeCreate, NodePatch, apply_patch, build_node
from memory.errors import NodeNotFound, ProtectedNode, ValidationFailed
from memory.malformed import malformed_self
from memory.models import NodeRow
from memory.selectors import deleted_id_get, node_row_get, self_row
from memory.services.guard import guard_write
from memory.services.links import EMBED_ONLY_ID, AutoLink, LinkAhead, _auto_links, links_ahead
from memory.services.tiers import core_cap_enforce
from memory.writes import Prepared, WriteUnit, prepare_new, unit_open, write_unit

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CreateResult:
    node: Node
    auto_links: list[AutoLink] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Validation
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


# ---------------------------------------------------------------------------
# Services
# ---------------------------------------------------------------------------

def node_create(*, request: NodeCreate, now: datetime | None = None, auto_link: bool = True) -> CreateResult:
    """Remember: write the file, index it, link it to the self node and to similar memories, keep the core cap.

    Raises ValidationFailed for unknown connection targets, StorageError when the file cannot be written.
    """
    return nodes_create(requests=[request], now=now, auto_link=auto_link)[0]


def nodes_create(*, requests: Sequence[NodeCreate], now: datetime | None = None, auto_link: bool = True,
                 nows: Sequence[datetime] | None = None) -> list[CreateResult]:
    """Remember several memories in one unit of work; results keep the requests' order.

    The batch gets what remembering each in turn would give (a memory auto-links to the batch's earlier ones
    too) at the cost of one write: one lock, the files fsynced together before each gets its name and one fsync of
    the folder (WriteUnit.save_new), one embedding call for every text, one matrix product for the auto-links and
    one index transaction.
    All or nothing: ValidationFailed (an unknown connection target) before any file is written; on
    StorageError or any failure the unit removes the files it wrote and the index keeps none of the batch.
    `nows`: each request's own time (a group commit writes several callers' requests in one unit).
    Each file holds the importance the formula gives the new memory (no access yet, its edges, just used:
    memory.domain.lifecycle), not a default the next importance_scorer run would rewrite.
    """
    now = now or utcnow()
    nows = list(nows) if nows is not None else [now] * len(requests)
    ahead = None
    if not unit_open():  # inside an open unit the lock is already held: the caller embedded ahead, or the unit will
        nodes_embed_ahead(requests=requests, now=now)
        ahead = links_ahead(requests=requests, now=now) if auto_link else None
    with write_unit() as unit:
        return create_in(unit, requests=requests, nows=nows, auto_link=auto_link, ahead=ahead)


def create_in(unit: WriteUnit, *, requests: Sequence[NodeCreate], nows: Sequence[datetime],
              auto_link: bool = True, ahead: LinkAhead | None = None, ids: Sequence[str] | None = None,
              prepared: Prepared | None = None) -> list[CreateResult]:
    """nodes_create's work inside a unit the caller holds (each request at its own time in `nows`): the files are
    written here and indexed at the unit's next flush, so a caller that also queued ledger writes on the unit
    (remember's evidence rows, memory.services.evidence) commits them with the memories in one transaction.
    `ahead`: the auto-links' search run before the lock for these requests (links_ahead), re-checked here.
    `ids`, `prepared`: the ids minted and the files written before the lock (nodes_prepare); a file whose memory
    came out different here is written again, so what is saved is always what is computed under the lock.
    Raises ValidationFailed, StorageError."""
    results, me = _built(requests=requests, nows=nows, auto_link=auto_link, ahead=ahead, ids=ids, unit=unit,
                         conf=unit.conf)
    unit.save_new([r.node for r in results], prepared=prepared)
    _link_to_self(unit, [r.node for r, q in zip(results, requests) if q.about_self], me)
    created_core = {r.node.id for r in results if r.node.tier == Tier.CORE}
    if created_core:  # an explicit tier=core is not undone by the call that wrote it (the cycle's check may)
        core_cap_enforce(now=max(nows), keep=created_core)
    return results


def nodes_prepare(*, requests: Sequence[NodeCreate], nows: Sequence[datetime], auto_link: bool = True,
                  ahead: LinkAhead | None = None) -> tuple[list[str], Prepared | None]:
    """BEFORE the write lock: mint the ids and forecast the memories create_in will write (the same computation on
    the index as it is now), then write and fsync their files nameless (memory.writes.prepare_new), so under the
    lock a file whose memory came out the same only gets its name. Returns the ids for create_in and the prepared
    files (None when the forecast or the write failed: create_in then writes every file under the lock, as it
    always can). The caller closes what it got after the write. Never raises."""
    ids = [new_node_id() for _ in requests]
    try:
        results, _ = _built(requests=requests, nows=nows, auto_link=auto_link, ahead=ahead, ids=ids, unit=None,
                            conf=get_conf())
        return ids, prepare_new([r.node for r in results])
    except Exception as exc:  # Trigger: the forecast or the nameless write failed. Why: only a head start. Outcome: create_in writes under the lock and reports any error itself.
        logger.debug("writing %d new files ahead of the write lock failed (%s); the write writes them",
                     len(requests), type(exc).__name__)
        return ids, None


def _built(*, requests: Sequence[NodeCreate], nows: Sequence[datetime], auto_link: bool, ahead: LinkAhead | None,
           ids: Sequence[str] | None, unit: WriteUnit | None,
           conf: MemoryConf) -> tuple[list[CreateResult], NodeRow | None]:
    """The memories create_in writes (their connections, auto-links and creation importance) and the self node's
    row; `unit=None`: nodes_prepare's forecast before the lock. Raises ValidationFailed (and the self node's file's
    MalformedNodeFile)."""
    ids = list(ids) if ids is not None else [new_node_id() for _ in requests]
    nodes = [_resolve_connections(build_node(r, node_id=i, now=t))
             for r, i, t in zip(requests, ids, nows, strict=True)]
    found = _auto_links(nodes, unit, ahead, conf=conf) if auto_link and nodes else [[] for _ in nodes]
    results = []
    for node, links in zip(nodes, found):
        for link in links:
            node = with_connection(node, Connection(
                target=link.target_id, edge=EdgeType.RELATED_TO, weight=link.similarity,
                reason=f"auto-linked at {link.similarity:.2f} similarity",
            ))
        results.append(CreateResult(node=node, auto_links=links))
    me = self_row() if any(q.about_self for q in requests) else None  # no memory about the user: no lookup
    if me is None and any(q.about_self for q in requests) and (
            broken := malformed_self(store=unit.store if unit is not None else runtime.store(conf))):
        raise broken  # its `defines` link would be lost: nothing is written until the self node's file is fixed
    defined = {r.node.id for r, q in zip(results, requests) if q.about_self and me and me.uid != r.node.id}
    degrees = creation_degrees([r.node for r in results], defined)  # the importance the next cycle would give
    return [replace(r, node=with_creation_importance(r.node, degrees[r.node.id])) for r in results], me


def nodes_embed_ahead(*, requests: Sequence[NodeCreate], now: datetime) -> None:
    """Run the model BEFORE the write lock: the batch's vectors wait in the process (index.embed_ahead) for the unit,
    which writes them to the embedding cache in its own transaction. The lock has no timeout; a model run inside it
    would hold every other writer (watcher, UI, API, jobs) for as long as the batch takes to embed.

    Never raises: a failure is logged and the unit embeds what is missing (and reports the error itself)."""
    if not requests:
        return
    try:
        # The texts do not depend on the id: a placeholder, so no id is drawn for a node that is not written.
        index.embed_ahead([build_node(r, node_id=EMBED_ONLY_ID, now=now) for r in requests], runtime.embedder())
    except Exception as exc:  # only a head start: the unit embeds what is missing and reports the error itself
        logger.debug("embedding a batch of %d ahead of the write lock failed (%s); the write embeds it",
                       len(requests), type(exc).__name__)


def node_update(*, ref: str, patch: NodePatch, now: datetime | None = None, automated: bool = False) -> Node:
    """Apply a partial update; a no-op leaves the file and `updated` untouched.

    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed, WriteConflict, ProtectedNode (an automated write to a
    read-only block, see memory.services.guard).
    """
    now = now or utcnow()
    with write_unit() as unit:
        return update_in(unit, ref=ref, patch=patch, now=now, automated=automated)


def update_in(unit: WriteUnit, *, ref: str, patch: NodePatch, now: datetime, automated: bool = False,
              row: NodeRow | None = None) -> Node:
    """node_update's work inside an open unit (memory.services.batches writes several in one); `row`: the index
    row `ref` names, when the caller looked it up already."""
    node, stored = unit.read_row(row) if row is not None else unit.read(ref)
    new = apply_patch(node, patch, now=now)
    if new is node:
        return node
    guard_write(node, automated=automated)
    new = _resolve_connections(new, before=node)
    if is_self_node(node) and not is_self_node(new):
        raise ProtectedNode("The self node keeps its source and `self` tag")
    # first: a save that raises must leave no audit row queued in a shared unit. `before`: a patch of the row's
    # own columns (confidence, pinned, authority, read_only, space_locked) updates just them in the index.
    unit.save(new, expected=stored, before=node)
    unit.audit(operation="update", node=node, now=now, detail={"fields": sorted(patch.changes())})
    if new.tier == Tier.CORE and node.tier != Tier.CORE:  # a promotion stays; the cap demotes another if it must
        core_cap_enforce(now=now, keep={new.id})
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
    """Bring a forgotten memory back from deleted/ and index it again (its edges return with it); `node_id` may be
    a unique prefix of the forgotten memory's id."""
    node_id = deleted_id_get(store=runtime.store(), ref=node_id)
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
    with write_unit() as unit:
        return connect_in(unit, source_ref=source_ref, target_ref=target_ref, edge=edge, weight=weight,
                          reason=reason, valid_from=valid_from, valid_until=valid_until,
                          source_event_ids=source_event_ids, automated=automated)


def connect_in(
    unit: WriteUnit, *, source_ref: str, target_ref: str, edge: EdgeType = EdgeType.RELATED_TO, weight: float = 0.5,
    reason: str | None = None, valid_from: datetime | None = None, valid_until: datetime | None = None,
    source_event_ids: tuple[str, ...] = (), automated: bool = False,
) -> Connection:
    """edge_create's work inside an open unit (memory.services.batches writes several in one)."""
    if valid_from is not None and valid_until is not None and valid_until <= valid_from:
        raise ValidationFailed("valid_until must be after valid_from")
    if not 0.0 <= weight <= 1.0:
        raise ValidationFailed("weight must be between 0 and 1")
    source_row = unit.row(source_ref)
    target_row = unit.row(target_ref)
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
    """Promote or demote a memory; a memory moved into core stays there, and the core cap demotes the least
    important other core memory when core is over it (core_cap_enforce's `keep`)."""
    return node_update(ref=ref, patch=NodePatch(tier=tier), now=now, automated=automated)


# ---------------------------------------------------------------------------
# Identity
# ---------------------------------------------------------------------------

def _link_to_self(unit: WriteUnit, nodes: Sequence[Node], me: NodeRow | None) -> None:
    """The self node (`me`, its row) `defines` each of `nodes` (one write of its file for a whole batch)."""
    if not nodes:
        return
    targets = [n for n in nodes if me is not None and me.uid != n.id]
    if not targets:
        return
    self_node, stored = unit.read_row(me)
    new = self_node
    for node in targets:
        new = with_connection(new, Connection(target=node.id, edge=EdgeType.DEFINES, weight=1.0, reason="about_self"))
    unit.save(new, expected=stored)
