"""Markdown node files on disk: layout, lookup, reading, iteration. No Django.

Layout under the memory root: `nodes/` (live), `deleted/` (tombstones), `conflicts/` (the app's version of a
write that lost to an edit on disk). Reading only: every change to these folders is made by memory.files, which
only the write door (memory.writes) calls.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from memory.domain.markdown import render
from memory.domain.node import Node
from memory.errors import MalformedNodeFile, StorageError, ValidationFailed
from memory.memo import LruDict
from memory.node_bytes import parse_bytes

logger = logging.getLogger(__name__)

NODES_DIR = "nodes"
DELETED_DIR = "deleted"
CONFLICTS_DIR = "conflicts"
TEMP_PREFIX = ".ormah_"
TEMP_SUFFIX = ".tmp"
# A write's temp file: tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX) (memory.atomic.write_temp), whose
# random part is 8 characters of [a-z0-9_]. Only names of exactly that shape are ours to remove.
_TEMP = re.compile(re.escape(TEMP_PREFIX) + r"[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + r"\Z")
# A temp file older than this is left by a killed write: a write in flight takes well under a second.
STALE_TEMP_AGE_S = 3600.0
# Only the first MAX_READ_BYTES of a node file are ever read (the API's 64 KiB of content plus room for front
# matter): a 54 MB hand-written file must not be read whole on every request. Such a node is served and indexed
# truncated, with a note, and the app never rewrites it (docs/file-format.md, "Limits").
MAX_READ_BYTES = 256 * 1024
SYMLINK_REASON = "a symbolic link: skipped, never followed or replaced"

_SHORT_ID = re.compile(r"[0-9a-f]{8}")
_STANDARD_TAIL = re.compile(r"_[0-9a-f]{8}\.md\Z")
_REASONS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}

# The per-file caches below hold the FILE_CACHE_ENTRIES files a process read or wrote most recently, each: a dropped
# entry is read again from its file. Unbounded, they held ~0.9 KiB for every file a process ever met, deleted ones
# included (~90 MiB at 100,000 memories in the web worker whose watcher syncs every file; docs/benchmarks.md,
# "Served tails and memory, session 27").
FILE_CACHE_ENTRIES = 8_192
# Which node id a file holds, keyed by absolute path and trusted only while (inode, mtime_ns, size) still match.
_Signature = tuple[int, int, int]
_ID_CACHE: LruDict = LruDict(FILE_CACHE_ENTRIES)  # str -> (_Signature, str | None)
# Where each node id was last read or written: a lookup hint, and the file a guarded write is checked against
# even after a hand edit broke it.
_LAST_PATH: LruDict = LruDict(FILE_CACHE_ENTRIES)  # str -> Path
# Files that failed to parse, keyed by absolute path: (lstat signature, reason). An unchanged malformed file is
# reported from here without being opened again, so logs name it once per change and a watcher sees no events.
_MALFORMED: LruDict = LruDict(FILE_CACHE_ENTRIES)  # str -> (_Signature, str)


def content_hash(data: bytes) -> str:
    """Full SHA-256 hex digest of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class StoredFile:
    """A node file as it is on disk right now."""

    path: Path
    hash: str
    mtime_ns: int
    size: int
    truncated: bool = False  # larger than MAX_READ_BYTES: only the beginning was read; never rewritten


@dataclass(frozen=True)
class ScanItem:
    """One file of a scan: the node, or the reason it could not be parsed (the file is left untouched)."""

    path: Path
    node: Node | None
    stored: StoredFile
    error: str | None


