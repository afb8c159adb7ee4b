"""The statements a remember's index write makes: nothing read or deleted twice (issue 13: 48 statements and 33-40
ms of CPU per remember under the soak)."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.node import utcnow
from memory.domain.requests import NodeCreate
from memory.models import EmbeddingCacheRow, IndexMetaRow, NodeRow
from memory.services import node_create, node_remember
from memory.services.nodes import nodes_embed_ahead

# the index's own statements (the vector matrix's refresh reads the passages too, unquoted)
CLEARS = re.compile(r'DELETE FROM "memory_(nodetagrow|nodecitationrow|edgerow|passagerow)"|FROM "memory_passagerow"')


def _sqls(ctx) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries]


def test_a_new_memory_has_no_tags_citations_passages_or_edges_to_clear(mem):
    mem("The billing service keeps invoices in PostgreSQL 16", tags=["db"])
    with CaptureQueriesContext(connection) as ctx:
        node_create(request=NodeCreate(content="Invoices are exported every night to the finance share",
                                       tags=["billing"]))
    assert [s for s in _sqls(ctx) if CLEARS.search(s)] == []
    # its row is inserted whole (embed_hash included) and never read back or updated
    assert [s for s in _sqls(ctx) if re.match(r'(\d+ times: )?UPDATE "?memory_noderow"?', s)] == []
    assert NodeRow.objects.get(content__startswith="Invoices").tag_rows.count() == 1


def test_the_auto_links_vectors_reach_the_cache_inside_the_index_transaction(mem):
    mem("The billing service keeps invoices in PostgreSQL 16")
    request = NodeCreate(content="Invoices are kept in the billing service's PostgreSQL database")
    nodes_embed_ahead(requests=[request], now=utcnow())
    outside = list(connection.atomic_blocks)  # the test's own (pytest-django wraps each test in one)
    blocks: list[tuple[str, list]] = []  # each statement with the atomic blocks open around it

    def record(execute, sql, params, many, context):
        blocks.append((sql, list(connection.atomic_blocks)))
        return execute(sql, params, many, context)

    with CaptureQueriesContext(connection) as ctx, connection.execute_wrapper(record):
        created = node_remember(request=request)
    sqls = _sqls(ctx)
    cache = [i for i, s in enumerate(sqls) if re.search(r"INSERT .*INTO \"?memory_embeddingcacherow", s)]
    row = [i for i, s in enumerate(sqls) if re.search(r"INSERT INTO \"?memory_noderow", s)]
    assert len(cache) == 1 and len(row) == 1 and cache[0] > row[0]  # not a transaction of its own before
    # and inside the block the row was inserted in (the index transaction), not a transaction opened after it
    cache_blocks, row_blocks = (next(b for sql, b in blocks if re.search(pattern, sql)) for pattern in (
        r"INSERT .*INTO \"?memory_embeddingcacherow", r"INSERT INTO \"?memory_noderow"))
    shared = 0
    while shared < min(len(cache_blocks), len(row_blocks)) and cache_blocks[shared] is row_blocks[shared]:
        shared += 1
    assert shared > len(outside)  # a block node_remember opened holds both
    assert created.auto_links and EmbeddingCacheRow.objects.count() >= 2


def test_each_index_write_takes_the_next_sequence_number_in_one_statement(mem):
    a = mem("The billing service keeps invoices in PostgreSQL 16", auto_link=False)
    with CaptureQueriesContext(connection) as ctx:
        b = mem("Invoices are exported every night to the finance share", auto_link=False)
    seq = [s for s in _sqls(ctx) if "indexmetarow" in s.lower() and "'seq'" in s]
    assert len(seq) == 1
    first, second = (NodeRow.objects.get(uid=n.id).indexed_seq for n in (a, b))
    assert second == first + 1 == int(IndexMetaRow.objects.get(key="seq").value)


def _remember(content: str):
    return node_remember(request=NodeCreate(content=content), session_id="statements")


def test_a_remember_reads_the_embedding_model_once(mem):
    mem("The billing service keeps invoices in PostgreSQL 16")
    with CaptureQueriesContext(connection) as ctx:
        created = _remember("Invoices are kept in the billing service's PostgreSQL database")
    model = [s for s in _sqls(ctx) if re.match(r'SELECT [^(]*FROM "memory_indexmetarow" WHERE', s)
             and "'embedding_model_id'" in s]
    assert len(model) == 1  # the auto-links matched the vector table; the index write under the same lock did not
    assert created.auto_links and NodeRow.objects.get(uid=created.node.id).embed_hash != ""


def test_the_auto_links_take_a_vector_embedded_ahead_without_reading_the_cache(mem):
    mem("The billing service keeps invoices in PostgreSQL 16")
    with CaptureQueriesContext(connection) as ctx:
        created = _remember("Invoices are kept in the billing service's PostgreSQL database")
    reads = [s for s in _sqls(ctx) if re.match(r'SELECT .* FROM "?memory_embeddingcacherow"?', s)]
    assert len(reads) == 2  # before the model runs, and in the index write that stores the vector
    assert created.auto_links and EmbeddingCacheRow.objects.filter(model_id__isnull=False).count() >= 2


def test_a_remember_records_its_evidence_day_file_offset_in_one_update(mem):
    _remember("The billing service keeps invoices in PostgreSQL 16")
    with CaptureQueriesContext(connection) as ctx:
        _remember("Invoices are exported every night to the finance share")
    offsets = [s.split()[0] for s in _sqls(ctx) if "indexmetarow" in s.lower() and "'evidence:" in s]
    assert offsets == ["SELECT", "UPDATE"]  # the offsets read, then the new one (no savepoint, read, update)
    key = IndexMetaRow.objects.get(key__startswith="evidence:")
    day = key.key.removeprefix("evidence:").split("/")[-1]  # on PostgreSQL the key is evidence:<host>/<day file>
    assert int(key.value) == (Path(settings.ORMAH["HOME"]) / "evidence" / day).stat().st_size


def test_a_remember_reads_which_of_its_evidence_ids_are_indexed_without_sorting_them(mem):
    _remember("The billing service keeps invoices in PostgreSQL 16")
    with CaptureQueriesContext(connection) as ctx:
        _remember("Invoices are exported every night to the finance share")
    known = [s for s in _sqls(ctx) if re.match(r'SELECT uid FROM "?memory_evidencerow"? WHERE uid IN', s)]  # plain
    assert len(known) == 1
    assert "ORDER BY" not in known[0]  # a set: EvidenceRow's Meta ordering (at, id) made SQLite sort the hits


def test_tags_and_citations_are_the_rows_bulk_create_wrote_in_one_plain_insert_each(mem):
    from memory.models import NodeCitationRow, NodeTagRow

    mem("The billing service keeps invoices in PostgreSQL 16", tags=["db"])
    request = NodeCreate(content="Invoices are exported every night to the finance share",
                         tags=["billing", "export", "billing", "nightly"], source_event_ids=["ev_a", "ev_b", "ev_a"])
    with CaptureQueriesContext(connection) as ctx:
        node = node_remember(request=request, session_id="s1").node
    row = NodeRow.objects.get(uid=node.id)
    tags = list(NodeTagRow.objects.filter(node=row).order_by("id").values_list("tag", flat=True))
    assert tags == ["billing", "export", "nightly"]
    cited = list(NodeCitationRow.objects.filter(node=row).order_by("id").values_list("event_id", flat=True))
    assert cited == [node.source_event_ids[0], "ev_a", "ev_b"] and cited[0].startswith("ev_")  # its own event first
    inserts = [s for s in _sqls(ctx) if re.search(r'INSERT INTO "?memory_node(tag|citation)row"?', s)]
    assert len(inserts) == 2 and not [s for s in inserts if "RETURNING" in s]
    # the check for a row at the new file's path is one plain statement, not the ORM's exists()
    assert not [s for s in _sqls(ctx) if 'SELECT 1 AS "a" FROM "memory_noderow"' in s]
    assert [s for s in _sqls(ctx) if s.startswith("SELECT 1 FROM memory_noderow WHERE file_path IN")]


def test_edges_find_their_targets_rows_in_one_plain_read(mem):
    import json

    from memory.index_edges import rebuild_edges
    from memory.models import EdgeRow

    a = mem("The kiln fires at dawn every Saturday", auto_link=False)
    b = mem("Glaze batches dry for a day", auto_link=False)
    source = NodeRow.objects.get(uid=a.id)
    source.connections_json = json.dumps([
        {"target": b.id, "edge": "related_to", "weight": 0.8, "reason": "r"},
        {"target": a.id, "edge": "related_to", "weight": 1.0, "reason": None},  # itself: no edge
        {"target": "00000000-0000-4000-8000-00000000dead", "edge": "supports", "weight": 0.5, "reason": None},
        {"target": b.id, "edge": "supports", "weight": 0.6, "reason": None, "valid_from": "2026-01-01T00:00:00Z"}])
    with CaptureQueriesContext(connection) as ctx:
        rebuild_edges([source])
    edges = sorted(EdgeRow.objects.filter(source=source).values_list("target__uid", "edge_type", "weight"))
    assert edges == [(b.id, "related_to", 0.8), (b.id, "supports", 0.6)]
    reads = [s for s in _sqls(ctx) if s.startswith("SELECT") and "memory_noderow" in s]
    assert len(reads) == 1 and reads[0].startswith("SELECT uid, id FROM memory_noderow WHERE uid IN")
