"""The candidate pool's keyword leg: a short note holding only the query's rarer word is a candidate even when
more memories than recall's limit hold every word of the query (the OR query fills the pool, not only the limit)."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.domain.search import SearchQuery
from memory.models import NodeRow
from memory.search import recall_pool

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)

BOTH = [
    "The support desk gets paged through the phone tree when the shared inbox overflows on a Monday.",
    "Whoever holds the pager gets paged first; the backup person only hears about it ten minutes later.",
    "The archive job gets paged out of memory when the batch grows past two gigabytes of rows.",
    "A reviewer gets paged by the bot when a pull request waits longer than a working day.",
    "The facilities team gets paged when the server room climbs above twenty-eight degrees.",
    "Nobody gets paged for the staging cluster; its alerts go to a quiet chat channel instead.",
    "The release captain gets paged when the nightly build breaks on the main branch.",
]


def test_a_note_with_only_the_rarer_word_joins_the_keyword_leg(mem):
    for i, text in enumerate(BOTH):
        mem(text, title=f"Paging note {i}", created=NOW, auto_link=False)
    oncall = mem("On-call rotates weekly on Mondays between four developers; pages go through Opsgenie.",
                 title="On-call rotation", created=NOW, auto_link=False)
    pool = recall_pool(query=SearchQuery(query="who gets paged for it?", limit=6), now=NOW)
    row = NodeRow.objects.get(uid=oncall.id).id
    # Seven memories hold "gets" and "paged": the AND query alone filled recall's limit and the note holding
    # "pages" (the rarer word's stem) never reached the keyword leg.
    assert row in pool.fts_rank
    assert pool.fts_rank[row] > len(BOTH)  # after every row holding both words
