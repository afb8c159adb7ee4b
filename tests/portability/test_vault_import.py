"""Import of a small Obsidian-style vault: front matter kept, wikilinks and relative links as edges (unresolved
ones reported), duplicates skipped, long notes in passages, and a re-import that updates the edited note."""

from __future__ import annotations

from datetime import UTC, datetime

from memory import runtime
from memory.models import EdgeRow, NodeRow, PassageRow
from memory.selectors import node_get
from memory.services import memory_import

BILLING = """---
title: Billing service
type: decision
tags: [billing, db]
aliases: [Invoicing]
created: 2024-03-01
status: active
id: 42
---
We bill on the 1st; invoices live in [[Postgres]] and deploys follow the [runbook](../Runbooks/deploy.md).
See also [[Missing Note]] and ![[diagram.png]]; `[[in code]]` is text, not a link.
"""
POSTGRES = "# Postgres\n\nWe run PostgreSQL 16 on port 5433 for billing.\n"
DEPLOY = """---
type: howto
---
# Deploy

Tag, build, then ship. Check [[Invoicing|the billing note]] first.
"""
LONG = "# Handbook\n\n" + "\n\n".join(
    f"## Chapter {i}\n\n" + f"Chapter {i} explains topic number {i} of the handbook in some detail. " * 12
    for i in range(12))


def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Runbooks").mkdir()
    (root / "Projects" / "Billing.md").write_text(BILLING)
    (root / "Postgres.md").write_text(POSTGRES)
    (root / "Runbooks" / "deploy.md").write_text(DEPLOY)
    (root / "copy of Postgres.md").write_text(POSTGRES)
    (root / "Handbook.md").write_text(LONG)
    return root


def by_title(title: str) -> NodeRow:
    return NodeRow.objects.get(title=title)


def edges() -> set[tuple[str, str]]:
    return set(EdgeRow.objects.values_list("source__title", "target__title"))


def test_vault_import_keeps_front_matter_links_and_skips_duplicates(home, db, tmp_path):
    root = vault(tmp_path)
    report = memory_import(path=root)

    assert len(report.imported) == 4
    assert [p.rsplit("/", 1)[1] for p, _ in report.duplicates] == ["copy of Postgres.md"]
    assert report.unresolved == [("Projects/Billing.md", "Missing Note")]
    billing = node_get(store=runtime.store(), ref=by_title("Billing service").uid)
    assert (billing.type, billing.tags, billing.created) == ("decision", ("billing", "db"),
                                                             datetime(2024, 3, 1, tzinfo=UTC))
    assert dict(billing.extra) == {"status": "active", "note_id": 42, "aliases": ["Invoicing"]}
    assert by_title("Deploy").type == "procedure" and by_title("Postgres").type == "fact"
    assert edges() == {("Billing service", "Postgres"), ("Billing service", "Deploy"), ("Deploy", "Billing service")}
    assert PassageRow.objects.filter(node=by_title("Handbook")).count() > 1


def test_reimport_updates_the_edited_note_and_adds_nothing(home, db, tmp_path):
    root = vault(tmp_path)
    memory_import(path=root)
    (root / "copy of Postgres.md").unlink()  # once Postgres.md changes, the copy would be a note of its own
    postgres_id = by_title("Postgres").uid
    (root / "Postgres.md").write_text("# Postgres\n\nWe moved to PostgreSQL 17 on port 5434.\n")

    again = memory_import(path=root)

    assert (again.imported, again.updated, again.unchanged) == ([], [postgres_id], 3)
    assert NodeRow.objects.count() == 4
    assert "PostgreSQL 17" in NodeRow.objects.get(uid=postgres_id).content
    assert ("Billing service", "Postgres") in edges()
    third = memory_import(path=root)
    assert (third.imported, third.updated, third.unchanged) == ([], [], 4)


def test_a_relative_folder_path_works(home, db, tmp_path, monkeypatch):
    vault(tmp_path)
    monkeypatch.chdir(tmp_path)
    report = memory_import(path="vault")
    assert len(report.imported) == 4 and not report.skipped
    again = memory_import(path=str(tmp_path / "vault"))  # the same folder, named absolutely: same memories
    assert (again.imported, again.unchanged) == ([], 4)
