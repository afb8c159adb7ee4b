"""POST /api/agent/recall builds its answer from recall's own hits without ninja's second validation (issue 13
item 2): the bytes are those ninja's validated answer renders to, and the OpenAPI document's answers of recall and
whisper are those they had before (tests/api/openapi_recall_whisper.json, written from main f2f6f38)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from ninja.responses import NinjaJSONEncoder

from memory.domain.node import utcnow
from memory.domain.requests import NodePatch
from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn
from memory.schemas import SNIPPET_CHARS, HitOut, RecallOut, RecallTextOut
from memory.search import format_hits_text, recall
from memory.services import node_update
from memory.services.trust import relation_create

PINNED = Path(__file__).with_name("openapi_recall_whisper.json")
LONG = ("The office moved to Hamburg in March; the lease runs five years and the desks are booked through the "
        "front desk. ") * 4


@pytest.fixture
def office(mem):
    old = mem("The office is in Berlin", title="Office", space="ops", tags=["office", "site"], auto_link=False)
    new = mem(LONG, auto_link=False)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.CONTRADICTS))
    node_update(ref=old.id, patch=NodePatch(valid_until=utcnow() + timedelta(days=3, microseconds=7)))
    return old, new


def _validated(hits, *, full: bool, surfacing_id: int) -> bytes:
    """What ninja rendered before: each hit validated through HitOut (a snippet unless full), the answer through
    RecallOut, dumped and encoded by ninja's JSON encoder."""
    results = []
    for hit in hits:
        if full or len(hit.content) <= SNIPPET_CHARS:
            results.append(hit)
            continue
        data = HitOut.model_validate(hit).model_dump()
        data.update(node_id=data["id"], content=data["content"][:SNIPPET_CHARS].rstrip() + "…",
                    content_truncated=True)
        results.append(SimpleNamespace(**data))
    answer = RecallOut.model_validate({"results": results, "surfacing_id": surfacing_id}).model_dump()
    return json.dumps(answer, cls=NinjaJSONEncoder).encode()


@pytest.fixture
def answered(monkeypatch) -> list:
    """The hits of each recall the route makes (the real recall; kept, since a later recall's scores move with
    the clock)."""
    calls: list = []

    def kept(*, query):
        calls.append(recall(query=query))
        return calls[-1]

    monkeypatch.setattr("memory.api.search_recall", kept)
    return calls


@pytest.mark.parametrize("full", [False, True])
def test_the_answer_is_the_bytes_ninjas_validated_answer_renders_to(api, office, answered, full):
    response = api.post("/api/agent/recall", {"query": "where is the office", "full": full})
    body = response.json()

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response.content == _validated(answered[0], full=full, surfacing_id=body["surfacing_id"])
    assert {h["id"]: h["content_truncated"] for h in body["results"]} == {office[0].id: False, office[1].id: not full}
    assert any(h["warnings"] for h in body["results"]) and any(h["valid_until"] for h in body["results"])


def test_the_text_answer_is_the_bytes_ninjas_validated_answer_renders_to(api, office, answered):
    response = api.post("/api/agent/recall", {"query": "where is the office", "format": "text"})
    answer = RecallTextOut.model_validate({"text": format_hits_text(answered[0]),
                                           "surfacing_id": response.json()["surfacing_id"]}).model_dump()

    assert response.content == json.dumps(answer, cls=NinjaJSONEncoder).encode()


def _reachable(document: dict, paths: list[str]) -> dict:
    """The answers of the given POST routes of an OpenAPI document with every component schema they reach."""
    operations = {p: document["paths"][p]["post"]["responses"] for p in paths}
    schemas = document["components"]["schemas"]
    seen: set[str] = set()
    todo = [operations]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            name = ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else None
            if name and name not in seen:
                seen.add(name)
                todo.append(schemas[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return {"paths": operations, "schemas": {name: schemas[name] for name in sorted(seen)}}


def test_the_openapi_answers_of_recall_and_whisper_are_unchanged():
    from ormah_site.api import api as ninja_api

    document = ninja_api.get_openapi_schema(path_prefix="/api")
    got = _reachable(document, ["/api/agent/recall", "/api/agent/whisper"])

    assert json.loads(json.dumps(got)) == json.loads(PINNED.read_text())
