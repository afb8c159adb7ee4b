"""A typo in the self node's file must not mint a second self node (review5, session 21).

`make run` runs `ormah init` at every start, and init made a new self node whenever the index held none, which it
does not once the self node's file is malformed (a hand edit's typo: `type: persn`). The person then fixed the typo
and had two self nodes; the new, empty one kept the index, and the original, with every `defines` link to the
memories about them, was left out ("drift: not_indexed"), so identity recall and whisper lost them."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from memory import runtime
from memory.errors import MalformedNodeFile
from memory.models import NodeRow
from memory.services import index_sync, self_ensure
from tests.api.conftest import TOKEN, ApiClient, api_token  # noqa: F401 (api_token: a fixture)


def _break_self(me):
    path = runtime.store().path_for(me.id)
    path.write_text(path.read_text().replace("type: person", "type: persn"))
    index_sync()
    assert not NodeRow.objects.filter(is_self=True).exists()
    return path


def _selves() -> list[str]:
    return sorted(p.name for p in runtime.store().nodes_dir.glob("*.md") if "system:self" in p.read_text())


def test_self_ensure_names_the_malformed_self_file_instead_of_minting_another(mem):
    me = self_ensure(name="Dana")
    mem("Dana prefers tabs", about_self=True, auto_link=False)
    path = _break_self(me)

    with pytest.raises(MalformedNodeFile) as caught:
        self_ensure()
    assert str(path).endswith(str(caught.value.path)) and "unknown type" in caught.value.reason
    assert _selves() == [path.name]

    path.write_text(path.read_text().replace("type: persn", "type: person"))
    index_sync()
    assert self_ensure().id == me.id and _selves() == [path.name]


def test_init_says_so_and_goes_on(mem):
    me = self_ensure(name="Dana")
    path = _break_self(me)
    out, err = io.StringIO(), io.StringIO()

    call_command("init", stdout=out, stderr=err)

    assert _selves() == [path.name]
    assert f"Self node:  its file memory/nodes/{path.name} is malformed" in out.getvalue()
    assert "API token:" in out.getvalue() and "Web UI:" in out.getvalue()  # the rest of init went on


def test_the_api_names_the_file_and_keeps_an_about_self_memory_from_losing_its_link(mem, api_token):
    api = ApiClient(TOKEN)
    me = self_ensure(name="Dana")
    path = _break_self(me)

    got = api.get("/api/agent/self")
    made = api.post("/api/agent/remember", {"content": "Dana is allergic to peanuts", "about_self": True})

    for answer in (got, made):
        assert answer.status_code == 422 and answer.json()["error"] == "malformed_file", answer.json()
        assert f"memory/nodes/{path.name}" in answer.json()["message"]
    assert not NodeRow.objects.filter(content="Dana is allergic to peanuts").exists()
    assert api.post("/api/agent/remember", {"content": "The shop opens at nine"}).status_code == 201
