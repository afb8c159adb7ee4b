"""Changing node files on disk: atomic writes, guarded writes with conflict copies, soft delete, restore, purge.

The only module that writes under `nodes/`, `deleted/` and `conflicts/`. Services never call it: they go through
the write door (memory.writes), which holds the write lock, journals every change made here so it can be rolled
back, and indexes the result (an import-linter contract in pyproject.toml keeps it so). No Django.

Every function takes an optional `journal`: each change appends a `Change` (path, the bytes it replaced or None,
the hash it left or None when it removed the file), which is exactly what a rollback needs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from memory.domain.node import Node, as_utc, utcnow
from memory.domain.slug import node_filename
from memory.errors import Conflict, NodeNotFound, StorageError, WriteConflict
from memory.store import (
    _LAST_PATH,
    TEMP_PREFIX,
    TEMP_SUFFIX,
    MarkdownStore,
    StoredFile,
    _encode,
    _free_path,
    _id_of,
    _load,
    _reason,
    _remember,
    _stored,
    content_hash,
    forget_id,
)


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
    mtime_ns: int | None = None, journal: Journal | None = None,
) -> StoredFile:
    """Write a node atomically to its file (named at first save, never renamed).

    With `expected_hash`, a file changed or deleted on disk is not overwritten: the app's version goes to
    conflicts/ and WriteConflict is raised. Raises Conflict when `path` holds another node, StorageError
    when the disk refuses. `mtime_ns` stamps the file's modification time (imports keep the original's).
    """
    data = _encode(node)
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
    before = _current(target)
    if expected_hash is not None:
        _check_unchanged(store, target, expected_hash, data, before)
    stored = atomic_write(store, target, data, node.id, mtime_ns=mtime_ns)
    _note(journal, target, before, stored.hash)
    _LAST_PATH[node.id] = target
    return stored


def write_bytes(store: MarkdownStore, path: Path, data: bytes, node_id: str | None, *,
                journal: Journal | None = None) -> StoredFile:
    """Put exact bytes at `path` (undo restores snapshots byte for byte, never a re-render)."""
    before = _current(path)
    stored = atomic_write(store, path, data, node_id)
    _note(journal, path, before, stored.hash)
    if node_id is not None:
        _LAST_PATH[node_id] = path
    return stored


def soft_delete(store: MarkdownStore, node_id: str, *, now: datetime, journal: Journal | None = None) -> Path:
    """Move a node to deleted/ with `deleted_at` stamped (the purge clock); raises NodeNotFound."""
    path = store.path_for(node_id)
    if path is None:
        raise NodeNotFound(f"No memory file for {node_id}")
    node, _ = store.read(path)
    dest = store.deleted_dir / path.name
    if os.path.lexists(dest) and _id_of(dest) != node_id:
        dest = _free_path(store.deleted_dir, path.name)
    write_bytes(store, dest, _encode(replace(node, deleted_at=as_utc(now))), node_id, journal=journal)
    remove(path, journal=journal)
    _LAST_PATH[node_id] = dest
    return dest


def restore(store: MarkdownStore, node_id: str, *, journal: Journal | None = None) -> Path:
    """Move a tombstone back to nodes/ without `deleted_at`; raises NodeNotFound, or Conflict if a live file exists."""
    tomb = store._find(store.deleted_dir, node_id)
    if tomb is None:
        raise NodeNotFound(f"No deleted memory {node_id}")
    live = store.path_for(node_id)
    if live is not None:
        raise Conflict(f"Memory {node_id} already has a live file {live.name}", details={"path": str(live)})
    node, _ = store.read(tomb)
    dest = _free_path(store.nodes_dir, tomb.name)
    write_bytes(store, dest, _encode(replace(node, deleted_at=None)), node_id, journal=journal)
    remove(tomb, journal=journal)
    _LAST_PATH[node_id] = dest
    return dest


def purge(store: MarkdownStore, node_id: str, *, journal: Journal | None = None) -> list[Path]:
    """Hard-delete the tombstone(s) of a node; raises NodeNotFound when there is none."""
    removed: list[Path] = []
    while (tomb := store._find(store.deleted_dir, node_id)) is not None:
        remove(tomb, journal=journal)
        removed.append(tomb)
    if not removed:
        raise NodeNotFound(f"No deleted memory {node_id}")
    return removed


def remove(path: Path, *, journal: Journal | None = None) -> None:
    """Unlink a file (gone already is fine); raises StorageError when the disk refuses."""
    before = _current(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _storage_error(exc, path) from exc
    forget_id(path)
    _note(journal, path, before, None)


# ---------------------------------------------------------------------------
# Internals
# ---------------------------------------------------------------------------

def _current(path: Path) -> bytes | None:
    try:
        return _load(path)[0]
    except FileNotFoundError:
        return None


def _note(journal: Journal | None, path: Path, before: bytes | None, after_hash: str | None) -> None:
    if journal is not None:
        journal.append(Change(path=Path(path), before=before, after_hash=after_hash))


def _check_unchanged(store: MarkdownStore, target: Path, expected_hash: str, data: bytes,
                     current: bytes | None) -> None:
    if current is not None and (current == data or content_hash(current) == expected_hash):
        return
    copy = conflict_copy(store, target, data)
    what = "was deleted on disk" if current is None else "changed on disk since it was read"
    raise WriteConflict(
        f"{target.name} {what}; the new version was saved to {copy.name}",
        details={"path": str(target), "conflict_path": str(copy)},
    )


def conflict_copy(store: MarkdownStore, target: Path, data: bytes) -> Path:
    """Save the app's version of `target` under conflicts/ (a timestamped name); returns its path."""
    copy = _free_path(store.conflicts_dir, f"{target.stem}.{utcnow().strftime('%Y%m%dT%H%M%S%fZ')}.md")
    atomic_write(store, copy, data, None)
    return copy


def atomic_write(store: MarkdownStore, target: Path, data: bytes, node_id: str | None, *,
                 mtime_ns: int | None = None) -> StoredFile:
    """Temp file in the same folder, flush, fsync, rename over `target`, fsync the folder."""
    folder = target.parent
    try:
        if folder.is_relative_to(store.root):
            store.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise _storage_error(exc, target) from exc
    done = False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if mtime_ns is not None:
                os.utime(fh.fileno(), ns=(mtime_ns, mtime_ns))
            os.fsync(fh.fileno())
            st = os.fstat(fh.fileno())
        os.replace(tmp, target)
        done = True
    except OSError as exc:
        raise _storage_error(exc, target) from exc
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    fsync_folder(folder, target)
    if node_id is not None:
        _remember(target, st, node_id)
    return _stored(target, data, st)


def fsync_folder(folder: Path, target: Path) -> None:
    """Make a rename in `folder` durable (EINVAL/ENOTSUP from file systems without directory fsync are fine)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise _storage_error(exc, target) from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise _storage_error(exc, target) from exc
    finally:
        os.close(fd)


def _storage_error(exc: OSError, path: Path) -> StorageError:
    return StorageError(f"Cannot write {path}: {_reason(exc)}", details={"path": str(path), "errno": exc.errno})
