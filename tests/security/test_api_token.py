"""Claim: every API route needs `Authorization: Bearer <token>`; nothing else opens it (docs/security.md §1).

The URLs come from Django's resolver (so a route added without the API's auth would be caught), each tried with
every method and with every wrong way of presenting a token.
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.security.conftest import TOKEN, signed_in
from tests.security.urls import api_urls

METHODS = ("get", "post", "put", "patch", "delete")
UNAUTHORIZED = {"error": "unauthorized", "message": "A valid bearer token is required (see the api_token file)",
                "details": None}
WRONG = [
    {}, {"HTTP_AUTHORIZATION": "Bearer"}, {"HTTP_AUTHORIZATION": "Bearer "}, {"HTTP_AUTHORIZATION": "Bearer wrong"},
    {"HTTP_AUTHORIZATION": f"Bearer {TOKEN[:-1]}"}, {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}x"},
    {"HTTP_AUTHORIZATION": f"Bearer {TOKEN.upper()}"}, {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"},
    {"HTTP_AUTHORIZATION": TOKEN}, {"HTTP_X_API_KEY": TOKEN}, {"HTTP_COOKIE": f"token={TOKEN}"},
    {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}\x00"}, {"HTTP_AUTHORIZATION": "Bearer None"},
]


def test_the_resolver_finds_the_api():
    assert len(api_urls()) >= 35 and "/api/agent/remember" in api_urls()


@pytest.mark.parametrize("url", api_urls())
def test_every_api_url_refuses_every_method_without_a_valid_token(api_token, db, url):
    for headers in WRONG:
        client = Client(**headers)
        statuses = {}
        for method in METHODS:
            response = getattr(client, method)(url, **({} if method == "get" else {"data": "{}",
                                                                               "content_type": "application/json"}))
            statuses[method] = response.status_code
            assert response.status_code in (401, 405), (url, method, headers, response.status_code)
            if response.status_code == 401:
                assert response.json() == UNAUTHORIZED
        assert 401 in statuses.values(), (url, statuses)


@pytest.mark.parametrize("url", ["/api/agent/remember?token=" + TOKEN, "/api/admin/health?access_token=" + TOKEN])
def test_a_token_in_the_query_string_is_ignored(api_token, db, url):
    assert Client().post(url, "{}", content_type="application/json").status_code in (401, 405)
    assert Client().get(url).status_code in (401, 405)


def test_a_signed_in_ui_session_does_not_open_the_agent_api(api_token, users):
    for user in users.values():
        assert signed_in(user).get("/api/agent/self").status_code == 401


def test_the_right_token_opens_the_api(api_token, db):
    assert Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}").get("/api/admin/health").status_code == 200


def test_no_token_configured_means_no_request_passes(home, db):
    """A fresh home before `ormah init` has no token file: even an empty bearer value is refused."""
    for header in ("Bearer ", "Bearer None", "Bearer null", "Bearer undefined"):
        assert Client(HTTP_AUTHORIZATION=header).get("/api/admin/health").status_code == 401


def test_the_api_sends_no_cors_headers_so_web_pages_cannot_read_it(api_token, db):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}", HTTP_ORIGIN="https://evil.example")
    for response in (client.get("/api/admin/health"), client.options("/api/agent/remember",
                                                                    HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")):
        assert not any(h.lower().startswith("access-control-") for h in response.headers)
