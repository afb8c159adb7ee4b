"""POST /api/agent/recall: hits as JSON or text, surfacing logged, never confirmed use."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.models import RetrievalEventRow
from memory.selectors import node_get


@pytest.fixture
def billing(mem):
    return mem("The billing service stores invoices in PostgreSQL 16", title="Billing database", space="billing",
               tags=["db"], auto_link=False)


def test_recall_answers_hits_with_the_documented_fields(api, billing):
    response = api.post("/api/agent/recall", {"query": "which database stores invoices"})
    assert response.status_code == 200
    hit = response.json()["results"][0]
    assert sorted(hit) == ["activated_by", "activation_edge", "content", "content_truncated", "created", "id", "legs",
                           "score",
                           "short_id", "source", "space", "tags", "tier", "title", "type", "valid_until", "warnings"]
    assert (hit["id"], hit["short_id"], hit["title"], hit["type"], hit["tier"], hit["space"], hit["tags"]) == (
        billing.id, billing.short_id, "Billing database", "fact", "working", "billing", ["db"])
    assert 0 < hit["score"] <= 1
    assert set(hit["legs"]) <= {"fts", "vector", "activation", "temporal"}


def test_recall_as_text_is_what_an_agent_reads(api, billing):
    response = api.post("/api/agent/recall", {"query": "billing database invoices", "format": "text"})
    text = response.json()["text"]
    assert text.startswith("Found 1 memory:")
    assert f"ID: {billing.id}" in text


def test_recall_with_nothing_found_says_so(api, billing):
    response = api.post("/api/agent/recall", {"query": "zebra migration patterns in kenya", "format": "text"})
    assert response.json()["text"] == "No good match for this query."


def test_an_inverted_date_window_is_a_422_not_an_empty_answer(api, billing):
    response = api.post("/api/agent/recall", {"query": "billing database", "created_after": "2026-12-01",
                                              "created_before": "2026-01-01T00:00:00Z"})
    assert response.status_code == 422
    assert response.json()["message"] == ("created_after (2026-12-01T00:00:00) is later than created_before "
                                          "(2026-01-01T00:00:00+00:00): no memory can match")
    ordered = api.post("/api/agent/recall", {"query": "billing database", "created_after": "2026-01-01",
                                             "created_before": "2026-01-01"})
    assert ordered.status_code == 200


def test_recall_logs_the_surfacing_with_the_session(api, billing):
    response = api.post("/api/agent/recall", {"query": "billing database", "session_id": "s-1",
                                              "default_space": "billing"})
    event = RetrievalEventRow.objects.get(id=response.json()["surfacing_id"])
    assert (event.surface, event.session_id, event.space, event.node_uids) == ("recall", "s-1", "billing",
                                                                                 [billing.id])


def test_recall_is_never_confirmed_use(api, billing):
    api.post("/api/agent/recall", {"query": "billing database"})
    api.post("/api/agent/recall", {"query": "billing database", "format": "text"})
    node = node_get(store=runtime.store(), ref=billing.id)
    assert (node.access_count, node.stability, node.last_review) == (0, billing.stability, None)


def test_recall_filters_by_space(api, billing, mem):
    mem("The search service stores its index in SQLite", space="search", auto_link=False)
    response = api.post("/api/agent/recall", {"query": "service stores", "spaces": ["search"]})
    assert [h["space"] for h in response.json()["results"]] == ["search"]


@pytest.mark.parametrize("body,message", [
    ({"query": ""}, "query: String should have at least 1 character"),
    ({"query": "   "}, "query: must not be blank"),
    ({"query": "x", "limit": 0}, "limit: Input should be greater than or equal to 1"),
    ({"query": "x", "limit": 101}, "limit: Input should be less than or equal to 100"),
    ({"query": "x", "types": ["rumour"]}, "types.0: Input should be 'fact', 'decision', 'preference', 'event', "
                                          "'person', 'project', 'concept', 'procedure', 'goal' or 'observation'"),
    ({"query": "x", "format": "html"}, "format: Input should be 'json' or 'text'"),
    ({"query": "x", "created_after": "yesterday-ish"},
     "created_after: Input should be a valid datetime or date, invalid character in year"),
    ({"query": "x", "sort": "date"}, "sort: Extra inputs are not permitted"),
    # the surfacing ledger keeps it in a varchar(100): PostgreSQL refused the insert (a 500), SQLite stored it
    ({"query": "x", "default_space": "s" * 101}, "default_space: String should have at most 100 characters"),
])
def test_recall_rejects_bad_queries(api, body, message):
    response = api.post("/api/agent/recall", body)
    assert (response.status_code, response.json()["error"], response.json()["message"]) == (
        422, "validation_failed", message)


def test_a_default_space_of_the_longest_allowed_length_is_logged(api, billing):
    space = "\U0001F680" * 100  # 100 characters of 4 bytes each: PostgreSQL's varchar counts characters
    response = api.post("/api/agent/recall", {"query": "billing", "default_space": space})
    assert response.status_code == 200
    assert RetrievalEventRow.objects.get().space == space


def test_recall_before_anything_was_indexed_is_not_a_server_error(api):
    response = api.post("/api/agent/recall", {"query": "anything"})
    assert response.status_code == 200


def test_recall_hits_carry_a_snippet_unless_full_is_asked(api, mem):
    long = "The release process, step by step: " + "check the changelog, tag, build, sign, upload; " * 30
    node = mem(long, auto_link=False)
    hit = api.post("/api/agent/recall", {"query": "release process changelog tag"}).json()["results"][0]
    assert hit["id"] == node.id and hit["content_truncated"] is True
    assert len(hit["content"]) <= 301 and long.startswith(hit["content"].rstrip("…"))
    full = api.post("/api/agent/recall", {"query": "release process changelog tag", "full": True}).json()
    assert full["results"][0]["content"] == node.content and full["results"][0]["content_truncated"] is False
