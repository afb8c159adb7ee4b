"""The derived index: node files -> rows, tags, edges, FTS (via triggers) and vectors.

The index is a function of the markdown files (plus an embedding cache that only saves work). Re-indexing a node
updates its row in place, so edges that point at it survive. What a row holds: memory/index_rows.py; the edges:
memory/index_edges.py; the cache and passages: memory/index_vectors.py; the index's facts (model, format, write
sequence) and the vec0 table's shape: memory/index_meta.py. The full rebuild (memory/rebuild.py) sits above this
module and uses it, never the other way (an import-linter contract).
See docs/architecture.md for the write protocol.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection, transaction

from memory.domain.node import Node
from memory.domain.requests import tag_normal
from memory.embeddings import Embedder
from memory.errors import MalformedNodeFile
from memory.index_meta import (  # the index's facts and the vector table's shape: used as index.*
    INDEX_FORMAT,  # noqa: F401
    META_DIM,  # noqa: F401
    META_FORMAT,  # noqa: F401
    META_MODEL,  # noqa: F401
    META_SEQ,  # noqa: F401
    ensure_vector_table,
    match_vector_table,
    meta_get,  # noqa: F401
    meta_set,  # noqa: F401
    model_behind,  # noqa: F401
    next_seq,
    record_model_host,  # noqa: F401
    shared_model_mismatch,  # noqa: F401
)
from memory.index_insert import insert_rows
from memory.index_edges import (  # rebuild_all_edges: used as index.*
    rebuild_all_edges,  # noqa: F401
    rebuild_edges,
    resolve_dangling,
)
from memory.index_rows import CHUNK, ROW_ONLY_COLUMNS, fill_row, row_values
from memory.index_vectors import (  # embed_ahead, embed_into_cache, embed_text, node_vectors, text_hash: index.*
    embed_ahead,  # noqa: F401
    embed_into_cache,  # noqa: F401
    embed_text,  # noqa: F401
    index_passages,
    node_vectors,  # noqa: F401
    text_hash,
    vectors_for,
)
from memory.models import NodeCitationRow, NodeRow, NodeTagRow
from memory.search import vectors
from memory.store import MarkdownStore, StoredFile

logger = logging.getLogger(__name__)
_NAMED_TAIL = re.compile(r"_[0-9a-f]{8}\.md\Z")  # the `_<short id>.md` a memory's file is named with at its first save

Progress = Callable[[int, int], None]
VEC_METADATA = frozenset({"type", "tier", "space"})  # the row's columns vec0 keeps beside each vector


@dataclass
class SyncReport:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    embedded: int = 0
    malformed: list[tuple[str, str]] = field(default_factory=list)
    reembedded_for_model: str | None = None

    def as_dict(self) -> dict:
        return {
            "indexed": self.indexed, "unchanged": self.unchanged, "removed": self.removed,
            "embedded": self.embedded, "malformed": [{"path": p, "reason": r} for p, r in self.malformed],
            "reembedded_for_model": self.reembedded_for_model,
        }


# ---------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------

def relpath(store: MarkdownStore, path: Path) -> str:
    """A node file's path as the index keeps it (relative to the store's root)."""
    return os.path.relpath(path, store.root)


_relpath = relpath


def index_nodes(
    store: MarkdownStore, pairs: Sequence[tuple[Node, StoredFile]], *, embedder: Embedder, minted: Collection[str] = (),
    row_only: Mapping[str, str] | None = None, link: bool = True, rewrite: bool = False, table_matched: bool = False,
) -> tuple[list[NodeRow], int]:
    """Upsert rows, tags, vectors and outgoing edges for nodes just read or written; returns rows and #embedded.

    `minted`: ids just minted by this write, which no other row can name yet, so the search for rows whose
    dangling connections they resolve (a scan of rows) is skipped for them.
    `row_only`: {id: hash of the file the node was changed from} for nodes that differ from that file's node only
    in what their own row holds (index_rows.row_only_change: importance, access, trust facts). A node whose row was
    indexed from exactly that file, and whose changed columns are all ROW_ONLY_COLUMNS, gets only those columns
    updated: its FTS entry, tags, citations, vector, passages and edges were derived from what did not change.
    Every row is updated in the columns that changed only, so a row's FTS entry is rewritten and the vector log
    (every process's matrix) told only when what they hold changed (their triggers fire on the columns set).
    `rewrite`: set every column of every row, so the triggers write the FTS entries and the vector log again (a
    verifying rebuild repairs what was damaged). `table_matched`: its unit matched vec0 (WriteUnit.match_vector_table).
    """
    if not pairs:
        return [], 0
    row_only = row_only or {}
    seq = next_seq()
    uids = [n.id for n, _ in pairs]
    held = [u for u in uids if u not in minted]  # a minted id has no row yet
    existing = {r.uid: r for r in NodeRow.objects.filter(uid__in=held)} if held else {}
    new_rows, updates, light, moved = [], [], set(), set()
    for node, stored in pairs:
        row = existing.get(node.id)
        rel = _relpath(store, stored.path)
        if row is None:
            row = fill_row(NodeRow(), node, stored, rel, seq)
            row.embed_hash = text_hash(node)  # its vector is written below, in this transaction
            new_rows.append(row)
            continue
        was = row_values(row)
        was_hash = row.file_hash
        changed = [name for name, value in row_values(fill_row(row, node, stored, rel, seq)).items()
                   if (rewrite and name != "uid") or value != was[name]]
        updates.append((row, changed))
        if VEC_METADATA.intersection(changed):
            moved.add(row.id)
        if (node.id in row_only and row_only[node.id] == was_hash and ROW_ONLY_COLUMNS.issuperset(changed)
                and not rewrite and row.embed_hash == text_hash(node)):
            light.add(node.id)
    if len(light) < len(pairs) and not table_matched and match_vector_table(embedder)[0]:
        # Created afresh (a model switch not synced yet; a flush of row-only saves alone leaves it to the next sync):
        # no vector, passage or embed_hash is left, so every row is derived in full and gets its vector again.
        light.clear()
        for row, _ in updates:
            row.embed_hash = ""
    # A new node in a file that held another node: that row goes (one query per chunk, not one per node).
    new_paths = [r.file_path for r in new_rows]
    for i in range(0, len(new_paths), CHUNK):
        chunk = new_paths[i:i + CHUNK]
        if _any_row_at(chunk):  # a plain statement: the ORM's exists() cost ~0.3 ms of every remember
            NodeRow.objects.filter(file_path__in=chunk).delete()  # the ORM's delete: its edges and tags go too
    insert_rows(NodeRow, new_rows)  # bulk_create's rows and ids, without its statement building
    for row, changed in updates:
        if changed:
            row.save(update_fields=changed)
    rows = {r.uid: r for r, _ in updates}
    rows.update((r.uid, r) for r in new_rows)
    if any(r.pk is None for r in new_rows):  # a backend that returns no ids from a bulk insert
        rows.update((r.uid, r) for r in NodeRow.objects.filter(uid__in=[r.uid for r in new_rows]))
    for uid in light:  # a row-only tier or space change: the vec0 metadata is all that repeats them
        if rows[uid].id in moved:
            row = rows[uid]
            vectors.update_metadata(row.id, type=row.type, tier=row.tier, space=row.space)
    full = [(n, rows[n.id]) for n, _ in pairs if n.id not in light]
    embedded = _index_derived(full, embedder, link=link, minted=minted, new=[r.uid for r in new_rows], moved=moved)
    return [rows[u] for u in uids], embedded


def _any_row_at(paths: Sequence[str]) -> bool:
    """Whether any node row is indexed from one of these file paths."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT 1 FROM {NodeRow._meta.db_table} WHERE file_path IN ({', '.join(['%s'] * len(paths))}) "
                    "LIMIT 1", list(paths))
        return cur.fetchone() is not None


