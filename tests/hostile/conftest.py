"""Hostile-input fixtures: the in-process API client with a token, and a signed-in UI client (CSRF enforced)."""

from __future__ import annotations

import pytest

from tests.api.conftest import TOKEN, ApiClient


@pytest.fixture
def api(home, db, settings) -> ApiClient:
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return ApiClient(TOKEN)


# The browser fixtures of tests/browser (one Chromium per package, a signed-in page per test).
from tests.browser.conftest import browser, new_page, ui_account  # noqa: E402,F401
