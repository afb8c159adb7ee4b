"""Shared fixtures: a temporary memory home per test, the real embedder, helpers to write through services."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.domain.requests import NodeCreate


@pytest.fixture
def home(tmp_path: Path, settings) -> Path:
    """A fresh ORMAH home (markdown folder, lock file, token file) for one test; the index is the test DB."""
    ormah = dict(settings.ORMAH)
    ormah.update(HOME=tmp_path, MEMORY_DIR=tmp_path / "memory", TOKEN_FILE=tmp_path / "api_token", API_TOKEN=None)
    settings.ORMAH = ormah
    return tmp_path


@pytest.fixture
def mem(home, db):
    """A function that remembers through the real service and returns the node."""
    from memory.services import node_create

    def remember(content: str, **fields):
        auto_link = fields.pop("auto_link", True)
        return node_create(request=NodeCreate(content=content, **fields), auto_link=auto_link).node

    return remember
