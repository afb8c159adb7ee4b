"""Recall's answers on a fixed synthetic store are pinned: speed work must not change a hit, a score or a warning.

The store is the latency bench's generator (bench/recall/synthetic.py: 1,500 memories, typed connections,
contradictions, outdated memories, spaces, tags) indexed with its stand-in topic vectors, and the queries are the
bench's mix (keywords, questions, a current project, "last week"). tests/golden/recall_synthetic.json holds every
field of every hit of main 35567c3, before the hot-path work of issue 13.

Floats are compared to 2e-6: with the whole store in the centroid's sample, the sample's random order moves the sum
of its vectors in the last bits (memory/search/candidates.py), and a score is rounded to six places after that, so
a value near a rounding boundary can land one step (1e-6, plus the float error of that step) either side; seen on
a fresh machine of the CI kind (0.554639 against a pinned 0.55464).
To write the file again (only for a change meant to alter results): ORMAH_WRITE_GOLDEN=1 pytest this module.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from django.db import transaction

from bench.recall.synthetic import NOW, TopicEmbedder, generate, queries
from memory import index, runtime
from memory.search import matrix, recall
from memory.store import StoredFile
from tests.postgres import sqlite_only

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "recall_synthetic.json"
SIZE, QUERIES = 1500, 40
FLOATS = ("score", "raw_cosine")


def _build(embedder: TopicEmbedder) -> list:
    store = runtime.store()
    nodes = generate(SIZE)
    pairs = [(n, StoredFile(path=store.root / "nodes" / f"pinned-{n.id}.md", hash=n.id, mtime_ns=0, size=0))
             for n in nodes]
    with transaction.atomic():
        index.index_nodes(store, pairs, embedder=embedder)
    matrix.reset()
    return nodes


ROW_FIELDS = ("short_id", "title", "content", "type", "tier", "space", "tags", "created", "updated", "valid_until",
              "confidence")


def _plain(hit) -> dict:
    """What recall decided about a hit in full, and a digest of the row fields it carries (the file stays small);
    not the row id, which depends on the tests that ran before in the same database."""
    row = "|".join(repr(getattr(hit, name)) for name in ROW_FIELDS)
    return {
        "node_id": hit.node_id, "row": hashlib.sha1(row.encode()).hexdigest()[:12],
        "score": hit.score, "source": hit.source, "legs": list(hit.legs), "raw_cosine": hit.raw_cosine,
        "fts_rank": hit.fts_rank, "vector_rank": hit.vector_rank, "activated_by": hit.activated_by,
        "activation_edge": hit.activation_edge, "passage": list(hit.passage) if hit.passage else None,
        "warnings": [[str(w.kind), w.item_id, w.related_id, w.message] for w in hit.warnings],
    }


def _answers() -> list[list[dict]]:
    embedder = TopicEmbedder()
    nodes = _build(embedder)
    return [[_plain(h) for h in recall(query=q, now=NOW, embedder=embedder)] for q in queries(nodes, QUERIES)]


@sqlite_only(reason="the pins are SQLite's answers: FTS5 BM25 scores; PostgreSQL's full-text ranks differently")
@pytest.mark.django_db(transaction=True)
def test_recall_on_the_synthetic_store_is_unchanged(home):
    answers = _answers()
    if os.environ.get("ORMAH_WRITE_GOLDEN"):
        GOLDEN.write_text("[\n" + ",\n".join(json.dumps(a, sort_keys=True) for a in answers) + "\n]\n")
        pytest.skip("golden file written")
    expected = json.loads(GOLDEN.read_text())

    assert sum(len(a) for a in answers) == sum(len(e) for e in expected)
    for got, want in zip(answers, expected, strict=True):
        assert [h["node_id"] for h in got] == [h["node_id"] for h in want]
        for g, w in zip(got, want):
            assert {k: v for k, v in g.items() if k not in FLOATS} == {k: v for k, v in w.items() if k not in FLOATS}
            for key in FLOATS:
                assert g[key] == (None if w[key] is None else pytest.approx(w[key], abs=2e-6))
