"""MCP fixtures: a live HTTP server on the test database with a known token, as `ormah init` leaves it."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

TOKEN = "mcp-test-token-0123456789"


@pytest.fixture
def ormah_server(live_server, home, settings, transactional_db) -> str:
    """The base URL of a live Ormah API (index ready, self node present) that expects TOKEN."""
    from memory.services import index_sync, self_ensure

    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    index_sync()
    self_ensure(name="Dana")
    parts = urlsplit(live_server.url)
    return f"http://127.0.0.1:{parts.port}"
