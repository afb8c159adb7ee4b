"""memory.index_insert.insert_rows writes the rows `bulk_create` writes (every column as stored, ids handed back),
for the node, edge and embedding-cache rows a remember inserts (issue 13, session 19)."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.requests import NodeCreate
from memory.index_insert import insert_rows
from memory.models import EdgeRow, EmbeddingCacheRow, NodeRow
from memory.services import node_create, self_ensure

NOW = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)


def _stored(model, row_id: int) -> dict:
    """The row as the database holds it (no field converters): the values each insert sent."""
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cur:
        cur.execute(f"SELECT * FROM {table} WHERE id = %s", [row_id])
        names = [c[0] for c in cur.description]
        return dict(zip(names, cur.fetchone()))


def _shape(value) -> str:
    """A stored time's format: digits as 0, no fraction (left out when a time's microseconds are 0)."""
    return re.sub(r"\.0+", "", re.sub(r"\d", "0", str(value)))


def _copies(row: NodeRow, tag: str) -> list[NodeRow]:
    out = []
    for i, change in enumerate([{}, {"space": None, "title": "", "valid_until": NOW, "pinned": True},
                                {"trust_json": '{"a": [1, "é"]}', "confidence": 0.25, "last_review": None}]):
        new = copy.copy(row)
        new.id, new.pk, new._state = None, None, copy.copy(row._state)
        new._state.adding = True
        new.uid, new.short_id = f"{tag}{i}-{row.uid[:20]}", f"{tag}{i}{row.id}"[:8]
        new.file_path = f"{tag}/{i}-{row.id}.md"
        for name, value in change.items():
            setattr(new, name, value)
        out.append(new)
    return out


@pytest.fixture
def rows(home, db):
    self_ensure()
    node_create(request=NodeCreate(content="The kiln fires at dawn", title="Kiln", tags=["studio"], space="art"),
                now=NOW, auto_link=False)
    return list(NodeRow.objects.all())


def test_node_rows_are_stored_as_bulk_create_stores_them(rows):
    for row in rows:
        mine, theirs = _copies(row, "m"), _copies(row, "b")
        with CaptureQueriesContext(connection) as queries:
            insert_rows(NodeRow, mine)
        NodeRow.objects.bulk_create(theirs)
        assert len(queries.captured_queries) == 1
        for a, b in zip(mine, theirs):
            assert a.id is not None and not a._state.adding and a._state.db == "default"
            assert a.id == NodeRow.objects.get(uid=a.uid).id
            got, want = _stored(NodeRow, a.id), _stored(NodeRow, b.id)
            for key in ("id", "uid", "short_id", "file_path"):
                got.pop(key), want.pop(key)
            assert got == want


def test_edges_and_cache_rows_and_conflicts_ignored(rows):
    a, b = rows[0], rows[-1]
    mine = [EdgeRow(source_id=a.id, target_id=b.id, edge_type="related_to", weight=0.7, reason="auto", valid_from=NOW),
            EdgeRow(source=b, target=a, edge_type="defines", weight=1.0, reason=None)]
    theirs = [EdgeRow(source_id=a.id, target_id=b.id, edge_type="supports", weight=0.7, reason="auto", valid_from=NOW),
              EdgeRow(source=b, target=a, edge_type="derived_from", weight=1.0, reason=None)]
    insert_rows(EdgeRow, mine)
    EdgeRow.objects.bulk_create(theirs)
    for x, y in zip(mine, theirs):
        got, want = _stored(EdgeRow, x.id), _stored(EdgeRow, y.id)
        assert got.pop("edge_type") != want.pop("edge_type")
        got.pop("id"), want.pop("id")
        assert got == want
    vector = bytes(range(48))
    insert_rows(EmbeddingCacheRow, [EmbeddingCacheRow(text_hash="h1", model_id="m", vector=vector)],
                ignore_conflicts=True)
    insert_rows(EmbeddingCacheRow, [EmbeddingCacheRow(text_hash="h1", model_id="m", vector=b"other"),
                                    EmbeddingCacheRow(text_hash="h2", model_id="m", vector=vector)],
                ignore_conflicts=True)  # the first is there already: kept, no error
    EmbeddingCacheRow.objects.bulk_create([EmbeddingCacheRow(text_hash="h3", model_id="m", vector=vector)])
    cached = {r.text_hash: r for r in EmbeddingCacheRow.objects.filter(model_id="m")}
    assert {h: bytes(r.vector) for h, r in cached.items()} == {"h1": vector, "h2": vector, "h3": vector}
    assert all(r.created is not None and r.created.tzinfo is not None for r in cached.values())
    h1, h3 = _stored(EmbeddingCacheRow, cached["h1"].id), _stored(EmbeddingCacheRow, cached["h3"].id)
    assert type(h1["created"]) is type(h3["created"]) and _shape(h1["created"]) == _shape(h3["created"])
    insert_rows(EdgeRow, [])  # nothing to insert: no statement, no error


def test_an_unsaved_related_row_is_refused_as_bulk_create_refuses_it(rows):
    with pytest.raises(ValueError, match="unsaved related object"):
        insert_rows(EdgeRow, [EdgeRow(source=NodeRow(uid="x"), target=rows[0], edge_type="related_to", weight=1.0)])


def test_evidence_rows_are_stored_as_bulk_create_stores_them(rows):
    from memory.domain.evidence import EvidenceEvent, EvidenceKind, new_event_id
    from memory.evidence.index import _row
    from memory.evidence.log import ReadEvent
    from memory.domain.scopes import GLOBAL_SCOPE, Scope, ScopeType
    from memory.models import EvidenceRow

    def event(n: int, session: str | None) -> ReadEvent:
        e = EvidenceEvent(id=new_event_id(NOW), kind=EvidenceKind.EXPLICIT_MEMORY, at=NOW, text=f"said {n} — é",
                          session_id=session, scope=Scope(ScopeType.SESSION, session) if session else
                          GLOBAL_SCOPE, source="agent:t", data={"title": "T", "n": [n, 1.5, None]})
        return ReadEvent(event=e, file_name="2026-02-01.jsonl", offset=100 * n)

    mine, theirs = [_row(event(i, s)) for i, s in enumerate(["s1", None])], \
        [_row(event(i, s)) for i, s in enumerate(["s1", None])]
    insert_rows(EvidenceRow, mine)
    EvidenceRow.objects.bulk_create(theirs)
    for a, b in zip(mine, theirs):
        got, want = _stored(EvidenceRow, a.id), _stored(EvidenceRow, b.id)
        assert got.pop("uid") != want.pop("uid")
        got.pop("id"), want.pop("id")
        assert got == want


def test_a_surfacing_event_is_stored_as_create_stored_it_in_one_plain_insert(db):
    from memory.domain.search import SearchHit
    from memory.models import RetrievalEventRow
    from memory.services.surfacing import query_hash, surfacing_log

    def hit(uid: str, score: float) -> SearchHit:
        return SearchHit(node_id=uid, row_id=1, short_id=uid[:8], title="", content="", type="fact", tier="working",
                         space=None, tags=(), created=NOW, updated=NOW, valid_until=None, confidence=1.0,
                         score=score, source="hybrid")

    hits = [hit("n-é1", 0.1234567891), hit("n2", 2.0)]
    with CaptureQueriesContext(connection) as ctx:
        new_id = surfacing_log(surface="recall-surface-name-longer-than-thirty", query="Kiln fires? ünïcode",
                               hits=hits, session_id="s1", space="art", now=NOW)
    assert len(ctx.captured_queries) == 1  # one INSERT, its id read back by an unqualified RETURNING (not the ORM's)
    assert re.search(r'^INSERT INTO "memory_retrievaleventrow" .* RETURNING "id"$', ctx.captured_queries[0]["sql"])
    orm = RetrievalEventRow.objects.create(
        surface="recall-surface-name-longer-than-thirty"[:30], query_hash=query_hash("Kiln fires? ünïcode"),
        node_uids=["n-é1", "n2"], scores=[0.123457, 2.0], session_id="s1", space="art", created=NOW)
    ours, theirs = _stored(RetrievalEventRow, new_id), _stored(RetrievalEventRow, orm.id)
    assert ours.pop("id") == new_id and theirs.pop("id") == orm.id
    assert ours == theirs
    for session, space in ((None, None), ("", "")):  # no session and no space are stored as create stores them
        new_id = surfacing_log(surface="whisper", query="q", hits=[], session_id=session, space=space, now=NOW)
        orm = RetrievalEventRow.objects.create(surface="whisper", query_hash=query_hash("q"), node_uids=[], scores=[],
                                               session_id=session or None, space=space, created=NOW)
        ours, theirs = _stored(RetrievalEventRow, new_id), _stored(RetrievalEventRow, orm.id)
        assert {**ours, "id": 0} == {**theirs, "id": 0}
