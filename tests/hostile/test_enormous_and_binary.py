"""Enormous and binary input through the API: a clean 4xx in the error shape, never a 500, nothing written.

413 for content over 64 KiB (any write route), a batch over 1,000 items and a body over 16 MiB; 400 for bodies that
are not JSON objects of valid UTF-8 (raw bytes, gzip, a lone surrogate, JSON nested past the parser's depth);
422 for NUL bytes and numbers that are not finite.
"""

from __future__ import annotations

import gzip
import json
import os

import pytest

from memory.domain.requests import MAX_CONTENT_BYTES

ERROR_KEYS = {"error", "message", "details"}


def _nothing_written(home):
    nodes = home / "memory" / "nodes"
    assert not nodes.exists() or os.listdir(nodes) == []


def _shape(response, status, code):
    assert response.status_code == status, response.content[:500]
    body = response.json()
    assert set(body) == ERROR_KEYS and body["error"] == code, body


@pytest.mark.parametrize("content, status", [
    ("x" * MAX_CONTENT_BYTES, 201),
    ("x" * (MAX_CONTENT_BYTES + 1), 413),
    ("é" * (MAX_CONTENT_BYTES // 2 + 1), 413),  # 2 bytes each: the limit is bytes, not characters
    ("x" * (4 * 1024 * 1024), 413),
])
def test_content_size_limit_is_64_kib_of_utf8(api, home, content, status):
    response = api.post("/api/agent/remember", {"content": content})
    assert response.status_code == status
    if status == 413:
        _shape(response, 413, "payload_too_large")
        _nothing_written(home)


def test_oversized_content_in_a_patch_or_a_batch_is_413(api, home):
    node = api.post("/api/agent/remember", {"content": "Small"}).json()["node"]
    _shape(api.patch(f"/api/agent/nodes/{node['id']}", {"content": "x" * (MAX_CONTENT_BYTES + 1)}), 413,
           "payload_too_large")
    _shape(api.post("/api/agent/remember/batch", {"nodes": [{"content": "ok"}, {"content": "x" * 70_000}]}), 413,
           "payload_too_large")
    _shape(api.post("/api/agent/remember/batch", {"nodes": [{"content": "ok"}] * 1001}), 413, "payload_too_large")
    assert api.get(f"/api/agent/nodes/{node['id']}").json()["node"]["content"] == "Small"


def test_a_body_over_the_upload_limit_is_413(api, home):
    body = json.dumps({"content": "x" * (17 * 1024 * 1024)})
    _shape(api.raw("POST", "/api/agent/remember", body), 413, "payload_too_large")
    _nothing_written(home)


@pytest.mark.parametrize("route", ["/api/agent/recall", "/api/agent/whisper"])
def test_enormous_queries_and_prompts_are_refused_cleanly(api, route):
    key = "query" if route.endswith("recall") else "prompt"
    response = api.post(route, {key: "why " * 200_000})
    assert 400 <= response.status_code < 500 and set(response.json()) == ERROR_KEYS, response.content[:300]


@pytest.mark.parametrize("body, content_type", [
    (os.urandom(2048), "application/json"),
    (b"\xff\xfe{\x00\"\x00c\x00", "application/json"),
    (gzip.compress(b'{"content": "zipped"}'), "application/json"),
    (b'{"content": "\\ud800 lone surrogate"}', "application/json"),
    (b'{"content": "ok"', "application/json"),
    (b'["content", "a list"]', "application/json"),
    (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    (b'{"content": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "application/json"),
    (b"content=form+encoded", "application/x-www-form-urlencoded"),
    (b"\x89PNG\r\n\x1a\n" + os.urandom(512), "image/png"),
])
def test_binary_and_malformed_bodies_are_400(api, home, body, content_type):
    response = api.raw("POST", "/api/agent/remember", body, content_type=content_type)
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    assert set(response.json()) == ERROR_KEYS
    _nothing_written(home)


@pytest.mark.parametrize("payload", [
    {"content": "nul \x00 inside"},
    {"content": "ok", "confidence": float("inf")},
    {"content": "ok", "confidence": float("nan")},
    {"content": "ok", "created": "9" * 5000},
    {"content": "ok", "confidence": 10 ** 400},
])
def test_nul_bytes_and_impossible_numbers_are_422(api, home, payload):
    raw = json.dumps(payload, allow_nan=True)
    response = api.raw("POST", "/api/agent/remember", raw)
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    assert set(response.json()) == ERROR_KEYS
    _nothing_written(home)


def test_control_characters_and_binary_looking_text_survive_a_round_trip(api):
    content = "bell \x07 escape \x1b[31mred\x1b[0m tab\tform\x0cfeed \ufffd \U0001f600 zero\u200bwidth"
    response = api.post("/api/agent/remember", {"content": content})
    assert response.status_code == 201, response.content
    node = api.get(f"/api/agent/nodes/{response.json()['node']['id']}").json()["node"]
    assert node["content"] == content
