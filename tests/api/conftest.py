"""API fixtures: a known bearer token, a client that sends it, and one that does not."""

from __future__ import annotations

import pytest
from django.test import Client

TOKEN = "test-token-0123456789"


@pytest.fixture
def api_token(home, settings) -> str:
    """The token every request must present (as ORMAH_API_TOKEN would set it)."""
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return TOKEN


class ApiClient:
    """JSON in, JSON out, with the bearer token; `.raw` for bodies that are not JSON."""

    def __init__(self, token: str | None) -> None:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        self.client = Client(**headers)

    def get(self, path: str, **params):
        return self.client.get(path, params)

    def post(self, path: str, body=None):
        return self.client.post(path, body if body is not None else {}, content_type="application/json")

    def patch(self, path: str, body):
        return self.client.patch(path, body, content_type="application/json")

    def delete(self, path: str):
        return self.client.delete(path)

    def raw(self, method: str, path: str, data: bytes | str, content_type: str = "application/json"):
        return self.client.generic(method, path, data, content_type=content_type)


@pytest.fixture
def api(api_token, db) -> ApiClient:
    """A client that sends the right token."""
    return ApiClient(api_token)


@pytest.fixture
def anon(api_token, db) -> ApiClient:
    """A client without a token (the server still has one configured)."""
    return ApiClient(None)
