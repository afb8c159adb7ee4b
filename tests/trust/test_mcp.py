"""The MCP tools against a live API: context_pack, and recall text with warnings on a superseded memory."""

from __future__ import annotations

import asyncio

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from memory.domain.requests import NodeCreate
from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn
from memory.services import node_create, relation_create
from ormah_site.mcp_server import OrmahApi, build_server
from tests.mcp.conftest import TOKEN, ormah_server  # noqa: F401 (the live-server fixture)

pytestmark = pytest.mark.slow


def _call(server, tool: str, arguments: dict) -> str:
    async def go():
        async with create_connected_server_and_client_session(server) as client:
            return await client.call_tool(tool, arguments)

    result = asyncio.run(go())
    assert not result.isError, result.content[0].text
    return result.content[0].text


@pytest.fixture
def superseded(ormah_server):  # noqa: F811
    old = node_create(request=NodeCreate(content="The shop API listens on port 8080"), auto_link=False).node
    new = node_create(request=NodeCreate(content="The shop API listens on port 9090"), auto_link=False).node
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES))
    return old, new


def test_context_pack_tool_answers_the_pack_text_with_warnings(ormah_server, superseded, repo):  # noqa: F811
    old, new = superseded
    server = build_server(api=OrmahApi(base_url=ormah_server, token=lambda: TOKEN), default_space=None,
                          workspace=str(repo.root))
    text = _call(server, "context_pack", {"query": "shop API port", "budget_tokens": 200})
    assert f"[fact {old.short_id}] The shop API listens on port 8080" in text
    assert f"! temporal_supersession: superseded by {new.short_id}" in text
    assert text.splitlines()[-1].endswith("/200 tokens, 2 items")


def test_recall_tool_text_shows_the_warning(ormah_server, superseded):  # noqa: F811
    old, new = superseded
    server = build_server(api=OrmahApi(base_url=ormah_server, token=lambda: TOKEN), default_space=None)
    text = _call(server, "recall", {"query": "shop API port"})
    assert f"! temporal_supersession: superseded by {new.short_id}" in text
