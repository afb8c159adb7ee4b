"""`ormah context-pack`: the same router as the API, as text or JSON, within the budget."""

from __future__ import annotations

import json

from django.core.management import call_command

from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn
from memory.services import relation_create


def test_context_pack_text_shows_items_and_warnings(mem, capsys):
    old = mem("The shop API listens on port 8080", auto_link=False)
    new = mem("The shop API listens on port 9090 behind the proxy", auto_link=False)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES))
    call_command("context_pack", "shop API port", "--budget", "300")
    out = capsys.readouterr().out
    assert f"[fact {old.short_id}] The shop API listens on port 8080\n" in out
    assert f"  ! temporal_supersession: superseded by {new.short_id}" in out
    assert out.rstrip().splitlines()[-1].endswith("/300 tokens, 2 items")


def test_context_pack_json_stays_within_the_budget(mem, capsys):
    for i in range(6):
        mem(f"Deploy step {i}: run the release checklist item number {i} and wait for green", auto_link=False)
    call_command("context_pack", "deploy release checklist", "--budget", "60", "--json", "--policy", "auto")
    body = json.loads(capsys.readouterr().out)
    assert body["estimated_tokens"] <= 60 and body["budget_tokens"] == 60 and body["items"]


def test_context_pack_names_each_memory_by_its_type(mem, capsys):
    decision = mem("We chose PostgreSQL for the billing service", type="decision", auto_link=False)
    procedure = mem("To release billing: tag the commit, then run the deploy job", type="procedure",
                    auto_link=False)
    call_command("context_pack", "billing", "--budget", "300")
    out = capsys.readouterr().out
    assert f"[decision {decision.short_id}] We chose PostgreSQL for the billing service\n" in out
    assert f"[procedure {procedure.short_id}] To release billing" in out
