"""The documents store (PostgreSQL): bring this host's folder in step with what other hosts wrote, under the write
lock and the host lock that memory.writes takes for a unit or `exclusive()` (memory.documents keeps the versions)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from django.db import DatabaseError

from memory import documents, files
from memory.errors import StorageError
from memory.store import MarkdownStore, content_hash

logger = logging.getLogger(__name__)


def pull(store: MarkdownStore, home: Path) -> int:
    """Write into this host's folder what other hosts changed since it last looked; returns the files changed.

    Each path with a newer version gets the stored bytes and modification time (or goes, when the store removed
    it). A local file that differs and matches none of the path's stored versions was edited on this host while
    another host changed it: it is kept in conflicts/ first, never lost. A folder without any memory file (new,
    or removed whole) fetches everything. Needs the write lock and the host lock.
    """
    seen, top = documents.watermark_get(home), documents.latest_seq()
    if top < seen or (seen and not _holds_files(store)):  # another store, or a folder emptied whole
        seen = 0
    if top == seen:
        return 0
    changed = 0
    for rel, doc in documents.changed_since(seq=seen):
        path = store.root / rel
        local = _bytes_at(path)
        want = None if doc is None else doc.body
        if local != want and local is not None and content_hash(local) not in documents.hashes_of(path=rel):
            kept = files.conflict_copy(store, path, local)
            logger.warning("%s changed on this host while another host changed it; this host's version is kept "
                           "as %s", rel, kept.name)
        if doc is None:
            if local is not None:
                files.remove(store, path)
                changed += 1
            continue
        if local != want:
            files.write_bytes(store, path, want, doc.node_id or None)
            changed += 1
        if path.stat().st_mtime_ns != doc.mtime_ns:
            os.utime(path, ns=(doc.mtime_ns, doc.mtime_ns))
    documents.watermark_set(home, top)
    return changed


def watermark_after(home: Path) -> None:
    """After a unit: the folder holds every version so far (the unit pulled, then wrote, under the host lock).
    Never raises: the unit is committed, and an error here would make its caller write it a second time."""
    try:
        documents.watermark_set(home, documents.latest_seq())
    except (StorageError, DatabaseError):  # Trigger: the home refuses the small file, or the connection is lost after the commit. Why: the unit is committed. Outcome: logged; the next unit looks again from the older watermark and finds its own files equal.
        logger.warning("Could not record the documents watermark in %s", home, exc_info=True)


def _holds_files(store: MarkdownStore) -> bool:
    for folder in (store.nodes_dir, store.deleted_dir):
        try:
            with os.scandir(folder) as entries:
                if any(e.name.endswith(".md") and not e.name.startswith(".") for e in entries):
                    return True
        except FileNotFoundError:
            continue
    return False


def _bytes_at(path: Path) -> bytes | None:
    try:
        return None if path.is_symlink() else path.read_bytes()
    except FileNotFoundError:
        return None
