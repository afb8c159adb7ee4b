"""A remember embeds before the write lock without a write of its own: the vectors wait in the process and the
write unit stores them in the embedding cache inside its one transaction (issue 13 item 7)."""

from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import runtime
from memory.domain.node import utcnow
from memory.domain.requests import NodeCreate, build_node
from memory.index_vectors import embed_ahead, text_hash
from memory.models import EmbeddingCacheRow
from memory.services import node_create
from memory.services.nodes import nodes_embed_ahead

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|SAVEPOINT|BEGIN)\b", re.IGNORECASE)
TEXT = "The staging database is restored from the nightly snapshot every Monday at 06:00."


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed (plumbing only)."""

    def __init__(self, real) -> None:
        self.real, self.texts = real, 0
        self.model_id, self.dim = real.model_id, real.dim

    def embed_documents(self, texts):
        self.texts += len(texts)
        return self.real.embed_documents(texts)

    def embed_query(self, text):
        return self.real.embed_query(text)


def test_embedding_ahead_writes_nothing(home, db):
    with CaptureQueriesContext(connection) as ctx:
        nodes_embed_ahead(requests=[NodeCreate(content=TEXT)], now=utcnow())
    assert [q["sql"] for q in ctx.captured_queries if WRITE.match(q["sql"])] == []
    assert EmbeddingCacheRow.objects.count() == 0


def test_the_write_stores_the_vector_embedded_ahead_without_embedding_again(home, db):
    request = NodeCreate(content=TEXT + " (ahead)")
    node = build_node(request, node_id="00000000-0000-4000-8000-000000000001", now=utcnow())
    counting = CountingEmbedder(runtime.embedder())
    assert embed_ahead([node], counting) == 1
    assert embed_ahead([node], counting) == 0  # already waiting in the process
    created = node_create(request=request, auto_link=False).node
    assert EmbeddingCacheRow.objects.filter(text_hash=text_hash(created)).count() == 1
    assert counting.texts == 1
