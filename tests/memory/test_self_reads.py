"""The self node's reads (memory.selectors.self_row, self_defined_rows, self_get): the same rows in fewer statements."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import runtime
from memory.models import EdgeRow, NodeRow, NodeTagRow
from memory.selectors import self_defined_rows, self_get, self_row
from memory.services import self_ensure


def test_self_row_is_the_self_node_not_a_memory_tagged_self(mem):
    note = mem("A note written before the self node", auto_link=False)
    # a hand-edited file may carry the reserved tag without being the self node (is_self_node: source and tag)
    NodeTagRow.objects.create(node=NodeRow.objects.get(uid=note.id), tag="self")
    me = self_ensure(name="Robin")
    assert NodeTagRow.objects.filter(tag="self").count() == 2
    assert self_row().uid == me.id
    assert self_row().uid == NodeRow.objects.filter(is_self=True).order_by("created", "uid").first().uid


def test_self_defined_rows_most_important_first_with_or_without_the_self_row(mem):
    self_ensure(name="Robin")
    low = mem("I live in Lisbon", about_self=True, auto_link=False)
    high = mem("I prefer tea to coffee", about_self=True, auto_link=False)
    mem("Not about me: the build runs on Fridays", auto_link=False)
    NodeRow.objects.filter(uid=high.id).update(importance=0.95)  # the selector orders the index rows
    NodeRow.objects.filter(uid=low.id).update(importance=0.1)
    assert [r.uid for r in self_defined_rows()] == [high.id, low.id]
    assert [r.uid for r in self_defined_rows(me=self_row())] == [high.id, low.id]
    assert [r.uid for r in self_defined_rows(limit=1)] == [high.id]


def test_self_defined_rows_without_a_self_node_is_empty(mem):
    mem("I live in Lisbon", auto_link=False)
    assert self_defined_rows() == []


def test_self_get_reads_the_self_node_once(mem):
    """self_get: the self row and the memories it defines in two statements (three before: self_row twice)."""
    me = self_ensure(name="Robin")
    about = mem("I live in Lisbon", about_self=True, auto_link=False)
    with CaptureQueriesContext(connection) as ctx:
        node, defined = self_get(store=runtime.store())
    assert node.id == me.id and [r.uid for r in defined] == [about.id]
    assert len(ctx.captured_queries) == 2


def test_the_plain_reads_give_the_orms_instances(mem):
    me = self_ensure(name="Robin")
    for text in ("I live in Lisbon", "I prefer tea to coffee", "I cycle to work"):
        mem(text, about_self=True, auto_link=False)
    fields = [f.attname for f in NodeRow._meta.concrete_fields]
    orm_me = NodeRow.objects.filter(is_self=True).order_by("created", "uid").first()
    assert [getattr(self_row(), f) for f in fields] == [getattr(orm_me, f) for f in fields] and orm_me.uid == me.id
    ids = EdgeRow.objects.filter(source=orm_me, edge_type="defines").values_list("target_id", flat=True)
    orm = list(NodeRow.objects.filter(id__in=ids).order_by("-importance", "-updated")[:2])
    for got in (self_defined_rows(limit=2), self_defined_rows(limit=2, me=orm_me)):
        assert [[getattr(r, f) for f in fields] for r in got] == [[getattr(r, f) for f in fields] for r in orm]
