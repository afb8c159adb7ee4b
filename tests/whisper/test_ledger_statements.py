"""A whisper call's ledger write and buffer read are plain statements (issue 13, session 20: the ORM's query
compiler cost ~1.5 ms CPU of the ~3 ms `_record` took a call), and they store and read what the ORM did."""

from __future__ import annotations

import re
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from whisper.conf import WhisperConf
from whisper.models import SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.session import buffer_append, buffer_read

from .conftest import NOW

INDEX = "Ormah keeps its search index in SQLite with FTS5 and sqlite-vec; markdown files stay the source of truth."
# the ORM's statements name columns with their table ("whisper_sessionpromptrow"."id", RETURNING included)
ORM_COLUMNS = re.compile(r'"whisper_(whisperdecisionrow|whispercandidaterow|sessionpromptrow)"\."')
STATEMENT = re.compile(r'^\s*(INSERT INTO|DELETE FROM|SELECT\b.*?\bFROM)\s+"?(\w+)"?', re.IGNORECASE | re.DOTALL)
TABLES = ("whisper_whisperdecisionrow", "whisper_whispercandidaterow", "whisper_sessionpromptrow")
CONF = WhisperConf()


def _stored(model, row_id: int) -> dict:
    """The row as the database holds it (no field converters)."""
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cur:
        cur.execute(f"SELECT * FROM {table} WHERE id = %s", [row_id])
        names = [c[0] for c in cur.description]
        return {k: bytes(v) if isinstance(v, memoryview) else v for k, v in zip(names, cur.fetchone())}


def _as_orm_stores(model, row_id: int, **change) -> dict:
    """The same row written again by the ORM (`save(force_insert=True)` of the instance read back), as stored."""
    obj = model.objects.get(id=row_id)
    obj.pk = None
    obj._state.adding = True
    for name, value in change.items():
        setattr(obj, name, value)
    obj.save(force_insert=True)
    return _stored(model, obj.pk)


@pytest.fixture
def index(mem):
    return mem(INDEX, type="decision", space="ormah", auto_link=False)


def test_an_injection_writes_and_reads_its_ledger_without_the_orms_statements(index):
    # a session prompt before it (session 24's gate whispers the index for "where is the ormah index kept?", which
    # made the next call a repeat)
    whisper_respond(prompt="thanks, that works", session_id="s1", space="ormah")
    with CaptureQueriesContext(connection) as ctx:
        result = whisper_respond(prompt="How is the ormah index stored? Is it sqlite?", session_id="s1",
                                 space="ormah")
    assert result.decision == "injected"
    # the decision, its candidates and the session's prompt inserted, the buffer trimmed, the buffer read (the
    # ledger's reads, served memories and position, are whisper.selectors' plain statements)
    ours = [(m.group(1).split()[0].upper(), m.group(2), q["sql"]) for q in ctx.captured_queries
            if (m := STATEMENT.match(q["sql"])) and m.group(2) in TABLES
            and (m.group(1).split()[0].upper() != "SELECT" or m.group(2) == "whisper_sessionpromptrow")]
    assert sorted((verb, table) for verb, table, _ in ours) == [
        ("DELETE", "whisper_sessionpromptrow"), ("INSERT", "whisper_sessionpromptrow"),
        ("INSERT", "whisper_whispercandidaterow"), ("INSERT", "whisper_whisperdecisionrow"),
        ("SELECT", "whisper_sessionpromptrow")]
    assert [sql for _, _, sql in ours if ORM_COLUMNS.search(sql)] == []


def test_the_decision_and_candidate_rows_are_stored_as_the_orm_stores_them(index):
    result = whisper_respond(prompt="How is the ormah index stored? Is it sqlite? Tell me, José.", session_id="s1",
                             space="ormah")
    assert result.decision == "injected"
    got = _stored(WhisperDecisionRow, result.whisper_log_id)
    want = _as_orm_stores(WhisperDecisionRow, result.whisper_log_id)
    assert got.pop("id") != want.pop("id")
    assert got == want and got["node_ids"] is not None and got["prompt_vec"]
    candidates = list(WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id).values_list("id",
                                                                                                      flat=True))
    assert candidates
    for row_id in candidates:
        got, want = _stored(WhisperCandidateRow, row_id), _as_orm_stores(WhisperCandidateRow, row_id)
        assert got.pop("id") != want.pop("id")
        assert got == want


def test_the_buffer_stores_and_reads_what_the_orm_did(db):
    at = NOW.replace(microsecond=123456)
    vector = np.array([0.25, -1.5, 3.0], dtype=np.float32)
    buffer_append(session_id="s1", prompt="naïve — prompt", vector=vector, now=at, conf=CONF)
    buffer_append(session_id="s1", prompt="second", vector=None, now=at + timedelta(minutes=1), conf=CONF)
    first, second = SessionPromptRow.objects.filter(session_id="s1").order_by("id")
    for row, at_ in ((first, at), (second, at + timedelta(minutes=1))):
        orm = SessionPromptRow.objects.create(session_id="orm", prompt=row.prompt, vector=row.vector and bytes(
            row.vector), created=at_)
        got, want = _stored(SessionPromptRow, row.id), _stored(SessionPromptRow, orm.id)
        for key in ("id", "session_id"):
            got.pop(key), want.pop(key)
        assert got == want
    recent = buffer_read(session_id="s1", now=at + timedelta(minutes=2), conf=CONF)
    orm = list(SessionPromptRow.objects.filter(session_id="s1").order_by("created", "id")
               .values_list("prompt", "created"))
    assert [(r.prompt, r.at) for r in recent] == orm
    assert recent[0].at == at and recent[0].at.tzinfo is not None
    assert recent[0].vector.tolist() == [0.25, -1.5, 3.0] and recent[1].vector is None


def test_the_trim_keeps_the_newest_rows_of_a_session_by_id_when_their_times_are_equal(db):
    for i in range(7):
        buffer_append(session_id="s1", prompt=f"p{i}", vector=None, now=NOW, conf=CONF)
    buffer_append(session_id="s2", prompt="other", vector=None, now=NOW, conf=CONF)
    assert list(SessionPromptRow.objects.filter(session_id="s1").order_by("id").values_list("prompt", flat=True)) \
        == ["p2", "p3", "p4", "p5", "p6"]
    assert [r.prompt for r in buffer_read(session_id="s1", now=NOW, conf=CONF)] == ["p2", "p3", "p4", "p5", "p6"]
    assert SessionPromptRow.objects.filter(session_id="s2").count() == 1
