"""Changing node files on disk: atomic writes, guarded writes with conflict copies, soft delete, restore, purge.

With memory.files_new (a batch of new files, nameless until durable), the only modules that write under `nodes/`,
`deleted/` and `conflicts/`. Services never call it: they go through
the write door (memory.writes), which holds the write lock, journals every change made here so it can be rolled
back, and indexes the result (an import-linter contract in pyproject.toml keeps it so). No Django.

Every function takes an optional `journal`: each change appends a `Change` (path, the bytes it replaced or None,
the hash it left or None when it removed the file), which is exactly what a rollback needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from memory.atomic import (
    aside,
    atomic_create,
    atomic_write,
    conflict_copy,
    current,
    discard,
    fsync_folder,
    guarded_write,
    put_back,
    remove_path,
)
from memory.domain.node import Node, as_utc
from memory.domain.slug import node_filename
from memory.errors import Conflict, MalformedNodeFile, NodeNotFound, PayloadTooLarge, StorageError, WriteConflict
from memory.store import (
    MAX_READ_BYTES,
    _LAST_PATH,
    _STANDARD_TAIL,
    MarkdownStore,
    StoredFile,
    _encode,
    _free_path,
    _id_of,
    _md_files,
    content_hash,
    forget_id,
)

__all__ = ["Change", "Journal", "conflict_copy", "purge", "remove", "restore", "restore_bytes", "soft_delete",
           "sync_folders", "write_bytes", "write_node"]


@dataclass(frozen=True)
class Change:
    """One file change: `before` is what the path held (None: nothing), `after_hash` what it holds now (None: gone)."""

    path: Path
    before: bytes | None
    after_hash: str | None


Journal = list[Change]


# ---------------------------------------------------------------------------
# Node writes
# ---------------------------------------------------------------------------

def write_node(
    store: MarkdownStore, node: Node, *, expected_hash: str | None = None, path: Path | None = None,
    mtime_ns: int | None = None, journal: Journal | None = None, sync_folder: bool = True,
) -> StoredFile:
    """Write a node atomically to its file (named at first save, never renamed).

    `sync_folder=False` leaves the fsync of the folder to the caller (`sync_folders`, once for a batch); the
    file's own bytes are fsynced before the rename (or the guarded exchange) either way.

    With `expected_hash`, a file changed or deleted on disk is not overwritten: the app's version goes to
    conflicts/ and WriteConflict is raised. Raises Conflict when `path` holds another node, StorageError
    when the disk refuses. `mtime_ns` stamps the file's modification time (imports keep the original's).
    """
    data = encode_readable(node)
    if path is None:
        target = store.path_for(node.id)
        if target is None and expected_hash is not None:
            target = store._last_path(node.id)
        if target is None:
            target = _free_path(store.nodes_dir, node_filename(node))
    else:
        target = Path(path)
        owner = _id_of(target)
        if owner is not None and owner != node.id:
            raise Conflict(f"{target.name} holds memory {owner}, not {node.id}", details={"path": str(target)})
    if expected_hash is not None:
        stored, displaced = guarded_write(store, target, data, node.id, expected_hash=expected_hash,
                                          sync_folder=sync_folder)
        note(journal, target, displaced, stored.hash)
    else:
        before = current(target)
        stored = atomic_write(store, target, data, node.id, mtime_ns=mtime_ns, sync_folder=sync_folder)
        note(journal, target, before, stored.hash)
    _LAST_PATH[node.id] = target
    return stored


def encode_readable(node: Node) -> bytes:
    """The node's file, if the store can read it back whole: a larger file would be read truncated (the front
    matter, connections first, cut off its content or itself, then the file is malformed) and never rewritten.
    Growing a file past the limit by connections was possible through the API (session 23, review11)."""
    data = _encode(node)
    if len(data) > MAX_READ_BYTES:
        raise PayloadTooLarge(
            f"Memory {node.id}'s file would be {len(data):,} bytes, and Ormah reads only the first "
            f"{MAX_READ_BYTES // 1024} KiB of a memory's file: nothing was written (fewer or shorter connections or "
            "less content)", details={"id": node.id, "size": len(data), "limit": MAX_READ_BYTES,
                                     "connections": len(node.connections)})
    return data


def write_bytes(store: MarkdownStore, path: Path, data: bytes, node_id: str | None, *,
                expected_hash: str | None = None, journal: Journal | None = None) -> StoredFile:
    """Put exact bytes at `path` (undo restores snapshots byte for byte, never a re-render).

    With `expected_hash` the write is guarded like `write_node`'s (raises WriteConflict).
    """
    if expected_hash is not None:
        stored, displaced = guarded_write(store, path, data, node_id, expected_hash=expected_hash)
        note(journal, path, displaced, stored.hash)
    else:
        before = current(path)
        stored = atomic_write(store, path, data, node_id)
        note(journal, path, before, stored.hash)
    if node_id is not None:
        _LAST_PATH[node_id] = path
    return stored


# Front-matter key a forget stamps on the tombstone of each hand-made copy (every live file of the id but the one
# that was indexed), so restore brings back the indexed file's tombstone, never a copy's (docs/file-format.md).
COPY_MARK = "forgotten_copy"


def soft_delete(store: MarkdownStore, node_id: str, *, now: datetime, expected_hash: str | None = None,
                journal: Journal | None = None, indexed: Path | None = None) -> Path:
    """Move a node to deleted/ with `deleted_at` stamped (the purge clock); returns the tombstone.

    The live file is first renamed aside (atomically taking whatever is there), so an edit on disk that lands
    meanwhile is seen: with `expected_hash`, a file that is not the one read is put back and WriteConflict is
    raised. Every other live file holding the same id (a copy made by hand, which `ormah doctor` reports as a
    duplicate id) goes to deleted/ too, each as it is now, so no copy brings the memory back on the next sync and
    no text is lost (docs/file-format.md). `indexed`: the live file the memory was read from (its row's file); it
    goes first, and every other file's tombstone is marked COPY_MARK, which restore skips. Raises NodeNotFound.
    """
    path = indexed if indexed is not None and indexed.parent == store.nodes_dir and _id_of(indexed) == node_id \
        else store.path_for(node_id)
    if path is None:
        raise NodeNotFound(f"No memory file for {node_id}")
    dest = _to_deleted(store, path, node_id, now=now, expected_hash=expected_hash, journal=journal)
    while (copy := store.path_for(node_id)) is not None:
        _to_deleted(store, copy, node_id, now=now, expected_hash=None, journal=journal, copy=True)
    _LAST_PATH[node_id] = dest
    return dest


def _to_deleted(store: MarkdownStore, path: Path, node_id: str, *, now: datetime, expected_hash: str | None,
                journal: Journal | None, copy: bool = False) -> Path:
    """One live file of `node_id` moved to deleted/ as soft_delete says; a copy never replaces a tombstone and its
    tombstone gets COPY_MARK."""
    node, stored = store.read(path)
    if stored.truncated:
        raise PayloadTooLarge(f"{path.name} is too large to forget safely ({stored.size:,} bytes); move it by hand",
                              details={"path": str(path)})
    expected_hash = expected_hash or stored.hash
    if stored.hash != expected_hash:
        raise WriteConflict(f"{path.name} changed on disk since it was read; it was not forgotten",
                            details={"path": str(path)})
    hold = aside(path)
    if hold is None:
        raise WriteConflict(f"{path.name} was deleted on disk meanwhile", details={"path": str(path)})
    data = current(hold) or b""
    if content_hash(data) != expected_hash:
        put_back(store, hold, path)
        raise WriteConflict(f"{path.name} changed on disk while it was being forgotten; it was not forgotten",
                            details={"path": str(path)})
    dest = store.deleted_dir / path.name
    if os.path.lexists(dest) and (copy or _id_of(dest) != node_id):
        dest = _free_path(store.deleted_dir, path.name)
    try:
        extra = {**node.extra, COPY_MARK: True} if copy else _unmarked(node).extra
        write_bytes(store, dest, _encode(replace(node, deleted_at=as_utc(now), extra=extra)), node_id, journal=journal)
    except BaseException:
        put_back(store, hold, path)
        raise
    discard(hold)
    forget_id(path)
    note(journal, path, data, None)
    return dest


def restore(store: MarkdownStore, node_id: str, *, journal: Journal | None = None) -> Path:
    """Move a tombstone back to nodes/ without `deleted_at`; raises NodeNotFound, or Conflict if a live file exists.

    The tombstone without COPY_MARK of the latest forget (latest `deleted_at`; the first by name among equals) is
    brought back: the file that was indexed when the memory was forgotten (the forget marks the copies'
    tombstones). Tombstones of an older forget have no mark: then the first by name is, as before
    (docs/file-format.md). The other tombstones of the id stay in deleted/.
    """
    tomb = _tombstone_to_restore(store, node_id)
    if tomb is None:
        raise NodeNotFound(f"No deleted memory {node_id}")
    live = store.path_for(node_id)
    if live is not None:
        raise Conflict(f"Memory {node_id} already has a live file {live.name}", details={"path": str(live)})
    node, _ = store.read(tomb)
    dest = _free_path(store.nodes_dir, tomb.name)
    write_bytes(store, dest, _encode(_unmarked(node)), node_id, journal=journal)
    remove(store, tomb, journal=journal)
    _LAST_PATH[node_id] = dest
    return dest


def _unmarked(node: Node) -> Node:
    """The node without `deleted_at` and without COPY_MARK: what a live file of it holds."""
    if COPY_MARK not in node.extra:
        return replace(node, deleted_at=None)
    return replace(node, deleted_at=None, extra={k: v for k, v in node.extra.items() if k != COPY_MARK})


def _tombstone_to_restore(store: MarkdownStore, node_id: str) -> Path | None:
    """The tombstone of `node_id` without COPY_MARK from the latest forget (a copy's tombstone left unmarked by an
    older forget loses to it), the first by name (as store._find orders them) among equals; else store._find's."""
    first = store._find(store.deleted_dir, node_id)
    if first is None:
        return None
    named = sorted(store.deleted_dir.glob(f"*_{node_id[:8]}.md"))
    others = [p for p in _md_files(store.deleted_dir) if not _STANDARD_TAIL.search(p.name)]
    best: tuple[Path, datetime] | None = None
    for candidate in dict.fromkeys([first, *named, *others]):
        if _id_of(candidate) != node_id:
            continue
        node = _peek(store, candidate)
        if node is None or node.id != node_id or COPY_MARK in node.extra:
            continue
        stamp = as_utc(node.deleted_at) if node.deleted_at is not None else datetime.min.replace(tzinfo=UTC)
        if best is None or stamp > best[1]:
            best = (candidate, stamp)
    return first if best is None else best[0]


def purge(store: MarkdownStore, node_id: str, *, journal: Journal | None = None) -> list[Path]:
    """Hard-delete the tombstone(s) of a node; raises NodeNotFound when there is none."""
    removed: list[Path] = []
    while (tomb := store._find(store.deleted_dir, node_id)) is not None:
        remove(store, tomb, journal=journal)
        removed.append(tomb)
    if not removed:
        raise NodeNotFound(f"No deleted memory {node_id}")
    return removed


def remove(store: MarkdownStore, path: Path, *, expected_hash: str | None = None, journal: Journal | None = None) -> None:
    """Unlink a file (gone already is fine); raises StorageError when the disk refuses.

    With `expected_hash` the file is renamed aside first and removed only if it is the expected one; otherwise
    it is put back and WriteConflict is raised.
    """
    if expected_hash is not None:
        hold = aside(path)
        if hold is None:
            return
        before = current(hold)
        if before is None or content_hash(before) != expected_hash:
            put_back(store, hold, path)
            raise WriteConflict(f"{path.name} changed on disk; it was not removed", details={"path": str(path)})
        discard(hold)
    else:
        before = current(path)
        if not remove_path(path):
            return
    forget_id(path)
    note(journal, path, before, None)


def restore_bytes(store: MarkdownStore, path: Path, data: bytes) -> None:
    """Recreate a removed file with `data`, never over a file that appeared meanwhile (rollback of a removal)."""
    atomic_create(store, path, data)


def _peek(store: MarkdownStore, path: Path) -> Node | None:
    """The node in a file without leaving it as the node's path hint; None if it is gone or does not parse."""
    try:
        node, _ = store.read(path)
    except (FileNotFoundError, MalformedNodeFile, StorageError):
        return None
    forget_id(path)
    if _LAST_PATH.get(node.id) == path:
        del _LAST_PATH[node.id]
    return node


def _same_node(store: MarkdownStore, path: Path, node: Node) -> bool:
    other = _peek(store, path)
    return other is not None and _unmarked(other) == _unmarked(node)


def sync_folders(folders: Iterable[Path]) -> None:
    """Make the renames of writes made with `sync_folder=False` durable: one fsync per folder."""
    for folder in folders:
        fsync_folder(folder, folder)


def note(journal: Journal | None, path: Path, before: bytes | None, after_hash: str | None) -> None:
    if journal is not None:
        journal.append(Change(path=Path(path), before=before, after_hash=after_hash))
