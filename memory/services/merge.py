"""Merges, consolidation, and batched importance writes (the maintenance jobs' memory services; undo: merge_undo.py).

A merge keeps the keeper's id, optionally rewrites its title and content, moves the removed node's edges to the
keeper, soft-deletes the removed node and records a MergeHistoryRow holding the exact file text of BOTH nodes
(and of every neighbour whose connections it rewrote), so undo puts every byte back. Consolidation writes a new
node from an agent's or LLM's synthesis, links it `derived_from` each source and moves the sources to archival.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime

from pydantic import ValidationError

from memory import runtime
from memory.domain.enums import TIER_ORDER, EdgeType, NodeType, Tier
from memory.domain.markdown import format_timestamp, render
from memory.domain.node import Connection, Node, utcnow
from memory.domain.requests import ABOUT_SELF_TAG, ConnectionIn, NodeCreate, NodePatch, validation_message
from memory.errors import (
    Conflict,
    MalformedNodeFile,
    NodeNotFound,
    PayloadTooLarge,
    ProtectedNode,
    ValidationFailed,
    WriteConflict,
)
from memory.models import EdgeRow, MergeHistoryRow, NodeRow
from memory.selectors import node_read, node_row_get
from memory.services.guard import automation_actor, guard_write
from memory.services.nodes import node_create
from memory.store import StoredFile, content_hash
from memory.writes import WriteUnit, write_unit

CONSOLIDATED_TAG = "consolidated"
SUPERSEDED_BY = "superseded_by"
ARCHIVED_AT = "archived_at"
IMPORTANCE_CHUNK = 5  # files per write-lock hold: each an fsynced write that an agent's remember may wait for


@dataclass(frozen=True)
class MergeResult:
    merge_id: str
    kept: Node
    removed_id: str


# ---------------------------------------------------------------------------
# Merge
# ---------------------------------------------------------------------------

def _text(stored: StoredFile) -> str:
    data = stored.path.read_bytes()
    if content_hash(data) != stored.hash:
        raise Conflict(f"{stored.path.name} changed on disk during the merge; try again")
    return data.decode("utf-8")


def _has_edge(source_uid: str, target_uid: str, edge: str) -> bool:
    return EdgeRow.objects.filter(source__uid=source_uid, target__uid=target_uid, edge_type=edge).exists()


def _checked_text(title: str | None, content: str | None) -> tuple[str | None, str | None]:
    """Merged text obeys the same rules as any update (not blank, no NUL, size limit); blank means keep."""
    given = {k: v for k, v in (("title", title), ("content", content)) if v is not None and v.strip()}
    try:
        checked = NodePatch(**given)
    except ValidationError as exc:
        raise ValidationFailed(f"Merged text is invalid: {validation_message(exc)}") from None
    return checked.title, checked.content


def _checked_tags(tags: list[str] | None) -> tuple[str, ...] | None:
    if tags is None:
        return None
    try:
        return tuple(NodePatch(tags=tags).tags)
    except ValidationError as exc:
        raise ValidationFailed(f"Merged tags are invalid: {validation_message(exc)}") from None


def _merged_keeper(keeper: Node, gone: Node, title: str | None, content: str | None, now: datetime,
                   tags: tuple[str, ...] | None = None) -> Node:
    """The keeper after absorbing `gone`: union of tags (or `tags`, given), gone's edges remapped, combined usage."""
    conns = [c for c in keeper.connections if c.target != gone.id]
    have = {(c.target, c.edge) for c in conns}
    for c in gone.connections:
        if c.target == keeper.id or (c.target, c.edge) in have or _has_edge(c.target, keeper.id, c.edge):
            continue
        conns.append(c)
        have.add((c.target, c.edge))
    tier = max(keeper.tier, gone.tier, key=lambda t: TIER_ORDER[t])
    return replace(
        keeper, title=title or keeper.title or gone.title, content=content or keeper.content,
        tags=tuple(dict.fromkeys(keeper.tags + gone.tags)) if tags is None else tags, connections=tuple(conns),
        tier=tier,
        access_count=keeper.access_count + gone.access_count, stability=max(keeper.stability, gone.stability),
        last_accessed=max(keeper.last_accessed, gone.last_accessed), updated=now,
    )


