"""Batch remember (memory.services.nodes_create): one unit of work for the whole batch, all or nothing.

The batch must give what remembering each memory in turn gives (auto-links to the batch's earlier memories, the
self node's `defines` links, an index equal to a rebuild from the files), and a failure at any point of it must
leave the files and the index as they were before the batch.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection

from memory import runtime
from memory.backends import backend
from memory.domain.enums import EdgeType
from memory.domain.requests import NodeCreate
from memory.errors import ValidationFailed
from memory.models import EdgeRow, NodeRow
from memory.rebuild import rebuild
from memory.search import vectors
from memory.services import nodes_create, self_ensure
from tests.memory.test_rebuild_invariant import snapshot


def _files(home):
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in (home / "memory").rglob("*.md")}


def _index_counts() -> tuple[int, int, int, int]:
    fts = backend().fulltext_count()
    return NodeRow.objects.count(), EdgeRow.objects.count(), fts, vectors.count()


def test_a_memory_of_a_batch_auto_links_to_an_earlier_memory_of_the_same_batch(home, db):
    first, second, other = nodes_create(requests=[
        NodeCreate(content="Deploys of the shop run every Tuesday at noon"),
        NodeCreate(content="The shop deploys every Tuesday at noon"),
        NodeCreate(content="Grandmother's apple pie needs cinnamon and a hot oven"),
    ])
    assert first.auto_links == []
    assert [link.target_id for link in second.auto_links] == [first.node.id]
    assert [c.target for c in second.node.connections] == [first.node.id]
    assert other.auto_links == []
    edge = EdgeRow.objects.get(source__uid=second.node.id)
    assert (edge.target.uid, edge.edge_type) == (first.node.id, EdgeType.RELATED_TO)


def test_a_batch_links_each_memory_to_at_most_six_of_its_earlier_memories(home, db):
    results = nodes_create(requests=[NodeCreate(content="The shop deploys every Tuesday at noon") for _ in range(9)])
    ids = [r.node.id for r in results]
    links = [[link.target_id for link in r.auto_links] for r in results]
    assert [len(found) for found in links] == [0, 1, 2, 3, 4, 5, 6, 6, 6]
    assert all(set(found) <= set(ids[:i]) for i, found in enumerate(links))
    assert [[c.target for c in r.node.connections] for r in results] == links


def test_a_batch_links_to_memories_already_indexed(mem, home):
    old = mem("Deploys of the shop run every Tuesday at noon")
    (new,) = nodes_create(requests=[NodeCreate(content="The shop deploys every Tuesday at noon")])
    assert [link.target_id for link in new.auto_links] == [old.id]


def test_a_batch_writes_the_self_node_once_with_a_defines_link_to_each_memory_about_self(home, db):
    me = self_ensure(name="Dana")
    results = nodes_create(requests=[
        NodeCreate(content="Dana prefers tabs over spaces", type="preference", about_self=True),
        NodeCreate(content="The billing service uses PostgreSQL 16"),
        NodeCreate(content="Dana lives in Lisbon", type="fact", about_self=True),
    ], auto_link=False)
    self_file = runtime.store().path_for(me.id)
    node, _ = runtime.store().read(self_file)
    defined = [c.target for c in node.connections if c.edge == EdgeType.DEFINES]
    assert defined == [results[0].node.id, results[2].node.id]


def test_the_index_after_a_batch_equals_a_rebuild_from_the_files(home, db):
    self_ensure(name="Dana")
    nodes_create(requests=[
        NodeCreate(content="Dana prefers tabs over spaces in every editor", type="preference", about_self=True),
        NodeCreate(content="The billing service uses PostgreSQL 16 for invoices", space="billing", tags=["db"]),
        NodeCreate(content="Billing stores invoices in PostgreSQL 16", space="billing"),
        NodeCreate(content="Deploys happen on Tuesdays after the release checklist " * 40, type="procedure"),
    ])
    live = snapshot()
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)  # every row rewritten from its file
    assert snapshot() == live
    assert len(live["nodes"]) == 5


def test_a_batch_failing_on_its_third_file_leaves_no_file_and_no_row(mem, home):
    mem("Kept from before the batch", auto_link=False)
    before_files, before_index = _files(home), _index_counts()
    # A request that slipped past validation (model_copy does not validate): its file cannot be encoded, so the
    # write fails after the first two files of the batch are on disk.
    bad = NodeCreate(content="Third of the batch").model_copy(update={"content": "Lone surrogate \ud800"})
    with pytest.raises(ValidationFailed):
        nodes_create(requests=[NodeCreate(content="First of the batch"), NodeCreate(content="Second of the batch"),
                               bad, NodeCreate(content="Fourth of the batch")], auto_link=False)
    assert _files(home) == before_files
    assert _index_counts() == before_index
    assert not list((home / "memory" / "nodes").glob(".ormah_*"))


POISON = {  # (create, drop) per engine: a row titled 'poison' cannot be inserted
    "sqlite": (["CREATE TEMP TRIGGER poison BEFORE INSERT ON memory_noderow WHEN NEW.title = 'poison' "
                "BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"], ["DROP TRIGGER poison"]),
    "postgresql": (["CREATE FUNCTION poison_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    "IF NEW.title = 'poison' THEN RAISE EXCEPTION 'poisoned row' USING ERRCODE = 'check_violation'; "
                    "END IF; RETURN NEW; END $$",
                    "CREATE TRIGGER poison BEFORE INSERT ON memory_noderow FOR EACH ROW EXECUTE FUNCTION poison_row()"],
                   ["DROP TRIGGER poison ON memory_noderow", "DROP FUNCTION poison_row()"]),
}


def test_a_batch_whose_index_transaction_fails_removes_its_files_and_puts_the_self_node_back(mem, home):
    self_ensure(name="Dana")
    mem("Kept from before the batch", auto_link=False)
    before_files, before_index = _files(home), _index_counts()
    with connection.cursor() as cur:  # a fault in the storage: the fourth row of the batch cannot be inserted
        for sql in POISON[connection.vendor][0]:
            cur.execute(sql)
    try:
        with pytest.raises(IntegrityError):
            nodes_create(requests=[
                NodeCreate(content="Dana likes long walks", about_self=True),
                NodeCreate(content="Second of the batch"),
                NodeCreate(content="Third of the batch"),
                NodeCreate(content="Fourth of the batch", title="poison"),
            ])
    finally:
        with connection.cursor() as cur:
            for sql in POISON[connection.vendor][1]:
                cur.execute(sql)
    assert _files(home) == before_files
    assert _index_counts() == before_index
    assert "Kept from before the batch" in set(NodeRow.objects.values_list("content", flat=True))


def test_an_empty_batch_writes_nothing(home, db):
    assert nodes_create(requests=[]) == []
    assert not (home / "memory" / "nodes").exists() or not list((home / "memory" / "nodes").iterdir())
