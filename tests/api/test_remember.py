"""POST /api/agent/remember and /remember/batch: files written, validation before any write, one error shape."""

from __future__ import annotations

import json

import pytest

from memory import runtime
from memory.domain.requests import MAX_CONTENT_BYTES
from memory.models import NodeRow
from memory.schemas import MAX_BATCH


def _files() -> list:
    return runtime.store().iter_paths()


def test_remember_writes_the_file_and_answers_201_with_the_node(api):
    response = api.post("/api/agent/remember", {
        "content": "The billing service uses PostgreSQL 16", "type": "decision", "space": "billing",
        "tags": ["DB", "postgres"], "title": "Billing database", "source": "agent:test"})
    assert response.status_code == 201
    body = response.json()
    node = body["node"]
    assert (node["type"], node["tier"], node["space"], node["tags"], node["title"], node["source"]) == (
        "decision", "working", "billing", ["db", "postgres"], "Billing database", "agent:test")
    assert node["short_id"] == node["id"][:8]
    assert body["auto_links"] == []
    assert [p.name for p in _files()] == [f"decision_billing-database_{node['short_id']}.md"]
    assert NodeRow.objects.get(uid=node["id"]).space == "billing"


def test_remember_auto_links_similar_memories(api, mem):
    first = mem("The billing service stores invoices in PostgreSQL 16")
    response = api.post("/api/agent/remember", {"content": "The billing service stores its invoices in PostgreSQL"})
    links = response.json()["auto_links"]
    assert [link["id"] for link in links] == [first.id]
    assert links[0]["title"] == "The billing service stores invoices in PostgreSQL 16"
    assert 0.65 <= links[0]["similarity"] <= 1.0
    assert response.json()["node"]["connections"][0]["target"] == first.id


def test_remember_keeps_a_created_date_for_imports(api):
    response = api.post("/api/agent/remember", {"content": "Imported note", "created": "2024-03-01T10:00:00+02:00"})
    assert response.json()["node"]["created"] == "2024-03-01T08:00:00Z"


def test_remember_uses_the_space_as_given(api):
    assert api.post("/api/agent/remember", {"content": "Global fact", "space": None}).json()["node"]["space"] is None
    assert api.post("/api/agent/remember", {"content": "No space given"}).json()["node"]["space"] is None


@pytest.mark.parametrize("body,status,error,message", [
    ({"content": "   "}, 422, "validation_failed", "content: must not be blank"),
    ({}, 422, "validation_failed", "content: Field required"),
    ({"content": 42}, 422, "validation_failed", "content: Input should be a valid string"),
    ({"content": "x", "type": "rumour"}, 422, "validation_failed",
     "type: Input should be 'fact', 'decision', 'preference', 'event', 'person', 'project', 'concept', "
     "'procedure', 'goal' or 'observation'"),
    ({"content": "x", "confidence": 2}, 422, "validation_failed", "confidence: Input should be less than or equal to 1"),
    ({"content": "x", "tags": "db"}, 422, "validation_failed", "tags: Input should be a valid list"),
    ({"content": "x", "colour": "red"}, 422, "validation_failed", "colour: Extra inputs are not permitted"),
    ({"content": "x", "space": "a/b"}, 422, "validation_failed", "space: must not contain slashes or control characters"),
    ({"content": "x", "created": "2062-03-01T09:00:00Z"}, 422, "validation_failed",
     "created: 2062-03-01T09:00:00+00:00 is in the future (back-date with a past date)"),
    ({"content": "x" * (MAX_CONTENT_BYTES + 1)}, 413, "payload_too_large",
     f"content: must be at most {MAX_CONTENT_BYTES} bytes of UTF-8 (got {MAX_CONTENT_BYTES + 1})"),
])
def test_remember_rejects_bad_input_without_writing(api, body, status, error, message):
    response = api.post("/api/agent/remember", body)
    assert (response.status_code, response.json()["error"], response.json()["message"]) == (status, error, message)
    assert _files() == []


