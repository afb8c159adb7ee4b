"""Merges, their undo, consolidation, and batched importance writes (the maintenance jobs' memory services).

A merge keeps the keeper's id, optionally rewrites its title and content, moves the removed node's edges to the
keeper, soft-deletes the removed node and records a MergeHistoryRow holding the exact file text of BOTH nodes
(and of every neighbour whose connections it rewrote), so undo puts every byte back. Consolidation writes a new
node from an agent's or LLM's synthesis, links it `derived_from` each source and moves the sources to archival.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from memory import runtime
from memory.domain.enums import TIER_ORDER, EdgeType, NodeType, Tier
from memory.domain.markdown import format_timestamp, parse, render
from memory.domain.node import Connection, Node, as_utc, utcnow
from memory.domain.requests import ABOUT_SELF_TAG, ConnectionIn, NodeCreate, NodePatch, validation_message
from memory.errors import (
    Conflict,
    MalformedNodeFile,
    NodeNotFound,
    PayloadTooLarge,
    ProtectedNode,
    StorageError,
    ValidationFailed,
    WriteConflict,
)
from memory.models import EdgeRow, MergeHistoryRow, NodeRow
from memory.selectors import node_read, node_row_get
from memory.services.guard import automation_actor, guard_write
from memory.services.nodes import node_create
from memory.store import MarkdownStore, StoredFile, content_hash
from memory.writes import WriteUnit, write_unit

logger = logging.getLogger(__name__)
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


def _merged_keeper(keeper: Node, gone: Node, title: str | None, content: str | None, now: datetime) -> Node:
    """The keeper after absorbing `gone`: union of tags, gone's edges remapped, combined usage."""
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
        tags=tuple(dict.fromkeys(keeper.tags + gone.tags)), connections=tuple(conns), tier=tier,
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
) -> MergeResult:
    """Merge `discard` into `keep`: the keeper's id survives, the other is soft-deleted; undo restores both exactly.

    Raises NodeNotFound, ProtectedNode (the self node), ValidationFailed (same node), Conflict (edited meanwhile).
    """
    now = now or utcnow()
    merged_title, merged_content = _checked_text(merged_title, merged_content)
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
        new_keeper = _merged_keeper(keeper, gone, merged_title, merged_content, now)
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
# Undo
# ---------------------------------------------------------------------------

def merge_history_get(*, ref: str) -> MergeHistoryRow:
    """A merge by its id or a unique prefix of at least 4 characters; raises NodeNotFound or ValidationFailed."""
    ref = (ref or "").strip().lower()
    if len(ref) < 4:
        raise ValidationFailed("A merge id or a prefix of at least 4 characters is required")
    if "\x00" in ref:  # no merge id holds one, and PostgreSQL text cannot (a 404, not a database error)
        raise NodeNotFound(f"No merge {ref!r}")
    rows = list(MergeHistoryRow.objects.filter(merge_id__startswith=ref)[:2])
    if len(rows) != 1:
        raise NodeNotFound(f"No merge {ref}") if not rows else ValidationFailed(f"Merge prefix {ref} is ambiguous")
    return rows[0]


def _unretarget(node: Node, kept_id: str, gone_id: str, remapped: list[str], now: datetime) -> Node:
    """Semantic undo for a neighbour edited after the merge: point the moved connections back at `gone`."""
    todo = list(remapped)
    conns = []
    for c in node.connections:
        if c.target == kept_id and str(c.edge) in todo:
            todo.remove(str(c.edge))
            c = replace(c, target=gone_id)
        conns.append(c)
    extra = dict(node.extra)
    if extra.get(SUPERSEDED_BY) == kept_id:
        extra[SUPERSEDED_BY] = gone_id
    return replace(node, connections=tuple(conns), extra=extra, updated=now)


def merge_undo(*, ref: str, now: datetime | None = None) -> MergeHistoryRow:
    """Put both nodes (and rewritten neighbours) back byte for byte and re-index them; a merge undoes once.

    Neighbours that hold their bytes from before the merge are left alone. Raises NodeNotFound, Conflict (already
    undone, interrupted and not yet settled, removed node live again, keeper forgotten).
    """
    now = now or utcnow()
    with write_unit() as unit:
        store = unit.store
        history = merge_history_get(ref=ref)
        if history.pending:
            raise Conflict(f"Merge {history.merge_id} was interrupted; `ormah doctor --heal` settles it first")
        if history.undone_at is not None:
            raise Conflict(f"Merge {history.merge_id} was already undone")
        if store.path_for(history.removed_uid) is not None:
            raise Conflict(f"Memory {history.removed_uid} is live again; the merge cannot be undone")
        keep_path = store.path_for(history.kept_uid)
        if keep_path is None:
            raise Conflict(f"The kept memory {history.kept_uid} no longer exists; restore it first")
        current, current_stored = store.read(keep_path)
        removed_path = store.root / history.removed_path
        if os.path.lexists(removed_path):
            raise Conflict(f"{removed_path.name} holds another file; the merge cannot be undone")
        unit.audit(operation="merge_undo", node=current, now=now, detail={"merge_id": history.merge_id})
        # Byte-exact: the snapshots' own bytes go back, never a re-render (hand-formatted files stay as they were).
        unit.put_bytes(keep_path, history.kept_before, history.kept_uid, expected=current_stored)
        unit.put_bytes(removed_path, history.removed_before, history.removed_uid)
        copies = _copy_tombstones(store, history)
        try:
            unit.purge(history.removed_uid)
        except NodeNotFound:
            pass
        for path, text in copies:  # the purge takes every tombstone of the id: a copy's goes back byte for byte
            unit.put_bytes(path, text, history.removed_uid)
        for nb in history.neighbours:
            path = store.path_for(nb["uid"])
            if path is None:
                continue
            node, stored = store.read(path)
            if stored.hash == content_hash(nb["before"].encode("utf-8")):
                continue  # the merge never rewrote this one (it was killed first) or it is back as it was
            if stored.hash == nb["after_hash"]:
                unit.put_bytes(path, nb["before"], nb["uid"], expected=stored)
            else:
                unit.save(_unretarget(node, history.kept_uid, history.removed_uid, nb["remapped"], now),
                          expected=stored)
        history.undone_at = now
        unit.on_commit(lambda: history.save(update_fields=["undone_at"]))
    return history


