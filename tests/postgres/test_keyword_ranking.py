"""The keyword leg ranks a short note above a long page as FTS5's BM25 does (runs on SQLite and PostgreSQL, unlike
most of tests/postgres).

FTS5's bm25 discounts long rows (b = 0.75); PostgreSQL's `ts_rank` did not, so on a team server a long page that
named the word twice outranked a short note that named it once, the opposite of SQLite's order. Session 25
(pgrank): `ts_rank`'s normalisation flag 1 and the weights 2 : 1 : 1.6 (memory/backends/postgres.py)."""

from __future__ import annotations

import pytest

from memory.models import NodeRow
from memory.search import fts_search

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = " ".join(f"Section {i} covers the alpha beta gamma delta settings of module{i}." for i in range(60))


def _order(query: str) -> list[str]:
    return [NodeRow.objects.get(id=h.row_id).uid for h in fts_search(query, 10)]


def test_a_short_note_outranks_a_long_page_that_names_the_word_twice(mem):
    page = mem("Kayak club handbook. " + PAGE + " Kayak storage is in the shed.", auto_link=False)
    note = mem("Booked the kayak for Saturday", auto_link=False)
    for i in range(4):
        mem(f"Filler note {i} about the weather", auto_link=False)

    assert _order("kayak") == [note.id, page.id]


def test_a_title_hit_outranks_one_content_hit_in_a_note_as_short(mem):
    content = mem("Booked the kayak for Saturday", auto_link=False)
    titled = mem("Booked it for Saturday", title="Kayak", auto_link=False)
    for i in range(4):
        mem(f"Filler note {i} about the weather", auto_link=False)

    assert _order("kayak") == [titled.id, content.id]
