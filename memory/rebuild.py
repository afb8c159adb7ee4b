"""The full rebuild, atomic: readers see the old index until the new one is complete, and a killed rebuild leaves
the old index as it was (issue 12 defect 5).

Two phases:
1. Outside any transaction: every file is read and parsed, and every text the new index needs (each memory's
   own text and its passages) is embedded into the embedding cache. Only the cache changes (it only saves
   work), so a kill here changes nothing a reader sees.
2. One transaction: tags, citations, passages, edges and vectors are dropped, rows of memories that are gone
   deleted, and every row rewritten from its file (in place, keeping its id), its vectors all read from the
   cache (no model inside the transaction). SQLite's WAL gives every
   reader the old snapshot until the commit, which swaps the whole index in one step; a kill before the commit
   rolls it all back. Writers wait for the rebuild through the write lock, as they always did.

The parsed nodes are held in memory between the phases (about 2 KB each beyond their text).
"""

from __future__ import annotations

import logging

from django.db import transaction

from memory import index
from memory.embeddings import Embedder
from memory.errors import MalformedNodeFile
from memory.index import CHUNK, Progress, SyncReport
from memory.models import EdgeRow, NodeCitationRow, NodeRow, NodeTagRow, PassageRow
from memory.search import vectors
from memory.store import MarkdownStore

logger = logging.getLogger(__name__)


def _read_all(store: MarkdownStore, report: SyncReport, progress: Progress | None) -> list:
    pairs: list = []
    seen_ids: dict[str, str] = {}
    paths = store.iter_paths()
    for i, path in enumerate(paths, 1):
        try:
            node, stored = store.read(path)
        except FileNotFoundError:
            continue
        except MalformedNodeFile as exc:
            report.malformed.append((str(path), exc.reason))
            logger.warning("Skipping malformed memory file %s: %s", path, exc.reason)
            continue
        rel = index.relpath(store, stored.path)
        if node.id in seen_ids:
            reason = f"duplicate id {node.id} (also in {seen_ids[node.id]})"
            report.malformed.append((str(path), reason))
            logger.warning("Skipping memory file %s: %s", path, reason)
            continue
        seen_ids[node.id] = rel
        pairs.append((node, stored))
        if progress and i % 100 == 0:
            progress(i, 3 * len(paths))
    return pairs


def _drop_rows_not_in(store: MarkdownStore, pairs: list) -> None:
    """Delete the rows whose memory (id and file) is not among `pairs`; the others are rewritten in place, so a
    memory keeps its row id across a rebuild and a reader whose query straddles the swap still finds its rows."""
    wanted = {node.id: index.relpath(store, stored.path) for node, stored in pairs}
    stale = [row_id for row_id, uid, path in NodeRow.objects.values_list("id", "uid", "file_path")
             if wanted.get(uid) != path]
    for i in range(0, len(stale), CHUNK):
        NodeRow.objects.filter(id__in=stale[i:i + CHUNK]).delete()


def rebuild(store: MarkdownStore, *, embedder: Embedder, progress: Progress | None = None) -> SyncReport:
    """Rebuild every row from the files in one swap (see the module docstring); returns what was done."""
    report = SyncReport()
    previous_model = index.meta_get(index.META_MODEL)
    if previous_model is not None and previous_model != embedder.model_id:
        report.reembedded_for_model = embedder.model_id
    pairs: list[tuple] = _read_all(store, report, progress)
    n = len(pairs)
    total = 3 * max(n, 1)
    for i in range(0, n, CHUNK):  # phase 1: the cache gets every vector the new index needs
        report.embedded += index.embed_into_cache([node for node, _ in pairs[i:i + CHUNK]], embedder)
        if progress:
            progress(n + min(i + CHUNK, n), total)
    with transaction.atomic():  # phase 2: the swap
        # The empty vec0 table first: deleting rows then fires its per-row delete trigger on nothing.
        vectors.create_table(embedder.dim)
        index.meta_set(index.META_MODEL, embedder.model_id)
        index.meta_set(index.META_DIM, str(embedder.dim))
        EdgeRow.objects.all().delete()
        PassageRow.objects.all().delete()
        NodeCitationRow.objects.all().delete()
        NodeTagRow.objects.all().delete()
        _drop_rows_not_in(store, pairs)
        for i in range(0, n, CHUNK):
            chunk: list[tuple] = pairs[i:i + CHUNK]
            _, embedded = index.index_nodes(store, chunk, embedder=embedder, link=False)
            report.embedded += embedded  # 0 unless a text changed between the phases
            report.indexed += len(chunk)
            if progress:
                progress(2 * n + i + len(chunk), total)
        index.rebuild_all_edges()
    if progress:
        progress(total, total)
    return report

