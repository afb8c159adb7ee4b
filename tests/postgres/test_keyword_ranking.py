"""The keyword leg's scores are FTS5's BM25 on both engines (runs on SQLite and PostgreSQL, unlike most of
tests/postgres).

The recall scorer and the whisper gate read a hit's keyword score over the query's best (`bm25_rel`), fitted on
FTS5's bm25(10, 1, 3). PostgreSQL ranked by IDF x ts_rank, another scale (session 25: 0.65 where FTS5 gives 0.52);
since session 26 it computes the same formula (memory/backends/pg_bm25.py). Each test works FTS5's formula out here
by hand from the rows and checks the engine's scores against it: words whose English stems agree on both engines
and no stop word among the query's tokens, so the two tokenizers count the same.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

import pytest

from memory.domain.trust_requests import EvidenceIn
from memory.models import EvidenceRow, NodeRow
from memory.search import fts_search
from memory.search.evidence import evidence_search
from memory.services import evidence_record, evidence_sync

pytestmark = pytest.mark.django_db(transaction=True)

K1, B = 1.2, 0.75
WEIGHTS = (10.0, 1.0, 3.0)  # title, content, tags_text
_TOKEN = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    """Enough of an English stemmer for the words used here (plural s)."""
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _count(column: list[str], phrase: tuple[str, ...]) -> int:
    """How often the words of `phrase` stand one after the other in a column's tokens."""
    return sum(1 for i in range(len(column) - len(phrase) + 1) if tuple(column[i:i + len(phrase)]) == phrase)


def _bm25(columns: list[tuple[str, ...]], query: list, weights: tuple[float, ...]) -> list[float]:
    """FTS5's bm25 of each row (its columns' texts) for the query's words (a tuple: a phrase), worked out by hand
    (fts5_aux.c)."""
    tokens = [[[_stem(t) for t in _TOKEN.findall(text.lower())] for text in row] for row in columns]
    n = len(tokens)
    avgdl = sum(len(col) for row in tokens for col in row) / n
    scores = []
    for row in tokens:
        length = sum(len(col) for col in row)
        score = 0.0
        for word in query:
            phrase = word if isinstance(word, tuple) else (word,)
            df = sum(1 for other in tokens if any(_count(col, phrase) for col in other))
            idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            f = sum(w * _count(col, phrase) for w, col in zip(weights, row))
            score += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avgdl))
        scores.append(score)
    return scores


NOTES = [
    ("Boat storage", "The harbour keeps boats over winter in the big shed.", ["harbour"]),
    ("Winter schedule", "Boats are lifted out in November and go back in April.", ["boats", "winter"]),
    ("Crane booking", "Book the crane a week ahead: the harbour master sets the slots for boats.", []),
    ("Club dinner", "The annual dinner is in the clubhouse, not at the harbour.", ["dinner"]),
    ("Membership fees", "Fees are due in January; a late payment adds ten percent.", []),
    ("Mooring rules", "A boat longer than twelve metres needs a winter mooring.", ["mooring", "boats"]),
]


@pytest.mark.parametrize("query", ["boats harbour", "winter boats", "harbour"])
def test_node_scores_are_fts5_bm25(mem, query):
    for title, content, tags in NOTES:
        mem(content, title=title, tags=tags, auto_link=False)
    rows = {r.id: (r.title, r.content, r.tags_text) for r in NodeRow.objects.all()}
    ids = sorted(rows)
    expected = dict(zip(ids, _bm25([rows[i] for i in ids], [_stem(w) for w in query.split()], WEIGHTS)))

    words = [_stem(w) for w in query.split()]
    every = {i for i in ids if all(w in _TOKEN.findall(" ".join(rows[i]).lower().replace("boats", "boat"))
                                   for w in words)}

    hits = fts_search(query, 10)

    assert {h.row_id for h in hits} == {i for i in ids if expected[i] > 0}
    # the rows holding every word first (fts_search's AND query), each group by score
    assert [h.row_id for h in hits] == sorted((h.row_id for h in hits), key=lambda i: (i not in every, -expected[i], i))
    assert [h.score for h in hits] == pytest.approx([expected[h.row_id] for h in hits], rel=1e-6)


def test_a_token_holding_punctuation_counts_as_a_phrase(mem):
    """"boat_length" is the phrase "boat length" on both engines: a row scores by the phrase's occurrences, not by
    how often each word stands alone."""
    for title, content, tags in NOTES:
        mem(content, title=title, tags=tags, auto_link=False)
    mem("Boat length sets the fee. Boat, boat, boat: length length length.", title="Fees by size", auto_link=False)
    mem("The boat length column holds metres; the boat length of a dinghy is small.", auto_link=False)
    rows = {r.id: (r.title, r.content, r.tags_text) for r in NodeRow.objects.all()}
    ids = sorted(rows)
    expected = dict(zip(ids, _bm25([rows[i] for i in ids], [("boat", "length"), "column"], WEIGHTS)))

    hits = fts_search("boat_length column", 10)

    assert len(hits) == 2
    assert [h.score for h in hits] == pytest.approx([expected[h.row_id] for h in hits], rel=1e-6)


def test_a_title_hit_outranks_one_word_in_content_and_tags(mem):
    """FTS5: title 10 > content 1 + tags 3. ts_rank added the two positions otherwise and put the second first."""
    title = mem("Notes on the slipway and the winch.", title="Antifouling", auto_link=False)
    both = mem("We ordered antifouling paint for spring.", title="Spring jobs", tags=["antifouling"], auto_link=False)
    for i in range(4):
        mem(f"Unrelated note number {i} about the clubhouse kitchen.", auto_link=False)

    hits = fts_search("antifouling", 5)

    assert [NodeRow.objects.get(id=h.row_id).uid for h in hits] == [title.id, both.id]


def test_evidence_scores_are_fts5_bm25(home):
    now = datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)
    texts = ["The crane lifts boats out in November", "Boats boats boats everywhere in the harbour today",
             "Dinner at the clubhouse on Friday", "The harbour master books the crane for the boats",
             "Fees are due in January"]
    evidence_record(items=[EvidenceIn(kind="user_message", text=t, session_id="s-1") for t in texts], now=now)
    evidence_sync()
    rows = {r.uid: (r.text,) for r in EvidenceRow.objects.all()}
    uids = sorted(rows)
    expected = dict(zip(uids, _bm25([rows[u] for u in uids], ["boat", "crane"], (1.0,))))

    hits = evidence_search("boats crane", 10)

    assert {h.uid for h in hits} == {u for u in uids if expected[u] > 0}
    assert [h.score for h in hits] == pytest.approx([expected[h.uid] for h in hits], rel=1e-6)