def _insert_pairs(model: type[NodeTagRow | NodeCitationRow], column: str, pairs: Sequence[tuple[int, str]]) -> None:
    """Insert (node_id, value) rows of a tag or citation table: the rows `bulk_create` wrote (ids from the table's
    sequence, in the same order), one multi-row INSERT per CHUNK rows, without building an instance per row."""
    with connection.cursor() as cur:
        for i in range(0, len(pairs), CHUNK):
            chunk = pairs[i:i + CHUNK]
            cur.execute(f"INSERT INTO {model._meta.db_table} (node_id, {column}) VALUES "
                        f"{', '.join(['(%s, %s)'] * len(chunk))}", [v for pair in chunk for v in pair])


def _index_derived(pairs: Sequence[tuple[Node, NodeRow]], embedder: Embedder, *, link: bool,
                   minted: Collection[str], new: Sequence[str], moved: Collection[int]) -> int:
    """Tags, citations, vectors, passages and outgoing edges of rows just written; returns #embedded. Rows just
    inserted (`new`: their ids are never reused, AUTOINCREMENT or a sequence) have none of these to delete."""
    if not pairs:
        return 0
    added = set(new)  # not the list: n rows x n new ids
    fresh = {row.id for _, row in pairs if row.uid in added}
    old = [row.id for _, row in pairs if row.id not in fresh]
    if old:
        NodeTagRow.objects.filter(node_id__in=old).delete()
        NodeCitationRow.objects.filter(node_id__in=old).delete()
    # tag rows hold the tags as writes store them (a capital typed into a file by hand too): the tag filters ask so
    _insert_pairs(NodeTagRow, "tag", [(row.id, t) for n, row in pairs for t in dict.fromkeys(map(tag_normal, n.tags))])
    _insert_pairs(NodeCitationRow, "event_id",
                  [(row.id, e) for n, row in pairs for e in dict.fromkeys(n.source_event_ids)])
    embedded = _index_vectors(pairs, embedder, moved=moved, fresh=fresh)
    vectors.prune_log()
    if link:
        rebuild_edges([row for _, row in pairs], fresh=fresh)
        dangling = [uid for uid in new if uid not in minted]
        if dangling:
            resolve_dangling(dangling)
    return embedded


