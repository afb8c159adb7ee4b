"""Helpers for maintenance tests: snapshots of the files and of every derived index row."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from memory.backends import backend
from memory.models import EdgeRow, NodeRow, NodeTagRow
from memory.search import vectors

# Row ids, the write sequence and mtimes change whenever a file is written again; everything else is compared.
ROW_FIELDS = [f.name for f in NodeRow._meta.concrete_fields if f.name not in ("id", "indexed_seq", "file_mtime_ns")]


def files_snapshot(home: Path) -> dict[str, bytes]:
    """Every markdown file under the memory folder (live, deleted, conflicts) by relative path."""
    root = home / "memory"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def index_snapshot() -> dict:
    """Rows, edges, tags, vectors and FTS rows keyed by node uid."""
    uid_of = dict(NodeRow.objects.values_list("id", "uid"))
    fts = backend().fulltext_rows()
    return {
        "nodes": {r["uid"]: r for r in NodeRow.objects.values(*ROW_FIELDS)},
        "edges": sorted((uid_of[s], uid_of[t], e, w, r) for s, t, e, w, r in
                        EdgeRow.objects.values_list("source_id", "target_id", "edge_type", "weight", "reason")),
        "tags": sorted((uid_of[n], t) for n, t in NodeTagRow.objects.values_list("node_id", "tag")),
        "vectors": {uid_of[row_id]: blob for row_id, blob in vectors.all_vectors()},
        "fts": fts,
    }


def edges_of(uid: str) -> list[tuple[str, str, str, float]]:
    """(source uid, target uid, edge type, weight) for every edge touching `uid`, sorted."""
    rows = EdgeRow.objects.filter(source__uid=uid) | EdgeRow.objects.filter(target__uid=uid)
    return sorted(rows.values_list("source__uid", "target__uid", "edge_type", "weight"))


@contextmanager
def held_elsewhere(lock_file):
    """The maintenance lock held through another open file, as another process would hold it."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)
