"""Whisper shows warnings on a superseded or contradicted memory: a line in the text and a list in the API."""

from __future__ import annotations

import pytest

from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn
from memory.services import relation_create

PROMPT = "How is the ormah index stored? Is it sqlite?"


@pytest.fixture
def index_note(mem):
    return mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)


@pytest.mark.parametrize(("relation", "kind", "verb"), [
    (RelationKind.SUPERSEDES, "temporal_supersession", "superseded by"),
    (RelationKind.CONTRADICTS, "temporal_contradiction", "contradicted by"),
])
def test_a_whispered_memory_carries_its_warning(api, mem, index_note, relation, kind, verb):
    other = mem("Ormah moved its index to DuckDB in version 2.", space="ormah", auto_link=False)
    relation_create(request=RelationIn(from_id=other.id, to_id=index_note.id, relation=relation))
    body = api.post("/api/agent/whisper", {"prompt": PROMPT, "session_id": "s1", "space": "ormah",
                                           "budget_tokens": 300}).json()
    assert body["decision"] == "injected" and index_note.id in body["node_ids"]
    assert {"kind": kind, "item_id": index_note.id, "related_id": other.id,
            "message": f"{verb} {other.short_id} (Ormah moved its index to DuckDB in version 2.)"} in body["warnings"]
    assert f"  ! {kind}: {verb} {other.short_id}" in body["text"]
    assert body["estimated_tokens"] <= 300


def test_a_memory_without_relations_whispers_without_warnings(api, index_note):
    body = api.post("/api/agent/whisper", {"prompt": PROMPT, "session_id": "s1", "space": "ormah"}).json()
    assert (body["decision"], body["warnings"], "!" in body["text"]) == ("injected", [], False)