def _index_vectors(pairs: Sequence[tuple[Node, NodeRow]], embedder: Embedder,
                   moved: Collection[int] | None = None, fresh: Collection[int] = ()) -> int:
    """Vectors for rows whose text changed (or that have none); a kept vector's vec0 metadata (type, tier, space)
    is set again when its row is in `moved` (every kept one when None). `fresh`: row ids just inserted."""
    hashes = {row.id: text_hash(node) for node, row in pairs}
    # Only rows whose text is unchanged can keep their vector, so only they need the (slow) vec0 presence check;
    # a row just inserted has none yet (its embed_hash was set with the insert, in this transaction).
    same = [(node, row) for node, row in pairs if row.embed_hash == hashes[row.id] and row.id not in fresh]
    have = vectors.existing_ids() if len(same) > 20 else None
    keep_ids = {row.id for _, row in same
                if (row.id in have if have is not None else vectors.get(row.id) is not None)}
    todo = [(node, row) for node, row in pairs if row.id not in keep_ids]
    for _, row in same:
        if row.id in keep_ids and (moved is None or row.id in moved):
            vectors.update_metadata(row.id, type=row.type, tier=row.tier, space=row.space)
    embedded = index_passages(pairs, embedder, fresh=fresh)
    if not todo:
        return embedded
    found, count = vectors_for([n for n, _ in todo], embedder)
    embedded += count
    vectors.upsert((r.id, found[hashes[r.id]], r.type, r.tier, r.space) for _, r in todo)
    stale = [row for _, row in todo if row.embed_hash != hashes[row.id]]
    for row in stale:
        row.embed_hash = hashes[row.id]
    if stale:
        # One UPDATE per row by primary key: Django's bulk_update builds a CASE over the whole batch, ~15x slower.
        with connection.cursor() as cur:
            cur.executemany(f"UPDATE {NodeRow._meta.db_table} SET embed_hash = %s WHERE id = %s",
                            [(r.embed_hash, r.id) for r in stale])
    return embedded


def remove_nodes(uids: Sequence[str]) -> int:
    """Drop the rows of nodes whose files are gone (edges, tags, FTS and vectors follow)."""
    deleted, _ = NodeRow.objects.filter(uid__in=list(uids)).delete()
    return deleted


# ---------------------------------------------------------------------------
# Incremental sync
# ---------------------------------------------------------------------------

def sync(store: MarkdownStore, *, embedder: Embedder, progress: Progress | None = None) -> SyncReport:
    """Bring the index in line with the files: new, changed and deleted files, each compared with its row by size
    and mtime. The full rebuild in one atomic swap is memory.rebuild.rebuild, the module above this one."""
    report = SyncReport()
    if ensure_vector_table(embedder):
        report.reembedded_for_model = embedder.model_id
    known = {r[0]: r for r in NodeRow.objects.values_list("file_path", "uid", "file_mtime_ns", "file_size")}
    paths = reading_order(store.iter_paths())
    seen_paths: set[str] = set()
    seen_ids: dict[str, str] = {}
    pending: list[tuple[Node, StoredFile]] = []
    total = len(paths)
    for i, path in enumerate(paths, 1):
        rel = _relpath(store, path)
        seen_paths.add(rel)
        row = known.get(rel)
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if row is not None and row[2] == st.st_mtime_ns and row[3] == st.st_size:
            if row[1] in seen_ids:  # a copy indexed before the original was read: the original wins now
                _duplicate(report, path, row[1], seen_ids)
            else:
                seen_ids[row[1]] = rel
                report.unchanged += 1
        else:
            try:
                node, stored = store.read(path)
            except MalformedNodeFile as exc:
                report.malformed.append((str(path), exc.reason))
                if not exc.repeated:  # once per change of the file, not on every sync
                    logger.warning("Skipping malformed memory file %s: %s", path, exc.reason)
            else:
                if node.id in seen_ids:
                    _duplicate(report, path, node.id, seen_ids)
                else:
                    seen_ids[node.id] = rel
                    pending.append((node, stored))
        if len(pending) >= CHUNK:
            report.embedded += _flush(store, pending, embedder, report)
        if progress:
            progress(i, total)
    report.embedded += _flush(store, pending, embedder, report)
    # Gone: memories no file holds any more (a moved file's memory was re-indexed at its new path above).
    gone = [r[1] for r in known.values() if r[1] not in seen_ids]
    if gone:
        with transaction.atomic():
            report.removed = remove_nodes(gone)
    if NodeRow.objects.filter(embed_hash="").exists():
        _reembed_all(store, embedder, report, progress)
    return report


