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


def _chain(model, objs) -> list:
    """The values bulk_create sends: Django's per-field chain for every value."""
    fields = [f for f in model._meta.concrete_fields if f is not model._meta.pk]
    return [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in objs for f in fields]


def _candidates(decision_id: int) -> list:
    from enum import StrEnum

    from django.utils.functional import lazy

    from whisper.models import WhisperCandidateRow

    class Stage(StrEnum):
        GATE = "gate"

    class Text(str):
        pass

    def row(**change):
        values = dict(decision_id=decision_id, node_uid="n-é1", short_id="abcd1234", title="Kiln — é", source="search",
                      retrieval_rank=1, retrieval_score=0.5, raw_cosine=0.25, ce_raw=None, ce_abs=None, affinity=0.0,
                      gate_score=0.7, gate_threshold=0.5, stage="gate", final_rank=None, injected=False)
        return WhisperCandidateRow(**{**values, **change})

    return [row(), row(final_rank=2, injected=True, ce_raw=1.5),
            # values a field turns into something else, or that are not plain: each goes through the chain
            row(retrieval_rank=True, retrieval_score=1, affinity=True, stage=Stage.GATE, title=Text("t"),
                source=lazy(lambda: "lazy", str)(), final_rank="3", gate_score="0.5", injected=0)]


def test_plain_values_are_sent_as_the_fields_chain_sends_them(rows):
    """Every model insert_rows writes (a remember's, an evidence append's, a recall's and a whisper call's rows):
    the values sent are those of Django's chain, value for value and type for type, plain or not."""
    from memory.index_insert import _plan, _values
    from memory.models import RetrievalEventRow
    from whisper.models import SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow

    node = rows[-1]
    samples = {
        NodeRow: _copies(node, "p"),
        EdgeRow: [EdgeRow(source_id=node.id, target_id=rows[0].id, edge_type="related_to", weight=0.7, reason=None,
                          valid_from=NOW), EdgeRow(source=node, target=rows[0], edge_type="defines", weight=1)],
        EmbeddingCacheRow: [EmbeddingCacheRow(text_hash="h", model_id="m", vector=bytes(range(8)))],
        RetrievalEventRow: [RetrievalEventRow(surface="recall", query_hash="q", node_uids=["a"], scores=[0.5],
                                              session_id=None, space="", created=NOW)],
        WhisperDecisionRow: [WhisperDecisionRow(created=NOW, session_id=None, prompt="p", decision="silent",
                                                node_ids=[], gate=None, elapsed_ms=12.5, delivered=None),
                             WhisperDecisionRow(created=NOW, session_id="s", decision="injected", delivered=True,
                                                estimated_tokens=40, gate=0.75)],
        WhisperCandidateRow: _candidates(7),
        SessionPromptRow: [SessionPromptRow(session_id="s", prompt="p", created=NOW)],
    }
    for model, objs in samples.items():
        fields = [f for f in model._meta.concrete_fields if f is not model._meta.pk]
        # a column stamped with "now" at each call (auto_now_add): its type only
        stamped = {i for i, f in enumerate(fields) if getattr(f, "auto_now_add", False) or getattr(f, "auto_now", False)}
        want = _chain(model, objs)
        got = _values(_plan(model, fields), objs)
        assert [type(v) for v in got] == [type(v) for v in want], model.__name__
        # psycopg's Binary wrapper (PostgreSQL, a BinaryField, through the chain either way) compares by identity
        kept = [[getattr(v, "obj", v) for i, v in enumerate(values) if i % len(fields) not in stamped]
                for values in (got, want)]
        assert kept[0] == kept[1], model.__name__


def test_a_whisper_calls_candidate_rows_skip_the_chain_for_plain_values(rows, monkeypatch):
    """A plain value (a str in a CharField, a float, an int, a bool, None) is sent without the five calls of Django's
    chain (issue 13: 0.30 ms of a whisper call); only the values that are not plain go through it."""
    from django.db.models import Field

    from whisper.models import WhisperCandidateRow, WhisperDecisionRow

    decision = WhisperDecisionRow.objects.create(created=NOW, decision="injected")
    through = []
    chain = Field.get_db_prep_save

    def counted(self, value, connection):
        through.append(self.name)
        return chain(self, value, connection)

    monkeypatch.setattr(Field, "get_db_prep_save", counted)
    plain = _candidates(decision.id)[:2]
    insert_rows(WhisperCandidateRow, plain)
    on_postgres = connection.vendor == "postgresql"  # psycopg 3 sends its own int types: ints take the chain there
    assert through == ([] if not on_postgres else [n for _ in plain for n in ("retrieval_rank", "final_rank")])
    stored = list(WhisperCandidateRow.objects.filter(decision_id=decision.id).order_by("id")
                  .values_list("title", "retrieval_score", "ce_raw", "final_rank", "injected"))
    assert stored == [("Kiln — é", 0.5, None, None, False), ("Kiln — é", 0.5, 1.5, 2, True)]
