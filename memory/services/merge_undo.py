"""Undoing merges (memory.services.merge): a merge undone by its id, byte for byte, and the merges a kill
interrupted settled from the files by the next sync.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from memory.domain.markdown import parse, render
from memory.domain.node import Node, as_utc, utcnow
from memory.errors import AmbiguousNodeRef, Conflict, MalformedNodeFile, NodeNotFound, StorageError, ValidationFailed
from memory.models import MergeHistoryRow
from memory.services.merge import SUPERSEDED_BY
from memory.store import MarkdownStore, content_hash
from memory.writes import WriteUnit, write_unit

logger = logging.getLogger("memory.services.merge")  # the messages kept the logger they were written under


def merge_history_get(*, ref: str) -> MergeHistoryRow:
    """A merge by its id or a unique prefix of at least 4 characters; raises NodeNotFound, ValidationFailed, or
    AmbiguousNodeRef listing the candidates (as every other id: docs/api.md)."""
    ref = (ref or "").strip().lower()
    if len(ref) < 4:
        raise ValidationFailed("A merge id or a prefix of at least 4 characters is required")
    if "\x00" in ref:  # no merge id holds one, and PostgreSQL text cannot (a 404, not a database error)
        raise NodeNotFound(f"No merge {ref!r}")
    rows = list(MergeHistoryRow.objects.filter(merge_id__startswith=ref).order_by("merge_id")[:11])
    if not rows:
        raise NodeNotFound(f"No merge {ref}")
    if len(rows) > 1:
        raise AmbiguousNodeRef(f"Merge prefix {ref} matches {len(rows)}{'+' if len(rows) > 10 else ''} merges; "
                               "use more characters", details={"candidates": [r.merge_id for r in rows[:10]]})
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
    undone, interrupted and not yet settled, removed node live again, keeper forgotten, keeper changed since the
    merge: its file no longer holds the merge's bytes, so putting the old ones back would lose that change; checked
    under the write lock, and nothing is undone, the removed memory not brought back alone either).
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
        if current_stored.hash != history.kept_after_hash:
            raise _changed_since(history, current)
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


def _changed_since(history: MergeHistoryRow, current: Node) -> Conflict:
    """The refusal of an undo whose keeper was changed after the merge (by hand, by the agent or by a job)."""
    name = f"{current.title!r} ({history.kept_uid[:8]})" if current.title else history.kept_uid[:8]
    when = as_utc(current.updated)
    since = f"; it was last updated {when:%Y-%m-%d %H:%M} UTC" if when > as_utc(history.merged_at) else ""
    return Conflict(f"Memory {name} changed after the merge (its file no longer holds what the merge wrote{since}); "
                    "undoing the merge would lose that change, so nothing was undone",
                    details={"merge_id": history.merge_id, "node_id": history.kept_uid, "changed": "kept memory"})


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
