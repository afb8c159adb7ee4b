"""UI fixtures: the web account and a signed-in test client."""

from __future__ import annotations

import pytest
from django.test import Client

PASSWORD = "correct horse battery staple"


@pytest.fixture
def ui_user(db, settings):
    from django.contrib.auth import get_user_model

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; sign-in is still real
    return get_user_model().objects.create_superuser(username="ormah", email=None, password=PASSWORD)


@pytest.fixture
def ui(ui_user, home) -> Client:
    """A client signed in as the UI account (CSRF checks on, like a browser)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(ui_user)
    return client


def csrf_post(client: Client, path: str, data: dict | None = None, *, htmx: bool = True):
    """POST the way the page does: with the CSRF cookie and the X-CSRFToken header htmx sends."""
    client.get("/stats/")  # any page with a form sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    headers = {"HTTP_X_CSRFTOKEN": token}
    if htmx:
        headers["HTTP_HX_REQUEST"] = "true"
    return client.post(path, data or {}, **headers)
