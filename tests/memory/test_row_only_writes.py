"""A write that changes only what a memory's own index row holds (importance) updates only that row's columns;
a change of text or tags still derives everything again (issue 13: importance_scorer spent 61 % of its CPU
re-indexing whole memories whose importance alone had changed). Tier and space: test_row_only_tier_space.py."""

from __future__ import annotations

import re
from dataclasses import replace

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import index, runtime
from memory.domain.enums import Tier
from memory.domain.requests import NodePatch
from memory.index_rows import row_only_change
from memory.models import NodeRow, NodeTagRow
from memory.rebuild import rebuild
from memory.search import vectors
from memory.selectors import node_read
from memory.services import node_update, nodes_importance_set
from memory.writes import write_unit
from tests.memory.test_rebuild_invariant import snapshot

DERIVED = re.compile(r"node_vec\b|node_fts|nodetagrow|nodecitationrow|edgerow|passagerow", re.IGNORECASE)
NODE_UPDATE = re.compile(r'^\s*(?:\d+ times: )?UPDATE\s+"?memory_noderow"?\s+SET\s+(.*?)\s+WHERE',
                         re.IGNORECASE | re.DOTALL)  # executemany is captured as "N times: UPDATE ..."
TEXT_COLUMNS = {"title", "content", "tags_text", "type", "tier", "space", "created", "valid_until", "embed_hash",
                "connections_json"}


def _vector_log_top() -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT max(gen) FROM {vectors.LOG_TABLE}")
        return cur.fetchone()[0]


def _updated_columns(sqls: list[str]) -> set[str]:
    """The columns set by the statements' UPDATEs of memory_noderow."""
    out = set()
    for sql in sqls:
        found = NODE_UPDATE.match(sql)
        if found:
            out.update(m.strip('"') for m in re.findall(r'"?(\w+)"?\s*=', found.group(1)))
    return out


def _pair(mem):
    a = mem("The billing service keeps invoices in PostgreSQL 16", tags=["db", "billing"], space="billing")
    b = mem("Invoices are exported every night to the finance share", tags=["billing"], space="billing")
    return a, b


def test_an_importance_change_updates_only_the_rows_importance(mem):
    a, b = _pair(mem)
    before, log_top = snapshot(), _vector_log_top()
    with CaptureQueriesContext(connection) as ctx:
        assert nodes_importance_set(values={a.id: 0.9, b.id: 0.1}) == 2
    sqls = [q["sql"] for q in ctx.captured_queries]
    assert [s for s in sqls if DERIVED.search(s)] == []  # no FTS, vector, tag, citation, passage or edge statement
    assert {"importance", "file_hash", "indexed_seq"} <= _updated_columns(sqls) <= \
        {"importance", "file_hash", "file_mtime_ns", "file_size", "indexed_seq"}
    assert _vector_log_top() == log_top  # no process's vector matrix is told to reload the rows
    after = snapshot()
    assert {k: after[k] for k in ("vectors", "fts", "tags", "edges")} == \
        {k: before[k] for k in ("vectors", "fts", "tags", "edges")}
    assert (after["nodes"][a.id]["importance"], after["nodes"][b.id]["importance"]) == (0.9, 0.1)
    store = runtime.store()
    assert after["nodes"][a.id]["file_hash"] == node_read(store=store, row=NodeRow.objects.get(uid=a.id))[1].hash
    # and the index is what a full rebuild from the files gives
    rebuild(store, embedder=runtime.embedder(), verify=True)
    assert snapshot() == after


def test_a_text_change_still_derives_everything_again(mem):
    a, _ = _pair(mem)
    log_top = _vector_log_top()
    with CaptureQueriesContext(connection) as ctx:
        node_update(ref=a.id, patch=NodePatch(content="The billing service keeps invoices in PostgreSQL 17",
                                              tags=["db", "billing", "postgres"]))
    sqls = [q["sql"] for q in ctx.captured_queries]
    assert {"content", "tags_text", "embed_hash"} <= _updated_columns(sqls)
    assert any("node_vec" in s for s in sqls) and any("nodetagrow" in s.lower() for s in sqls)
    assert _vector_log_top() > log_top
    assert sorted(NodeTagRow.objects.filter(node__uid=a.id).values_list("tag", flat=True)) == \
        ["billing", "db", "postgres"]
    live = snapshot()
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)
    assert snapshot() == live


