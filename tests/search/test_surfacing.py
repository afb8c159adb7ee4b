"""The surfacing ledger: appearing in results is logged, never counted as use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.domain.search import SearchQuery
from memory.models import NodeRow, RetrievalEventRow
from memory.search import recall
from memory.services.surfacing import query_hash, surfacing_log, surfacing_prune

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_surfacing_is_logged_with_hashes_uids_and_scores_and_touches_no_memory(mem):
    node = mem("Writes failed with SQLITE_BUSY until the busy timeout was raised", auto_link=False)
    before = NodeRow.objects.values("access_count", "last_accessed", "stability").get(uid=node.id)
    query = SearchQuery(query="SQLITE_BUSY", default_space="billing")
    hits = recall(query=query, now=NOW)
    event_id = surfacing_log(surface="recall", query=query, hits=hits, session_id="s-1", now=NOW)
    event = RetrievalEventRow.objects.get(id=event_id)
    assert (event.surface, event.query_hash, event.node_uids, event.session_id, event.space, event.created) == (
        "recall", query_hash("SQLITE_BUSY"), [node.id], "s-1", "billing", NOW)
    assert event.scores == [hits[0].score]
    assert NodeRow.objects.values("access_count", "last_accessed", "stability").get(uid=node.id) == before


def test_query_text_and_no_session_are_accepted(db):
    event_id = surfacing_log(surface="ui_search", query="anything", hits=[], now=NOW)
    event = RetrievalEventRow.objects.get(id=event_id)
    assert (event.session_id, event.space, event.node_uids, event.scores) == (None, None, [], [])


def test_query_hash_is_sha256_hex():
    assert query_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_retention_deletes_only_old_events(db):
    old = surfacing_log(surface="recall", query="old", hits=[], now=NOW - timedelta(days=31))
    recent = surfacing_log(surface="recall", query="new", hits=[], now=NOW - timedelta(days=29))
    assert surfacing_prune(older_than_days=30, now=NOW) == 1
    assert list(RetrievalEventRow.objects.values_list("id", flat=True)) == [recent]
    assert not RetrievalEventRow.objects.filter(id=old).exists()


def test_the_ledger_model_says_it_is_not_derived():
    assert RetrievalEventRow.__doc__.startswith("Ledger: not derived.")
