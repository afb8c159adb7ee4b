"""Claim: the admin is for staff only; the API docs and schema for staff or the token (docs/security.md §4).

Every admin URL from the resolver: anonymous visitors and signed-in users who are not staff are sent to the admin
sign-in page; staff without permissions are refused every model page; the UI account (a superuser) gets in.
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.security.conftest import signed_in
from tests.security.urls import admin_urls

PUBLIC = {"/admin/login/", "/admin/logout/"}
MODEL_PAGES = [u for u in admin_urls()
               if u.count("/") >= 4 and not u.startswith(("/admin/r/", "/admin/password_change/"))]


def test_the_resolver_finds_the_admin():
    assert "/admin/memory/noderow/" in admin_urls() and len(admin_urls()) > 100


@pytest.mark.parametrize("url", sorted(set(admin_urls()) - PUBLIC))
def test_anonymous_and_non_staff_users_are_sent_to_the_admin_sign_in(users, url):
    for client in (Client(), signed_in(users["plain"])):
        response = client.get(url)
        assert response.status_code == 302, (url, response.status_code)
        assert response["Location"].startswith("/admin/login/"), (url, response["Location"])


@pytest.mark.parametrize("url", MODEL_PAGES)
def test_staff_without_permissions_cannot_open_a_model_page(users, url):
    response = signed_in(users["staff"]).get(url, follow=True)
    assert response.status_code in (403, 404) or response.request["PATH_INFO"] == "/admin/", url


def test_the_ui_account_gets_in(users):
    client = signed_in(users["superuser"])
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/memory/noderow/").status_code == 200


@pytest.mark.parametrize("url", ["/api/openapi.json", "/api/docs"])
def test_the_api_docs_need_staff_or_the_token(users, api_token, url):
    assert signed_in(users["plain"]).get(url).status_code in (302, 401)
    assert signed_in(users["staff"]).get(url).status_code == 200
    assert Client(HTTP_AUTHORIZATION=f"Bearer {api_token}").get(url).status_code == 200