def _retargeted(node: Node, gone_id: str, keeper: Node, now: datetime) -> tuple[Node, list[str]]:
    """A neighbour with its connections to `gone` pointing at the keeper (dropping ones that would duplicate)."""
    kept, moved = [], []
    have = {(c.target, c.edge) for c in node.connections}
    reverse = {(c.target, c.edge) for c in keeper.connections}
    for c in node.connections:
        if c.target != gone_id:
            kept.append(c)
        elif node.id != keeper.id and (keeper.id, c.edge) not in have and (node.id, c.edge) not in reverse:
            kept.append(replace(c, target=keeper.id))
            have.add((keeper.id, c.edge))
            moved.append(str(c.edge))
    extra = dict(node.extra)
    if extra.get(SUPERSEDED_BY) == gone_id:
        extra[SUPERSEDED_BY] = keeper.id
    return replace(node, connections=tuple(kept), extra=extra, updated=now), moved


def node_merge(
    *, keep_ref: str, discard_ref: str, merged_title: str | None = None, merged_content: str | None = None,
    reason: str = "", proposal_id: str | None = None, detail: dict | None = None, now: datetime | None = None,
    tags: list[str] | None = None,
) -> MergeResult:
    """Merge `discard` into `keep`: the keeper's id survives, the other is soft-deleted; undo restores both exactly.

    `tags`, given, are the keeper's tags after the merge (validated as any update's) instead of the union of both.

    Raises NodeNotFound, ProtectedNode (the self node), ValidationFailed (same node), Conflict (edited meanwhile).
    """
    now = now or utcnow()
    merged_title, merged_content = _checked_text(merged_title, merged_content)
    merged_tags = _checked_tags(tags)
    with write_unit() as unit:
        store = unit.store
        keep_row, gone_row = node_row_get(ref=keep_ref), node_row_get(ref=discard_ref)
        if keep_row.uid == gone_row.uid:
            raise ValidationFailed("A memory cannot be merged into itself")
        if keep_row.is_self or gone_row.is_self:
            raise ProtectedNode("The self node cannot be merged")
        keeper, keep_stored = unit.read_row(keep_row)
        gone, gone_stored = unit.read_row(gone_row)
        guard_write(keeper)
        guard_write(gone)
        new_keeper = _merged_keeper(keeper, gone, merged_title, merged_content, now, merged_tags)
        sources = set(EdgeRow.objects.filter(target=gone_row).exclude(source=keep_row).values_list("source__uid", flat=True))
        sources |= set(EdgeRow.objects.filter(source=gone_row, edge_type=EdgeType.DERIVED_FROM)
                       .exclude(target=keep_row).values_list("target__uid", flat=True))
        neighbours, pending = [], []
        for row in NodeRow.objects.filter(uid__in=sorted(sources)).order_by("uid"):
            node, stored = unit.read_row(row)
            new, moved = _retargeted(node, gone.id, new_keeper, now)
            if new.connections == node.connections and new.extra == node.extra:
                continue
            guard_write(node)
            neighbours.append({"uid": node.id, "path": str(stored.path.relative_to(store.root)), "before": _text(stored),
                               "after_hash": content_hash(render(new).encode("utf-8")), "remapped": moved})
            pending.append((new, stored))
        kept_before, removed_before = _text(keep_stored), _text(gone_stored)
        history = MergeHistoryRow(
            merge_id=str(uuid.uuid4()), proposal_id=proposal_id, kept_uid=keeper.id, removed_uid=gone.id,
            kept_path=str(keep_stored.path.relative_to(store.root)),
            removed_path=str(gone_stored.path.relative_to(store.root)),
            kept_before=kept_before, removed_before=removed_before,
            kept_after_hash=content_hash(render(new_keeper).encode("utf-8")), neighbours=neighbours,
            reason=reason, detail=detail or {}, merged_at=now, pending=True,
        )
        # The row commits (pending) before any file is written, so a kill between the files and the unit's commit
        # leaves a row the next sync settles from the files (merges_settle_pending); the lock keeps others out. A
        # rollback deletes it once the files are back.
        history.save(force_insert=True)
        unit.on_rollback(lambda: MergeHistoryRow.objects.filter(pk=history.pk).delete())
        # Every file write below is guarded by the hash read above; if one fails (an edit on disk meanwhile, its new
        # version in conflicts/) the unit puts back what was written, then deletes the row.
        for new, stored in [(new_keeper, keep_stored), *pending]:
            unit.save(new, expected=stored)
        unit.forget(gone.id, now=now, expected=gone_stored)
        history.pending = False
        unit.on_commit(lambda: MergeHistoryRow.objects.filter(pk=history.pk).update(pending=False))
        unit.audit(operation="merge", node=keeper, now=now, detail={"merge_id": history.merge_id, "role": "kept"})
        unit.audit(operation="merge", node=gone, now=now, detail={"merge_id": history.merge_id, "role": "removed"})
    return MergeResult(merge_id=history.merge_id, kept=new_keeper, removed_id=gone.id)


