"""API tokens in the database (`ormah token create|list|revoke`): accepted beside ORMAH_API_TOKEN and the token
file by every host serving the database, stored as their sha256 only, judged with one indexed lookup per request.

Runs on both engines (ORMAH_TEST_DATABASE_URL: docs/team-server.md, "Running the tests on PostgreSQL").
"""

from __future__ import annotations

import hashlib
import io
import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.errors import Conflict, ValidationFailed
from ormah_site import tokens
from ormah_site.api import BearerToken
from ormah_site.models import ApiTokenRow
from ormah_site.tokens import (ApiTokenNotFound, api_token_create, api_token_list, api_token_revoke, token_ensure,
                               token_matches)

HEALTH = "/api/admin/health"


def status(secret: str) -> int:
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(HEALTH).status_code


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _host(settings, home, *, api_token: str | None = None) -> None:
    """The settings one `ormah serve` would have: its own home and token file, the one database."""
    settings.ORMAH = {**settings.ORMAH, "HOME": home, "MEMORY_DIR": home / "memory", "TOKEN_FILE": home / "api_token",
                      "API_TOKEN": api_token}


# ---------------------------------------------------------------------------
# What is stored, what opens the API
# ---------------------------------------------------------------------------

def test_a_created_token_opens_the_api_and_only_its_sha256_is_stored(home, db):
    row, secret = api_token_create(name="ci-bot")

    assert secret.startswith("ormah_") and len(secret) == len("ormah_") + 43  # 32 random bytes, base64url
    assert row.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in json.dumps(list(ApiTokenRow.objects.values()), default=str)
    assert status(secret) == 200


def test_a_revoked_token_is_refused(home, db):
    _, secret = api_token_create(name="ci-bot")
    assert status(secret) == 200

    api_token_revoke(name="ci-bot")

    assert status(secret) == 401
    assert ApiTokenRow.objects.get(name="ci-bot").revoked_at is not None


