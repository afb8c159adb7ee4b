"""Messages count in the right number: '1 related memory', '1 memory, newest first', '1 proposal', '1 item'."""

import io
import json

import pytest
from django.core.management import call_command

from memory.services import edge_create, node_forget
from ormah_site import mcp_text
from ormah_site.cli import render

NODE = {"id": "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f", "type": "fact", "title": "Invoices live in PostgreSQL",
        "content": "Invoices live in PostgreSQL 16.", "short_id": "3f2a9c1e", "space": None,
        "updated": "2026-11-29T10:00:00+00:00"}


def test_remember_with_one_auto_link_says_one_related_memory():
    text = render.remembered({"node": NODE, "auto_links": [{"title": "Billing database", "similarity": 0.71}]})
    assert text.splitlines()[2] == "Auto-linked to 1 related memory:"


def test_pack_footer_with_one_item():
    data = {"text": "x\n", "estimated_tokens": 12, "budget_tokens": 300, "items": [{}]}
    assert render.pack_text(data).endswith("-- 12/300 tokens, 1 item")
    assert mcp_text.context_pack_text(data).endswith("-- 12/300 tokens, 1 item")


def test_mcp_list_of_one_memory():
    assert mcp_text.listed_text({"results": [NODE]}).splitlines()[0] == "1 memory, newest first:"


def test_mcp_list_of_one_proposal():
    row = {"id": "abcdef0123", "kind": "merge", "status": "pending", "action_summary": "Merge two facts",
           "reason": "same text", "nodes": [{"short_id": "3f2a9c1e", "title": "Invoices"}]}
    assert mcp_text.proposals_text([row]).splitlines()[0] == "1 proposal:"


def test_doctor_counts_one_dangling_connection(mem):
    source = mem("The ferry leaves from pier nine", auto_link=False)
    target = mem("Pier nine closes in winter", auto_link=False)
    edge_create(source_ref=source.id, target_ref=target.id)
    node_forget(ref=target.id)
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("doctor", "--json", stdout=out)
    check = next(c for c in json.loads(out.getvalue())["checks"] if c["check"] == "dangling_connections")
    assert check["detail"].startswith("1 connection to memories that are gone")


def test_the_remember_command_with_one_auto_link_says_one_related_memory(mem):
    mem("The billing service stores invoices in PostgreSQL 16", auto_link=False)
    out = io.StringIO()
    call_command("remember", "The billing service keeps its invoices in PostgreSQL 16", stdout=out)
    assert out.getvalue().splitlines()[2] == "Auto-linked to 1 related memory:"
