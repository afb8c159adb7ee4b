"""A NUL character anywhere in a request (URL, query, form, JSON body) is refused at the door (ormah_site/nul.py):
PostgreSQL cannot store one, and a NUL in a query parameter that reached it answered 500."""

from __future__ import annotations

import json

from django.test import Client

from memory.models import EvidenceRow, NodeRow
from tests.api.conftest import TOKEN

AUTH = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def test_a_nul_in_a_query_parameter_is_a_400_in_the_error_shape(api_token, db):
    answer = Client(**AUTH).get("/api/agent/whisper/decisions", {"session_id": "s\x00"})
    assert answer.status_code == 400
    assert answer.json()["error"] == "bad_request" and "NUL" in answer.json()["message"]


def test_without_the_token_the_route_still_answers_401(api_token, db):
    assert Client().get("/api/agent/whisper/decisions", {"session_id": "s\x00"}).status_code == 401


def test_a_nul_deep_in_a_json_body_is_a_422_and_nothing_is_stored(api_token, db):
    body = {"kind": "user_message", "text": "hello", "data": {"a": [{"b": "x\x00y"}]}}
    answer = Client(**AUTH).post("/api/agent/evidence", json.dumps(body), content_type="application/json")
    assert answer.status_code == 422
    assert answer.json()["error"] == "validation_failed"
    assert EvidenceRow.objects.count() == 0
    remember = Client(**AUTH).post("/api/agent/remember", json.dumps({"content": "ok", "tags": ["a\x00"]}),
                                   content_type="application/json")
    assert remember.status_code == 422 and NodeRow.objects.count() == 0


def test_the_escaped_text_of_a_nul_is_ordinary_text(api_token, db):
    answer = Client(**AUTH).post("/api/agent/remember", json.dumps({"content": "write \\u0000 to end a C string"}),
                                 content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert NodeRow.objects.get().content == "write \\u0000 to end a C string"


def test_a_nul_in_a_web_form_is_a_plain_400(db):
    answer = Client().post("/login/", {"username": "ormah\x00", "password": "x"})
    assert answer.status_code == 400
    assert answer["Content-Type"].startswith("text/plain")
