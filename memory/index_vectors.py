"""The index's vectors beyond vec0's own rows: the embedding cache and the passages of long memories.

The cache is derived and only saves work: keyed by the hash of the embedded text and the model id, so unchanged
text is never embedded twice (a memory's own text, each passage's, a query's through `embed_text`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence

import numpy as np
from django.db import connection

from memory.domain import chunking
from memory.domain.node import Node
from memory.embeddings import Embedder, embedding_text
from memory.index_insert import insert_rows
from memory.index_rows import CHUNK
from memory.models import EmbeddingCacheRow, NodeRow, PassageRow

AHEAD_LIMIT = 1024  # vectors a process keeps, embedded ahead of the write that stores them (the oldest go first)
_ahead: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()  # (model id, text hash) -> vector
_AHEAD_LOCK = threading.Lock()


def text_hash(node: Node) -> str:
    """Hash of the text that is embedded for a node."""
    return hashlib.sha256(embedding_text(node.title, node.content).encode("utf-8")).hexdigest()


def embed_text(text: str, embedder: Embedder) -> np.ndarray:
    """The embedding of one text, through the cache (so indexing it afterwards costs nothing)."""
    found, _ = _vectors_for_texts({hashlib.sha256(text.encode("utf-8")).hexdigest(): text}, embedder)
    return next(iter(found.values()))


def _passage_texts(node: Node) -> list[tuple[chunking.Passage, str, str]]:
    """(passage, text, text hash) of each passage of a long memory."""
    out = []
    for passage in chunking.passages(node.content):
        text = chunking.passage_text(node.title, node.content, passage)
        out.append((passage, text, hashlib.sha256(text.encode("utf-8")).hexdigest()))
    return out


def embed_into_cache(nodes: Sequence[Node], embedder: Embedder) -> int:
    """Embed whatever the nodes' own texts and passages lack in the cache (no index row is touched); returns
    how many texts were embedded."""
    texts = {text_hash(n): embedding_text(n.title, n.content) for n in nodes}
    texts.update((digest, text) for n in nodes for _, text, digest in _passage_texts(n))
    return _vectors_for_texts(texts, embedder)[1]


def embed_ahead(nodes: Sequence[Node], embedder: Embedder) -> int:
    """Embed whatever the nodes' own texts and passages lack in the cache and keep the vectors in this process for
    the write that follows, which stores them in the cache inside its own transaction (`_vectors_for_texts`).

    Unlike `embed_into_cache` it writes nothing: a remember embedded before the write lock does not take SQLite's
    write lock a second time, on its own, for the cache rows (and wait there behind a group's index transaction).
    A batch of more texts than the process keeps goes into the cache as `embed_into_cache` does. Returns how many
    texts were embedded."""
    texts = {text_hash(n): embedding_text(n.title, n.content) for n in nodes}
    texts.update((digest, text) for n in nodes for _, text, digest in _passage_texts(n))
    if len(texts) > AHEAD_LIMIT // 2:
        return _vectors_for_texts(texts, embedder)[1]
    found = _cached(list(texts), embedder.model_id)
    with _AHEAD_LOCK:
        missing = [k for k in texts if k not in found and (embedder.model_id, k) not in _ahead]
    if not missing:
        return 0
    fresh = embedder.embed_documents([texts[k] for k in missing])
    with _AHEAD_LOCK:
        for k, v in zip(missing, fresh):
            _ahead[(embedder.model_id, k)] = np.asarray(v, np.float32)
        while len(_ahead) > AHEAD_LIMIT:
            _ahead.popitem(last=False)
    return len(missing)


def node_vectors(nodes: Sequence[Node], embedder: Embedder) -> tuple[list[np.ndarray], int]:
    """Each node's vectors as an (n, dim) array, its own text's first and then its passages', through the cache
    (whatever the cache lacks is embedded in one batched call); returns them and how many texts were embedded.

    Like `embed_ahead` it writes nothing for a batch the process can keep: what the cache lacks waits in the
    process for the index transaction of the write that follows (the auto-links of a remember took a write
    transaction of their own for the cache rows)."""
    passages = [_passage_texts(n) for n in nodes]
    texts = {text_hash(n): embedding_text(n.title, n.content) for n in nodes}
    texts.update((digest, text) for found in passages for _, text, digest in found)
    vectors, embedded = _vectors_for_texts(texts, embedder, keep_ahead=True)
    stacked = [np.stack([vectors[text_hash(n)], *(vectors[d] for _, _, d in p)]) for n, p in zip(nodes, passages)]
    return stacked, embedded


def vectors_for(nodes: Sequence[Node], embedder: Embedder) -> tuple[dict[str, np.ndarray], int]:
    """Each node's own-text vector by its text hash, through the cache; returns them and how many were embedded."""
    return _vectors_for_texts({text_hash(n): embedding_text(n.title, n.content) for n in nodes}, embedder)


def _cached(keys: list[str], model_id: str) -> dict[str, np.ndarray]:
    """The cached vectors of these text hashes for the model, a plain statement per chunk (a remember reads the
    cache twice: before the lock and in its index transaction)."""
    found: dict[str, np.ndarray] = {}
    table = connection.ops.quote_name(EmbeddingCacheRow._meta.db_table)
    with connection.cursor() as cur:
        for i in range(0, len(keys), CHUNK):
            chunk = keys[i:i + CHUNK]
            cur.execute(f"SELECT text_hash, vector FROM {table} WHERE model_id = %s AND text_hash IN "
                        f"({', '.join(['%s'] * len(chunk))})", [model_id, *chunk])
            for digest, blob in cur.fetchall():
                found[digest] = np.frombuffer(bytes(blob), dtype=np.float32)
    return found


def _vectors_for_texts(texts: dict[str, str], embedder: Embedder,
                       keep_ahead: bool = False) -> tuple[dict[str, np.ndarray], int]:
    """The vectors of the texts by hash: from the cache, else embedded ahead (`embed_ahead`), else by the model;
    what the cache lacked is written to it, or with `keep_ahead` (and few enough) kept in the process as
    `embed_ahead` keeps its vectors. Returns them and how many texts the model embedded here."""
    keys = list(texts)
    if keep_ahead:  # a read for similarity only: vectors embedded ahead for this write need no cache read
        with _AHEAD_LOCK:
            waiting = {k: _ahead[(embedder.model_id, k)] for k in keys if (embedder.model_id, k) in _ahead}
        if len(waiting) == len(keys):
            return waiting, 0
    found = _cached(keys, embedder.model_id)
    missing = [k for k in keys if k not in found]
    if not missing:
        return found, 0
    with _AHEAD_LOCK:
        ahead = {k: _ahead[(embedder.model_id, k)] for k in missing if (embedder.model_id, k) in _ahead}
    to_embed = [k for k in missing if k not in ahead]
    fresh = embedder.embed_documents([texts[k] for k in to_embed]) if to_embed else []
    new = {**ahead, **{k: np.asarray(v, np.float32) for k, v in zip(to_embed, fresh)}}
    if keep_ahead and len(missing) <= AHEAD_LIMIT // 2:
        with _AHEAD_LOCK:
            for k in to_embed:
                _ahead[(embedder.model_id, k)] = new[k]
            while len(_ahead) > AHEAD_LIMIT:
                _ahead.popitem(last=False)
        found.update(new)
        return found, len(to_embed)
    insert_rows(EmbeddingCacheRow, [EmbeddingCacheRow(text_hash=k, model_id=embedder.model_id, vector=new[k].tobytes())
                                     for k in missing], ignore_conflicts=True)
    found.update(new)
    return found, len(to_embed)


def index_passages(pairs: Sequence[tuple[Node, NodeRow]], embedder: Embedder, fresh: Collection[int] = ()) -> int:
    """Passages of long memories: a row whose passages (spans and text hashes) changed gets them written again,
    their vectors through the embedding cache; returns how many texts were embedded. `fresh`: ids of rows just
    inserted, which have no passages yet (not looked up)."""
    ids = [row.id for _, row in pairs]
    existing: dict[int, list[tuple]] = {}
    held = [i for i in ids if i not in fresh]
    for i in range(0, len(held), CHUNK):
        found = PassageRow.objects.filter(node_id__in=held[i:i + CHUNK]).order_by("node_id", "ordinal")
        for node_id, *entry in found.values_list("node_id", "ordinal", "start", "end", "text_hash"):
            existing.setdefault(node_id, []).append(tuple(entry))
    wanted: dict[int, list[tuple]] = {}
    texts: dict[str, str] = {}
    for node, row in pairs:
        wanted[row.id] = []
        for passage, text, digest in _passage_texts(node):
            texts[digest] = text
            wanted[row.id].append((passage.ordinal, passage.start, passage.end, digest))
    changed = [row_id for row_id in ids if existing.get(row_id, []) != wanted[row_id]]
    if not changed:
        return 0
    stale = [row_id for row_id in changed if row_id in existing]
    for i in range(0, len(stale), CHUNK):
        PassageRow.objects.filter(node_id__in=stale[i:i + CHUNK]).delete()
    found, embedded = _vectors_for_texts({h: texts[h] for r in changed for *_, h in wanted[r]}, embedder)
    PassageRow.objects.bulk_create(
        [PassageRow(node_id=row_id, ordinal=o, start=a, end=b, text_hash=h, vector=found[h].tobytes())
         for row_id in changed for o, a, b, h in wanted[row_id]], batch_size=CHUNK,
    )
    return embedded
