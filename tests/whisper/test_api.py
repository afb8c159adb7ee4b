"""The whisper routes under /api/agent/: shapes, auth, errors."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from whisper.conf import get_conf

TOKEN = "test-token"


@pytest.fixture
def api(home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    client = Client(headers={"Authorization": f"Bearer {TOKEN}"})

    def post(path, body=None):
        response = client.post(f"/api/agent{path}", data=json.dumps(body or {}), content_type="application/json")
        return response.status_code, response.json()

    def get(path):
        response = client.get(f"/api/agent{path}")
        return response.status_code, response.json()

    post.get = get
    return post


@pytest.fixture
def node(mem):
    return mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)


def test_whisper_answers_with_text_ids_tokens_decision_and_log_id(api, node):
    status, body = api("/whisper", {"prompt": "How is the ormah index stored? Is it sqlite?", "session_id": "s1",
                                    "space": "ormah", "budget_tokens": 200})
    assert status == 200
    assert (body["decision"], body["node_ids"], body["intent"]) == ("injected", [node.id], "technical")
    assert body["estimated_tokens"] <= 200 and isinstance(body["whisper_log_id"], int)
    assert body["text"].startswith("# Ormah whispers")


def test_silence_has_the_same_shape(api, node):
    status, body = api("/whisper", {"prompt": "thanks!"})
    assert (status, body["text"], body["node_ids"], body["decision"]) == (200, "", [], "silent:acknowledgement")


def test_the_space_comes_from_cwd_when_not_given(api, node, tmp_path):
    repo = tmp_path / "ormah"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    status, body = api("/whisper", {"prompt": "How is the ormah index stored? Is it sqlite?", "cwd": str(repo / "src")})
    status, decisions = api.get("/whisper/decisions?limit=1")
    assert decisions[0]["space"] == "ormah"


def test_whisper_needs_the_token(home, db):
    response = Client().post("/api/agent/whisper", data="{}", content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (401, "unauthorized")


def test_an_unexpected_failure_is_silence_not_an_error(api, node, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("database gone")

    monkeypatch.setattr("whisper.api.whisper_respond", broken)
    status, body = api("/whisper", {"prompt": "How is the ormah index stored?"})
    assert (status, body["decision"], body["text"], body["whisper_log_id"]) == (200, "silent:error", "", None)


def test_feedback_and_delivery(api, node):
    _, whispered = api("/whisper", {"prompt": "How is the ormah index stored? Is it sqlite?", "space": "ormah"})
    log_id = whispered["whisper_log_id"]
    assert api(f"/whisper/{log_id}/delivered") == (200, {"whisper_log_id": log_id, "delivered": True})
    status, body = api("/feedback", {"node_id": node.short_id, "signal": 1, "source": "implicit",
                                     "whisper_log_id": log_id})
    assert (status, body) == (200, {"node_id": node.id, "signal": 1, "source": "implicit", "whisper_log_id": log_id,
                                    "affinity_recorded": True, "use_confirmed": True, "merged_from": None})


@pytest.mark.parametrize(("body", "status", "error"), [
    ({"node_id": "abcdef12", "signal": 1}, 404, "not_found"),
    ({"node_id": "abcdef12", "signal": 2}, 422, "validation_failed"),
    ({"node_id": "abcdef12", "signal": 1, "source": "judge"}, 422, "validation_failed"),
])
def test_feedback_errors_use_the_one_error_shape(api, body, status, error):
    code, answer = api("/feedback", body)
    assert (code, answer["error"]) == (status, error)


def test_decisions_show_every_candidate_and_why(api, node):
    api("/whisper", {"prompt": "How is the ormah index stored? Is it sqlite?", "space": "ormah"})
    status, decisions = api.get("/whisper/decisions")
    candidate = decisions[0]["candidates"][0]
    assert (status, decisions[0]["decision"], candidate["node_uid"], candidate["stage"], candidate["injected"]) == (
        200, "injected", node.id, "injected", True)
    gate = get_conf().gate_logit  # the logistic gate on recall's hits (docs/whisper.md)
    assert candidate["gate_threshold"] == gate and (candidate["gate_score"] >= gate or candidate["raw_cosine"] >= 0.7)


def test_transcript_ingest_route(api, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "user", "message": {"role": "user", "content":
                                "Remember that releases happen on Tuesdays."}}) + "\n")
    status, body = api("/ingest/transcript", {"transcript_path": str(path), "min_user_turns": 1})
    assert (status, body["status"], len(body["stored"]), body["end_offset"]) == (200, "stored", 1, path.stat().st_size)


def test_transcript_ingest_refuses_other_files(api, tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    status, body = api("/ingest/transcript", {"transcript_path": str(tmp_path / "notes.txt")})
    assert (status, body["error"]) == (422, "validation_failed")