def merges_settle_pending(*, unit: WriteUnit) -> dict[str, int]:
    """Settle the merges a kill interrupted between their pending history row and their commit.

    Run by the sync under the write lock (after the files set aside are put back), so no merge is in flight. The
    files decide: a merge whose removed node is no longer live, and whose keeper holds the merged text (or whose
    tombstone bears the merge's time), reached the disk and becomes undoable; any other is put back (the keeper
    and neighbours it rewrote, where they still hold its bytes) and its row deleted. Returns {"done", "dropped"}.
    """
    counts = {"done": 0, "dropped": 0}
    for history in MergeHistoryRow.objects.filter(pending=True).order_by("merged_at", "id"):
        counts["done" if _settle(unit, history) else "dropped"] += 1
    return counts


def _settle(unit: WriteUnit, history: MergeHistoryRow) -> bool:
    """Mark one pending merge done (True) or put back what it wrote and delete it (False)."""
    store = unit.store
    keep_path = store.path_for(history.kept_uid)
    keep = store.stat(keep_path) if keep_path is not None else None
    if store.path_for(history.removed_uid) is None and (
            (keep is not None and keep.hash == history.kept_after_hash) or _tombstone_of(store, history)):
        MergeHistoryRow.objects.filter(pk=history.pk).update(pending=False)
        history.pending = False
        logger.warning("Merge %s was interrupted after its files were written: settled", history.merge_id[:8])
        return True
    if keep is not None and keep.hash == history.kept_after_hash:
        unit.put_bytes(keep_path, history.kept_before, history.kept_uid, expected=keep)
    for nb in history.neighbours:
        path = store.path_for(nb["uid"])
        if path is not None and (stored := store.stat(path)).hash == nb["after_hash"]:
            unit.put_bytes(path, nb["before"], nb["uid"], expected=stored)
    history.delete()
    logger.warning("Merge %s was interrupted before it reached the disk: put back", history.merge_id[:8])
    return False


def _copy_tombstones(store: MarkdownStore, history: MergeHistoryRow) -> list[tuple[Path, str]]:
    """The removed memory's tombstones other than the merge's own, with their text: copies of its file made by hand,
    which the merge's forget archived each with its own text (memory/files.py soft_delete). An undo keeps them in
    deleted/, as a restore does; a copy whose text is the restored one's is taken with the merge's tombstone."""
    try:
        restored = render(parse(history.removed_before))
    except MalformedNodeFile:
        restored = None
    kept = []
    for path in sorted(store.deleted_dir.glob("*.md")):
        try:
            node, _ = store.read(path)
            if node.id == history.removed_uid and render(replace(node, deleted_at=None)) != restored:
                kept.append((path, path.read_bytes().decode("utf-8")))
        except (OSError, UnicodeDecodeError, MalformedNodeFile, StorageError):
            continue
    return kept


def _tombstone_of(store: MarkdownStore, history: MergeHistoryRow) -> bool:
    """Whether the removed node's tombstone was written by this merge (stamped with its time)."""
    tomb = store._find(store.deleted_dir, history.removed_uid)
    if tomb is None:
        return False
    try:
        node, _ = store.read(tomb)
    except (MalformedNodeFile, StorageError, FileNotFoundError):
        return False
    return node.deleted_at is not None and as_utc(node.deleted_at) == as_utc(history.merged_at)


# ---------------------------------------------------------------------------
# Consolidation
# ---------------------------------------------------------------------------

def nodes_consolidate(
    *, source_refs: list[str], title: str, content: str, type: NodeType = NodeType.CONCEPT,  # noqa: A002
    reason: str = "", now: datetime | None = None,
) -> Node:
    """Write one synthesised node `derived_from` each source, then move the sources to archival (superseded by it).

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
            content=content, title=title, type=type, tags=[CONSOLIDATED_TAG], space=spaces.most_common(1)[0][0],
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
