"""`ormah self`: the self node and the memories that define the user."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.services import self_ensure


def run(*args) -> str:
    out = StringIO()
    call_command("self", *args, stdout=out)
    return out.getvalue()


def test_self_prints_the_node_and_what_defines_it(mem):
    me = self_ensure(name="Dana")
    tabs = mem("Dana prefers tabs over spaces", type="preference", about_self=True, auto_link=False)
    text = run()
    assert text.startswith(f"[person] Dana\nID: {me.id} | Tier: core | Space: global")
    assert f"Defined by 1 memory:\n  [preference] Dana prefers tabs over spaces  ({tabs.short_id}, working)" in text


def test_self_json(mem):
    me = self_ensure(name="Dana")
    mem("Dana works on billing", about_self=True, space="billing", auto_link=False)
    mem("Dana prefers tabs", type="preference", about_self=True, auto_link=False)
    body = json.loads(run("--json", "--space", "search"))
    assert body["node"]["id"] == me.id
    assert [m["content"] for m in body["defines"]] == ["Dana prefers tabs"]


def test_self_without_identity_memories(mem):
    self_ensure(name="Dana")
    assert run().rstrip().endswith("No identity memories yet.")


def test_self_before_init_is_a_command_error(home, db):
    with pytest.raises(CommandError) as excinfo:
        run()
    assert str(excinfo.value) == "There is no self node yet; run `ormah init`"


def test_a_limit_below_one_is_a_command_error(home, db):
    self_ensure(name="Dana")
    with pytest.raises(CommandError) as excinfo:
        run("--limit", "0")
    assert str(excinfo.value) == "--limit must be at least 1"