def test_a_tag_change_rewrites_the_fts_entry_but_tells_no_vector_matrix(mem):
    a, _ = _pair(mem)
    log_top = _vector_log_top()
    with CaptureQueriesContext(connection) as ctx:
        node_update(ref=a.id, patch=NodePatch(tags=["db", "billing", "invoices"]))
    columns = _updated_columns([q["sql"] for q in ctx.captured_queries])
    assert "tags_text" in columns and not columns & {"type", "tier", "space", "created", "valid_until", "embed_hash"}
    assert _vector_log_top() == log_top
    live = snapshot()
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)
    assert snapshot() == live


def test_a_tier_change_moves_the_vector_metadata(mem):
    a, _ = _pair(mem)
    log_top = _vector_log_top()
    node_update(ref=a.id, patch=NodePatch(tier=Tier.CORE))
    assert _vector_log_top() > log_top
    live = snapshot()
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)
    assert snapshot() == live


def test_an_importance_change_to_a_file_edited_by_hand_since_its_row_reindexes_in_full(mem):
    a, _ = _pair(mem)
    store = runtime.store()
    path = store.path_for(a.id)
    path.write_text(path.read_text().replace("- db\n", "- storage\n"))  # not synced yet: the row still says db
    assert "storage" in path.read_text()
    assert nodes_importance_set(values={a.id: 0.8}) == 1
    assert sorted(NodeTagRow.objects.filter(node__uid=a.id).values_list("tag", flat=True)) == ["billing", "storage"]
    live = snapshot()
    rebuild(store, embedder=runtime.embedder(), verify=True)
    assert snapshot() == live


def test_a_second_row_only_save_in_one_unit_reindexes_in_full(mem):
    """The row was indexed from the first version, not the one the second save was made from: all of it again."""
    a, _ = _pair(mem)
    store = runtime.store()
    node, stored = node_read(store=store, row=NodeRow.objects.get(uid=a.id))
    with write_unit() as unit:
        once = replace(node, importance=0.7)
        stored = unit.save(once, expected=stored, before=node)
        unit.save(replace(once, importance=0.6), expected=stored, before=once)
    assert NodeRow.objects.get(uid=a.id).importance == 0.6
    live = snapshot()
    rebuild(store, embedder=runtime.embedder(), verify=True)
    assert snapshot() == live


def test_what_counts_as_a_row_only_change(mem):
    a, _ = _pair(mem)
    node, _ = node_read(store=runtime.store(), row=NodeRow.objects.get(uid=a.id))
    assert row_only_change(node, replace(node, importance=0.2, access_count=3, confidence=0.5))
    assert not row_only_change(node, replace(node, content=node.content + "!"))
    assert not row_only_change(node, replace(node, tags=("db",)))
    assert row_only_change(node, replace(node, tier=Tier.CORE, space="ops"))  # tests/memory/test_row_only_tier_space.py
    assert not row_only_change(node, replace(node, type="decision"))
    assert not row_only_change(node, replace(node, source_event_ids=("ev-1",)))


def test_a_model_switch_pending_under_a_row_only_save_leaves_every_row_its_vector(mem, settings):
    """The model changed since the last sync: the flush of an importance-only save beside full ones recreates the
    vector table, so the row-only row is derived in full too and no row of the flush is left without its vector."""
    a, b = _pair(mem)
    c = mem("Deploys happen on Tuesdays after the release checklist", tags=["deploy"], auto_link=False)
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.HashEmbedder"}  # another model id
    changes = {a.id: {"importance": 0.9},  # row-only
               b.id: {"content": "Invoices are exported every hour to the finance share"},  # a text save
               c.id: {"tags": ("deploy", "release")}}  # a full save whose text (and so embed_hash) is the same
    with write_unit() as unit:
        for ref, change in changes.items():
            node, stored = unit.read(ref)
            unit.save(replace(node, **change), expected=stored, before=node)
    assert index.meta_get(index.META_MODEL) == "test/hash-embedder"
    hashes = dict(NodeRow.objects.values_list("id", "embed_hash"))
    assert "" not in hashes.values()
    assert {row_id for row_id, _ in vectors.all_vectors()} == set(hashes)
    assert NodeRow.objects.get(uid=a.id).importance == 0.9
    live = snapshot()
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)
    assert snapshot() == live
