"""Full text folds accents on both engines (runs on SQLite and PostgreSQL, unlike the rest of tests/postgres).

FTS5 always did (`unicode61 remove_diacritics 2`); PostgreSQL's `english` tsvector did not, so on a team server
"cafe" missed "café" and "cooperatie" missed "coöperatie" (session 22, review8). Migration 0011 puts the
`unaccent` dictionary in front of the English stemmer."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memory.domain.trust_requests import EvidenceIn
from memory.models import NodeRow
from memory.search import fts_search
from memory.search.evidence import evidence_search
from memory.services import evidence_record, evidence_sync

pytestmark = pytest.mark.django_db(transaction=True)

QUERIES = ["cafe", "café", "CAFÉ", "cooperatie", "coöperatie", "reunie", "reünie"]


@pytest.mark.parametrize("query", QUERIES)
def test_a_word_is_found_with_or_without_its_accents(mem, query):
    accented = mem("We meet at the café after the reünie of the coöperatie", auto_link=False)
    plain = mem("The cafe hosts the cooperatie reunie on Friday", auto_link=False)
    mem("Nothing about it here: a note on the weather", auto_link=False)

    found = {NodeRow.objects.get(id=h.row_id).uid for h in fts_search(query, 5)}

    assert found == {accented.id, plain.id}


def test_evidence_text_folds_accents_too(home):
    now = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    accented, plain = evidence_record(items=[
        EvidenceIn(kind="user_message", text="Lunch at the café by the coöperatie", session_id="s-1"),
        EvidenceIn(kind="user_message", text="Lunch at the cafe by the cooperatie", session_id="s-1"),
    ], now=now)
    evidence_sync()

    for query in ("cafe", "coöperatie"):
        assert {h.uid for h in evidence_search(query, 5)} == {accented.id, plain.id}