class MarkdownStore:
    """The memory folder; markdown node files are the canonical truth."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def nodes_dir(self) -> Path:
        return self.root / NODES_DIR

    @property
    def deleted_dir(self) -> Path:
        return self.root / DELETED_DIR

    @property
    def conflicts_dir(self) -> Path:
        return self.root / CONFLICTS_DIR

    # -----------------------------------------------------------------------
    # Reading
    # -----------------------------------------------------------------------

    def read(self, path: Path) -> tuple[Node, StoredFile]:
        """The node in a file and the file's state; raises FileNotFoundError, MalformedNodeFile, StorageError.

        Never follows a symbolic link (MalformedNodeFile) and reads at most MAX_READ_BYTES (`truncated`).
        """
        path = Path(path)
        data, st, truncated = _read_capped(path)
        node = _parse_checked(data, path, st, truncated)
        _remember(path, st, node.id)
        _LAST_PATH[node.id] = path
        return node, _stored(path, data, st, truncated)

    def stat(self, path: Path) -> StoredFile:
        """The file's current hash, mtime and size (the hash of at most MAX_READ_BYTES)."""
        path = Path(path)
        data, st, truncated = _read_capped(path)
        return _stored(path, data, st, truncated)

    def iter_paths(self) -> list[Path]:
        """Live node files (`nodes/*.md`, symbolic links included so they are reported), sorted; dotfiles and
        temp files are skipped."""
        return _md_files(self.nodes_dir)

    def deleted_paths(self) -> list[Path]:
        """Tombstone files (`deleted/*.md`), sorted."""
        return _md_files(self.deleted_dir)

    def deleted_ids(self, prefix: str) -> list[str]:
        """The ids of the tombstones in deleted/ that start with `prefix`, sorted, each once (ids read from the
        files, cached by their signature, so a file renamed by hand counts too)."""
        return sorted({i for i in map(_id_of, self.deleted_paths()) if i is not None and i.startswith(prefix)})

    def scan(self) -> Iterator[ScanItem]:
        """Every live file with its node, or with the parse error; files that vanish mid-scan are skipped."""
        for path in self.iter_paths():
            try:
                data, st, truncated = _read_capped(path)
            except FileNotFoundError:
                continue
            except StorageError as exc:
                logger.warning("Skipping unreadable memory file %s: %s", path, exc)
                continue
            except MalformedNodeFile as exc:  # a symbolic link, or unchanged since it failed to parse
                st = os.lstat(path)
                yield ScanItem(path=path, node=None, stored=StoredFile(path, "", st.st_mtime_ns, st.st_size),
                               error=exc.reason)
                continue
            stored = _stored(path, data, st, truncated)
            try:
                node = _parse_checked(data, path, st, truncated)
            except MalformedNodeFile as exc:
                yield ScanItem(path=path, node=None, stored=stored, error=exc.reason)
                continue
            _remember(path, st, node.id)
            _LAST_PATH[node.id] = path
            yield ScanItem(path=path, node=node, stored=stored, error=None)

    def path_for(self, node_id: str) -> Path | None:
        """The live file holding exactly this node id (verified by parsing, never just by the 8-char prefix)."""
        found = self._find(self.nodes_dir, node_id, hint=self._last_path(node_id))
        if found is not None:
            _LAST_PATH[node_id] = found
        return found

    # -----------------------------------------------------------------------
    # Internals
    # -----------------------------------------------------------------------

    def _last_path(self, node_id: str) -> Path | None:
        path = _LAST_PATH.get(node_id)
        return path if path is not None and path.parent == self.nodes_dir else None

    def _find(self, folder: Path, node_id: str, *, hint: Path | None = None) -> Path | None:
        short = node_id[:8]
        if not _SHORT_ID.fullmatch(short):
            return None
        # The file this process last saw the node in, checked before any listing: a listing reads the whole folder
        # (~90 ms of CPU at 100,000 files), one stat of a cached signature does not.
        if hint is not None and _id_of(hint) == node_id:
            return hint
        for candidate in sorted(folder.glob(f"*_{short}.md")):
            if _id_of(candidate) == node_id:
                return candidate
        # Files renamed by hand lose the `_<short_id>.md` tail; look inside those too (cached by signature).
        for candidate in _md_files(folder):
            if not _STANDARD_TAIL.search(candidate.name) and _id_of(candidate) == node_id:
                return candidate
        return None


# ---------------------------------------------------------------------------
# File helpers
# ---------------------------------------------------------------------------

def _load(path: Path) -> tuple[bytes, os.stat_result]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
            return data, os.fstat(fh.fileno())
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StorageError(f"Cannot read {path}: {_reason(exc)}", details={"path": str(path)}) from exc


def _stored(path: Path, data: bytes, st: os.stat_result, truncated: bool = False) -> StoredFile:
    return StoredFile(path=path, hash=content_hash(data), mtime_ns=st.st_mtime_ns, size=st.st_size,
                      truncated=truncated)


def _read_capped(path: Path) -> tuple[bytes, os.stat_result, bool]:
    """At most MAX_READ_BYTES of a node file, never through a symbolic link: (data, stat, truncated).

    Raises FileNotFoundError, StorageError, or MalformedNodeFile for a link or for a file that failed to parse and
    has not changed since (`repeated`, without opening it).
    """
    key = os.path.abspath(path)
    seen = _MALFORMED.get(key)
    if seen is not None:
        try:
            if _signature(os.lstat(path)) == seen[0]:
                raise MalformedNodeFile(path=path, reason=seen[1], repeated=True)
        except FileNotFoundError:
            _MALFORMED.pop(key, None)
            raise
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            _MALFORMED[key] = (_signature(os.lstat(path)), SYMLINK_REASON)
            raise MalformedNodeFile(path=path, reason=SYMLINK_REASON) from None
        raise StorageError(f"Cannot read {path}: {_reason(exc)}", details={"path": str(path)}) from exc
    try:
        st = os.fstat(fd)
        chunks, left = [], MAX_READ_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise StorageError(f"Cannot read {path}: {_reason(exc)}", details={"path": str(path)}) from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) <= MAX_READ_BYTES:
        return data, st, False
    return _utf8_prefix(data[:MAX_READ_BYTES]), st, True


