"""Recall's cheaper reads give exactly what the ORM and the per-row products gave (issue 13, item 2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.requests import NodePatch
from memory.domain.requests import NodeCreate
from memory.domain.trust import WARNING_EDGES, RelationKind
from memory.domain.trust_requests import RelationIn
from memory.models import EdgeRow, NodeCitationRow, NodeRow
from memory.search import Filters, matrix
from memory.search.filters import matching_ids
from memory.search.rows import HitRow, as_datetime, feature_rows, hit_rows, trust_rows
from memory.services import node_update, self_ensure
from memory.services.evidence import node_remember
from memory.services.trust import relation_create

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_row_reads_equal_the_orm_values(mem):
    old = mem("Backups run nightly with restic", created=NOW - timedelta(days=40), tags=["ops", "backup"])
    node_update(ref=old.id, patch=NodePatch(valid_until=NOW - timedelta(days=2, microseconds=7)))
    new = mem("The garden sensors report every fifteen minutes", title="Sensors", space="garden")
    ids = list(NodeRow.objects.filter(uid__in=[old.id, new.id]).values_list("id", flat=True))
    for load in (feature_rows, hit_rows):
        rows = load(ids + [10**9])
        fields = next(iter(rows.values()))._fields
        orm = {r[0]: r for r in NodeRow.objects.filter(id__in=ids).values_list(*fields)}
        assert {i: tuple(r) for i, r in rows.items()} == orm


def test_hits_built_from_the_candidates_rows_equal_a_fresh_read(mem):
    ids = [NodeRow.objects.get(uid=mem(text, auto_link=False).id).id
           for text in ("Backups run nightly with restic", "The garden sensors report every fifteen minutes")]
    known = feature_rows(ids[:1])
    got = hit_rows(ids + [10**9], known=known)
    assert got[ids[0]] is known[ids[0]]  # not read again
    assert {i: tuple(getattr(r, f) for f in HitRow._fields) for i, r in got.items()} == {
        i: tuple(r) for i, r in hit_rows(ids).items()}


def test_trust_rows_equal_the_orm_values(mem):
    old = mem("The office is in Berlin", auto_link=False)
    new = mem("The office is in Hamburg", auto_link=False)
    other = mem("The office is in Lisbon", auto_link=False)
    cited = node_remember(request=NodeCreate(content="The release checklist lives in docs/release.md"),
                          auto_link=False).node
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES,
                                       valid_from=NOW + timedelta(days=30, microseconds=3)))
    relation_create(request=RelationIn(from_id=other.id, to_id=new.id, relation=RelationKind.CONTRADICTS))
    uids = [old.id, new.id, cited.id, "no-such-memory"]

    found = trust_rows(uids, WARNING_EDGES)

    assert found.nodes == list(NodeRow.objects.filter(uid__in=uids).values_list("id", "uid", "trust_json"))
    ids = [row_id for row_id, _, _ in found.nodes]
    assert found.citations == list(NodeCitationRow.objects.filter(node_id__in=ids).order_by("id").values_list(
        "node_id", "event_id")) != []
    edges = EdgeRow.objects.filter(source_id__in=ids) | EdgeRow.objects.filter(target_id__in=ids)
    assert found.edges == list(edges.filter(edge_type__in=WARNING_EDGES).order_by("id").values_list(
        "source__uid", "target__uid", "edge_type", "valid_from", "valid_until"))
    assert len(found.edges) == 2 and found.edges[0].valid_from == NOW + timedelta(days=30, microseconds=3)


def test_stored_timestamps_read_as_utc():
    assert as_datetime("2026-11-20 12:00:00.000007") == datetime(2026, 11, 20, 12, 0, 0, 7, tzinfo=UTC)
    assert as_datetime("2026-11-20T12:00:00Z") == datetime(2026, 11, 20, 12, tzinfo=UTC)
    assert as_datetime(None) is None


def test_matching_ids_can_leave_the_self_node_out(mem):
    me = self_ensure(name="Dana")
    other = mem("Dana plays the guitar on Sundays", auto_link=False)
    ids = dict(NodeRow.objects.values_list("uid", "id"))
    both = [ids[me.id], ids[other.id]]
    assert matching_ids(Filters(), row_ids=both, skip_self=True) == [ids[other.id]]
    assert sorted(matching_ids(Filters(), row_ids=both)) == sorted(both)


def test_matrix_cosines_equal_one_product_per_row(mem):
    for i in range(6):
        mem(f"Note {i}: the billing service retries webhooks with jitter", auto_link=False)
    mem("# Guide\n\n" + "\n\n".join(f"## Part {i}\n\n" + "Long text about restoring backups. " * 40
                                     for i in range(4)), auto_link=False)
    [(state, _)] = matrix.current()
    query = state.vecs[0].copy()
    ids = list(state.slots)
    expected = {}
    for row_id in ids:
        slots = state.slots[row_id]
        sims = state.vecs[slots] @ query
        best = int(np.argmax(sims))
        expected[row_id] = (float(sims[best]), int(state.part[slots[best]]))
    assert any(len(state.slots[r]) > 1 for r in ids)  # a long memory with passages is among them
    assert state.cosines(query, ids) == expected


def test_a_warm_matrix_costs_one_generation_read_per_query(mem, transactional_db):
    mem("The billing service retries webhooks with jitter", auto_link=False)
    matrix.current()
    with CaptureQueriesContext(connection) as ctx:
        matrix.current()
    assert [q["sql"] for q in ctx.captured_queries] == ["SELECT max(gen) FROM node_vec_log"]


def test_document_counts_are_read_once_per_store_state(mem, transactional_db):
    from memory.search.candidates import doc_counts

    node = mem("The garden sensors report soil moisture", auto_link=False)
    assert doc_counts(["garden", "zebra"]) == {"garden": 1, "zebra": 0}
    with CaptureQueriesContext(connection) as ctx:
        assert doc_counts(["zebra", "garden"]) == {"zebra": 0, "garden": 1}
    assert len(ctx.captured_queries) == 1  # the store state, no count
    node_update(ref=node.id, patch=NodePatch(tags=["zebra"]))  # a tag alone moves the state too
    assert doc_counts(["garden", "zebra"]) == {"garden": 1, "zebra": 1}


def test_a_repeated_query_vector_is_scanned_once_until_the_matrix_changes(mem, transactional_db):
    first = mem("The billing service retries webhooks with jitter", auto_link=False)
    [(state, _)] = matrix.current()
    query = state.vecs[0].copy()
    assert state.sims(query) is state.sims(query)  # a time-named query searches the same vector twice
    assert [h.row_id for h in matrix.search(query, 5)] == [NodeRow.objects.get(uid=first.id).id]

    second = mem("The billing service retries webhooks with jitter and a cap", auto_link=False)

    assert sorted(h.row_id for h in matrix.search(query, 5)) == sorted(
        NodeRow.objects.filter(uid__in=[first.id, second.id]).values_list("id", flat=True))


def test_the_centroid_signature_is_read_once_per_store_state(mem, transactional_db):
    """The exact signature of a small store (every row's embed_hash joined) is read once per store state, and a
    content edit (a new embed_hash) moves the state, so the next query reads the new signature."""
    from memory.search.candidates import store_state
    from memory.search.centroid import _read_signature, _signature

    node = mem("The garden sensors report soil moisture", auto_link=False)
    mem("The billing service retries webhooks with jitter", auto_link=False)
    state = store_state()
    first = _signature(2, state)
    assert first == _read_signature(2)
    with CaptureQueriesContext(connection) as ctx:
        assert _signature(2, store_state()) == first
    assert len(ctx.captured_queries) == 1  # the store state, no signature
    node_update(ref=node.id, patch=NodePatch(content="The garden sensors report soil moisture hourly"))
    moved = store_state()
    assert moved != state
    assert _signature(2, moved) == _read_signature(2) != first


def test_a_recall_reads_the_vector_generation_once_and_the_next_sees_new_vectors(mem, transactional_db):
    from memory.domain.search import SearchQuery
    from memory.search import recall

    mem("The billing service retries webhooks with jitter", auto_link=False)
    mem("Webhooks from the payment provider are verified with a shared secret", auto_link=False)
    query = SearchQuery(query="how are billing webhooks retried", limit=5, min_score=0.0)
    recall(query=query, now=NOW)  # the matrix loaded
    with CaptureQueriesContext(connection) as ctx:
        first = recall(query=query, now=NOW)
    assert first
    assert [q["sql"] for q in ctx.captured_queries].count("SELECT max(gen) FROM node_vec_log") == 1
    added = mem("Billing webhooks are retried five times with exponential backoff", auto_link=False)
    assert added.id in [h.node_id for h in recall(query=query, now=NOW)]


def test_one_read_keeps_one_calls_parts_and_the_next_call_reads_again(mem, transactional_db):
    mem("The billing service retries webhooks with jitter", auto_link=False)
    with matrix.one_read():
        parts = matrix.current()
        with CaptureQueriesContext(connection) as ctx:
            assert matrix.current() is parts
            with matrix.one_read():
                assert matrix.current() is parts
        assert ctx.captured_queries == []
    with CaptureQueriesContext(connection) as ctx:
        matrix.current()
    assert [q["sql"] for q in ctx.captured_queries] == ["SELECT max(gen) FROM node_vec_log"]
