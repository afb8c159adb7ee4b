"""`ormah recall`: the pipeline directly (no HTTP), the same filters as the API, text or --json."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory import runtime
from memory.models import RetrievalEventRow
from memory.selectors import node_get


def recall(*args) -> str:
    out = StringIO()
    call_command("recall", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def memories(mem):
    return {
        "billing": mem("The billing service stores invoices in PostgreSQL 16", title="Billing database",
                       space="billing", tags=["db"], auto_link=False),
        "search": mem("The search service keeps its index in SQLite with FTS5", space="search", type="decision",
                      tags=["db"], auto_link=False),
        "global": mem("Dana prefers small pull requests", type="preference", auto_link=False),
    }


def test_recall_prints_the_agent_text(memories):
    text = recall("which database stores invoices")
    assert text.startswith("Found ")
    assert f"ID: {memories['billing'].id}" in text


def test_recall_json_lists_the_hits_with_the_api_fields(memories):
    hits = json.loads(recall("which database stores invoices", "--json"))
    assert hits[0]["id"] == memories["billing"].id
    assert sorted(hits[0]) == ["activated_by", "activation_edge", "content", "content_truncated", "created", "id",
                               "legs", "score", "short_id", "source", "space", "tags", "tier", "title", "type",
                               "valid_until", "warnings"]


@pytest.mark.parametrize("query,args,expected", [
    ("which service keeps its index in SQLite", ["--spaces", "search"], ["search"]),
    ("Dana prefers small pull requests", ["--spaces", "global"], ["global"]),
    ("which service keeps its index in SQLite", ["--types", "decision"], ["search"]),
    ("which database stores invoices", ["--tags", "db", "--limit", "1"], ["billing"]),
    ("which database stores invoices", ["--tiers", "core"], []),
    ("which database stores invoices", ["--after", "2999-01-01"], []),
    ("which database stores invoices", ["--before", "2000-01-01"], []),
])
def test_recall_filters(memories, query, args, expected):
    names = {node.id: name for name, node in memories.items()}
    hits = json.loads(recall(query, "--json", *args))
    assert [names[h["id"]] for h in hits] == expected


def test_recall_with_no_match_says_so(memories):
    assert recall("zebra migration in kenya").strip() == "No good match for this query."


def test_recall_is_not_use_and_logs_no_surfacing(memories):
    recall("which database stores invoices")
    assert node_get(store=runtime.store(), ref=memories["billing"].id).access_count == 0
    assert RetrievalEventRow.objects.count() == 0


@pytest.mark.parametrize("args,message", [
    (["   "], "Invalid input: query: must not be blank"),
    (["x", "--limit", "0"], "Invalid input: limit: Input should be greater than or equal to 1"),
    (["x", "--types", "rumour"], "Invalid input: types.0: Input should be 'fact', 'decision', 'preference', "
                                 "'event', 'person', 'project', 'concept', 'procedure', 'goal' or 'observation'"),
    (["x", "--after", "last tuesday"], "Invalid input: created_after: Input should be a valid datetime or date, "
                                       "invalid character in year"),
])
def test_recall_bad_input_is_a_command_error(mem, args, message):
    with pytest.raises(CommandError) as excinfo:
        recall(*args)
    assert str(excinfo.value) == message
