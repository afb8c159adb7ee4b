"""Remember's auto-links read their candidates' columns with one plain statement (memory.selectors.link_targets),
not the ORM's whole rows: the same values as the rows hold, and the same links, targets, titles, similarities and
files as reading whole rows gave (issue 13, session 19)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import index, runtime
from memory.domain.node import new_node_id
from memory.domain.requests import NodeCreate, build_node
from memory.models import EdgeRow, NodeRow
from memory.selectors import LinkTarget, link_targets
from memory.services import node_create, self_ensure
from memory.services import links as links_module
from memory.writes import write_unit

NOW = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
KILN = ["The kiln in the studio fires at dawn every Saturday",
        "Every Saturday at dawn the studio kiln is fired",
        "The studio's kiln gets fired at dawn on Saturdays — Ünïcödé glaze, 日本語 notes, emoji 🚀 and more words "
        "so that this content runs well past sixty characters",
        "On Saturdays the kiln in the studio is fired at dawn"]


@pytest.fixture
def store(home, db):
    self_ensure()
    return [
        node_create(request=NodeCreate(content=KILN[0], title="Kiln", space="studio"), now=NOW, auto_link=False).node,
        node_create(request=NodeCreate(content=KILN[1]), now=NOW, auto_link=False).node,  # no space, no title
        node_create(request=NodeCreate(content=KILN[2], space="home"), now=NOW, auto_link=False).node,
    ]


def test_link_targets_hold_the_rows_values(store):
    rows = list(NodeRow.objects.all())
    assert len(rows) == 4 and any(r.is_self for r in rows) and any(r.space is None for r in rows)
    assert any(not r.title for r in rows)
    gone = max(r.id for r in rows) + 1000
    got = link_targets(row_ids={r.id for r in rows} | {gone})
    assert got == {r.id: LinkTarget(uid=r.uid, is_self=r.is_self, space=r.space, title=r.title, content=r.content)
                   for r in rows}
    assert all(type(t.is_self) is bool for t in got.values())
    assert link_targets(row_ids=set()) == {}


def _links_with_whole_rows(nodes, unit, ahead=None):
    """_auto_links as it was: the candidates read as whole NodeRow instances (`in_bulk`)."""
    original = links_module.link_targets

    def whole_rows(*, row_ids):
        return {i: LinkTarget(uid=r.uid, is_self=r.is_self, space=r.space, title=r.title, content=r.content)
                for i, r in NodeRow.objects.in_bulk(set(row_ids)).items()}

    links_module.link_targets = whole_rows
    try:
        return links_module._auto_links(nodes, unit, ahead)
    finally:
        links_module.link_targets = original


def test_the_auto_links_are_those_whole_rows_gave(store):
    requests = [NodeCreate(content=KILN[3], space="studio"), NodeCreate(content=KILN[2][:40]),
                NodeCreate(content="The invoice for the clay delivery is due on the fifth")]
    with write_unit() as unit:
        nodes = [build_node(r, node_id=new_node_id(), now=NOW) for r in requests]
        index.node_vectors(nodes, runtime.embedder())
        with CaptureQueriesContext(connection) as queries:
            light = links_module._auto_links(nodes, unit)
        whole = _links_with_whole_rows(nodes, unit)
    assert light == whole
    targets = {link.target_id for links in light for link in links}
    assert {n.id for n in store} <= targets  # every seeded memory is linked: the titled, the title-less, the spaces
    assert any(link.title == KILN[2][:60] for links in light for link in links)  # no title: its content's start
    reads = [q["sql"] for q in queries.captured_queries if "memory_noderow" in q["sql"] and "title" in q["sql"]]
    assert len(reads) == 1 and reads[0].startswith("SELECT id, uid, is_self, space, title, content FROM")


def test_a_remember_writes_the_links_to_its_file_and_edges(store):
    result = node_create(request=NodeCreate(content=KILN[3], space="studio"), now=NOW)
    assert {link.target_id for link in result.auto_links} == {n.id for n in store}
    assert {c.target for c in result.node.connections} == {n.id for n in store}
    assert set(EdgeRow.objects.filter(source__uid=result.node.id).values_list("target__uid", flat=True)) == \
        {n.id for n in store}
    by_target = {link.target_id: link for link in result.auto_links}
    assert by_target[store[0].id].title == "Kiln" and by_target[store[1].id].title == KILN[1][:60]
    # the cross-space penalty: the "home" memory's similarity is below what its cosine alone would give
    assert by_target[store[2].id].similarity < by_target[store[0].id].similarity
