"""Hosts sharing one PostgreSQL database share the UI accounts and sessions (database rows) and the API token,
given the one shared secret of docs/team-server.md ("Deployment"): ORMAH_SECRET_KEY and ORMAH_API_TOKEN.

A "host" here is the settings one `ormah serve` would have: its own ORMAH_HOME and token file. bench/two_hosts.py
shows the same with two real servers.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db]

SHARED_KEY = "one-secret-key-for-every-host-0123456789-abcdefghijklmnop"


def _host(settings, home, *, secret_key: str = SHARED_KEY, api_token: str | None = "shared-api-token") -> None:
    settings.SECRET_KEY = secret_key
    settings.ORMAH = {**settings.ORMAH, "HOME": home, "MEMORY_DIR": home / "memory", "TOKEN_FILE": home / "api_token",
                      "API_TOKEN": api_token}


@pytest.fixture
def signed_in(settings, tmp_path) -> Client:
    """A browser signed in on host A."""
    get_user_model().objects.create_user(username="ormah", password="correct horse battery")
    _host(settings, tmp_path / "a")
    browser = Client()
    response = browser.post("/login/", {"username": "ormah", "password": "correct horse battery"})
    assert response.status_code == 302
    assert browser.get("/jobs/").status_code == 200
    return browser


def test_a_session_from_one_host_is_valid_on_another(signed_in, settings, tmp_path):
    _host(settings, tmp_path / "b")

    assert signed_in.get("/jobs/").status_code == 200


def test_a_host_with_its_own_secret_key_does_not_know_the_session(signed_in, settings, tmp_path):
    _host(settings, tmp_path / "b", secret_key="a-key-of-its-own-0123456789-abcdefghijklmnopqrstuvwxyz")

    response = signed_in.get("/jobs/")

    assert (response.status_code, response["Location"]) == (302, "/login/?next=/jobs/")


def test_every_host_accepts_the_shared_api_token(settings, tmp_path):
    api = Client(HTTP_AUTHORIZATION="Bearer shared-api-token")
    statuses = []
    for name in ("a", "b"):
        _host(settings, tmp_path / name)
        statuses.append(api.get("/api/admin/health").status_code)

    assert statuses == [200, 200]


def test_a_token_file_of_one_host_is_refused_by_another(settings, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "api_token").write_text("host-a-token\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "api_token").write_text("host-b-token\n")
    api = Client(HTTP_AUTHORIZATION="Bearer host-a-token")
    statuses = []
    for name in ("a", "b"):
        _host(settings, tmp_path / name, api_token=None)
        statuses.append(api.get("/api/admin/health").status_code)

    assert statuses == [200, 401]
