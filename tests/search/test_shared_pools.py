"""memory.search.shared_pools (issue 13, session 23): inside it, a query asked again with another preferred project
gathers its candidate pool once (whisper's "described elsewhere" search asks its first query with no project
preferred), and gets the very hits and scores of gathering it again. Real store, real MiniLM embedder."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.search import SearchQuery
from memory.search import recall, shared_pools

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
QUERY = "how do we deploy a release?"


def _store(mem) -> None:
    for text, space in (("Deploy procedure: tag the release and run make deploy", "billing"),
                        ("Deploy procedure: tag the release and run make deploy", "garden"),
                        ("Releases of the sensor firmware are flashed over the air", "garden"),
                        ("The billing service runs PostgreSQL 16 on a managed instance", "billing"),
                        ("We release on Tuesdays, never on a Friday", None),
                        ("The thesis deadline is 15 February 2027", "thesis")):
        mem(text, space=space, auto_link=False)


def _ask(text: str = QUERY, **fields):
    with CaptureQueriesContext(connection) as ctx:
        hits = recall(query=SearchQuery(query=text, **fields), now=NOW)
    # the keyword leg's full-text search (FTS5's MATCH, PostgreSQL's @@): a pool was gathered
    gathered = any("MATCH" in q["sql"] or "@@" in q["sql"] for q in ctx.captured_queries)
    return [(h.node_id, h.score, h.source, h.raw_cosine, h.fts_rank, h.vector_rank) for h in hits], gathered


def test_a_query_asked_again_for_another_project_is_scored_on_the_first_pool_with_the_same_hits(mem, transactional_db):
    _store(mem)
    spaces = ("billing", None, "garden", "thesis", "elsewhere")
    alone = {space: _ask(default_space=space)[0] for space in spaces}  # each gathered afresh
    assert alone["billing"] != alone["garden"]  # the preferred project moves the scores
    with shared_pools():
        first, gathered = _ask(default_space="billing")
        assert gathered and first == alone["billing"]
        for space in spaces:
            hits, gathered = _ask(default_space=space)
            assert not gathered  # no keyword search: the first pool, its space columns set for `space`
            assert hits == alone[space]


def test_another_text_filter_or_limit_gathers_its_own_pool_and_none_is_shared_outside_the_block(mem, transactional_db):
    _store(mem)
    with shared_pools():
        assert _ask(default_space="billing")[1]
        assert _ask("which database does billing use?", default_space="billing")[1]
        assert _ask(default_space="billing", spaces=["billing", None])[1]  # the per-project pass: other filters
        assert _ask(default_space="billing", limit=3)[1]
        with shared_pools():  # nested: the outer block's pools
            assert not _ask(default_space=None)[1]
    assert _ask(default_space="billing")[1] and _ask(default_space=None)[1]


def test_nothing_is_shared_inside_a_transaction(mem, transactional_db):
    """A writer's transaction may hold its own rows: its recalls gather afresh, as the store caches keep nothing."""
    from django.db import transaction

    _store(mem)
    with shared_pools(), transaction.atomic():
        assert _ask(default_space="billing")[1] and _ask(default_space=None)[1]
