"""Confirmed use (feedback +1, recall by id) and a patch of a row's own columns (confidence, pinned) update only
that row in the index, like importance_scorer does (tests/memory/test_row_only_writes.py), and a promotion from
archival the vec0 metadata besides; a text patch or a second write to the same memory in one unit still derive
everything again (issue 13:
each confirmed use rewrote the memory's FTS entry, tags, citations, passages and edges and looked up its vector)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import runtime
from memory.domain.enums import Tier
from memory.domain.node import utcnow
from memory.domain.requests import NodePatch
from memory.models import NodeRow, NodeTagRow
from memory.rebuild import rebuild
from memory.selectors import node_read
from memory.services import lifecycle, node_confirm_use, node_update, nodes_update
from tests.memory.test_rebuild_invariant import snapshot
from tests.memory.test_row_only_writes import DERIVED, _updated_columns, _vector_log_top

FILE_FACTS = {"file_hash", "file_mtime_ns", "file_size", "indexed_seq"}
DERIVED_KEYS = ("vectors", "fts", "tags", "edges")


def _pair(mem):
    a = mem("The billing service keeps invoices in PostgreSQL 16", tags=["db", "billing"], space="billing")
    b = mem("Invoices are exported every night to the finance share", tags=["billing"], space="billing")
    return a, b


def _equals_a_verifying_rebuild() -> None:
    live = snapshot()
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)
    assert snapshot() == live


def test_a_confirmed_use_updates_only_the_rows_counters(mem):
    a, _ = _pair(mem)
    before, log_top = snapshot(), _vector_log_top()
    with CaptureQueriesContext(connection) as ctx:
        used = node_confirm_use(ref=a.id, now=utcnow() + timedelta(days=3), source="whisper_feedback:explicit")
    sqls = [q["sql"] for q in ctx.captured_queries]
    assert [s for s in sqls if DERIVED.search(s)] == []  # no FTS, vector, tag, citation, passage or edge statement
    assert {"access_count", "last_accessed", "file_hash"} <= _updated_columns(sqls) <= \
        {"access_count", "stability", "last_accessed", "last_review"} | FILE_FACTS
    assert _vector_log_top() == log_top  # no process's vector matrix is told to reload the row
    after = snapshot()
    assert {k: after[k] for k in DERIVED_KEYS} == {k: before[k] for k in DERIVED_KEYS}
    row = after["nodes"][a.id]
    assert (row["access_count"], used.access_count) == (1, 1)
    assert row["file_hash"] == node_read(store=runtime.store(), row=NodeRow.objects.get(uid=a.id))[1].hash
    _equals_a_verifying_rebuild()


def test_a_confirmed_use_that_promotes_from_archival_moves_the_vector_metadata(mem):
    a = mem("An archived note about the old invoice exporter", tier="archival", tags=["billing"])
    log_top = _vector_log_top()
    used = node_confirm_use(ref=a.id, now=utcnow() + timedelta(days=3))
    assert used.tier == Tier.WORKING and NodeRow.objects.get(uid=a.id).tier == "working"
    assert _vector_log_top() > log_top  # the tier is vec0 metadata: every matrix learns of it
    _equals_a_verifying_rebuild()


def test_two_confirmed_uses_of_one_memory_in_one_unit_index_the_second_in_full(mem):
    """The row was indexed from the file before the first use, not the one the second was read from."""
    a, b = _pair(mem)
    now = utcnow() + timedelta(days=3)
    outcomes = lifecycle._confirm_group([(a.id, now, "t"), (b.id, now, "t"), (a.id[:8], now, "t")])
    assert [o.access_count for o in outcomes] == [1, 1, 2]
    assert NodeRow.objects.get(uid=a.id).access_count == 2
    _equals_a_verifying_rebuild()


def test_a_patch_of_the_rows_own_columns_updates_only_them(mem):
    a, b = _pair(mem)
    before, log_top = snapshot(), _vector_log_top()
    with CaptureQueriesContext(connection) as ctx:
        node_update(ref=a.id, patch=NodePatch(confidence=0.4, pinned=True))
        nodes_update(patches=[(b.id, NodePatch(authority=2)), (a.id, NodePatch(read_only=True))])
    sqls = [q["sql"] for q in ctx.captured_queries]
    assert [s for s in sqls if DERIVED.search(s)] == []
    assert {"confidence", "pinned", "authority", "read_only", "updated"} <= _updated_columns(sqls) <= \
        {"confidence", "pinned", "authority", "read_only", "updated"} | FILE_FACTS
    assert _vector_log_top() == log_top
    after = snapshot()
    assert {k: after[k] for k in DERIVED_KEYS} == {k: before[k] for k in DERIVED_KEYS}
    assert (after["nodes"][a.id]["confidence"], after["nodes"][a.id]["pinned"], after["nodes"][a.id]["read_only"],
            after["nodes"][b.id]["authority"]) == (0.4, True, True, 2)
    _equals_a_verifying_rebuild()


def test_a_patch_of_tags_with_confidence_still_derives_the_tags(mem):
    a, _ = _pair(mem)
    with CaptureQueriesContext(connection) as ctx:
        node_update(ref=a.id, patch=NodePatch(confidence=0.5, tags=["db", "invoices"]))
    assert "tags_text" in _updated_columns([q["sql"] for q in ctx.captured_queries])
    assert sorted(NodeTagRow.objects.filter(node__uid=a.id).values_list("tag", flat=True)) == ["db", "invoices"]
    _equals_a_verifying_rebuild()
