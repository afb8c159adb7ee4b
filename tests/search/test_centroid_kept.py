"""A store within the centroid's sample keeps the sample's cached vectors between sums (memory/search/centroid.py).

Every write moves a small store's signature, so the centroid is summed again at the next query; it read every
sample row's vector each time (~5.7 ms of a recall at 2,000 memories). The embedding cache's vectors of the last
sample are kept per process now, and only rows not kept are read. The sums must stay byte for byte those of a
fresh process (nothing kept) after a new memory, a content edit and a removal.
"""

from __future__ import annotations

import re

import numpy as np
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.search import candidates, centroid, vectors
from memory.services import node_forget, node_update
from tests.support.stores import SIX_MEMORIES as TEXTS



def _dim() -> int:
    ids = list(NodeRow.objects.values_list("id", flat=True))
    return int(next(iter(vectors.get_many(ids).values())).shape[0])


def _sum(monkeypatch, *, fresh: bool) -> tuple[bytes, int, list[str]]:
    """The centroid summed again (as after a write), as a fresh process when `fresh`; and the statements' SQL."""
    monkeypatch.setattr(centroid, "_centroids", {})
    if fresh:
        monkeypatch.setattr(centroid, "_held", {}, raising=False)
    total, dim = NodeRow.objects.count(), _dim()
    with CaptureQueriesContext(connection) as ctx:
        summed, sampled, _ = centroid.centroid(total, dim)
    return summed.tobytes(), sampled, [q["sql"] for q in ctx.captured_queries]


def _vectors_read(sqls: list[str]) -> int:
    """How many rows' vectors the statements asked for (the cache's by text hash, get_many's by row id)."""
    return sum(len(re.findall(r"%s|'[0-9a-f]{64}'|\b\d+\b", s.split(" IN (", 1)[1]))
               for s in sqls if "vector" in s and " IN (" in s)


def test_a_small_store_reads_only_the_new_memorys_vector_and_sums_as_a_fresh_process(mem, monkeypatch):
    nodes = [mem(text, auto_link=False) for text in TEXTS]
    first, sampled, _ = _sum(monkeypatch, fresh=True)
    assert sampled == len(TEXTS)
    assert _sum(monkeypatch, fresh=False)[0] == first  # nothing new: every vector kept

    mem("The release checklist lives in docs/release.md", auto_link=False)
    kept, sampled, sqls = _sum(monkeypatch, fresh=False)
    assert sampled == len(TEXTS) + 1
    assert _vectors_read(sqls) == 1  # the new memory's alone (the whole sample before)
    assert kept == _sum(monkeypatch, fresh=True)[0] != first

    node_update(ref=nodes[2].id, patch=NodePatch(content="The garden sensors report soil moisture hourly"))
    kept, _, sqls = _sum(monkeypatch, fresh=False)
    assert _vectors_read(sqls) == 1  # the edited memory's new vector
    assert kept == _sum(monkeypatch, fresh=True)[0]

    node_forget(ref=nodes[0].id)
    kept, sampled, sqls = _sum(monkeypatch, fresh=False)
    assert _vectors_read(sqls) == 0
    assert kept == _sum(monkeypatch, fresh=True)[0]
    assert sampled == NodeRow.objects.count()


def test_the_kept_vectors_are_the_cache_rows_bytes_and_only_the_samples(mem, monkeypatch):
    for text in TEXTS:
        mem(text, auto_link=False)
    monkeypatch.setattr(centroid, "_held", {})
    _sum(monkeypatch, fresh=False)
    ((model, dim), index, kept), = centroid._held.values()
    rows = dict(NodeRow.objects.values_list("embed_hash", "id"))
    assert set(index) == set(rows) and dim == _dim() and kept.shape == (len(rows), dim)
    stored = vectors.get_many(list(rows.values()))
    assert all(kept[index[h]].tobytes() == stored[i].tobytes() for h, i in rows.items())
    assert kept.dtype == np.float32


def test_a_small_stores_signature_and_sample_are_one_read(mem, monkeypatch):
    """The signature of a store within the sample is its sample's rows (every row by uid): the sum after a write
    reads them once, not a signature of every embed_hash and then the sample."""
    for text in TEXTS:
        mem(text, auto_link=False)
    dim = _dim()
    centroid.centroid(len(TEXTS), dim, candidates.store_state())
    mem("The release checklist lives in docs/release.md", auto_link=False)
    state = candidates.store_state()
    total = candidates.memory_count(state)
    with CaptureQueriesContext(connection) as ctx:
        summed, sampled, _ = centroid.centroid(total, dim, state)
    sqls = [q["sql"] for q in ctx.captured_queries]
    assert sampled == len(TEXTS) + 1
    assert sum("memory_noderow" in s and "embed_hash" in s for s in sqls) == 1, sqls
    assert summed.tobytes() == _sum(monkeypatch, fresh=True)[0]


def test_a_store_larger_than_the_sample_keeps_nothing(mem, monkeypatch):
    monkeypatch.setattr(centroid, "CENTROID_SAMPLE", 3)
    for text in TEXTS:
        mem(text, auto_link=False)
    first, sampled, _ = _sum(monkeypatch, fresh=True)
    assert sampled == 3 and centroid._held == {}


def test_the_sum_is_the_float64_sum_of_the_stacked_sample_in_uid_order(mem, monkeypatch):
    """The centroid accumulates in float64 without a float64 copy of the sample: byte for byte the old formula."""
    for text in TEXTS:
        mem(text, auto_link=False)
    ids = list(NodeRow.objects.order_by("uid").values_list("id", flat=True))
    found = vectors.get_many(ids)
    expected = np.sum(np.stack([found[i] for i in ids]).astype(np.float64), axis=0).astype(np.float32)
    assert _sum(monkeypatch, fresh=True)[0] == expected.tobytes()
