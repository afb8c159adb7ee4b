"""Atomic file primitives: temp files, atomic and guarded replacement, conflict copies, folder fsync.

Two levels. The path-level primitives (a temp file beside a target, replacing it, creating it without ever
taking a name that exists, fsync of a folder) know nothing of the store: memory.sync_folder writes the synced
folder with them. The store-level ones (atomic and guarded writes, set-aside, conflict copies) write under the
memory root. Used by memory.files and memory.sync_folder only (an import-linter contract): services reach them
through the write door. No Django. The guarded write and its exchange-based protocol are described in
docs/architecture.md ("Hand edits").
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import NoReturn

from memory import exchange
from memory.domain.node import utcnow
from memory.errors import StorageError, WriteConflict
from memory.store import (
    TEMP_PREFIX,
    TEMP_SUFFIX,
    MarkdownStore,
    StoredFile,
    _free_path,
    _load,
    _reason,
    _remember,
    _stored,
    content_hash,
)


# ---------------------------------------------------------------------------
# The guarded write: no window in which an edit on disk can be lost
# ---------------------------------------------------------------------------

def guarded_write(store: MarkdownStore, target: Path, data: bytes, node_id: str | None, *,
                  expected_hash: str, sync_folder: bool = True) -> tuple[StoredFile, bytes]:
    """Replace `target` with `data` only while it still holds `expected_hash` (or already holds `data`).

    The new version is written to a temp file and exchanged with the target in one atomic step
    (memory.exchange); the file swapped out is then checked. If it is not the one that was read, an edit
    landed after the read: it is swapped back, the app's version goes to conflicts/ and WriteConflict is
    raised. If a second edit replaced the app's version between the two swaps, that newer edit is made live
    and the edit it displaced is kept in conflicts/ too (`*.hand.md`), so no version a person wrote is lost.
    Without an exchange call the live file is renamed aside instead (see `_swap_in_aside`). Returns the new
    file's state and the bytes it replaced. `sync_folder=False`: the caller fsyncs the folder itself, once for
    many files (the write door, before its index transaction).
    """
    found = current(target)
    if found is None or not _same(found, data, expected_hash):
        raise _conflict(store, target, data, deleted=found is None)
    tmp, st = temp_file(store, target, data)
    try:
        try:
            displaced = _swap_in(store, target, tmp, data, expected_hash)
        except exchange.ExchangeUnsupported:
            displaced = _swap_in_aside(store, target, tmp, data, expected_hash)
    except OSError as exc:
        raise storage_error(exc, target) from exc
    finally:
        discard(tmp)
    if sync_folder:
        fsync_folder(target.parent, target)
    if node_id is not None:
        _remember(target, st, node_id)
    return _stored(target, data, st), displaced


def _swap_in(store: MarkdownStore, target: Path, tmp: Path, data: bytes, expected_hash: str) -> bytes:
    try:
        exchange.exchange(tmp, target)
    except FileNotFoundError:
        raise _conflict(store, target, data, deleted=True) from None
    displaced = current(tmp) or b""
    if _same(displaced, data, expected_hash):
        return displaced
    exchange.exchange(tmp, target)  # the person's version goes back live
    if current(tmp) != data:  # a newer edit replaced ours between the swaps: it goes live, its predecessor kept
        exchange.exchange(tmp, target)
        _keep(store, tmp, target, "hand")
    raise _conflict(store, target, data)


def _swap_in_aside(store: MarkdownStore, target: Path, tmp: Path, data: bytes, expected_hash: str) -> bytes:
    """Portable fallback: rename the live file aside, check it, then link the new one in (never over a file)."""
    hold = aside(target)
    if hold is None:
        raise _conflict(store, target, data, deleted=True)
    displaced = current(hold) or b""
    if not _same(displaced, data, expected_hash):
        put_back(store, hold, target)
        raise _conflict(store, target, data)
    try:
        os.link(tmp, target)
    except FileExistsError:  # written on disk while the old one was aside: theirs stays live
        _keep(store, hold, target, "hand")
        raise _conflict(store, target, data) from None
    discard(hold)
    return displaced


def _same(found: bytes, data: bytes, expected_hash: str) -> bool:
    return found == data or content_hash(found) == expected_hash


def aside(path: Path) -> Path | None:
    """Rename `path` to a hidden name beside it (atomically taking whatever is there); None if it is gone.

    The name keeps the original's (`.ormah_aside.<name>.<random>.tmp`), so a file left aside by a crash can be
    recognised and put back by hand or by `ormah doctor`.
    """
    hold = path.with_name(f"{TEMP_PREFIX}aside.{path.name}.{os.urandom(4).hex()}{TEMP_SUFFIX}")
    try:
        os.rename(path, hold)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise storage_error(exc, path) from exc
    return hold


def put_back(store: MarkdownStore, hold: Path, target: Path) -> None:
    """Return a file set aside to `target`; if `target` was written meanwhile, keep the aside one in conflicts/."""
    if link_new(hold, target):
        discard(hold)
    else:
        _keep(store, hold, target, "hand")


def _keep(store: MarkdownStore, path: Path, target: Path, tag: str) -> Path:
    """Move a displaced file (a person's version) into conflicts/ under `<stem>.<time>.<tag>.md`."""
    store.conflicts_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    dest = _free_path(store.conflicts_dir, f"{target.stem}.{utcnow().strftime('%Y%m%dT%H%M%S%fZ')}.{tag}.md")
    os.rename(path, dest)
    fsync_folder(store.conflicts_dir, dest)
    return dest


def _conflict(store: MarkdownStore, target: Path, data: bytes, *, deleted: bool = False) -> WriteConflict:
    copy = conflict_copy(store, target, data)
    what = "was deleted on disk" if deleted else "changed on disk since it was read"
    return WriteConflict(
        f"{target.name} {what}; the new version was saved to {copy.name}",
        details={"path": str(target), "conflict_path": str(copy)},
    )


# ---------------------------------------------------------------------------
# Atomic writes under the memory root
# ---------------------------------------------------------------------------

def conflict_copy(store: MarkdownStore, target: Path, data: bytes) -> Path:
    """Save the app's version of `target` under conflicts/ (a timestamped name); returns its path."""
    copy = _free_path(store.conflicts_dir, f"{target.stem}.{utcnow().strftime('%Y%m%dT%H%M%S%fZ')}.md")
    atomic_write(store, copy, data, None)
    return copy


def atomic_write(store: MarkdownStore, target: Path, data: bytes, node_id: str | None, *,
                 mtime_ns: int | None = None, sync_folder: bool = True) -> StoredFile:
    """Temp file in the same folder, flush, fsync, rename over `target`, fsync the folder.

    `sync_folder=False`: the caller fsyncs the folder itself, once for many files (the write door's batches).
    """
    _root_ready(store, target)
    st = replace_path(target, data, mtime_ns=mtime_ns, sync_folder=sync_folder)
    if node_id is not None:
        _remember(target, st, node_id)
    return _stored(target, data, st)


def atomic_create(store: MarkdownStore, target: Path, data: bytes) -> bool:
    """Create `target` atomically, never over a file that exists: False (nothing written) when it does."""
    _root_ready(store, target)
    return create_path(target, data)


def temp_file(store: MarkdownStore, target: Path, data: bytes, *,
              mtime_ns: int | None = None) -> tuple[Path, os.stat_result]:
    """`data` in a new temp file beside `target`, flushed and fsynced; raises StorageError (nothing left behind)."""
    _root_ready(store, target)
    return write_temp(target, data, mtime_ns=mtime_ns)


def _root_ready(store: MarkdownStore, target: Path) -> None:
    """Create the memory root (private) before a folder under it."""
    if target.parent.is_relative_to(store.root):
        try:
            store.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, target) from exc