def _utf8_prefix(data: bytes) -> bytes:
    """`data` without a UTF-8 sequence cut off at its end."""
    i, back = len(data) - 1, 0
    while i >= 0 and back < 3 and data[i] & 0xC0 == 0x80:
        i, back = i - 1, back + 1
    if i < 0 or data[i] < 0x80:
        return data
    need = 2 if data[i] >> 5 == 0b110 else 3 if data[i] >> 4 == 0b1110 else 4
    return data if back + 1 >= need else data[:i]


def _parse_checked(data: bytes, path: Path, st: os.stat_result, truncated: bool) -> Node:
    """Parse, remembering a failure by the file's signature (so an unchanged file is reported once)."""
    key = os.path.abspath(path)
    try:
        node = parse_bytes(data, path)
    except MalformedNodeFile as exc:
        _MALFORMED[key] = (_signature(st), exc.reason)
        raise
    _MALFORMED.pop(key, None)
    if truncated:
        note = f"\n\n[Ormah read only the first {MAX_READ_BYTES // 1024} KiB of this {st.st_size:,}-byte file]"
        node = replace(node, content=node.content + note)
    return node


def _encode(node: Node) -> bytes:
    try:
        return render(node).encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationFailed(f"Memory {node.id} holds text that is not valid UTF-8") from None


def _md_files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries
                     if e.name.endswith(".md") and not e.name.startswith(".") and (e.is_symlink() or e.is_file())]
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(f"Cannot list {folder}: {_reason(exc)}", details={"path": str(folder)}) from exc
    return [folder / name for name in sorted(names)]


def _signature(st: os.stat_result) -> _Signature:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _remember(path: Path, st: os.stat_result, node_id: str | None) -> None:
    _ID_CACHE[os.path.abspath(path)] = (_signature(st), node_id)


def _id_of(path: Path) -> str | None:
    """The node id a file holds, None if it is missing, unreadable or malformed."""
    key = os.path.abspath(path)
    try:
        cached = _ID_CACHE.get(key)
        if cached is not None and cached[0] == _signature(os.lstat(path)):
            return cached[1]
        data, st, truncated = _read_capped(path)
    except (OSError, StorageError, MalformedNodeFile):
        _ID_CACHE.pop(key, None)
        return None
    try:
        node_id: str | None = _parse_checked(data, path, st, truncated).id
    except MalformedNodeFile:
        node_id = None
    _remember(path, st, node_id)
    return node_id


def _free_path(folder: Path, name: str) -> Path:
    """`folder/name`, or the same name with -2, -3, ... before the `_<short_id>.md` tail if that is taken."""
    path = folder / name
    if not os.path.lexists(path):
        return path
    tail = _STANDARD_TAIL.search(name)
    base, end = (name[: tail.start()], name[tail.start():]) if tail else (name.removesuffix(".md"), ".md")
    candidates = (folder / f"{base}-{n}{end}" for n in itertools.count(2))
    return next(p for p in candidates if not os.path.lexists(p))


def forget_id(path: Path) -> None:
    """Drop the cached id of a file that was removed."""
    _ID_CACHE.pop(os.path.abspath(path), None)


def _reason(exc: OSError) -> str:
    return _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def stale_temps(store: MarkdownStore, *, now: float, older_than: float | None = None) -> list[Path]:
    """The temp files a write killed between its temp file and the rename left in nodes/, deleted/ and conflicts/:
    regular files (never a link) named as write_temp names them, whose status changed more than `older_than`
    seconds (STALE_TEMP_AGE_S) before `now` (ctime, which a write's utime does not set back as it does the mtime).
    Read only."""
    older_than = STALE_TEMP_AGE_S if older_than is None else older_than
    found: list[Path] = []
    for folder in (store.nodes_dir, store.deleted_dir, store.conflicts_dir):
        try:
            entries = [e for e in os.scandir(folder) if _TEMP.match(e.name) and e.is_file(follow_symlinks=False)]
        except FileNotFoundError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_ctime < now - older_than:
                    found.append(Path(entry.path))
            except FileNotFoundError:
                continue
    return sorted(found)
