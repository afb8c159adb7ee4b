"""The sync folder on disk (`ormah sync PATH`): reading its memory files, writing them, its state file. No Django.

The folder is the person's (a git checkout, say), not the store: only `nodes/*.md`, `conflicts/` and the state
file `.ormah-sync` are ever written, each atomically (temp file beside it, fsync, rename, folder fsync: the
path-level primitives of memory.atomic, which the store's writes use too), and a file is replaced or removed only
while it still holds the bytes the sync read (an edit made meanwhile is left as it is, reported).
Everything else in the folder (a README, `.git/`, `deleted/`, files that do not parse) is never touched.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memory.atomic import (
    create_path,
    discard,
    fsync_folder,
    remove_path,
    replace_path,
    replace_temp,
    storage_error,
    write_temp,
)
from memory.domain.folder_sync import SyncState, state_parse, state_render
from memory.domain.identity import is_self_node
from memory.domain.node import Node
from memory.errors import MalformedNodeFile, StorageError, ValidationFailed, WriteConflict
from memory.node_bytes import parse_bytes

NODES = "nodes"
CONFLICTS = "conflicts"
STATE_FILE = ".ormah-sync"
FOLDER_MODE = 0o777  # a folder the sync makes in the person's folder: their umask decides
MAX_FILE_BYTES = 256 * 1024  # memory.store.MAX_READ_BYTES: the store never rewrites a larger file


@dataclass(frozen=True)
class FolderFile:
    """A memory file of the sync folder: `rel` is `nodes/<name>.md`."""

    rel: str
    node_id: str
    data: bytes
    is_self: bool = False  # the file holds a self node (memory.domain.identity)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class FolderScan:
    """What `nodes/` holds: memory files by id, the files left alone with the reason (`malformed`), and the ids
    that several files hold (`doubled`: id -> one of those files; the sync leaves such a memory alone)."""

    files: dict[str, FolderFile] = field(default_factory=dict)
    malformed: list[tuple[str, str]] = field(default_factory=list)
    doubled: dict[str, str] = field(default_factory=dict)


def folder_scan(root: Path) -> FolderScan:
    """Read every `nodes/*.md` of the folder (not hidden files); raises StorageError when the folder is unreadable.

    A symbolic link, a file over 256 KiB, bytes that are not UTF-8 or hold a NUL, a file that does not parse, and
    every file of an id that two files hold are reported in `malformed` and never written or removed.
    """
    scan = FolderScan()
    seen: dict[str, list[FolderFile]] = {}
    for name in _md_names(root / NODES):
        rel = f"{NODES}/{name}"
        path = root / rel
        if path.is_symlink():
            scan.malformed.append((rel, "a symbolic link: skipped, never followed or replaced"))
            continue
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            scan.malformed.append((rel, f"unreadable: {exc.strerror or exc}"))
            continue
        try:
            node = _node(data, rel)
        except MalformedNodeFile as exc:
            scan.malformed.append((rel, exc.reason))
            continue
        seen.setdefault(node.id, []).append(FolderFile(rel=rel, node_id=node.id, data=data,
                                                       is_self=is_self_node(node)))
    for node_id, found in seen.items():
        if len(found) == 1:
            scan.files[node_id] = found[0]
            continue
        names = ", ".join(f.rel for f in found)
        scan.doubled[node_id] = found[0].rel
        scan.malformed += [(f.rel, f"memory {node_id} is in {len(found)} files ({names}); keep one") for f in found]
    scan.malformed.sort()
    return scan


def _node(data: bytes, rel: str) -> Node:
    """The memory the bytes hold; raises MalformedNodeFile saying why the file is left alone."""
    if len(data) > MAX_FILE_BYTES:
        raise MalformedNodeFile(path=rel, reason=f"{len(data):,} bytes, over the {MAX_FILE_BYTES // 1024} KiB Ormah "
                                                 "reads; split it")
    return parse_bytes(data, rel)  # what the store reads as malformed (a NUL, a tag over 64 characters, ...) stays out


def _md_names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if e.name.endswith(".md") and not e.name.startswith(".")
                          and (e.is_symlink() or e.is_file()))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(f"Cannot list {folder}: {exc.strerror or exc}", details={"path": str(folder)}) from exc


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

def file_put(root: Path, rel: str, data: bytes, *, expected: bytes | None) -> None:
    """Write `data` at `rel`: over the file only while it still holds `expected`, or as a new file that nothing
    else may have taken meanwhile (`expected=None`). Raises WriteConflict (the file changed), StorageError."""
    target = root / rel
    if expected is None:
        if not create_path(target, data, mode=FOLDER_MODE):
            raise WriteConflict(f"{rel} appeared in the folder while syncing; left as it is",
                                details={"path": str(target)})
        return
    tmp, _ = write_temp(target, data, mode=FOLDER_MODE)
    try:
        _check(target, rel, expected)
        replace_temp(tmp, target)
    finally:
        discard(tmp)
    fsync_folder(target.parent, target)


def file_remove(root: Path, rel: str, *, expected: bytes) -> None:
    """Remove `rel` while it still holds `expected`; raises WriteConflict (it changed), StorageError."""
    target = root / rel
    _check(target, rel, expected)
    if remove_path(target):
        fsync_folder(target.parent, target)


def conflict_keep(root: Path, rel: str, data: bytes, *, now: datetime) -> str:
    """Keep a version in the folder's `conflicts/` as `<stem>.<time>.md`; returns its path in the folder."""
    stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
    dest = f"{CONFLICTS}/{free_name(root / CONFLICTS, f'{Path(rel).stem}.{stamp}.md')}"
    file_put(root, dest, data, expected=None)
    return dest


def free_name(folder: Path, name: str) -> str:
    """`name`, or with -2, -3, ... before `.md` when `folder` already holds a file of that name."""
    candidate, n = name, 2
    while os.path.lexists(folder / candidate):
        candidate, n = f"{name[:-3]}-{n}.md", n + 1
    return candidate


def _check(target: Path, rel: str, expected: bytes) -> None:
    try:
        if target.is_symlink() or target.read_bytes() != expected:
            raise WriteConflict(f"{rel} changed in the folder while syncing; left as it is",
                                details={"path": str(target)})
    except FileNotFoundError:
        raise WriteConflict(f"{rel} was removed from the folder while syncing", details={"path": str(target)}) from None
    except OSError as exc:
        raise storage_error(exc, target) from exc


# ---------------------------------------------------------------------------
# The state file
# ---------------------------------------------------------------------------

def state_read(root: Path) -> SyncState | None:
    """The folder's sync state, None before its first sync; raises ValidationFailed for a file Ormah cannot read."""
    path = root / STATE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationFailed(f"Cannot read {path}: {exc}") from exc
    try:
        return state_parse(text)
    except ValueError as exc:
        raise ValidationFailed(
            f"{path} is not a sync state this Ormah can read ({exc}). Remove it to sync as the first time (nothing "
            "is deleted then, and every difference is kept as a conflict)", details={"path": str(path)}) from exc


def state_write(root: Path, state: SyncState) -> None:
    """Replace the folder's state file atomically; raises StorageError."""
    replace_path(root / STATE_FILE, state_render(state).encode("utf-8"), mode=FOLDER_MODE)
