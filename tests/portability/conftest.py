"""Fixtures for backup, export and import: a varied store, a backup folder inside the test home, file listings."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from memory.domain.enums import EdgeType
from memory.services import edge_create, node_forget, node_mark_outdated, self_ensure


@pytest.fixture
def backups(home, settings) -> Path:
    """Backups go to <home>/backups for this test."""
    settings.ORMAH = {**settings.ORMAH, "BACKUP_DIR": home / "backups"}
    return home / "backups"


@pytest.fixture
def varied(mem) -> dict:
    """A self node with an identity link, edges with reasons, an outdated memory, unicode, tags, a tombstone."""
    me = self_ensure(name="Dana")
    tabs = mem("Dana prefers tabs over spaces in every editor", type="preference", about_self=True)
    db = mem("Die Abrechnung nutzt PostgreSQL 16 — 請求書は日本語でも 🧾", space="billing", tags=["db", "invoices"], title="Abrechnung — 請求書")
    deploy = mem("Deploys happen on Tuesdays after the release checklist", type="procedure")
    edge_create(source_ref=deploy.id, target_ref=db.id, edge=EdgeType.DEPENDS_ON, weight=0.8, reason="deploys touch db")
    node_mark_outdated(ref=db.id, reason="moved to PostgreSQL 17")
    gone = mem("A memory that will be forgotten soon enough", auto_link=False)
    node_forget(ref=gone.id)
    return {"self": me.id, "tabs": tabs.id, "db": db.id, "deploy": deploy.id, "gone": gone.id}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under nodes/ and deleted/ of a memory folder, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes()
            for folder in ("nodes", "deleted") for p in sorted((root / folder).glob("*")) if p.is_file()}


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()
