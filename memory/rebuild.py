"""The full rebuild, atomic: readers see the old index until the new one is complete, and a killed rebuild leaves
the old index as it was (issue 12 defect 5).

Two phases:
1. Outside any transaction: every file is read and hashed. A file whose bytes hash to its row's `file_hash` (same
   path, size and mtime) and whose row has its vector under the current model is unchanged: it is not parsed and
   its rows are kept as they are (issue 13 item 6). Every other file is parsed, and every text the new index needs
   (each memory's own text and its passages) is embedded into the embedding cache. Only the cache changes (it
   only saves work), so a kill here changes nothing a reader sees.
2. One transaction: rows of memories that are gone are deleted and every changed file's rows, tags, citations,
   passages and vectors are rewritten (in place, keeping the row id), their vectors read from the cache (no model
   inside the transaction); edges are rebuilt when any row changed. SQLite's WAL gives every reader the old
   snapshot until the commit, which swaps the whole index in one step; a kill before the commit rolls it all
   back. Writers wait for the rebuild through the write lock, as they always did.

`verify=True` (and a change of embedding model) trusts no hash: every table is dropped and every row rewritten
from its file, which repairs rows that were damaged behind the files' back.

The parsed nodes are held in memory between the phases (about 2 KB each beyond their text).

On PostgreSQL the documents table is the truth (memory/documents.py). `ormah rebuild` runs inside a write unit
that has already written into this host's folder every stored document it lacked or held older, and recorded in
the table what the folder changed by hand (memory.services.indexing), so the folder read here holds exactly the
stored documents: a rebuild from it is a rebuild from the table (tests/postgres/test_documents.py).
"""

from __future__ import annotations

import logging

from django.db import transaction

from memory import index
from memory.embeddings import Embedder
from memory.errors import MalformedNodeFile
from memory.index import Progress, SyncReport
from memory.index_rows import CHUNK
from memory.models import EdgeRow, NodeCitationRow, NodeRow, NodeTagRow, PassageRow
from memory.search import vectors
from memory.store import MarkdownStore

logger = logging.getLogger(__name__)


def _trusted_rows(store: MarkdownStore) -> dict[str, tuple[int, str, str, int, int]]:
    """Rows that may be kept as they are, by file path: (row id, uid, file hash, mtime, size) of rows with a vector."""
    have = vectors.existing_ids()
    return {path: (row_id, uid, digest, mtime, size) for row_id, uid, path, digest, mtime, size in
            NodeRow.objects.exclude(embed_hash="").values_list("id", "uid", "file_path", "file_hash",
                                                                "file_mtime_ns", "file_size")
            if row_id in have}


def _read_all(store: MarkdownStore, report: SyncReport, progress: Progress | None,
              trusted: dict[str, tuple[int, str, str, int, int]]) -> tuple[list, dict[str, str]]:
    """The files to parse and index as (node, file) pairs, and the unchanged ones as {uid: path} (not parsed)."""
    pairs: list = []
    kept: dict[str, str] = {}
    seen_ids: dict[str, str] = {}
    paths = index.reading_order(store.iter_paths())  # an original before its hand copies (the first read is indexed)
    for i, path in enumerate(paths, 1):
        if progress and i % 100 == 0:
            progress(i, 3 * len(paths))
        rel = index.relpath(store, path)
        row = trusted.get(rel)
        try:
            if row is not None:
                stored = store.stat(path)
                if (stored.hash, stored.mtime_ns, stored.size) == row[2:] and not stored.truncated \
                        and row[1] not in seen_ids:
                    seen_ids[row[1]] = rel
                    kept[row[1]] = rel
                    continue
            node, stored = store.read(path)
        except FileNotFoundError:
            continue
        except MalformedNodeFile as exc:
            report.malformed.append((str(path), exc.reason))
            logger.warning("Skipping malformed memory file %s: %s", path, exc.reason)
            continue
        if node.id in seen_ids:
            reason = f"duplicate id {node.id} (also in {seen_ids[node.id]})"
            report.malformed.append((str(path), reason))
            logger.warning("Skipping memory file %s: %s", path, reason)
            continue
        seen_ids[node.id] = rel
        pairs.append((node, stored))
    return pairs, kept


def _drop_rows_not_in(wanted: dict[str, str]) -> int:
    """Delete the rows whose memory (id and file) is not in `wanted` ({uid: path}); the others are kept or rewritten
    in place, so a memory keeps its row id across a rebuild and a reader whose query straddles the swap still finds
    its rows. Returns how many rows went."""
    stale = [row_id for row_id, uid, path in NodeRow.objects.values_list("id", "uid", "file_path")
             if wanted.get(uid) != path]
    for i in range(0, len(stale), CHUNK):
        NodeRow.objects.filter(id__in=stale[i:i + CHUNK]).delete()
    return len(stale)


def rebuild(store: MarkdownStore, *, embedder: Embedder, progress: Progress | None = None,
            verify: bool = False) -> SyncReport:
    """Rebuild the index from the files in one swap (see the module docstring); returns what was done."""
    report = SyncReport()
    previous_model = index.meta_get(index.META_MODEL)
    if previous_model is not None and previous_model != embedder.model_id:
        report.reembedded_for_model = embedder.model_id
    everything = (verify or previous_model != embedder.model_id or vectors.table_dim() != embedder.dim
                  or index.meta_get(index.META_FORMAT) != index.INDEX_FORMAT)  # rows derived another way
    pairs, kept = _read_all(store, report, progress, {} if everything else _trusted_rows(store))
    report.unchanged = len(kept)
    n = len(pairs)
    total = 3 * max(n, 1)
    for i in range(0, n, CHUNK):  # phase 1: the cache gets every vector the new index needs
        report.embedded += index.embed_into_cache([node for node, _ in pairs[i:i + CHUNK]], embedder)
        if progress:
            progress(n + min(i + CHUNK, n), total)
    with transaction.atomic():  # phase 2: the swap
        if everything:
            # The empty vec0 table first: deleting rows then fires its per-row delete trigger on nothing.
            vectors.create_table(embedder.dim)
            index.meta_set(index.META_MODEL, embedder.model_id)
            index.meta_set(index.META_DIM, str(embedder.dim))
            index.record_model_host()  # PostgreSQL: the store's switch, made here (memory.index_meta)
            index.meta_set(index.META_FORMAT, index.INDEX_FORMAT)
            EdgeRow.objects.all().delete()
            PassageRow.objects.all().delete()
            NodeCitationRow.objects.all().delete()
            NodeTagRow.objects.all().delete()
        wanted = {**kept, **{node.id: index.relpath(store, stored.path) for node, stored in pairs}}
        dropped = _drop_rows_not_in(wanted)
        for i in range(0, n, CHUNK):
            chunk: list[tuple] = pairs[i:i + CHUNK]
            _, embedded = index.index_nodes(store, chunk, embedder=embedder, link=False, rewrite=everything)
            report.embedded += embedded  # 0 unless a text changed between the phases
            report.indexed += len(chunk)
            if progress:
                progress(2 * n + i + len(chunk), total)
        if everything or pairs or dropped:
            index.rebuild_all_edges()
    if progress:
        progress(total, total)
    return report