def test_the_configured_token_keeps_working_beside_database_tokens(home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": "configured-token"}
    _, secret = api_token_create(name="ci-bot")

    assert [status("configured-token"), status(secret), status("other"), status(secret + "x")] == [200, 200, 401, 401]


def test_the_token_file_keeps_working_beside_database_tokens(home, db):
    _, secret = api_token_create(name="ci-bot")
    file_token = token_ensure()

    assert [status(file_token), status(secret), status(file_token[:-1])] == [200, 200, 401]


def test_every_host_accepts_a_database_token_without_a_shared_secret_token(db, settings, tmp_path):
    _host(settings, tmp_path / "a")
    _, secret = api_token_create(name="laptop-dana")
    statuses = []
    for name in ("a", "b"):
        _host(settings, tmp_path / name)
        token_ensure()  # each host has a token file of its own, as after `ormah init`
        statuses.append(status(secret))

    assert statuses == [200, 200]


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

def test_a_name_is_taken_until_its_token_is_revoked(home, db):
    _, old = api_token_create(name="ci-bot")
    with pytest.raises(Conflict, match="An API token named 'ci-bot' exists"):
        api_token_create(name="ci-bot")

    api_token_revoke(name="ci-bot")
    _, new = api_token_create(name="ci-bot")

    assert [status(old), status(new)] == [401, 200]
    assert [(r.name, r.revoked_at is None) for r in api_token_list()] == [("ci-bot", False), ("ci-bot", True)]


@pytest.mark.parametrize("name", ["", "   ", "x" * 101, "tab\tname", "line\nbreak"])
def test_a_bad_name_is_refused(home, db, name):
    with pytest.raises(ValidationFailed, match="A token name is 1 to 100 printable characters"):
        api_token_create(name=name)
    assert ApiTokenRow.objects.count() == 0


def test_revoking_an_unknown_or_revoked_name_is_an_error(home, db):
    api_token_create(name="ci-bot")
    api_token_revoke(name="ci-bot")

    for name in ("ci-bot", "nobody"):
        with pytest.raises(ApiTokenNotFound, match=f"No API token named '{name}' that is not revoked"):
            api_token_revoke(name=name)


# ---------------------------------------------------------------------------
# The hot path: one indexed lookup, last_used_at written at most once a minute, constant-time comparison
# ---------------------------------------------------------------------------

def test_last_used_is_written_at_most_once_a_minute(home, db):
    row, secret = api_token_create(name="ci-bot")
    assert row.last_used_at is None
    start = timezone.now()
    seen = []
    for seconds in (0, 59, 60, 61, 119):
        assert token_matches(secret, now=start + timedelta(seconds=seconds))
        seen.append((ApiTokenRow.objects.get(pk=row.pk).last_used_at - start).total_seconds())

    assert seen == [0, 0, 60, 60, 60]


def _queries_of_authenticating(token: str, *, times: int = 1) -> int:
    request = RequestFactory().get(HEALTH, HTTP_AUTHORIZATION=f"Bearer {token}")
    bearer = BearerToken()
    with CaptureQueriesContext(connection) as queries:
        verdicts = [bearer(request) for _ in range(times)]
    assert len(set(verdicts)) == 1
    return len(queries)


def test_the_configured_token_costs_no_query(home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": "configured-token"}
    api_token_create(name="ci-bot")

    assert _queries_of_authenticating("configured-token") == 0


def test_a_database_token_costs_one_lookup_per_request_and_an_update_a_minute(home, db):
    row, secret = api_token_create(name="ci-bot")

    first = _queries_of_authenticating(secret)  # the lookup, then last_used_at
    again = _queries_of_authenticating(secret, times=3)  # within the minute; the verdict is kept on the request
    wrong = _queries_of_authenticating("ormah_wrong")

    assert (first, again, wrong) == (2, 1, 1)


def test_the_digest_is_looked_up_by_a_unique_index(db):
    """A UNIQUE constraint is backed by an index on both engines (SQLite's autoindex, PostgreSQL's unique index)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, ApiTokenRow._meta.db_table)
    unique = sorted(c["columns"] for c in constraints.values() if c["unique"] and not c["primary_key"])
    assert unique == [["digest"], ["name"]]  # name: among the tokens not revoked


def test_a_database_token_is_compared_in_constant_time_on_its_digest(home, db, monkeypatch):
    _, secret = api_token_create(name="ci-bot")
    calls, original = [], tokens.hmac.compare_digest

    def compare(a, b):
        calls.append((a, b))
        return original(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", compare)
    digest = hashlib.sha256(secret.encode()).hexdigest().encode()

    assert status(secret) == 200
    assert calls == [(digest, digest)]  # no configured token and no token file in this home: the database only


# ---------------------------------------------------------------------------
# `ormah token` and the admin
# ---------------------------------------------------------------------------

def test_token_create_prints_the_secret_alone_then_list_and_revoke(home, db):
    secret, note = run("create", "ci-bot")
    assert "shown this once only" in note and secret.strip() not in note
    assert status(secret.strip()) == 200

    listing, _ = run("list")
    assert listing.startswith("ci-bot ") and listing.rstrip().endswith("active")
    assert hashlib.sha256(secret.strip().encode()).hexdigest()[:12] in listing and "last used never" not in listing

    revoked, _ = run("revoke", "ci-bot")
    assert revoked == "Revoked API token 'ci-bot': every host refuses it from now on.\n"
    assert [t["revoked_at"] is not None for t in json.loads(run("list", "--json")[0])] == [True]
    assert status(secret.strip()) == 401


@pytest.mark.parametrize("args, message", [(["create"], "`token create` needs a name"),
                                           (["revoke"], "`token revoke` needs a name"),
                                           (["revoke", "nobody"], "No API token named 'nobody'"),
                                           (["create", " "], "A token name is 1 to 100 printable characters")])
def test_token_command_errors_are_clear(home, db, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_token_create_json_carries_the_secret(home, db):
    created = json.loads(run("create", "ci-bot", "--json")[0])
    assert created["name"] == "ci-bot" and status(created["secret"]) == 200


@pytest.fixture
def admin_client(db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("ormah", None, "pw"))
    return client


def test_the_admin_shows_tokens_with_a_read_only_digest_and_no_add(home, admin_client):
    row, _ = api_token_create(name="ci-bot")

    listing = admin_client.get("/admin/ormah_site/apitokenrow/")
    change = admin_client.get(f"/admin/ormah_site/apitokenrow/{row.pk}/change/").content.decode()

    assert listing.status_code == 200 and "ci-bot" in listing.content.decode()
    assert row.digest in change and 'name="digest"' not in change and 'name="name"' not in change
    assert admin_client.get("/admin/ormah_site/apitokenrow/add/").status_code == 403


def test_the_admin_revokes_the_selected_tokens(home, admin_client):
    row, secret = api_token_create(name="ci-bot")

    response = admin_client.post("/admin/ormah_site/apitokenrow/", {"action": "revoke", "index": 0,
                                                                     "_selected_action": [row.pk]})

    assert response.status_code == 302
    assert status(secret) == 401
