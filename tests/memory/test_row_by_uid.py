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
