"""The tag filters of recall and of the listing match a tag whatever its case, on SQLite and on PostgreSQL alike.

Writes store tags lowercased (memory.domain.requests); the asked tags are normalized the same way before they are
compared, and the index's tag rows hold a tag typed into a file by hand the same way. Before: the listing compared `tags_text` with LIKE, which SQLite folds for ASCII and PostgreSQL does not,
and `=` (case-sensitive on both), so "DB" listed a memory tagged "db ops" on SQLite only and one tagged "db" on
neither; recall's filter compared the tag rows exactly (case-sensitive on both)."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.models import NodeTagRow
from memory.services import index_sync


@pytest.fixture
def tagged(mem):
    only = mem("The billing service stores invoices in PostgreSQL 16", title="Billing database", tags=["db"],
               auto_link=False)
    two = mem("The search service keeps its index in PostgreSQL too", title="Search database", tags=["db", "ops"],
              auto_link=False)
    mem("The release checklist lives in the wiki", title="Release checklist", tags=["process"], auto_link=False)
    return {only.id, two.id}


@pytest.mark.parametrize("asked", ["db", "DB", "Db", " db "])
def test_the_listing_filters_by_a_tag_in_any_case(api, tagged, asked):
    body = api.get("/api/agent/nodes", tags=asked).json()
    assert {r["id"] for r in body["results"]} == tagged


@pytest.mark.parametrize("asked", ["db", "DB", "Db", " db "])
def test_recall_filters_by_a_tag_in_any_case(api, tagged, asked):
    body = api.post("/api/agent/recall", {"query": "which database stores the data", "tags": [asked]}).json()
    assert {r["id"] for r in body["results"]} == tagged


def test_the_listing_needs_every_tag_asked_in_any_case(api, tagged, mem):
    body = api.get("/api/agent/nodes", tags="DB,Ops").json()
    assert [r["title"] for r in body["results"]] == ["Search database"]


def test_a_capital_tag_typed_into_a_file_by_hand_is_found_in_any_case(api, mem):
    node = mem("The deploy notes for the payments cluster", title="Payments deploy", auto_link=False)
    path = runtime.store().path_for(node.id)
    head, _, body = path.read_text().partition("\n---\n")
    lines = [line for line in head.split("\n") if not line.startswith("tags:")]
    path.write_text("\n".join(lines) + "\ntags: [Payments, Deploy Notes]\n---\n" + body)
    index_sync()

    listed = api.get("/api/agent/nodes", tags="payments,deploy notes").json()["results"]
    recalled = api.post("/api/agent/recall", {"query": "payments deploy notes", "tags": ["PAYMENTS"]}).json()
    assert [r["id"] for r in listed] == [node.id]
    assert [r["id"] for r in recalled["results"]] == [node.id]
    assert sorted(NodeTagRow.objects.filter(node__uid=node.id).values_list("tag", flat=True)) == [
        "deploy-notes", "payments"]
