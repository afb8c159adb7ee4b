"""Claims: every page and form of the web UI needs a signed-in user, every POST needs the CSRF token, signing in
cannot be turned into an open redirect, and the cookies and headers are the strict ones (docs/security.md §3).

The routes come from Django's resolver: a view added without login_required fails here.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.test import Client

from tests.security.conftest import PASSWORD, signed_in
from tests.security.urls import ui_urls


def test_the_resolver_finds_the_ui():
    assert {"/", "/stats/", "/proposals/", "/jobs/", "/whisper/", "/nodes/abcd1234/edit/"} <= set(ui_urls())


@pytest.mark.parametrize("url", ui_urls())
def test_anonymous_visitors_are_sent_to_sign_in(db, url):
    response = Client().get(url)
    assert response.status_code == 302, (url, response.status_code)
    assert response["Location"] == f"/login/?next={quote(url)}"


@pytest.mark.parametrize("url", ui_urls())
def test_anonymous_posts_are_refused(db, url):
    assert Client(enforce_csrf_checks=True).post(url, {"x": "1"}).status_code == 403
    assert Client().post(url, {"x": "1"}).status_code == 302  # and without CSRF checks: sent to sign in


@pytest.mark.parametrize("url", [*ui_urls(), "/login/", "/logout/", "/admin/login/", "/admin/logout/"])
def test_a_signed_in_post_without_the_csrf_token_is_403(users, url):
    client = signed_in(users["superuser"])
    assert client.post(url, {"x": "1"}).status_code == 403
    assert client.post(url, {"x": "1"}, HTTP_X_CSRFTOKEN="forged-token-value-0123456789abcd").status_code == 403


def test_a_signed_in_post_with_the_csrf_token_gets_through(users, home):
    client = signed_in(users["superuser"])
    client.get("/stats/")
    token = client.cookies["csrftoken"].value
    response = client.post("/jobs/auto_linker/pause/", {"paused": "1"}, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 302


def _sign_in(next_url: str):
    client = Client(enforce_csrf_checks=True)
    page = client.get(f"/login/?next={quote(next_url, safe='')}")
    token = page.cookies["csrftoken"].value
    return client.post("/login/", {"username": "ormah", "password": PASSWORD, "next": next_url,
                                   "csrfmiddlewaretoken": token})


@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/", "javascript:alert(1)",
                                      "/\\evil.example", "http://127.0.0.1.evil.example/"])
def test_signing_in_never_redirects_off_site(users, next_url):
    response = _sign_in(next_url)
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_a_wrong_password_signs_nobody_in(users):
    client = Client()
    client.post("/login/", {"username": "ormah", "password": "wrong"})
    assert client.get("/stats/").status_code == 302


def test_cookies_and_headers_are_strict(users):
    response = _sign_in("/stats/")
    session, csrf = response.cookies["sessionid"], response.cookies["csrftoken"]
    assert (session["httponly"], session["samesite"]) == (True, "Lax")
    assert csrf["samesite"] == "Strict"
    page = Client()
    page.force_login(users["superuser"])
    answer = page.get("/stats/")
    assert answer["X-Frame-Options"] == "DENY"
    assert answer["X-Content-Type-Options"] == "nosniff"
    assert answer["Referrer-Policy"] == "same-origin"
    assert "script-src 'self'" in answer["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in answer["Content-Security-Policy"]


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.nip.io", "localhost.evil.example"])
def test_requests_for_another_host_name_are_refused(users, api_token, host):
    """ALLOWED_HOSTS holds only loopback names: a DNS-rebinding page cannot reach the UI or the API."""
    client = Client(HTTP_HOST=host, raise_request_exception=False)
    client.force_login(users["superuser"])
    assert client.get("/stats/").status_code == 400
    refused = client.get("/api/admin/health", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert refused.status_code == 400
    assert "ORMAH_ALLOWED_HOSTS" in refused.json()["message"]  # the client is told why (it said "400 Bad Request")


def test_wrong_passwords_are_limited_per_account(users):
    from ormah_site.views import MAX_FAILED_SIGN_INS

    client = Client()
    for _ in range(MAX_FAILED_SIGN_INS):
        assert client.post("/login/", {"username": "ormah", "password": "wrong"}).status_code == 200
    refused = client.post("/login/", {"username": "Ormah ", "password": PASSWORD})  # the name as typed, any case
    assert refused.status_code == 200 and "Too many failed sign-ins" in refused.content.decode()
    assert client.get("/stats/").status_code == 302
    other = Client()  # another account is not locked by this one's failures
    assert other.post("/login/", {"username": "staffer", "password": PASSWORD}).status_code == 302


def test_a_right_password_clears_the_failures(users):
    from ormah_site.views import MAX_FAILED_SIGN_INS

    client = Client()
    for _ in range(MAX_FAILED_SIGN_INS - 1):
        client.post("/login/", {"username": "ormah", "password": "wrong"})
    assert client.post("/login/", {"username": "ormah", "password": PASSWORD}).status_code == 302
    client.post("/logout/")
    for _ in range(MAX_FAILED_SIGN_INS - 1):
        client.post("/login/", {"username": "ormah", "password": "wrong"})
    assert client.post("/login/", {"username": "ormah", "password": PASSWORD}).status_code == 302


def test_the_admin_sign_in_has_the_same_limit(users):
    from ormah_site.views import MAX_FAILED_SIGN_INS

    client = Client()
    for _ in range(MAX_FAILED_SIGN_INS):
        client.post("/admin/login/", {"username": "ormah", "password": "wrong"})
    refused = client.post("/admin/login/", {"username": "ormah", "password": PASSWORD})
    assert refused.status_code == 200 and "Too many failed sign-ins" in refused.content.decode()
    assert client.post("/login/", {"username": "ormah", "password": PASSWORD}).status_code == 200  # one count


def test_the_lock_lasts_the_window_from_the_first_failure(users):
    from datetime import timedelta
    from datetime import timezone as tz

    from django.core.cache import cache
    from django.db import connection
    from django.utils import timezone

    from ormah_site.views import FAILED_SIGN_IN_WINDOW, MAX_FAILED_SIGN_INS, _failures_key

    client = Client()
    for _ in range(MAX_FAILED_SIGN_INS):
        client.post("/login/", {"username": "ormah", "password": "wrong"})
    with connection.cursor() as cursor:  # the database cache's own expiry of the count (not the default 300 s)
        cursor.execute("SELECT expires FROM ormah_cache WHERE cache_key = %s", [cache.make_key(_failures_key("ormah", "127.0.0.1"))])
        (expires,) = cursor.fetchone()
    if timezone.is_naive(expires):
        expires = timezone.make_aware(expires, tz.utc)
    assert expires - timezone.now() > timedelta(seconds=FAILED_SIGN_IN_WINDOW - 60)


def test_a_strangers_failures_do_not_lock_the_owner_at_another_address(users):
    """Failures count per (account name, client address): a stranger who reaches /login/ locks only the stranger,
    for this name; the owner signing in from another address is not locked (on /admin/login/ either)."""
    from ormah_site.views import MAX_FAILED_SIGN_INS

    stranger = Client(REMOTE_ADDR="192.0.2.7")
    for _ in range(MAX_FAILED_SIGN_INS):
        stranger.post("/login/", {"username": "ormah", "password": "wrong"})
    refused = stranger.post("/login/", {"username": "ormah", "password": PASSWORD})
    assert refused.status_code == 200 and "Too many failed sign-ins" in refused.content.decode()
    owner = Client(REMOTE_ADDR="127.0.0.1")
    assert owner.post("/login/", {"username": "ormah", "password": PASSWORD}).status_code == 302
    assert Client(REMOTE_ADDR="127.0.0.1").post("/admin/login/", {"username": "ormah", "password": PASSWORD},
                                                ).status_code == 302


def test_an_address_guessing_across_names_is_limited(users):
    """The wider limit: MAX_FAILED_SIGN_INS_PER_ADDRESS failures from one address, any names, lock that address
    (every name, the right password included); another address is not locked. X-Forwarded-For is not trusted."""
    from ormah_site.views import MAX_FAILED_SIGN_INS, MAX_FAILED_SIGN_INS_PER_ADDRESS

    stranger = Client(REMOTE_ADDR="192.0.2.7")
    names = [f"guess{i}" for i in range(MAX_FAILED_SIGN_INS_PER_ADDRESS // (MAX_FAILED_SIGN_INS - 1) + 1)]
    tries = 0
    for name in names:
        for _ in range(MAX_FAILED_SIGN_INS - 1):
            if tries < MAX_FAILED_SIGN_INS_PER_ADDRESS:
                stranger.post("/login/", {"username": name, "password": "wrong"})
                tries += 1
    refused = stranger.post("/login/", {"username": "ormah", "password": PASSWORD},
                            HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert refused.status_code == 200 and "Too many failed sign-ins" in refused.content.decode()
    assert Client(REMOTE_ADDR="198.51.100.4").post("/login/", {"username": "ormah", "password": PASSWORD},
                                                   ).status_code == 302
