"""A whisper call reads first and writes once, at the end, in one transaction (issue 13, items 2 and 7).

Under SQLite's single write lock every acquisition can wait behind another writer's transaction (a group of
remembers), so the decision row, its candidates, the surfacing row and the session buffer go in one.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import RetrievalEventRow
from tests.postgres import ON_POSTGRES
from whisper.formatter import intro
from whisper.models import SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.services.respond import _with_log_id
from whisper.state import WhisperRequest, WhisperRun
from whisper.text import estimate_tokens

INDEX = "Ormah keeps its search index in SQLite with FTS5 and sqlite-vec; markdown files stay the source of truth."
WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
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
    kinds = [sqls[i].split()[0] for i in writes]
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


LEDGER_READ = re.compile(r'^\s*SELECT\b.*\bFROM "?whisper_whisperdecisionrow"?', re.IGNORECASE | re.DOTALL)


def test_the_next_id_and_the_session_count_are_read_before_the_pipeline(index):
    """The id the text names and the session's prompt count (nudge, store_due) are read before the stages, in two
    simple statements (session 15: one statement with the count as a subquery cost more CPU to build); nothing
    reads the decision table after the write (one of the two came after it before session 14)."""
    for prompt in ("thanks!", "How is the ormah index stored? Is it sqlite?"):
        sqls, _ = statements(prompt)
        reads = [i for i, s in enumerate(sqls) if LEDGER_READ.match(s)]
        first_write = next(i for i, s in enumerate(sqls) if WRITE.match(s))
        assert len(reads) == 2 and reads[-1] < first_write, prompt
