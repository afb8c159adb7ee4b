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
from dataclasses import dataclass
from pathlib import Path

from memory.domain.markdown import parse, render
from memory.domain.node import Node
from memory.errors import MalformedNodeFile, StorageError, ValidationFailed

logger = logging.getLogger(__name__)

NODES_DIR = "nodes"
DELETED_DIR = "deleted"
CONFLICTS_DIR = "conflicts"
TEMP_PREFIX = ".ormah_"
TEMP_SUFFIX = ".tmp"

_SHORT_ID = re.compile(r"[0-9a-f]{8}")
_STANDARD_TAIL = re.compile(r"_[0-9a-f]{8}\.md\Z")
_REASONS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}

# Which node id a file holds, keyed by absolute path and trusted only while (inode, mtime_ns, size) still match.
_Signature = tuple[int, int, int]
_ID_CACHE: dict[str, tuple[_Signature, str | None]] = {}
# Where each node id was last read or written: a lookup hint, and the file a guarded write is checked against
# even after a hand edit broke it.
_LAST_PATH: dict[str, Path] = {}


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
        """The node in a file and the file's state; raises FileNotFoundError, MalformedNodeFile, StorageError."""
        path = Path(path)
        data, st = _load(path)
        node = _parse_bytes(data, path)
        _remember(path, st, node.id)
        _LAST_PATH[node.id] = path
        return node, _stored(path, data, st)

    def stat(self, path: Path) -> StoredFile:
        """The file's current hash, mtime and size."""
        path = Path(path)
        data, st = _load(path)
        return _stored(path, data, st)

    def iter_paths(self) -> list[Path]:
        """Live node files (`nodes/*.md`), sorted; dotfiles and temp files are skipped."""
        return _md_files(self.nodes_dir)

    def deleted_paths(self) -> list[Path]:
        """Tombstone files (`deleted/*.md`), sorted."""
        return _md_files(self.deleted_dir)

    def scan(self) -> Iterator[ScanItem]:
        """Every live file with its node, or with the parse error; files that vanish mid-scan are skipped."""
        for path in self.iter_paths():
            try:
                data, st = _load(path)
            except FileNotFoundError:
                continue
            except StorageError as exc:
                logger.warning("Skipping unreadable memory file %s: %s", path, exc)
                continue
            stored = _stored(path, data, st)
            try:
                node = _parse_bytes(data, path)
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
        candidates = [hint] if hint is not None else []
        candidates += sorted(folder.glob(f"*_{short}.md"))
        for candidate in candidates:
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


def _stored(path: Path, data: bytes, st: os.stat_result) -> StoredFile:
    return StoredFile(path=path, hash=content_hash(data), mtime_ns=st.st_mtime_ns, size=st.st_size)


def _parse_bytes(data: bytes, path: Path) -> Node:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedNodeFile(path=path, reason=f"not valid UTF-8 (byte {exc.start})") from None
    return parse(text, source=str(path))


def _encode(node: Node) -> bytes:
    try:
        return render(node).encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationFailed(f"Memory {node.id} holds text that is not valid UTF-8") from None


def _md_files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()]
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
        if cached is not None and cached[0] == _signature(os.stat(path)):
            return cached[1]
        data, st = _load(path)
    except (OSError, StorageError):
        _ID_CACHE.pop(key, None)
        return None
    try:
        node_id: str | None = _parse_bytes(data, path).id
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

