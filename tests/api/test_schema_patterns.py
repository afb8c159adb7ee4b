"""What /api/openapi.json says a field takes is what the route takes: a generic agent that builds a body from the
schema must not be refused for a value the schema allows. git_commit, content_sha256, a workspace's path and commit,
and transcript_path were plain strings in the schema while the routes refused anything but hex digits, an absolute
path, a .jsonl path (review7, found by calling every route with a body built from its schema); each now publishes the
pattern its validator applies."""

from __future__ import annotations

import re

import pytest

from memory.services import index_sync, self_ensure

HEX40 = "0123456789abcdef0123456789abcdef01234567"
SHA = "ab" * 32

# (schema, field, a value the route takes, a value the route refuses, the route and the body around the value)
CASES = [
    ("NodeIn", "git_commit", HEX40, "main", "/api/agent/remember", lambda v: {"content": "c1", "git_commit": v}),
    ("NodeIn", "content_sha256", SHA, "abc123", "/api/agent/remember",
     lambda v: {"content": "c2", "content_sha256": v}),
    ("WorkspaceIn", "commit", HEX40, "HEAD", "/api/agent/context-pack",
     lambda v: {"query": "q", "workspace": {"path": "/tmp", "commit": v}}),
    ("WorkspaceIn", "path", "/home/dana/project", "project", "/api/agent/context-pack",
     lambda v: {"query": "q", "workspace": {"path": v}}),
]


@pytest.fixture
def schemas(api):
    return api.get("/api/openapi.json").json()["components"]["schemas"]


@pytest.mark.parametrize(("schema", "field", "taken", "refused", "route", "body"), CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_the_published_pattern_is_the_one_the_route_applies(api, schemas, schema, field, taken, refused, route, body):
    index_sync()
    self_ensure(name="Dana")
    pattern = schemas[schema]["properties"][field].get("pattern")
    assert pattern, f"{schema}.{field} publishes no pattern"
    assert re.search(pattern, taken) and not re.search(pattern, refused)
    assert api.post(route, body(taken)).status_code in (200, 201)
    answer = api.post(route, body(refused))
    assert answer.status_code == 422 and field in answer.json()["message"]


def test_transcript_path_publishes_the_absolute_jsonl_rule(api, schemas, tmp_path):
    pattern = schemas["TranscriptIn"]["properties"]["transcript_path"].get("pattern")
    assert pattern
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"type": "user", "message": {"role": "user", "content": "hello"}}\n')
    assert re.search(pattern, str(transcript)) and re.search(pattern, "~/t.jsonl")
    for refused in ("session.jsonl", "/tmp/session.json", "/tmp/.jsonl"):
        assert not re.search(pattern, refused)
        answer = api.post("/api/agent/ingest/transcript", {"transcript_path": refused})
        assert answer.status_code == 422 and "absolute path to a .jsonl" in answer.json()["message"], refused
    assert api.post("/api/agent/ingest/transcript", {"transcript_path": str(transcript)}).status_code == 200

