"""Every route needs the bearer token; the schema and docs also accept a logged-in staff user."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ormah_site.api import api
from ormah_site.tokens import token_ensure

METHODS = ("get", "post", "put", "patch", "delete")
UNAUTHORIZED = {"error": "unauthorized", "message": "A valid bearer token is required (see the api_token file)",
                "details": None}


def _concrete(pattern: str) -> str:
    """/api/<pattern> with every path parameter filled with a plausible value."""
    return "/api/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "swagger-ui.css" if m.group(1) == "name" else "abcd1234",
                            pattern)


def _routes() -> list[str]:
    return [_concrete(str(p.pattern)) for p in api.urls[0] if p.name != "api-root"]


def _operations() -> list[tuple[str, str]]:
    schema = api.get_openapi_schema(path_params={})
    return [(method, re.sub(r"\{\w+\}", "abcd1234", path))
            for path, ops in schema["paths"].items() for method in ops]


def test_the_schema_lists_the_memory_routes():
    assert {
        ("post", "/api/agent/remember"), ("post", "/api/agent/remember/batch"), ("post", "/api/agent/recall"),
        ("get", "/api/agent/nodes/abcd1234"), ("patch", "/api/agent/nodes/abcd1234"),
        ("delete", "/api/agent/nodes/abcd1234"), ("post", "/api/agent/nodes/abcd1234/restore"),
        ("post", "/api/agent/nodes/abcd1234/outdated"), ("post", "/api/agent/connect"), ("get", "/api/agent/self"),
        ("post", "/api/admin/rebuild"), ("get", "/api/admin/health"),
    } <= set(_operations())


@pytest.mark.parametrize("method,path", _operations())
@pytest.mark.parametrize("header", [None, "Bearer wrong-token", "Bearer ", "Basic dXNlcjpwYXNz", "test-token"])
def test_every_operation_refuses_a_missing_or_wrong_token(anon, method, path, header):
    client = Client(**({"HTTP_AUTHORIZATION": header} if header else {}))
    response = getattr(client, method)(path, {"query": "x"} if method == "get" else "{}",
                                       **({} if method == "get" else {"content_type": "application/json"}))
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


@pytest.mark.parametrize("path", _routes())
def test_no_url_of_the_api_answers_without_a_token(anon, path):
    statuses = {m: getattr(anon.client, m)(path).status_code for m in METHODS}
    assert set(statuses.values()) <= {401, 405}
    assert 401 in statuses.values()


def test_the_api_root_reveals_nothing(anon):
    assert anon.client.get("/api/").status_code == 404


def test_auth_is_checked_before_the_body_is_parsed(anon):
    response = anon.raw("POST", "/api/agent/remember", "{not json")
    assert response.status_code == 401


def test_the_token_file_is_used_when_no_token_is_configured(home, db):
    token = token_ensure()
    assert Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/api/admin/health").status_code == 200
    assert Client(HTTP_AUTHORIZATION="Bearer other").get("/api/admin/health").status_code == 401


def test_no_token_set_up_means_every_request_is_refused(home, db):
    assert Client(HTTP_AUTHORIZATION="Bearer ").get("/api/agent/self").status_code == 401
    assert Client(HTTP_AUTHORIZATION="Bearer None").get("/api/agent/self").status_code == 401


# ---------------------------------------------------------------------------
# Schema and docs
# ---------------------------------------------------------------------------

def _user(*, staff: bool):
    return get_user_model().objects.create_user("dana", "dana@example.com", "pw", is_staff=staff)


def test_the_openapi_schema_needs_a_token(anon, api):
    assert anon.get("/api/openapi.json").status_code == 401
    assert anon.get("/api/openapi.json").json()["error"] == "unauthorized"
    schema = api.get("/api/openapi.json").json()
    assert schema["info"]["title"] == "Ormah"
    assert schema["components"]["securitySchemes"]["BearerToken"] == {"type": "http", "scheme": "bearer"}


def test_the_docs_need_a_token_or_a_staff_session(anon, api):
    assert anon.get("/api/docs").status_code == 401
    assert api.get("/api/docs").status_code == 200
    staff = Client()
    staff.force_login(_user(staff=True))
    assert staff.get("/api/docs").status_code == 200
    assert staff.get("/api/openapi.json").status_code == 200


def test_a_session_that_is_not_staff_does_not_open_the_docs(anon):
    client = Client()
    client.force_login(_user(staff=False))
    assert client.get("/api/openapi.json").status_code == 401
    assert client.get("/api/agent/self").status_code == 401


def test_a_browser_without_a_session_is_sent_to_log_in(anon):
    response = anon.client.get("/api/docs", HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/api/docs"


def test_a_staff_session_does_not_open_the_agent_routes(anon):
    client = Client()
    client.force_login(_user(staff=True))
    assert client.get("/api/agent/self").status_code == 401


def test_the_docs_page_uses_bundled_assets_not_a_cdn(api):
    html = api.get("/api/docs").content.decode()
    assert "cdn" not in html.lower()
    assert '<script src="/api/docs/assets/swagger-ui-bundle.js">' in html
    asset = api.get("/api/docs/assets/swagger-ui-bundle.js")
    assert asset.status_code == 200
    assert b"SwaggerUIBundle" in b"".join(asset.streaming_content)


def test_only_the_bundled_assets_are_served(api, anon):
    assert anon.get("/api/docs/assets/swagger-ui.css").status_code == 401
    missing = api.get("/api/docs/assets/settings.py")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"
