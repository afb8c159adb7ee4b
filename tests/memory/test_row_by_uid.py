"""memory.selectors.row_by_uid (node_row_get's exact-id read, a plain statement): the instance the ORM gives."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.models import NodeRow
from memory.selectors import node_row_get, row_by_uid


def _fields(row: NodeRow) -> dict:
    return {f.attname: getattr(row, f.attname) for f in NodeRow._meta.concrete_fields}


def test_row_by_uid_is_the_orms_row_field_for_field(mem):
    node = mem("The build runs on Fridays", tags=["ci", "build"], space="work", auto_link=False)
    NodeRow.objects.filter(uid=node.id).update(valid_until=datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC))
    orm = NodeRow.objects.filter(uid=node.id).first()
    got = row_by_uid(node.id)
    assert isinstance(got, NodeRow) and got.pk == orm.pk
    assert _fields(got) == _fields(orm)
    assert got.valid_until == datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC) and got.created.tzinfo is not None
    assert node_row_get(ref=node.id).pk == orm.pk
    assert node_row_get(ref=node.id[:8]).pk == orm.pk


def test_row_by_uid_of_no_memory_is_none(mem):
    mem("Something", auto_link=False)
    assert row_by_uid("0" * 36) is None


def test_node_identical_is_the_oldest_live_one_of_the_space(mem):
    from memory.selectors import node_identical

    text = "The build runs on Fridays"
    first = mem(text, space="work", auto_link=False)
    NodeRow.objects.create(**{**_fields(NodeRow.objects.get(uid=first.id)), "id": None, "uid": "f" * 36,
                              "file_path": "nodes/copy.md", "created": datetime(2020, 1, 1, tzinfo=UTC)})
    NodeRow.objects.create(**{**_fields(NodeRow.objects.get(uid=first.id)), "id": None, "uid": "e" * 36,
                              "file_path": "nodes/gone.md", "created": datetime(2019, 1, 1, tzinfo=UTC),
                              "valid_until": datetime(2021, 1, 1, tzinfo=UTC)})
    glob = mem(text, auto_link=False)
    orm = NodeRow.objects.filter(content=text, valid_until__isnull=True, space="work").order_by("created", "uid")
    assert node_identical(content=text, space="work").uid == orm.first().uid == "f" * 36
    assert _fields(node_identical(content=text, space="work")) == _fields(orm.first())
    assert node_identical(content=text, space=None).uid == glob.id
    assert node_identical(content=text, space="home") is None
    assert node_identical(content=text + ".", space="work") is None