@pytest.mark.parametrize("raw,message", [
    ("{not json", "Cannot parse request body: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("[1, 2]", "Cannot parse request body: the body must be a JSON object"),
    ('"content"', "Cannot parse request body: the body must be a JSON object"),
    ('{"content": "\\ud800 lone surrogate"}',
     "Cannot parse request body: the body must be valid UTF-8 text (it holds a lone surrogate escape)"),
    (b'{"content": "\xff\xfe"}', "Cannot parse request body: 'utf-8' codec can't decode byte 0xff in position 13: "
                                 "invalid start byte"),
])
def test_a_body_that_is_not_a_json_object_is_a_400(api, raw, message):
    response = api.raw("POST", "/api/agent/remember", raw)
    assert response.status_code == 400
    assert response.json() == {"error": "bad_request", "message": message, "details": None}


def test_an_empty_body_is_a_422(api):
    response = api.raw("POST", "/api/agent/remember", "")
    assert response.status_code == 422
    assert response.json()["error"] == "validation_failed"


def test_a_body_over_the_upload_limit_is_a_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = api.raw("POST", "/api/agent/remember", json.dumps({"content": "x" * 2000}))
    assert response.status_code == 413
    assert response.json() == {"error": "payload_too_large", "message": "The request body is too large",
                               "details": None}


def test_an_unknown_connection_target_is_a_422(api):
    response = api.post("/api/agent/remember", {"content": "x", "connections": [{"target": "abcdef12"}]})
    assert response.status_code == 422
    assert response.json()["message"] == "Connection target abcdef12 does not exist"


# ---------------------------------------------------------------------------
# Batch
# ---------------------------------------------------------------------------

def test_batch_answers_in_order(api):
    response = api.post("/api/agent/remember/batch", {"nodes": [
        {"content": "First memory of the batch"}, {"content": "Second memory", "type": "event"},
        {"content": "Third memory", "created": "2020-01-01T00:00:00Z"}]})
    assert response.status_code == 201
    results = response.json()["results"]
    assert [r["node"]["content"] for r in results] == ["First memory of the batch", "Second memory", "Third memory"]
    assert [r["node"]["type"] for r in results] == ["fact", "event", "fact"]
    assert results[2]["node"]["created"] == "2020-01-01T00:00:00Z"
    assert len(_files()) == 3


def test_batch_with_one_invalid_item_writes_nothing_and_names_its_index(api):
    response = api.post("/api/agent/remember/batch", {"nodes": [
        {"content": "Fine"}, {"content": "Also fine"}, {"content": ""}, {"content": "Fine again"}]})
    assert response.status_code == 422
    assert response.json()["message"] == "nodes.2.content: must not be blank"
    assert _files() == []


def test_batch_checks_connection_targets_before_writing(api, mem):
    known = mem("A known memory", auto_link=False)
    response = api.post("/api/agent/remember/batch", {"nodes": [
        {"content": "Links to a known one", "connections": [{"target": known.id}]},
        {"content": "Links to nothing", "connections": [{"target": known.id}, {"target": "deadbeef"}]}]})
    assert response.status_code == 422
    assert response.json()["message"] == "nodes.1.connections.1.target: No memory with id deadbeef"
    assert response.json()["details"] == [
        {"loc": "nodes.1.connections.1.target", "msg": "No memory with id deadbeef"}]
    assert len(_files()) == 1


def test_batch_over_the_limit_is_a_413(api):
    response = api.post("/api/agent/remember/batch", {"nodes": [{"content": "x"}] * (MAX_BATCH + 1)})
    assert response.status_code == 413
    assert response.json()["message"] == f"nodes: at most {MAX_BATCH} memories per batch (got {MAX_BATCH + 1})"
    assert _files() == []


@pytest.mark.parametrize("body,message", [
    ({"nodes": []}, "nodes: Value should have at least 1 item after validation, not 0"),
    ({"nodes": "x"}, "nodes: Input should be a valid list"),
    ({"items": [{"content": "x"}]}, "nodes: Field required"),
])
def test_batch_shape_errors_are_422(api, body, message):
    response = api.post("/api/agent/remember/batch", body)
    assert (response.status_code, response.json()["message"]) == (422, message)


# ---------------------------------------------------------------------------
# Batch with if_exists=return
# ---------------------------------------------------------------------------

def test_batch_if_exists_returns_stored_memories_and_writes_only_the_new_ones(api, mem):
    stored = mem("The VPN config is in /etc/wg0.conf", space="infra", auto_link=False)
    response = api.post("/api/agent/remember/batch?if_exists=return", {"nodes": [
        {"content": "The VPN config is in /etc/wg0.conf", "space": "infra"},
        {"content": "The backup job runs at 03:00"},
        {"content": "The backup job runs at 03:00"},
        {"content": "The VPN config is in /etc/wg0.conf", "space": "billing"}]})
    assert response.status_code == 201
    results = response.json()["results"]
    assert [r["existing"] for r in results] == [True, False, True, False]
    assert results[0]["node"]["id"] == stored.id
    assert results[2]["node"]["id"] == results[1]["node"]["id"]
    assert [r["node"]["space"] for r in results] == ["infra", None, None, "billing"]
    assert len(_files()) == 3
    assert NodeRow.objects.filter(content="The backup job runs at 03:00").count() == 1


def test_batch_if_exists_answers_200_and_writes_nothing_when_every_item_is_stored(api, mem):
    first = mem("Dana prefers tea", auto_link=False)
    second = mem("Marco prefers coffee", auto_link=False)
    response = api.post("/api/agent/remember/batch?if_exists=return", {"nodes": [
        {"content": "Marco prefers coffee"}, {"content": "Dana prefers tea"}]})
    assert response.status_code == 200
    assert [(r["node"]["id"], r["existing"], r["auto_links"]) for r in response.json()["results"]] == [
        (second.id, True, []), (first.id, True, [])]
    assert len(_files()) == 2
    assert NodeRow.objects.count() == 2


def test_batch_if_exists_does_not_check_the_connections_of_a_stored_item(api, mem):
    stored = mem("The staging database is PostgreSQL 16", auto_link=False)
    response = api.post("/api/agent/remember/batch?if_exists=return", {"nodes": [
        {"content": "The staging database is PostgreSQL 16", "connections": [{"target": "deadbeef"}]}]})
    assert (response.status_code, response.json()["results"][0]["node"]["id"]) == (200, stored.id)


def test_batch_if_exists_still_checks_the_connections_of_a_new_item(api, mem):
    mem("The staging database is PostgreSQL 16", auto_link=False)
    response = api.post("/api/agent/remember/batch?if_exists=return", {"nodes": [
        {"content": "The staging database is PostgreSQL 16"},
        {"content": "A new memory", "connections": [{"target": "deadbeef"}]}]})
    assert (response.status_code, response.json()["message"]) == (
        422, "nodes.1.connections.0.target: No memory with id deadbeef")
    assert len(_files()) == 1


def test_batch_without_if_exists_stores_every_item(api, mem):
    mem("Dana prefers tea", auto_link=False)
    response = api.post("/api/agent/remember/batch", {"nodes": [{"content": "Dana prefers tea"}] * 2})
    assert response.status_code == 201
    assert [r["existing"] for r in response.json()["results"]] == [False, False]
    assert NodeRow.objects.filter(content="Dana prefers tea").count() == 3


def test_batch_if_exists_rejects_an_unknown_mode(api):
    response = api.post("/api/agent/remember/batch?if_exists=skip", {"nodes": [{"content": "x"}]})
    assert response.status_code == 422
    assert _files() == []
