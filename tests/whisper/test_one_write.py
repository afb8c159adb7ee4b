"""A whisper call reads first and writes once, at the end, in one transaction (issue 13, items 2 and 7).

Under SQLite's single write lock every acquisition can wait behind another writer's transaction (a group of
remembers), so the decision row, its candidates, the surfacing row and the session buffer go in one.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import RetrievalEventRow
from tests.postgres import ON_POSTGRES
from whisper.formatter import intro
from whisper.models import SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.services.ledger import candidate_rows_insert
from whisper.services.respond import _with_log_id
from whisper.state import Candidate, WhisperRequest, WhisperRun
from whisper.text import estimate_tokens

from .conftest import NOW

INDEX = "Ormah keeps its search index in SQLite with FTS5 and sqlite-vec; markdown files stay the source of truth."
# Django captures an executemany (the candidate rows) as "N times: INSERT ...": one statement sent
WRITE = re.compile(r"^\s*(?:\d+ times: )?(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
TRANSACTION = re.compile(r"^\s*(SAVEPOINT|BEGIN)\b", re.IGNORECASE)


def statements(prompt: str, session: str = "s1") -> tuple[list[str], object]:
    with CaptureQueriesContext(connection) as ctx:
        result = whisper_respond(prompt=prompt, session_id=session, space="ormah")
    return [q["sql"] for q in ctx.captured_queries], result


@pytest.fixture
def index(mem):
    return mem(INDEX, type="decision", space="ormah", auto_link=False)


def test_an_injection_writes_its_rows_in_one_transaction_after_every_read(index):
    sqls, result = statements("How is the ormah index stored? Is it sqlite?")
    assert result.decision == "injected"
    opened = [i for i, s in enumerate(sqls) if TRANSACTION.match(s)]
    writes = [i for i, s in enumerate(sqls) if WRITE.match(s)]
    assert len(opened) == 1  # one transaction (a savepoint inside the test's own)
    assert opened[0] < writes[0]
    kinds = [WRITE.match(sqls[i]).group(1) for i in writes]
    if ON_POSTGRES and kinds[1:2] == ["UPDATE"]:
        # The sequence runs ahead of max(id) + 1 (rolled-back tests took ids), so the expected id in the text had
        # another width: the reference was left out and the row's token estimate set again, in the same transaction.
        del kinds[1]
    # decision, candidates, surfacing, session prompt; the buffer's trim
    assert kinds == ["INSERT", "INSERT", "INSERT", "INSERT", "DELETE"]
    assert (WhisperDecisionRow.objects.count(), RetrievalEventRow.objects.count(), SessionPromptRow.objects.count(),
            WhisperCandidateRow.objects.filter(injected=True).count()) == (1, 1, 1, 1)


def test_a_silence_writes_its_decision_row_alone(index):
    sqls, result = statements("thanks!")
    assert result.decision == "silent:acknowledgement"
    assert [s.split()[0] for s in sqls if WRITE.match(s)] == ["INSERT"]


def test_the_text_names_the_decision_row_it_was_written_to(index):
    WhisperDecisionRow.objects.create(created=index.created, decision="silent:empty")  # another writer's row
    result = whisper_respond(prompt="How is the ormah index stored? Is it sqlite?", session_id="s1", space="ormah")
    assert f"whisper_log_id={result.whisper_log_id})" in result.text
    assert WhisperDecisionRow.objects.get(id=result.whisper_log_id).decision == "injected"


def _run(log_id: int) -> WhisperRun:
    run = WhisperRun(request=WhisperRequest(prompt="p"), now=None, budget_tokens=300)
    run.log_id = log_id
    run.text = f"# Ormah whispers\n{intro(log_id)}\n\n- **[fact]** A title (id: abcd1234)"
    run.estimated_tokens = estimate_tokens(run.text)
    return run


def test_an_id_taken_meanwhile_is_replaced_by_the_real_one_of_the_same_width():
    run = _run(41)
    tokens = run.estimated_tokens
    _with_log_id(run, 47)
    assert (run.log_id, "whisper_log_id=47)" in run.text, "41" in run.text, run.estimated_tokens) == (
        47, True, False, tokens)


def test_a_real_id_of_another_width_leaves_the_reference_out_and_the_text_shorter():
    run = _run(99)
    tokens = run.estimated_tokens
    _with_log_id(run, 100)
    assert ("whisper_log_id" in run.text, run.log_id, run.estimated_tokens <= tokens) == (False, 100, True)


# ---- session 14: the ledger's bookkeeping in fewer statements, without the ORM's per-object work ----------------

LEDGER_READ = re.compile(r'^\s*SELECT\b.*\bFROM "?whisper_whisperdecisionrow"?', re.IGNORECASE | re.DOTALL)


def test_the_next_id_and_the_session_count_are_one_read_before_the_pipeline(index):
    """The id the text names and the session's prompt count (nudge, store_due) come from one statement read before
    the stages; nothing reads the decision table after the write (two statements, one of them after it, before)."""
    for prompt in ("thanks!", "How is the ormah index stored? Is it sqlite?"):
        sqls, _ = statements(prompt)
        reads = [i for i, s in enumerate(sqls) if LEDGER_READ.match(s)]
        first_write = next(i for i, s in enumerate(sqls) if WRITE.match(s))
        assert len(reads) == 1 and reads[0] < first_write, prompt


def test_the_candidate_rows_are_one_prepared_insert(index):
    """The candidate rows go in one executemany (Django captures it as "N times: INSERT"), not a bulk_create."""
    sqls, result = statements("How is the ormah index stored? Is it sqlite?")
    inserts = [s for s in sqls if re.match(r'^\s*\d+ times: INSERT INTO "?whisper_whispercandidaterow"?', s)]
    assert len(inserts) == 1
    injected = WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id, injected=True)
    assert [r.node_uid for r in injected] == [index.id]


def _fields(row: WhisperCandidateRow) -> dict:
    return {f.attname: getattr(row, f.attname) for f in WhisperCandidateRow._meta.concrete_fields if f.name != "id"}


@pytest.mark.django_db
def test_a_candidate_row_holds_what_the_orm_stored_for_it():
    """numpy scores stored as the same Python floats, None kept, the title cut at 300, injected only for a ranked
    candidate of an injection, use_confirmed false: field by field what WhisperCandidateRow(...).save() stored."""
    row = WhisperDecisionRow.objects.create(created=NOW, decision="injected")
    ranked = Candidate(node_id="a" * 36, short_id="aaaaaaaa", title="T" * 400, content="c", type="fact", space=None,
                       confidence=1.0, created=NOW, retrieval_rank=np.int64(2), retrieval_score=np.float32(0.7311),
                       raw_cosine=np.float32(0.52), score=0.9, ce_raw=None, ce_abs=np.float64(0.25),
                       affinity=np.float32(0.125), gate_score=0.61, gate_threshold=np.float32(0.4), stage="selected",
                       final_rank=np.int64(0))
    unranked = Candidate(node_id="b" * 36, short_id="bbbbbbbb", title="", content="words " * 30, type="fact",
                         space="p", confidence=1.0, created=NOW, retrieval_rank=None, retrieval_score=0.1,
                         raw_cosine=None, score=0.1, stage="gate")
    candidate_rows_insert(decision_id=row.id, candidates=[ranked, unranked], injected=True)
    stored = {r.node_uid: _fields(r) for r in WhisperCandidateRow.objects.filter(decision=row)}
    for c in (ranked, unranked):
        by_orm = WhisperCandidateRow(
            decision=row, node_uid=c.node_id, short_id=c.short_id, title=c.display_title[:300], source=c.source,
            retrieval_rank=c.retrieval_rank, retrieval_score=c.retrieval_score, raw_cosine=c.raw_cosine,
            ce_raw=c.ce_raw, ce_abs=c.ce_abs, affinity=c.affinity, gate_score=c.gate_score,
            gate_threshold=c.gate_threshold, stage=c.stage, final_rank=c.final_rank,
            injected=c.final_rank is not None)
        by_orm.save()
        by_orm.refresh_from_db()
        assert stored[c.node_id] == _fields(by_orm)
    assert len(stored["a" * 36]["title"]) == 300 and stored["a" * 36]["injected"] is True
    assert stored["b" * 36]["injected"] is False and stored["b" * 36]["retrieval_rank"] is None
