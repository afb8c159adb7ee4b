"""The candidate pool's keyword leg: a short note holding only the query's rarer word is a candidate even when
more memories than recall's limit hold every word of the query (the OR query fills the pool, not only the limit),
and so is a note that writes two of the query's words as one ("set up" -> "setup")."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.domain.search import SearchQuery
from memory.models import NodeRow
from memory.search import recall_pool
from memory.search.candidates import with_compounds

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


def test_two_words_the_store_writes_as_one_join_the_keyword_leg(mem):
    setup = mem("Local setup: run uv sync, then start the dev server with the sample database.",
                title="Local setup", created=NOW, auto_link=False)
    mem("The laptop stickers came from the conference in Ghent.", title="Stickers", created=NOW, auto_link=False)
    pool = recall_pool(query=SearchQuery(query="set up the project on a new laptop", limit=6), now=NOW)
    # "set up" is "setup" in the note: without the joined word the note shares no word with the query.
    assert NodeRow.objects.get(uid=setup.id).id in pool.fts_rank


def test_with_compounds_joins_only_words_the_store_holds():
    held = {"setup": 3, "into": 9}
    counts = lambda terms: {t: held.get(t, 0) for t in terms}  # noqa: E731
    assert with_compounds("set up the project", counts) == "set up the project setup"
    assert with_compounds("log in to the site", counts) == "log in to the site"  # "login": not in the store
    assert with_compounds("walk in to the room", counts) == "walk in to the room"  # "in" is a stop word
    assert with_compounds("setup set up", counts) == "setup set up"  # already asked for