# ---------------------------------------------------------------------------
# Path-level primitives (no store: memory.sync_folder writes the synced folder with them)
# ---------------------------------------------------------------------------

def write_temp(target: Path, data: bytes, *, mtime_ns: int | None = None,
               mode: int = 0o700) -> tuple[Path, os.stat_result]:
    """`data` in a new temp file beside `target`, flushed and fsynced; raises StorageError (nothing left behind).

    A missing folder is made with `mode` (the umask applies).
    """
    folder = target.parent
    try:
        folder.mkdir(mode=mode, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise storage_error(exc, target) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if mtime_ns is not None:
                os.utime(fh.fileno(), ns=(mtime_ns, mtime_ns))
            os.fsync(fh.fileno())
            st = os.fstat(fh.fileno())
    except BaseException as exc:  # not only OSError: an interrupt or a MemoryError must not leave the file either
        _unlink_failed(tmp, exc, target)
    return Path(tmp), st


def replace_temp(tmp: Path, target: Path) -> None:
    """Rename the temp file `tmp` over `target`; raises StorageError (the temp file removed)."""
    try:
        os.replace(tmp, target)
    except BaseException as exc:
        _unlink_failed(tmp, exc, target)


def _unlink_failed(tmp: Path | str, exc: BaseException, target: Path) -> NoReturn:
    """Remove the temp file of a write that failed, then raise: StorageError for an OSError, anything else as is."""
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    if isinstance(exc, OSError):
        raise storage_error(exc, target) from exc
    raise exc


def link_new(source: Path, target: Path) -> bool:
    """Give the file `source` (a temp or aside file) the name `target` too, never over a file: False when `target`
    exists. The caller discards `source` afterwards. Raises StorageError."""
    try:
        os.link(source, target)
    except FileExistsError:
        return False
    except OSError as exc:
        raise storage_error(exc, target) from exc
    return True


def remove_path(path: Path) -> bool:
    """Unlink `path`: False when it was gone already. Raises StorageError."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise storage_error(exc, path) from exc
    return True


def replace_path(target: Path, data: bytes, *, mtime_ns: int | None = None, mode: int = 0o700,
                 sync_folder: bool = True) -> os.stat_result:
    """Replace `target` with `data` atomically: temp file beside it, fsync, rename, fsync of the folder.

    Returns the new file's stat. `sync_folder=False`: the caller fsyncs the folder. Raises StorageError.
    """
    tmp, st = write_temp(target, data, mtime_ns=mtime_ns, mode=mode)
    replace_temp(tmp, target)
    if sync_folder:
        fsync_folder(target.parent, target)
    return st


def create_path(target: Path, data: bytes, *, mode: int = 0o700) -> bool:
    """Create `target` holding `data` (temp file, fsync, link, fsync of the folder), never over a file that exists.

    Returns False, writing nothing, when `target` exists (a file that appeared meanwhile is left as it is).
    Raises StorageError.
    """
    tmp, _ = write_temp(target, data, mode=mode)
    try:
        created = link_new(tmp, target)
    finally:
        discard(tmp)
    if created:
        fsync_folder(target.parent, target)
    return created


def current(path: Path) -> bytes | None:
    """The bytes at `path`, or None when there is no file."""
    try:
        return _load(path)[0]
    except FileNotFoundError:
        return None


def discard(path: Path) -> None:
    """Unlink a temp or aside file; gone already is fine."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def fsync_folder(folder: Path, target: Path) -> None:
    """Make a rename in `folder` durable (EINVAL/ENOTSUP from file systems without directory fsync are fine)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise storage_error(exc, target) from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise storage_error(exc, target) from exc
    finally:
        os.close(fd)


def storage_error(exc: OSError, path: Path) -> StorageError:
    return StorageError(f"Cannot write {path}: {_reason(exc)}", details={"path": str(path), "errno": exc.errno})