# ---------------------------------------------------------------------------
# Consolidation
# ---------------------------------------------------------------------------

def nodes_consolidate(
    *, source_refs: list[str], title: str, content: str, type: NodeType = NodeType.CONCEPT,  # noqa: A002
    reason: str = "", now: datetime | None = None, tags: list[str] | None = None,
) -> Node:
    """Write one synthesised node `derived_from` each source, then move the sources to archival (superseded by it).

    The node is tagged `consolidated`, plus `tags` when given.

    Raises ValidationFailed (fewer than two sources), NodeNotFound, ProtectedNode (the self node).
    """
    now = now or utcnow()
    with write_unit() as unit:
        rows = list(dict.fromkeys(node_row_get(ref=ref) for ref in source_refs))
        if len({r.uid for r in rows}) < 2:
            raise ValidationFailed("Consolidation needs at least two distinct memories")
        if any(r.is_self for r in rows):
            raise ProtectedNode("The self node cannot be consolidated")
        sources = [unit.read_row(r) for r in rows]
        for node, _ in sources:
            guard_write(node)
        spaces = Counter(n.space for n, _ in sources)
        identity = any(ABOUT_SELF_TAG in n.tags for n, _ in sources) or EdgeRow.objects.filter(
            target__in=rows, source__is_self=True, edge_type=EdgeType.DEFINES).exists()
        new = node_create(request=NodeCreate(
            content=content, title=title, type=type, tags=[CONSOLIDATED_TAG, *(tags or [])], space=spaces.most_common(1)[0][0],
            source="agent:consolidator", about_self=identity,
            connections=[ConnectionIn(target=n.id, edge=EdgeType.DERIVED_FROM, weight=1.0) for n, _ in sources],
        ), now=now, auto_link=False).node
        for node, stored in sources:
            unit.audit(operation="consolidate", node=node, now=now, detail={"into": new.id, "reason": reason})
            tier = node.tier if node.tier == Tier.CORE else Tier.ARCHIVAL
            extra = {**node.extra, SUPERSEDED_BY: new.id, ARCHIVED_AT: format_timestamp(now)}
            unit.save(replace(node, tier=tier, extra=extra, updated=now), expected=stored)
    return new


# ---------------------------------------------------------------------------
# Importance (bookkeeping: `updated` does not move)
# ---------------------------------------------------------------------------

def nodes_importance_set(*, values: dict[str, float], now: datetime | None = None) -> int:
    """Write new importance values to the files and the index, 5 per lock hold; returns how many changed.

    The files are read before the lock is taken and each write is guarded by the hash read, so an agent's write
    waits for at most one short batch (issue 13 item 7). Files that vanished or changed on disk meanwhile are
    skipped (the next run sees them again). Only the rows' importance (and file facts) change in the index: the
    write door derives nothing else again for a change that touches no text (WriteUnit.save's `before`).
    """
    now = now or utcnow()
    uids = sorted(values)
    written = 0
    store = runtime.store()
    for i in range(0, len(uids), IMPORTANCE_CHUNK):
        todo = []
        for row in NodeRow.objects.filter(uid__in=uids[i:i + IMPORTANCE_CHUNK]):
            try:
                node, stored = node_read(store=store, row=row)
            except (NodeNotFound, MalformedNodeFile):
                continue
            value = round(min(1.0, max(0.0, values[row.uid])), 4)
            if value != node.importance and not (node.read_only and automation_actor() is not None):
                todo.append((node, stored, value))
        if not todo:
            continue
        with write_unit() as unit:
            notes = []
            for node, stored, value in todo:
                try:
                    unit.save(replace(node, importance=value), expected=stored, before=node)
                except (WriteConflict, PayloadTooLarge):
                    continue
                notes.append((node.id, {"from": node.importance, "to": value}))
            unit.audit_notes(operation="importance", entries=notes, now=now)
            written += len(notes)
    return written


def merge_history_prune(*, before: datetime) -> int:
    """Forget merges older than `before` (their undo window has closed); returns how many rows went."""
    return MergeHistoryRow.objects.filter(merged_at__lt=before).delete()[0]
