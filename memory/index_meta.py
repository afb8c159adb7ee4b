"""The index's own facts (IndexMetaRow: the embedding model, the format, the write sequence) and the vec0 table's
shape, which must match the embedder. Split from memory/index.py, which re-exports these names (index.meta_get,
index.META_MODEL, ...)."""

from __future__ import annotations

import logging

from django.db import connection, transaction

from memory.conf import get_conf
from memory.embeddings import Embedder
from memory.errors import EmbeddingModelMismatch
from memory.evidence.log import EvidenceLog
from memory.models import IndexMetaRow, NodeRow, PassageRow
from memory.search import vectors

logger = logging.getLogger("memory.index")  # the messages kept the logger they were written under

META_MODEL = "embedding_model_id"
META_DIM = "embedding_dim"
META_FORMAT = "index_format"
# How rows, tags, FTS, passages and vectors are derived from a file. Bump it whenever that derivation changes:
# a full rebuild of an index of another format rewrites every row instead of trusting unchanged file hashes.
INDEX_FORMAT = "2"
META_SEQ = "seq"
META_MODEL_HOST = "embedding_model_host"  # PostgreSQL: the host (its evidence host id) that last switched the model


# ---------------------------------------------------------------------------
# Meta and the vector table
# ---------------------------------------------------------------------------

def meta_get(key: str) -> str | None:
    """A fact about the index (IndexMetaRow; its key is unique). A plain statement: every remember reads the model
    id (`match_vector_table`), and the ORM's query building cost more than the read."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT value FROM {connection.ops.quote_name(IndexMetaRow._meta.db_table)} WHERE key = %s",
                    [key])
        found = cur.fetchone()
    return found[0] if found else None


def meta_set(key: str, value: str) -> None:
    """Record a fact about the index."""
    IndexMetaRow.objects.update_or_create(key=key, defaults={"value": value})


def next_seq() -> int:
    """The next write sequence number, counted up in one statement (a read and an upsert were five)."""
    table = IndexMetaRow._meta.db_table
    with connection.cursor() as cur:
        cur.execute(f"UPDATE {table} SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = %s "
                    "RETURNING value", [META_SEQ])
        found = cur.fetchall()
    if found:
        return int(found[0][0])
    meta_set(META_SEQ, "1")
    return 1


def ensure_vector_table(embedder: Embedder) -> bool:
    """Make the vec0 table match the embedder; returns True when every node must be re-embedded."""
    return match_vector_table(embedder)[1]


def _host() -> str:
    """This home's host id (memory.evidence.log: 12 hex digits in `$ORMAH_HOME/evidence/.host-id`)."""
    return EvidenceLog(get_conf().evidence_dir).host_id()


def record_model_host() -> None:
    """PostgreSQL: note that this host set the shared index's model (a new index, a switch, `ormah rebuild`)."""
    if connection.vendor == "postgresql":
        meta_set(META_MODEL_HOST, _host())


def shared_model_mismatch(embedder: Embedder) -> str | None:
    """The model of the shared index when another host set it and this host embeds with another one (PostgreSQL,
    memories indexed); else None. The host that set it may switch again on its own, as a SQLite home does (its
    next write or sync re-embeds); an index from before hosts were recorded names none and may switch once."""
    if connection.vendor != "postgresql":
        return None
    model_id = meta_get(META_MODEL)
    if model_id is None or model_id == embedder.model_id or not NodeRow.objects.exists():
        return None
    set_by = meta_get(META_MODEL_HOST)
    return None if set_by is None or set_by == _host() else model_id


def model_behind(embedder: Embedder) -> str | None:
    """The model the index's vectors were made with when it is not the embedder's and memories are indexed (a switch
    of ORMAH_EMBEDDER or ORMAH_EMBEDDING_MODEL the index has not followed yet: its next sync or write re-embeds them,
    `match_vector_table`); else None."""
    model_id = meta_get(META_MODEL)
    if model_id is None or model_id == embedder.model_id or not NodeRow.objects.exists():
        return None
    return model_id


def match_vector_table(embedder: Embedder) -> tuple[bool, bool]:
    """Make the vec0 table match the embedder; returns (recreated, every node must be re-embedded). Recreating it
    drops every vector and passage and clears every row's embed_hash (the next sync embeds them again).

    On PostgreSQL a host whose model is not the one another host set raises EmbeddingModelMismatch instead: two
    hosts of one team with different ORMAH_EMBEDDER dropped and re-embedded every vector of the store at each
    other's next write or sync, back and forth (session 22). `ormah rebuild` (memory.rebuild) switches the store
    from any host."""
    dim = vectors.table_dim()
    model_id = meta_get(META_MODEL)
    if dim == embedder.dim and model_id == embedder.model_id:
        return False, False
    shared = shared_model_mismatch(embedder)
    if shared is not None:
        raise EmbeddingModelMismatch(
            f"This host embeds with {embedder.model_id} but the shared index was built with {shared}: set "
            f"ORMAH_EMBEDDER on this host to that model, or switch the whole store with `ormah rebuild` (every host "
            "then needs the new model)")
    with transaction.atomic():
        if model_id is not None and model_id != embedder.model_id:
            logger.warning("Embedding model changed from %s to %s: every node will be re-embedded",
                           model_id, embedder.model_id)
        vectors.create_table(embedder.dim)
        PassageRow.objects.all().delete()
        NodeRow.objects.update(embed_hash="")
        meta_set(META_MODEL, embedder.model_id)
        meta_set(META_DIM, str(embedder.dim))
        record_model_host()
        if model_id is None and not NodeRow.objects.exists():
            meta_set(META_FORMAT, INDEX_FORMAT)  # a new index: every row will be derived the current way
    return True, model_id is not None and NodeRow.objects.exists()