def reading_order(paths: Sequence[Path]) -> list[Path]:
    """The node files in the order a sync or rebuild reads them, which decides which of several files holding one id
    is indexed (the first read): files whose name ends in `_<8 hex>.md`, the name every memory gets at its first save,
    before the others, each group by name. So the original wins over a hand copy such as "note copy.md" or
    "note_1a2b3c4d (2).md" whichever sorts first by name; the others are reported (docs/file-format.md)."""
    return sorted(paths, key=lambda p: (_NAMED_TAIL.search(p.name) is None, p.name))


def _duplicate(report: SyncReport, path: Path, uid: str, seen_ids: Mapping[str, str]) -> None:
    reason = f"duplicate id {uid} (also in {seen_ids[uid]})"
    report.malformed.append((str(path), reason))
    logger.warning("Skipping memory file %s: %s", path, reason)


def files_in_step(store: MarkdownStore, paths: Collection[Path]) -> bool:
    """True when every path in the node folder is indexed as it is now: its row has the file's size and mtime, or
    the file is gone and no row names it. An incremental sync would change nothing for them (the app's own writes
    once their unit has committed); a file without a row (new, malformed, a dotfile) is never in step."""
    rels = {}
    for path in map(Path, paths):
        if path.parent != store.nodes_dir:
            return False
        rels[_relpath(store, path)] = path
    rows = {r[0]: (r[1], r[2]) for r in NodeRow.objects.filter(file_path__in=list(rels))
            .values_list("file_path", "file_mtime_ns", "file_size")}
    for rel, path in rels.items():
        try:
            st = path.stat()
        except FileNotFoundError:
            if rel in rows:
                return False
            continue
        if rows.get(rel) != (st.st_mtime_ns, st.st_size):
            return False
    return True


def _flush(store: MarkdownStore, pending: list, embedder: Embedder, report: SyncReport) -> int:
    if not pending:
        return 0
    with transaction.atomic():
        _release_paths(store, pending)
        _, embedded = index_nodes(store, pending, embedder=embedder)
    report.indexed += len(pending)
    pending.clear()
    return embedded


def _release_paths(store: MarkdownStore, pending: list) -> None:
    """A file may now hold another memory than its row says (a person deleted b.md and renamed a.md to b.md):
    the row of the old occupant lets go of the path (file_path is unique), keeping its id and the edges pointing
    at it; the sync then updates it (its memory moved) or removes it (its memory is gone)."""
    owner = {_relpath(store, stored.path): node.id for node, stored in pending}
    for row_id, uid, path in NodeRow.objects.filter(file_path__in=list(owner)).values_list("id", "uid", "file_path"):
        if owner[path] != uid:
            NodeRow.objects.filter(id=row_id).update(file_path=f"{path}#released-by-sync-{uid}")


def _reembed_all(store: MarkdownStore, embedder: Embedder, report: SyncReport, progress: Progress | None) -> None:
    """Unchanged rows whose vectors were dropped (model switch) get re-embedded from their files."""
    rows = list(NodeRow.objects.filter(embed_hash=""))
    logger.warning("Re-embedding %s memories with %s", len(rows), embedder.model_id)
    for i in range(0, len(rows), CHUNK):
        if progress:
            progress(i, len(rows))
        pairs = []
        for row in rows[i:i + CHUNK]:
            try:
                pairs.append(store.read(store.root / row.file_path))
            except (MalformedNodeFile, FileNotFoundError):
                continue
        by_uid = {r.uid: r for r in NodeRow.objects.filter(uid__in=[n.id for n, _ in pairs])}
        with transaction.atomic():
            report.embedded += _index_vectors([(n, by_uid[n.id]) for n, _ in pairs if n.id in by_uid], embedder)
    if progress:
        progress(len(rows), len(rows))
