"""Every error under /api/ is JSON in the one shape: unknown paths, trailing slashes, wrong methods (issue 12.10)."""

from __future__ import annotations

import pytest


def shape(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = response.json()
    assert set(body) == {"error", "message", "details"}
    return body


@pytest.mark.parametrize("method", ["get", "post", "delete"])
@pytest.mark.parametrize("path", ["/api/nope", "/api/agent/nope/deeper", "/api/", "/api/agent/"])
def test_unknown_paths_answer_json_404(api, method, path):
    client = api.client
    response = getattr(client, method)(path)
    assert response.status_code == 404
    body = shape(response)
    assert body["error"] == "not_found" and method.upper() in body["message"] and path in body["message"]


def test_a_trailing_slash_says_to_drop_it(api):
    response = api.post("/api/agent/recall/", {"query": "x"})
    assert response.status_code == 404
    assert shape(response)["message"] == ("No such route: POST /api/agent/recall/ (drop the trailing slash: "
                                          "/api/agent/recall)")


@pytest.mark.parametrize("method, path", [("get", "/api/agent/remember"), ("delete", "/api/agent/recall"),
                                          ("put", "/api/agent/nodes/abcd"), ("post", "/api/admin/health")])
def test_wrong_methods_answer_json_405_with_allow(api, method, path):
    response = getattr(api.client, method)(path)
    assert response.status_code == 405
    body = shape(response)
    assert body["error"] == "method_not_allowed"
    assert body["message"].startswith(f"{method.upper()} is not allowed on {path}; allowed: ")
    assert response["Allow"]


def test_without_a_token_unknown_paths_answer_401_json(client, db):
    response = client.get("/api/agent/does-not-exist")
    assert response.status_code == 401
    assert shape(response)["error"] == "unauthorized"


def test_ui_404_stays_html(client, db):
    response = client.get("/definitely-not-a-page/")
    assert response.status_code in (302, 404)
    assert not response.get("Content-Type", "").startswith("application/json")
