"""The OR query scored among its rarer tokens' rows first (memory/search/fts.py) answers as the full query does.

The store is the latency bench's generator (1,500 memories: its conditions' words are in about one memory of eight,
the topics' in one of fifty), so the bench's questions split into common and rare tokens as they do at 100k. The
store is too small for the split to pay, so COMMON_MIN_ROWS is lowered to let it run here.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from bench.recall.synthetic import TopicEmbedder, generate, queries
from memory import index, runtime
from memory.backends import backend
from memory.search import fts, fts_query, fts_search
from memory.store import StoredFile
from tests.postgres import sqlite_only

SIZE = 1500


@pytest.fixture
def store_nodes(home, db):
    store = runtime.store()
    nodes = generate(SIZE)
    pairs = [(n, StoredFile(path=store.root / "nodes" / f"rare-{n.id}.md", hash=n.id, mtime_ns=0, size=0))
             for n in nodes]
    with transaction.atomic():
        index.index_nodes(store, pairs, embedder=TopicEmbedder(), link=False)
    return nodes


def _texts(nodes) -> list[str]:
    return [q.query for q in queries(nodes, 40)] + ["payload emoji cron", "retry fix using billing start"]


@sqlite_only(reason="the split bounds FTS5's bm25; PostgreSQL ranks by its own full-text scores")
@pytest.mark.parametrize("cap", [10**9, 100])  # exact counts, and counts capped far below the true ones
def test_rare_first_returns_the_full_queries_rows(store_nodes, monkeypatch, cap):
    monkeypatch.setattr(fts, "COMMON_MIN_ROWS", 0)
    split = 0
    for text in _texts(store_nodes):
        query = fts_query(text)
        common = fts._common_first(query, lambda terms: backend().doc_counts(terms, cap), SIZE)
        if common is None:
            continue
        for limit in (5, 40, 112):
            rows = fts._rare_first(query, limit, *common, SIZE)
            if rows is not None:
                split += 1
                assert rows == backend().node_fulltext(query, match_all=False, limit=limit), (text, limit)
    assert split >= 20  # the rare-first path really answered (not only the full query)


@sqlite_only(reason="the split bounds FTS5's bm25; PostgreSQL ranks by its own full-text scores")
def test_fts_search_with_counts_gives_the_same_hits(store_nodes, monkeypatch):
    monkeypatch.setattr(fts, "COMMON_MIN_ROWS", 0)

    def counts(terms):
        return backend().doc_counts(terms, 10**9)

    for text in _texts(store_nodes):
        assert fts_search(text, 90, or_below=10, df=counts, total=SIZE) == fts_search(text, 90, or_below=10), text
