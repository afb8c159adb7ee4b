"""whisper.selectors' per-store-state loads (identity_rows, self_ids, known_spaces) as plain statements: the rows,
order, fields and deferred fields the ORM's queries gave. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from memory.domain.requests import NodeCreate
from memory.models import EdgeRow, NodeRow, NodeTagRow
from memory.services import node_create, self_ensure
from whisper import selectors

pytestmark = pytest.mark.django_db


def _remember(text: str, **fields):
    return node_create(request=NodeCreate(content=text, **fields), auto_link=False).node


def _orm_identity() -> list[NodeRow]:
    me = NodeRow.objects.filter(tag_rows__tag="self", is_self=True).order_by("created", "uid").values("id")[:1]
    targets = EdgeRow.objects.filter(source_id__in=me, edge_type="defines").values("target_id")
    return list(NodeRow.objects.filter(id__in=targets).order_by("-importance", "-updated")
                .only(*selectors.IDENTITY_FIELDS)[:selectors.IDENTITY_LIMIT])


def test_identity_rows_are_the_orms(home):
    assert selectors.identity_rows() == []
    me = self_ensure(name="Robin")
    made = [_remember(f"About me, fact {i}: I like item {i}", about_self=True, space="home" if i % 2 else None)
            for i in range(5)]
    _remember("Not about me: the build runs on Fridays", space="work")
    for i, node in enumerate(made):
        NodeRow.objects.filter(uid=node.id).update(importance=[0.9, 0.2, 0.9, 0.5, 0.1][i],
                                                   tier="archival" if i == 3 else "working")
    want = [r for r in _orm_identity() if r.tier in ("core", "working")]
    got = selectors.identity_rows()
    assert [r.uid for r in got] == [r.uid for r in want] and len(got) == 4
    for a, b in zip(got, want, strict=True):
        assert {f: getattr(a, f) for f in selectors.IDENTITY_FIELDS} == \
            {f: getattr(b, f) for f in selectors.IDENTITY_FIELDS}
        assert a.get_deferred_fields() == b.get_deferred_fields()
    assert selectors.self_ids() == frozenset({me.id})
    assert selectors.known_spaces() == frozenset({"home", "work"})


def test_self_ids_need_the_flag_and_the_tag(home):
    me = self_ensure(name="Robin")
    other = _remember("A note a hand edit tagged self")
    NodeTagRow.objects.create(node=NodeRow.objects.get(uid=other.id), tag="self")
    assert selectors.self_ids() == frozenset({me.id})
    assert selectors.known_spaces() == frozenset()
